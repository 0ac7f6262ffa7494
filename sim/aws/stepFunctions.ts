import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, systemClock } from '../../shared/clock/index.js';

/**
 * The twin's Step Functions API, for the calls the product makes with @aws-sdk/client-sfn: StartExecution,
 * DescribeExecution and ListExecutions. The SDK speaks AWS JSON 1.0 (`POST /`, `X-Amz-Target:
 * AWSStepFunctions.<Operation>`, `content-type: application/x-amz-json-1.0`); timestamps are epoch seconds; an error is
 * HTTP 400 with `{"__type": "<Code>", "message": "..."}`, which the SDK maps to the exception class of that name.
 *
 * A state machine is registered with an executor that runs one execution to its end: on the twin, the real ASL file
 * with the real handlers through aws-local-stepfunctions (sim/harness wires it). As Step Functions does, a name is
 * unique per state machine: StartExecution with the name of a running execution and the same input returns it again,
 * with another input ExecutionAlreadyExists.
 */

export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

/** How an execution ended, as the executor reports it. */
export interface ExecutionEnd {
  status: Exclude<ExecutionStatus, 'RUNNING'>;
  output?: string;
  error?: string;
  cause?: string;
}

/** Runs one execution to its end (its input as the JSON text StartExecution got). */
export type ExecutionRunner = (execution: {
  name: string;
  input: string;
  executionArn: string;
}) => Promise<ExecutionEnd>;

export interface TwinExecution {
  executionArn: string;
  stateMachineArn: string;
  name: string;
  input: string;
  status: ExecutionStatus;
  startDateMs: number;
  stopDateMs?: number;
  output?: string;
  error?: string;
  cause?: string;
}

export interface StepFunctionsTwin {
  /** `http://127.0.0.1:<port>`: give it to `new SFNClient({ endpoint })`. */
  endpoint: string;
  /** Registers a state machine (or replaces its runner); returns its ARN. */
  setStateMachine(name: string, run: ExecutionRunner): string;
  executions(): TwinExecution[];
  /** Resolves once every execution started so far has ended. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

/** The error codes the twin answers with (Step Functions' own names). */
type ErrorCode =
  | 'ExecutionAlreadyExists'
  | 'ExecutionDoesNotExist'
  | 'StateMachineDoesNotExist'
  | 'InvalidName'
  | 'InvalidArn'
  | 'InvalidExecutionInput'
  | 'UnknownOperationException'
  | 'SerializationException';

class StepFunctionsTwinRequestError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'StepFunctionsTwinRequestError';
  }
}

const TARGET_PREFIX = 'AWSStepFunctions.';
/** Execution names (StartExecution `name`): 1-80 characters, no whitespace, brackets, wildcards or control characters. */
const EXECUTION_NAME = /^[^\s<>{}[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]{1,80}$/;
const MAX_INPUT_BYTES = 256 * 1024;

export async function startStepFunctionsTwin(options: {
  region: string;
  accountId?: string;
  clock?: Clock;
  log?: (line: string) => void;
}): Promise<StepFunctionsTwin> {
  const clock = options.clock ?? systemClock;
  const account = options.accountId ?? '000000000000';
  const machines = new Map<string, { name: string; run: ExecutionRunner }>();
  const executions = new Map<string, TwinExecution>();
  const running = new Set<Promise<void>>();

  const machineArn = (name: string) => `arn:aws:states:${options.region}:${account}:stateMachine:${name}`;
  const executionArn = (machine: string, name: string) =>
    `arn:aws:states:${options.region}:${account}:execution:${machine}:${name}`;

  function machineOf(arn: unknown): { arn: string; name: string; run: ExecutionRunner } {
    if (typeof arn !== 'string' || !arn.startsWith('arn:aws:states:'))
      throw new StepFunctionsTwinRequestError('InvalidArn', `Invalid Arn: '${String(arn)}'`);
    const machine = machines.get(arn);
    if (machine === undefined)
      throw new StepFunctionsTwinRequestError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${arn}'`);
    return { arn, ...machine };
  }

  const describe = (e: TwinExecution) => ({
    executionArn: e.executionArn,
    stateMachineArn: e.stateMachineArn,
    name: e.name,
    status: e.status,
    startDate: e.startDateMs / 1000,
    ...(e.stopDateMs === undefined ? {} : { stopDate: e.stopDateMs / 1000 }),
  });

  const operations: Record<string, (body: Record<string, unknown>) => unknown> = {
    StartExecution(body) {
      const machine = machineOf(body.stateMachineArn);
      const name = typeof body.name === 'string' ? body.name : `${clock.now()}-${executions.size}`;
      if (!EXECUTION_NAME.test(name)) throw new StepFunctionsTwinRequestError('InvalidName', `Invalid Name: '${name}'`);
      const input = typeof body.input === 'string' ? body.input : '{}';
      if (Buffer.byteLength(input) > MAX_INPUT_BYTES)
        throw new StepFunctionsTwinRequestError('InvalidExecutionInput', 'Input exceeds 262144 bytes');
      try {
        JSON.parse(input);
      } catch {
        throw new StepFunctionsTwinRequestError(
          'InvalidExecutionInput',
          'Invalid State Machine Execution Input: not JSON',
        );
      }
      const arn = executionArn(machine.name, name);
      const existing = executions.get(arn);
      if (existing !== undefined) {
        if (existing.status === 'RUNNING' && existing.input === input)
          return { executionArn: arn, startDate: existing.startDateMs / 1000 };
        throw new StepFunctionsTwinRequestError('ExecutionAlreadyExists', `Execution Already Exists: '${arn}'`);
      }
      const execution: TwinExecution = {
        executionArn: arn,
        stateMachineArn: machine.arn,
        name,
        input,
        status: 'RUNNING',
        startDateMs: clock.now(),
      };
      executions.set(arn, execution);
      options.log?.(`Step Functions: ${name} started on ${machine.name}`);
      const done = machine
        .run({ name, input, executionArn: arn })
        .catch((error: unknown): ExecutionEnd => ({
          status: 'FAILED',
          error: error instanceof Error ? error.name : 'Error',
          cause: error instanceof Error ? error.message : String(error),
        }))
        .then((end) => {
          Object.assign(execution, end, { stopDateMs: clock.now() });
          options.log?.(`Step Functions: ${name} ${end.status}`);
        });
      running.add(done);
      void done.finally(() => running.delete(done));
      return { executionArn: arn, startDate: execution.startDateMs / 1000 };
    },
    DescribeExecution(body) {
      const execution = executions.get(String(body.executionArn));
      if (execution === undefined)
        throw new StepFunctionsTwinRequestError(
          'ExecutionDoesNotExist',
          `Execution Does Not Exist: '${String(body.executionArn)}'`,
        );
      return {
        ...describe(execution),
        input: execution.input,
        ...(execution.output === undefined ? {} : { output: execution.output }),
        ...(execution.error === undefined ? {} : { error: execution.error }),
        ...(execution.cause === undefined ? {} : { cause: execution.cause }),
      };
    },
    ListExecutions(body) {
      const machine = machineOf(body.stateMachineArn);
      const status = typeof body.statusFilter === 'string' ? body.statusFilter : undefined;
      const max = typeof body.maxResults === 'number' && body.maxResults > 0 ? body.maxResults : 100;
      const list = [...executions.values()]
        .filter((e) => e.stateMachineArn === machine.arn && (status === undefined || e.status === status))
        .sort((a, b) => b.startDateMs - a.startDateMs)
        .slice(0, max);
      return { executions: list.map(describe) };
    },
  };

  const server = createServer((req, res) => void handle(req, res));
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const target = String(req.headers['x-amz-target'] ?? '');
    try {
      const operation = target.startsWith(TARGET_PREFIX) ? operations[target.slice(TARGET_PREFIX.length)] : undefined;
      if (operation === undefined)
        throw new StepFunctionsTwinRequestError(
          'UnknownOperationException',
          `the twin serves ${Object.keys(operations)
            .map((o) => TARGET_PREFIX + o)
            .join(', ')}; got ${JSON.stringify(target)}`,
        );
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      } catch {
        throw new StepFunctionsTwinRequestError('SerializationException', 'the body is not JSON');
      }
      send(res, 200, operation(body));
    } catch (error) {
      if (error instanceof StepFunctionsTwinRequestError)
        send(res, 400, { __type: error.code, message: error.message });
      else send(res, 500, { __type: 'InternalFailure', message: (error as Error).message });
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    setStateMachine(name, run) {
      machines.set(machineArn(name), { name, run });
      return machineArn(name);
    },
    executions: () => [...executions.values()].map((e) => ({ ...e })),
    settled: async () => {
      await Promise.all([...running]);
    },
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
