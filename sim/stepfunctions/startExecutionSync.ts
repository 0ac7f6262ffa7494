import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import type { LocalTaskHandler, WorkflowOutcome } from './types.js';

/** The service integration this handler stands in for: start an execution and wait for its end, output as JSON. */
export const START_EXECUTION_SYNC_RESOURCE = 'arn:aws:states:::states:startExecution.sync:2';

/** The Parameters of a `startExecution.sync:2` Task (the StartExecution API's fields, as Step Functions takes them). */
const startParametersSchema = z.object({
  StateMachineArn: z.string({ error: 'is required (the state machine to start)' }).min(1),
  Name: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,80}$/, { error: 'must be 1-80 letters, digits, "-" or "_" (an execution name)' })
    .optional(),
  Input: z.unknown().optional(),
});

/** What the local runner needs to run a child: which machine, the name and the input. */
export interface ChildExecutionRequest {
  stateMachineArn: string;
  name: string;
  input: unknown;
}

/**
 * The child's end. Step Functions fails the parent's task with `States.TaskFailed` and, as the Cause, the child's
 * DescribeExecution answer as JSON (its Status, Error and Cause): the name is Step Functions', hence not
 * `<Area><Problem>Error`.
 */
export class ChildExecutionFailedError extends Error {
  constructor(described: Record<string, unknown>) {
    super(JSON.stringify(described));
    this.name = 'States.TaskFailed';
  }
}

/**
 * The local handler of the `startExecution.sync:2` integration: runs the child with `start` (the local runner, on the
 * same handlers) and answers as Step Functions does: the DescribeExecution fields with `Output` parsed (the `:2`
 * form) when the child succeeded; a ChildExecutionFailedError when it failed, timed out or was stopped.
 */
export function startExecutionSyncHandler(
  start: (request: ChildExecutionRequest) => Promise<{ executionArn: string; outcome: WorkflowOutcome }>,
): LocalTaskHandler {
  return async function startExecutionSync(parameters: unknown) {
    const request = startParametersSchema.parse(parameters);
    const name = request.Name ?? randomUUID();
    const input = request.Input ?? {};
    const { executionArn, outcome } = await start({ stateMachineArn: request.StateMachineArn, name, input });
    const described = {
      ExecutionArn: executionArn,
      StateMachineArn: request.StateMachineArn,
      Name: name,
      Status: STATUS[outcome.status],
      StartDate: Date.parse(outcome.startedAt),
      StopDate: Date.parse(outcome.finishedAt),
      Input: JSON.stringify(input),
      InputDetails: { Included: true },
    };
    if (outcome.status === 'succeeded')
      return { ...described, Output: outcome.output, OutputDetails: { Included: true } };
    throw new ChildExecutionFailedError(
      outcome.status === 'aborted' ? described : { ...described, Error: outcome.error, Cause: outcome.cause },
    );
  };
}

const STATUS = {
  succeeded: 'SUCCEEDED',
  failed: 'FAILED',
  timedOut: 'TIMED_OUT',
  aborted: 'ABORTED',
} as const satisfies Record<WorkflowOutcome['status'], string>;
