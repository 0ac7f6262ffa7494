import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  ListExecutionsCommand,
  SFNClient,
  StartExecutionCommand,
  StateMachineDoesNotExist,
} from '@aws-sdk/client-sfn';
import { type ExecutionEnd, startStepFunctionsTwin, type StepFunctionsTwin } from './stepFunctions.js';

// The twin's Step Functions API through the real @aws-sdk/client-sfn: what the drift detector calls.

let twin: StepFunctionsTwin;
let client: SFNClient;
let machine: string;
let release: ((end: ExecutionEnd) => void) | undefined;

beforeAll(async () => {
  twin = await startStepFunctionsTwin({ region: 'us-east-2' });
  client = new SFNClient({
    region: 'us-east-2',
    endpoint: twin.endpoint,
    credentials: { accessKeyId: 'AKIDTWIN', secretAccessKey: 'twin-not-a-secret' },
    maxAttempts: 1,
  });
  // Each execution ends when the test says so.
  machine = twin.setStateMachine('calibration', () => new Promise<ExecutionEnd>((resolve) => (release = resolve)));
});

afterAll(async () => {
  client.destroy();
  await twin.stop();
});

describe('Twin: Step Functions (StartExecution, DescribeExecution, ListExecutions)', () => {
  it('starts an execution, lists and describes it RUNNING, then SUCCEEDED with its output', async () => {
    // Act
    const started = await client.send(
      new StartExecutionCommand({ stateMachineArn: machine, name: 'drift-a-1', input: '{"target":{}}' }),
    );
    const again = await client.send(
      new StartExecutionCommand({ stateMachineArn: machine, name: 'drift-a-1', input: '{"target":{}}' }),
    );
    const running = await client.send(new ListExecutionsCommand({ stateMachineArn: machine, statusFilter: 'RUNNING' }));
    release?.({ status: 'SUCCEEDED', output: '{"ok":true}' });
    await twin.settled();
    const ended = await client.send(new DescribeExecutionCommand({ executionArn: started.executionArn }));

    // Assess: the same name and input while running is the same execution (Step Functions' idempotency).
    expect(started.executionArn).toBe('arn:aws:states:us-east-2:000000000000:execution:calibration:drift-a-1');
    expect(again.executionArn).toBe(started.executionArn);
    expect(started.startDate).toBeInstanceOf(Date);
    expect(running.executions?.map((e) => [e.name, e.status])).toEqual([['drift-a-1', 'RUNNING']]);
    expect(ended).toMatchObject({ status: 'SUCCEEDED', output: '{"ok":true}', input: '{"target":{}}' });
    expect(ended.stopDate).toBeInstanceOf(Date);
  });

  it.each([
    {
      case: 'a name already used',
      command: () => new StartExecutionCommand({ stateMachineArn: machine, name: 'drift-a-1', input: '{}' }),
      error: ExecutionAlreadyExists,
    },
    {
      case: 'an unknown state machine',
      command: () =>
        new StartExecutionCommand({
          stateMachineArn: 'arn:aws:states:us-east-2:000000000000:stateMachine:nope',
          name: 'x',
          input: '{}',
        }),
      error: StateMachineDoesNotExist,
    },
    {
      case: 'an unknown execution',
      command: () =>
        new DescribeExecutionCommand({
          executionArn: 'arn:aws:states:us-east-2:000000000000:execution:calibration:nope',
        }),
      error: ExecutionDoesNotExist,
    },
  ])('answers $case with the error Step Functions names', async ({ command, error }) => {
    // Act
    const attempt = client.send(command() as StartExecutionCommand);

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(error);
  });
});
