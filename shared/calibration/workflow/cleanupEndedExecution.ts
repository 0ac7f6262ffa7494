import * as z from 'zod';
import { cleanup, type CleanupResult } from './cleanup.js';
import type { BasePorts, CalibrationPorts } from './ports.js';
import type { CalibrationFunction } from './step.js';

/**
 * The statuses after which Step Functions ran no cleanup of its own: a stopped (ABORTED) or timed-out execution runs
 * no Catch, and a FAILED one may have failed in its failure path. (A FAILED execution's CleanupAfterFailure usually
 * ran: the cleanup is idempotent, so running it again finds nothing to undo.)
 */
export const ENDED_WITHOUT_CLEANUP = ['ABORTED', 'TIMED_OUT', 'FAILED'] as const;

/**
 * EventBridge's "Step Functions Execution Status Change" event, the fields used. `detail.input` is the execution's
 * input as JSON text (EventBridge leaves it out above 248 KiB, `inputDetails.included` false; a calibration input is
 * a few hundred bytes).
 */
const event = z.object({
  'detail-type': z.literal('Step Functions Execution Status Change'),
  source: z.literal('aws.states'),
  detail: z.object({
    executionArn: z.string().min(1),
    name: z.string().min(1),
    status: z.string().min(1),
    startDate: z.number().nullable().optional(),
    input: z.string().nullable().optional(),
  }),
});

type Ports = BasePorts & Pick<CalibrationPorts, 'cluster' | 'silences'>;

/** What the rule's function did: the cleanup's result, or why it did nothing. */
export type EndedExecutionCleanup =
  | { execution: string; status: string; cleanup: CleanupResult }
  | { execution: string; status: string; skipped: string };

/**
 * The target of the EventBridge rule on the calibration state machine's status changes: runs the state machine's own
 * cleanup (cleanup.ts, KEDA back in charge first) for an execution that ended ABORTED, TIMED_OUT or FAILED, from the
 * input the event carries. Other statuses are skipped with the reason (the rule's pattern does not send them).
 */
export async function cleanupEndedExecution(
  ports: Ports,
  { detail }: z.output<typeof event>,
): Promise<EndedExecutionCleanup> {
  const ended = { execution: detail.name, status: detail.status };
  if (!(ENDED_WITHOUT_CLEANUP as readonly string[]).includes(detail.status))
    return { ...ended, skipped: `status ${detail.status}: the execution's own Cleanup state runs` };
  if (detail.input === undefined || detail.input === null)
    return { ...ended, skipped: 'the event carries no input: the lease sweep releases the target when it expires' };
  let input: unknown;
  try {
    input = JSON.parse(detail.input);
  } catch {
    return { ...ended, skipped: 'the event input is not JSON: ValidateInput refused it, nothing was created' };
  }
  const startTime = new Date(detail.startDate ?? ports.clock.now()).toISOString();
  const result = await cleanup(ports, {
    input,
    execution: { id: detail.executionArn, name: detail.name, startTime },
    deployment: null,
  });
  return { ...ended, cleanup: result };
}

export const cleanupEndedExecutionFunction = {
  name: 'cleanupEndedExecution',
  label: 'CleanupEndedExecution',
  event,
  run: cleanupEndedExecution,
} satisfies CalibrationFunction<typeof event, EndedExecutionCleanup, Ports>;
