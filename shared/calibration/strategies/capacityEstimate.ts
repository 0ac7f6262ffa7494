import { SATURATION_RULES } from '../rules.js';
import type { StepMeasurement } from '../types.js';

/**
 * One replica's capacity as a saturated step shows it. Under overload a server completes requests at its service
 * rate and the excess waits (a saturated queue's departure rate is its service rate), so a saturated step measures
 * the capacity twice, independently:
 * - from completions: completedRps, corrected for the requests still in flight when the window closed. The first
 *   completions come one request lifetime S after the load starts, so the window of W s holds about C × (W − S)
 *   completions (Little's law, L = λW): C ≈ completedRps × W / (W − S). S is estimated as p95 end-to-end minus p95
 *   time to first token (the decode time: under overload both p95s carry the same queue wait, which cancels);
 * - from the queue: the queue grows at offered − C requests/s (conservation of requests), so C ≈ offered − slope.
 *   Used only when the queue really grew (slope > 0 and at least queueMaxFloor queued).
 * Rule: the mean of the two when they agree within AGREEMENT (10 %), else the completions alone (they do not depend
 * on the scrape interval, and k6 running out of VUs flattens the queue's slope, which inflates offered − slope).
 */
export interface CapacityEstimate {
  /** The estimate, requests/s (all Pods of the step together). */
  value: number;
  /** completedRps corrected for the requests in flight at the window's end. */
  fromCompletions: number;
  /** offered − queue slope; null when the queue did not grow. */
  fromQueue: number | null;
  /** Which rule gave `value`, with the numbers. */
  reason: string;
}

/** The two estimates must agree within this fraction of the completions' one to be averaged. */
export const AGREEMENT = 0.1;

/** At most this fraction of the window is taken as in flight (a longer lifetime would be a measurement problem). */
const MAX_IN_FLIGHT_FRACTION = 0.5;

/** The request lifetime S (seconds) seen in a step: p95 end-to-end minus p95 time to first token, or 0 unknown. */
export function requestLifetimeSeconds(step: StepMeasurement): number {
  const { p95E2eSeconds: e2e, p95TtftSeconds: ttft } = step.amp;
  if (e2e === null || ttft === null) return 0;
  return Math.min(Math.max(0, e2e - ttft), MAX_IN_FLIGHT_FRACTION * step.holdSeconds);
}

/** completedRps of a step corrected for the requests still in flight when its window closed (C × (W − S) / W). */
export function completionsInFlightCorrected(step: StepMeasurement): number {
  const window = step.holdSeconds;
  const lifetime = requestLifetimeSeconds(step);
  return window > lifetime ? (step.amp.completedRps * window) / (window - lifetime) : step.amp.completedRps;
}

/** Estimates one replica's capacity (all Pods of the step) from a saturated step; see the interface comment. */
export function estimateCapacity(step: StepMeasurement): CapacityEstimate {
  const fromCompletions = Math.min(step.rateRps, completionsInFlightCorrected(step));
  const slope = step.amp.queueSlopePerSecond;
  const grew = slope > 0 && step.amp.queueMax >= SATURATION_RULES.queueMaxFloor;
  const fromQueue = grew ? Math.max(0, step.rateRps - slope) : null;
  const c = fromCompletions.toFixed(2);
  if (fromQueue === null) {
    return {
      value: fromCompletions,
      fromCompletions,
      fromQueue,
      reason: `completions ${c} req/s (in-flight corrected); the queue did not grow, so no second estimate`,
    };
  }
  const q = fromQueue.toFixed(2);
  if (Math.abs(fromQueue - fromCompletions) <= AGREEMENT * fromCompletions) {
    return {
      value: (fromQueue + fromCompletions) / 2,
      fromCompletions,
      fromQueue,
      reason: `mean of completions ${c} and offered − queue slope ${q} req/s (they agree within ${AGREEMENT * 100} %)`,
    };
  }
  return {
    value: fromCompletions,
    fromCompletions,
    fromQueue,
    reason:
      `completions ${c} req/s; offered − queue slope ${q} req/s disagrees by more than ${AGREEMENT * 100} % ` +
      '(a flattened queue or a noisy slope), so the completions alone',
  };
}
