import { fmt } from './format.js';
import { SATURATION_RULES } from './rules.js';
import type { StepMeasurement } from './types.js';

/**
 * One replica's capacity as a saturated step shows it. Under overload a server completes requests at its service
 * rate and the excess waits (a saturated queue's departure rate is its service rate), so a saturated step measures
 * the capacity twice, independently:
 * - from completions: the completion rate over the window's second half, where the batch is full and departures run
 *   at the service rate (saturatedCompletions); without it, completedRps corrected for the requests still in flight
 *   when the window closed: the first completions come one request lifetime S after the load starts, so the window
 *   of W s holds about C × (W − S) completions (Little's law, L = λW) and C ≈ completedRps × W / (W − S). S is the
 *   mean decode time, mean end-to-end minus mean time to first token (under overload both carry the same queue wait,
 *   which cancels);
 * - from the queue: the queue grows at offered − C requests/s (conservation of requests), so C ≈ offered − slope.
 *   Used only when the queue really grew (slope > 0 and at least queueMaxFloor queued) and k6 dropped no iteration:
 *   a k6 whose VUs were all busy sent fewer requests than offered, its pool (maxVUs) capped the queue, and
 *   offered − slope then says nothing about C (246 req/s offered to a 56.7 req/s replica: 238.6);
 * - from the batch (Little's law for the running batch): C ≈ running requests / mean time a request spends in the
 *   batch (vllm:request_inference_time_seconds), both over the window's latest half, where the batch has filled (over
 *   the whole window the filling counts: a prefill-heavy replica's batch takes about one request lifetime, 12-16 s, to
 *   fill, its whole-window mean read 3.8 req/s for 5.1, and the requests finished early ran in a smaller, faster
 *   batch: 85 running over their 15.4 s read 5.5); each falls back to the whole window. Completions come in waves
 *   when every request has the same output length (a full batch admitted at once finishes at once, a lifetime
 *   later, and is replaced at once), so a window of a few lifetimes catches a whole wave more or less: up to ±15 % on
 *   the twin's ministral-8b-l40s at 4 × its capacity (51 req/s for 56.7). The batch's averages do not depend on where
 *   the waves fall. Used only when nothing was preempted (a preempted request's time waiting again counts as
 *   inference time).
 * Rule: with three estimates, their median (one that is off, whichever, does not move it); with two, their mean when
 * they agree within AGREEMENT (10 %), else the batch's when it is one of them (waves, and a ramp longer than the mean
 * decode time that the in-flight correction assumes, move the completions: in the benchmark's first saturated steps
 * the batch's estimate was within 2.5 % on every profile that does not preempt, the completions' up to 15 % off), else
 * the completions (they do not depend on the scrape interval).
 */
export interface CapacityEstimate {
  /** The estimate, requests/s (all Pods of the step together). */
  value: number;
  /** The step's completion rate at saturation (saturatedCompletions), at most its offered rate. */
  fromCompletions: number;
  /** offered − queue slope; null when the queue did not grow. */
  fromQueue: number | null;
  /** Mean running batch / mean time in it, at most the offered rate; null when not measured or after preemptions. */
  fromBatch?: number | null;
  /** Which rule gave `value`, with the numbers. */
  reason: string;
}

/** The two estimates must agree within this fraction of the completions' one to be averaged. */
export const AGREEMENT = 0.1;

/** At most this fraction of the window is taken as in flight (a longer lifetime would be a measurement problem). */
const MAX_IN_FLIGHT_FRACTION = 0.5;

/**
 * A stable step's throughput counts as what the replica holds only if its window lasted at least this many request
 * lifetimes. Choice (rather than correcting for the requests in flight at the window's end): a stable step's
 * completions need no correction, what is wrong with a short one is that it cannot have shown the knee. A KV-bound
 * replica's cache fills over about one lifetime and only then preempts or queues; a window of two lifetimes has its
 * latest half (where the verdict looks whether the cache levelled off) past that filling. llama-2-13b-h100-kv at
 * 512/256 tokens: a request lives ~13 s at the knee, so a 30 s hold counts, a 20 s one does not.
 */
export const MIN_LIFETIMES_FOR_THROUGHPUT = 2;

/**
 * The request lifetime S (seconds) seen in a step: the mean decode time (mean end-to-end − mean TTFT), which is what
 * Little's law needs; in reports measured before it, p95 end-to-end − p95 TTFT (interpolated within histogram
 * buckets, so coarser); 0 when unknown.
 */
export function requestLifetimeSeconds(step: StepMeasurement): number {
  return Math.min(
    observedLifetimeSeconds(step),
    MAX_IN_FLIGHT_FRACTION * (step.amp.completedSpanSeconds ?? step.holdSeconds),
  );
}

/** The step's lifetime as measured (mean decode time, or p95 e2e − p95 TTFT), not capped; 0 when unknown. */
export function observedLifetimeSeconds(step: StepMeasurement): number {
  const { p95E2eSeconds: e2e, p95TtftSeconds: ttft, meanLifetimeSeconds: mean } = step.amp;
  return Math.max(0, mean ?? (e2e === null || ttft === null ? 0 : e2e - ttft));
}

/** Whether a step's window lasted MIN_LIFETIMES_FOR_THROUGHPUT request lifetimes (see there). */
export function heldLongEnough(step: StepMeasurement): boolean {
  return step.holdSeconds >= MIN_LIFETIMES_FOR_THROUGHPUT * observedLifetimeSeconds(step);
}

/** completedRps of a step corrected for the requests still in flight when its window closed (C × (W − S) / W). */
export function completionsInFlightCorrected(step: StepMeasurement): number {
  const window = step.amp.completedSpanSeconds ?? step.holdSeconds;
  const lifetime = requestLifetimeSeconds(step);
  return window > lifetime ? (step.amp.completedRps * window) / (window - lifetime) : step.amp.completedRps;
}

/**
 * The completion rate of a saturated step: its window's second half when measured and that half began at least one
 * request lifetime into the load (the batch was full: departures at the service rate, nothing to correct), else the
 * whole window's, in-flight corrected.
 */
export function saturatedCompletions(step: StepMeasurement): number {
  const late = step.amp.completedRpsLateHalf;
  const lateHalfBegins = step.amp.completedLateHalfFromSeconds ?? step.holdSeconds / 2;
  if (late !== undefined && late !== null && late > 0 && lateHalfBegins >= requestLifetimeSeconds(step)) return late;
  return completionsInFlightCorrected(step);
}

/** Estimates one replica's capacity (all Pods of the step) from a saturated step; see the interface comment. */
export function estimateCapacity(step: StepMeasurement): CapacityEstimate {
  const fromCompletions = Math.min(step.rateRps, saturatedCompletions(step));
  const slope = step.amp.queueSlopePerSecond;
  const grew = slope > 0 && step.amp.queueMax >= SATURATION_RULES.queueMaxFloor;
  const dropped = droppedIterations(step);
  const poolCapped = grew && dropped > 0;
  const fromQueue = grew && !poolCapped ? Math.max(0, step.rateRps - slope) : null;
  const queueText = poolCapped ? `; the queue's slope not used: k6 dropped ${fmt(dropped, 0)} iterations` : '';
  const fromBatch = batchEstimate(step);
  const c = fromCompletions.toFixed(2);
  const q = fromQueue === null ? '' : fromQueue.toFixed(2);
  const figures = { fromCompletions, fromQueue, fromBatch };
  if (fromQueue !== null && fromBatch !== null) {
    const value = [fromCompletions, fromQueue, fromBatch].sort((a, b) => a - b)[1] as number;
    return {
      ...figures,
      value,
      reason:
        `median of completions ${c}, offered − queue slope ${q} and running batch / time in it ` +
        `${fromBatch.toFixed(2)} req/s`,
    };
  }
  const [other, otherText] =
    fromQueue !== null
      ? [fromQueue, `offered − queue slope ${q}`]
      : fromBatch !== null
        ? [fromBatch, `running batch / time in it ${fromBatch.toFixed(2)}`]
        : [null, ''];
  if (other === null) {
    return {
      ...figures,
      value: fromCompletions,
      reason:
        `completions ${c} req/s; no second estimate: ` +
        (poolCapped
          ? `k6 dropped ${fmt(dropped, 0)} iterations, so its pool capped the queue`
          : 'the queue did not grow') +
        ', and the batch was not measured or vLLM preempted',
    };
  }
  if (Math.abs(other - fromCompletions) <= AGREEMENT * fromCompletions) {
    return {
      ...figures,
      value: (other + fromCompletions) / 2,
      reason: `mean of completions ${c} and ${otherText} req/s (they agree within ${AGREEMENT * 100} %)${queueText}`,
    };
  }
  if (fromBatch !== null) {
    return {
      ...figures,
      value: fromBatch,
      reason:
        `${otherText} req/s; completions ${c} req/s disagree by more than ${AGREEMENT * 100} % (completion waves, ` +
        `or a batch that took longer to fill than a request's decode time), so the batch alone${queueText}`,
    };
  }
  return {
    ...figures,
    value: fromCompletions,
    reason:
      `completions ${c} req/s; ${otherText} req/s disagrees by more than ${AGREEMENT * 100} % (a noisy slope), ` +
      'so the completions alone',
  };
}

/**
 * Iterations k6 dropped during the step (every VU busy): from its summary when it was held, from its last live
 * reading when it ended early; 0 when unknown.
 */
export function droppedIterations(step: StepMeasurement): number {
  return Math.max(step.k6?.droppedIterations ?? 0, step.ending?.droppedIterations ?? 0);
}

/** Little's law for the running batch (see CapacityEstimate): null when a figure is missing or vLLM preempted. */
function batchEstimate(step: StepMeasurement): number | null {
  const { runningMean, runningLatestHalfMean, meanInferenceSeconds, meanInferenceSecondsLateHalf, preemptions } =
    step.amp;
  const running = runningLatestHalfMean ?? runningMean;
  const inference = meanInferenceSecondsLateHalf ?? meanInferenceSeconds;
  if (running === undefined || running === null || !(running > 0)) return null;
  if (inference === undefined || inference === null || !(inference > 0)) return null;
  if (preemptions > 0) return null;
  return Math.min(step.rateRps, running / inference);
}

/** The capacity the saturated steps agree on, raised to what the stable steps below them proved the replica keeps up with. */
export interface KneeEstimate extends CapacityEstimate {
  /**
   * The most a stable step below the lowest saturated one completed (in-flight corrected, at most its rate), among
   * those whose window lasted MIN_LIFETIMES_FOR_THROUGHPUT lifetimes; 0 none.
   */
  floorRps: number;
}

/**
 * One replica's capacity from all the steps of a calibration (all Pods of the test together), or null before any step
 * saturated: the lowest saturated step's estimate (nearest the knee), averaged with those of the other saturated steps
 * that agree with it within AGREEMENT (each independently measures the same service rate, so the mean is less noisy),
 * never above the lowest saturated rate, and never below what a stable step under it completed. (Not the middle of
 * [stable rate, lowest saturated rate] either, tried: with a bracket as wide as a jump's it threw the estimate far up,
 * and a KV-bound replica holds a rate above what it drains a backlog at, from a rested start, for a minute.) The
 * adaptive search and the analysis both use it, so the report's capacity is the one the search converged on.
 */
export function kneeEstimate(steps: readonly StepMeasurement[]): KneeEstimate | null {
  const sorted = [...steps].sort((a, b) => a.rateRps - b.rateRps || a.index - b.index);
  const saturated = sorted.filter((s) => s.verdict.saturated);
  const lowest = saturated[0];
  if (lowest === undefined) return null;
  const [first, ...others] = saturated.map(estimateCapacity) as [CapacityEstimate, ...CapacityEstimate[]];
  const agreeing = others.filter((e) => Math.abs(e.value - first.value) <= AGREEMENT * first.value);
  const combined =
    agreeing.length === 0
      ? first
      : {
          ...first,
          value: [first, ...agreeing].reduce((sum, e) => sum + e.value, 0) / (agreeing.length + 1),
          reason: `mean of ${agreeing.length + 1} saturated steps' estimates; the lowest: ${first.reason}`,
        };
  // Only stable steps that lasted MIN_LIFETIMES_FOR_THROUGHPUT lifetimes prove a floor: a shorter one may have ended
  // before a KV-bound replica's cache filled (the probe above capacity read "stable" after two lifetimes of
  // its early ending and raised the estimate 16 % above the truth).
  const floorRps = Math.max(
    0,
    ...sorted
      .filter((s) => !s.verdict.saturated && s.rateRps < lowest.rateRps && heldLongEnough(s))
      .map((s) => Math.min(s.rateRps, completionsInFlightCorrected(s))),
  );
  // A replica saturated at a rate cannot hold more: higher steps' estimates averaged in (a KV-bound replica drains a
  // backlog unevenly, 5.7-7.0 req/s in 35 s windows) must not lift C above the lowest saturated rate. (The floor lies
  // below it: it comes from stable steps under that rate.)
  if (combined.value > lowest.rateRps) {
    return {
      ...combined,
      value: lowest.rateRps,
      floorRps,
      reason: `${combined.reason}; capped at ${fmt(lowest.rateRps)} req/s, where a step saturated`,
    };
  }
  if (floorRps <= combined.value) return { ...combined, floorRps };
  return {
    ...combined,
    value: floorRps,
    floorRps,
    reason: `${combined.reason}; raised to ${floorRps.toFixed(1)} req/s, what a stable step below it completed`,
  };
}

/** The most a stable step says the replica could hold, with which limit gave it. */
export interface CapacityBound {
  value: number;
  reason: string;
}

/**
 * An upper bound of the capacity from a stable step, or null when the step measured neither limit. Little's law:
 * the running batch B is the rate r times the time W a request spends in it, and at capacity the batch is full, of
 * requests that live at least as long (a fuller batch decodes each token more slowly). So:
 * - the sequences: at most --max-num-seqs × Pods run at once, C ≤ r × maxNumSeqs × Pods / B;
 * - the KV cache: the busiest Pod's usage u grows with the batch, and it fills at about B / u requests, C ≤ r / u.
 * The smaller of the two (both are upper bounds, whichever limits the replica).
 */
export function capacityUpperBound(step: StepMeasurement): CapacityBound | null {
  const { runningMean, kvCacheUsageMean, pods } = step.amp;
  const bounds: CapacityBound[] = [];
  if (step.maxNumSeqs !== undefined && step.maxNumSeqs !== null && runningMean !== undefined && runningMean !== null) {
    if (runningMean > 0 && pods > 0) {
      bounds.push({
        value: (step.rateRps * step.maxNumSeqs * pods) / runningMean,
        reason:
          `${fmt(step.rateRps)} req/s ran ${fmt(runningMean, 1)} requests at once, so ` +
          `--max-num-seqs ${step.maxNumSeqs} × ${pods} Pod(s) hold at most ` +
          `${fmt((step.rateRps * step.maxNumSeqs * pods) / runningMean, 1)} req/s`,
      });
    }
  }
  if (kvCacheUsageMean > 0) {
    bounds.push({
      value: step.rateRps / kvCacheUsageMean,
      reason:
        `${fmt(step.rateRps)} req/s used ${fmt(kvCacheUsageMean * 100, 1)} % of the KV cache, so it fills ` +
        `at about ${fmt(step.rateRps / kvCacheUsageMean, 1)} req/s`,
    });
  }
  return bounds.reduce<CapacityBound | null>((low, b) => (low === null || b.value < low.value ? b : low), null);
}
