import { describe, expect, it } from '@jest/globals';
import { ChildExecutionFailedError, startExecutionSyncHandler } from './startExecutionSync.js';
import type { WorkflowOutcome } from './types.js';

const TIMES = { startedAt: '2026-12-03T20:00:00.000Z', finishedAt: '2026-12-03T20:05:00.000Z' };
const MACHINE = 'arn:aws:states:us-east-2:000000000000:stateMachine:vllm-pilot-calibration';

/** The handler over a child that ends with `outcome`, recording what it was asked to start. */
function handlerEnding(outcome: WorkflowOutcome, started: unknown[] = []) {
  return startExecutionSyncHandler((request) => {
    started.push(request);
    return Promise.resolve({ executionArn: `arn:child:${request.name}`, outcome });
  });
}

describe('Function: startExecutionSyncHandler', () => {
  it("answers a child's success as startExecution.sync:2 does: DescribeExecution's fields, the Output parsed", async () => {
    // Prepare
    const started: unknown[] = [];
    const handler = handlerEnding({ status: 'succeeded', output: { report: { summary: 's' } }, ...TIMES }, started);

    // Act
    const answer = await handler({ StateMachineArn: MACHINE, Name: 'calib-x-t1', Input: { target: {} } });

    // Assess
    expect(started).toEqual([{ stateMachineArn: MACHINE, name: 'calib-x-t1', input: { target: {} } }]);
    expect(answer).toMatchObject({
      ExecutionArn: 'arn:child:calib-x-t1',
      Status: 'SUCCEEDED',
      Output: { report: { summary: 's' } },
      Input: '{"target":{}}',
    });
  });

  it("fails the task as Step Functions does: States.TaskFailed, the child's DescribeExecution (Error, Cause) as cause", async () => {
    // Prepare
    const handler = handlerEnding({
      status: 'failed',
      error: 'CalibrationTargetNotFoundError',
      cause: 'Deployment default/x not found',
      ...TIMES,
    });

    // Act
    const run = handler({ StateMachineArn: MACHINE, Name: 'calib-x-t2', Input: {} });

    // Assess
    await expect(run).rejects.toThrow(ChildExecutionFailedError);
    const error = (await run.catch((e: unknown) => e)) as Error;
    expect(error.name).toBe('States.TaskFailed');
    expect(JSON.parse(error.message)).toMatchObject({
      Status: 'FAILED',
      Error: 'CalibrationTargetNotFoundError',
      Cause: 'Deployment default/x not found',
    });
  });

  it('refuses an execution name Step Functions would refuse, before starting anything', async () => {
    // Prepare
    const started: unknown[] = [];
    const handler = handlerEnding({ status: 'aborted', ...TIMES }, started);

    // Act
    const run = handler({ StateMachineArn: MACHINE, Name: 'has spaces', Input: {} });

    // Assess
    await expect(run).rejects.toThrow(/1-80 letters, digits/);
    expect(started).toEqual([]);
  });
});
