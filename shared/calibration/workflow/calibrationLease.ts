import * as z from 'zod';
import { silenceTargetKey, type Silence } from '../../alerts/silences/index.js';
import { EXECUTION_TIMEOUT_SECONDS } from './names.js';

/**
 * The lease a calibration holds on its target while KEDA is paused and the Deployment runs at testReplicas. Deploy
 * writes it on the Deployment (CALIBRATION_ANNOTATIONS.lease) with its mark; Cleanup removes both. Step Functions runs
 * no Catch when an execution is stopped or times out, so two things release a lease whose execution ended without
 * its cleanup: the ended-execution rule (cleanupEndedExecution.ts, on the execution's status change) and the sweep
 * (sweepLeases.ts), which releases it when the execution is known to have ended, or, when its status cannot be known
 * (it ran elsewhere, or its history expired), once the lease expired.
 */
export interface CalibrationLease {
  /** The execution's full name (the mark holds only a label-safe form of it). */
  execution: string;
  /** Its ARN, for DescribeExecution; the local runner's ARN for a local run. */
  executionArn: string;
  /** The ScaledObject the calibration paused (its namespace is the Deployment's); null when there was none. */
  scaledObject: string | null;
  /** ISO 8601: the execution's start + the state machine's timeout, when the execution surely ended. */
  expires: string;
  /**
   * The users' rate Deploy measured before it began (null unknown): whichever cleanup ends the hold writes it into the
   * last-calibration record, so the next calibration does not take this one's load, still in AMP, for users.
   */
  backgroundRps: number | null;
}

const leaseSchema = z.object({
  execution: z.string().min(1),
  executionArn: z.string().min(1),
  scaledObject: z.string().min(1).nullable(),
  expires: z.iso.datetime({ offset: true }),
  backgroundRps: z.number().nonnegative().nullable().catch(null),
});

/** The lease of an execution that started at `startTime` (ISO 8601, the Context Object's). */
export function leaseFor(
  execution: { name: string; id: string; startTime: string },
  scaledObject: string | null,
  backgroundRps: number | null,
): CalibrationLease {
  const started = Date.parse(execution.startTime);
  const expires = new Date((Number.isFinite(started) ? started : Date.now()) + EXECUTION_TIMEOUT_SECONDS * 1000);
  return {
    execution: execution.name,
    executionArn: execution.id,
    scaledObject,
    expires: expires.toISOString(),
    backgroundRps,
  };
}

/** The annotation's text. */
export function formatLease(lease: CalibrationLease): string {
  return JSON.stringify(lease);
}

/** The lease read back; undefined when absent or not one (a hand-edited annotation is reported, not trusted). */
export function parseLease(value: string | undefined): CalibrationLease | undefined {
  if (value === undefined) return undefined;
  try {
    const parsed = leaseSchema.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the lease has expired at `nowMs`. */
export function leaseExpired(lease: CalibrationLease, nowMs: number): boolean {
  return Date.parse(lease.expires) <= nowMs;
}

/** The id of an execution's silence: one per execution and target, so a retried Deploy replaces it. */
export function calibrationSilenceId(executionLabel: string): string {
  return `calibration:${executionLabel}`;
}

/**
 * The silence a calibration puts on the target it holds, for as long as its lease: the alert evaluator mutes the
 * target's notifications with the execution's name, as Alertmanager's inhibition would.
 */
export function calibrationSilence(
  target: { cluster: string; namespace: string; deployment: string },
  execution: { name: string; id: string },
  executionLabel: string,
  nowMs: number,
  lease: CalibrationLease,
): Silence {
  return {
    target: silenceTargetKey(target),
    id: calibrationSilenceId(executionLabel),
    kind: 'calibration',
    reason: `calibration execution ${execution.name} is saturating the target on purpose`,
    createdBy: execution.id,
    startsAtMs: nowMs,
    endsAtMs: Date.parse(lease.expires),
  };
}
