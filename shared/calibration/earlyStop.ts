/**
 * Early step ending: whether a running load step can end before its hold because its outcome is already evident
 * from the queue samples so far. Pure: the samples and the time come in as parameters.
 *
 * The test is ordinary least squares of the queue over time, with the slope's standard error
 * SE(b) = sqrt(SSE / (n − 2) / Σ(t − t̄)²) and Student's t with n − 2 degrees of freedom (any regression text, e.g.
 * NIST/SEMATECH e-Handbook of Statistics, 4.4.4 and 1.3.5.11):
 * - saturated: the slope is significantly ABOVE the early-ending limit L' = max(0.5, 2 % of the offered rate) req/s
 *   (SATURATION_RULES: a clear overload only; the verdict's own limit is lower): t = (b − L') / SE(b) above the
 *   one-sided critical value, the queue reached queueMaxFloor and still holds that many now, after minSeconds
 *   (default 25 % of the hold) and saturatedMinLifetimes (4) request lifetimes, and minSamples;
 * - stable: after stableAfterFraction of the hold (default 25 %) and stableMinLifetimes (2) request lifetimes, the
 *   slope's one-sided upper confidence bound b + t × SE(b) is below the verdict's limit L = max(0.1, 2 % of the
 *   offered rate) req/s over all samples AND over their latest half (a knee that just began shows there first),
 *   and the queue never held more than stableQueueMaxPerPod (default 2) requests per Pod, and, when the KV cache's
 *   samples are given, vLLM preempted nothing so far and the cache's usage levelled off: it rose at most 3 points over
 *   the latest half of the samples (KV_CACHE_RULES.levelledRise, shared/calibration/kvCache.ts; stricter than the
 *   verdict, which lets a cache far from full still fill: an ending skips the rest of the hold). A KV-bound replica
 *   above its capacity keeps an empty queue until its cache is full, one or more request lifetimes in: the queue
 *   alone would call it stable.
 * Testing against L rather than 0 and at 99 % keeps the noise of a stable queue from ending a step as saturated
 * (the unit tests measure the false-positive rate); the queue samples must be at least a scrape apart, or repeated
 * values of one scrape would count as independent evidence (WatchLoadStep queries them that way).
 */
import { CalibrationInputInvalidError, type InputIssue } from './errors.js';
import { fmt } from './format.js';
import { EARLY_STOP_CONFIDENCES, type EarlyStopSettings } from './input.js';
import { kvCacheSettling, kvCacheWindowFromSamples, type KvCacheSample } from './kvCache.js';
import { KV_CACHE_RULES, SATURATION_RULES } from './rules.js';

/** One queue sample: `sum(vllm:num_requests_waiting)` at epoch ms `tMs`. */
export interface QueueSample {
  tMs: number;
  queue: number;
}

export interface StepEndingContext {
  /** The step's offered rate (requests/s): the saturation slope limit scales with it. */
  offeredRps: number;
  /** Seconds of load the samples cover (from the load's start to the latest sample), not wall time. */
  elapsedSeconds: number;
  plannedHoldSeconds: number;
  /** Pods serving the step (the stable ending's queue allowance is per Pod). */
  pods: number;
  /**
   * One request's lifetime in the replica so far (p95 end-to-end − p95 time to first token of the requests finished
   * since the load began), seconds; null when none has finished yet.
   */
  requestLifetimeSeconds: number | null;
  settings: EarlyStopSettings;
  /**
   * The KV cache so far: usage samples (the busiest Pod) and the preemptions since the load began. Absent: a stable
   * ending is decided from the queue alone.
   */
  kvCache?: { samples: readonly KvCacheSample[]; preemptions: number };
}

/** Keep loading, or end the step now as saturated or stable; the reason always says why, with the numbers. */
export type StepEndingDecision =
  { action: 'continue'; reason: string } | { action: 'end'; kind: 'saturated' | 'stable'; reason: string };

/** A least-squares line of the queue over time (slope per second), with what its t-test needs. */
export interface SlopeFit {
  n: number;
  slopePerSecond: number;
  /** Standard error of the slope; 0 when the points lie exactly on the line. */
  standardError: number;
}

/**
 * One-sided critical values t(1 − α, df) of Student's t distribution for the confidences 0.90, 0.95 and 0.99, from
 * the NIST/SEMATECH e-Handbook of Statistics, 1.3.6.7.2 "Critical Values of the Student's t Distribution".
 * Between rows the next lower df is used (a larger value: conservative).
 */
const T_TABLE: ReadonlyArray<readonly [df: number, t90: number, t95: number, t99: number]> = [
  [1, 3.078, 6.314, 31.821],
  [2, 1.886, 2.92, 6.965],
  [3, 1.638, 2.353, 4.541],
  [4, 1.533, 2.132, 3.747],
  [5, 1.476, 2.015, 3.365],
  [6, 1.44, 1.943, 3.143],
  [7, 1.415, 1.895, 2.998],
  [8, 1.397, 1.86, 2.896],
  [9, 1.383, 1.833, 2.821],
  [10, 1.372, 1.812, 2.764],
  [11, 1.363, 1.796, 2.718],
  [12, 1.356, 1.782, 2.681],
  [13, 1.35, 1.771, 2.65],
  [14, 1.345, 1.761, 2.624],
  [15, 1.341, 1.753, 2.602],
  [16, 1.337, 1.746, 2.583],
  [17, 1.333, 1.74, 2.567],
  [18, 1.33, 1.734, 2.552],
  [19, 1.328, 1.729, 2.539],
  [20, 1.325, 1.725, 2.528],
  [21, 1.323, 1.721, 2.518],
  [22, 1.321, 1.717, 2.508],
  [23, 1.319, 1.714, 2.5],
  [24, 1.318, 1.711, 2.492],
  [25, 1.316, 1.708, 2.485],
  [26, 1.315, 1.706, 2.479],
  [27, 1.314, 1.703, 2.473],
  [28, 1.313, 1.701, 2.467],
  [29, 1.311, 1.699, 2.462],
  [30, 1.31, 1.697, 2.457],
  [40, 1.303, 1.684, 2.423],
  [60, 1.296, 1.671, 2.39],
  [120, 1.289, 1.658, 2.358],
  [Number.POSITIVE_INFINITY, 1.282, 1.645, 2.326],
];

/** The one-sided critical value of Student's t for `confidence` (0.9, 0.95, 0.99) and `df` >= 1 degrees of freedom. */
export function tCritical(confidence: number, df: number): number {
  const column = (EARLY_STOP_CONFIDENCES as readonly number[]).indexOf(confidence);
  if (column < 0 || !(df >= 1)) {
    throw new CalibrationInputInvalidError([
      ...(column < 0
        ? [{ path: 'confidence', message: `got ${confidence}; accepted: ${EARLY_STOP_CONFIDENCES.join(', ')}` }]
        : []),
      ...(df >= 1 ? [] : [{ path: 'df', message: `got ${df}; accepted: a number >= 1` }]),
    ]);
  }
  let row = T_TABLE[0] as (typeof T_TABLE)[number];
  for (const candidate of T_TABLE) if (candidate[0] <= df) row = candidate;
  return row[column + 1] as number;
}

/** The least-squares slope of the samples (per second) and its standard error; needs 3 samples or more. */
export function fitSlope(samples: readonly QueueSample[]): SlopeFit {
  const n = samples.length;
  const t0 = samples[0]?.tMs ?? 0;
  const xs = samples.map((s) => (s.tMs - t0) / 1000);
  const ys = samples.map((s) => s.queue);
  const xMean = xs.reduce((a, b) => a + b, 0) / n;
  const yMean = ys.reduce((a, b) => a + b, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    sxx += ((xs[i] as number) - xMean) ** 2;
    sxy += ((xs[i] as number) - xMean) * ((ys[i] as number) - yMean);
  }
  const slope = sxx === 0 ? 0 : sxy / sxx;
  let sse = 0;
  for (let i = 0; i < n; i++) sse += ((ys[i] as number) - yMean - slope * ((xs[i] as number) - xMean)) ** 2;
  const standardError = n > 2 && sxx > 0 ? Math.sqrt(sse / (n - 2) / sxx) : Number.POSITIVE_INFINITY;
  return { n, slopePerSecond: slope, standardError };
}

/** The saturation slope limit of a step at `offeredRps`: the one the step's verdict applies (SATURATION_RULES). */
export function saturationSlopeLimit(offeredRps: number): number {
  return Math.max(SATURATION_RULES.queueSlopeMinPerSecond, SATURATION_RULES.queueSlopeRateFraction * offeredRps);
}

/** The slope a saturated early ending must be significantly above: a clear overload only (SATURATION_RULES). */
export function earlySaturationSlopeLimit(offeredRps: number): number {
  return Math.max(SATURATION_RULES.earlyEndingSlopeMinPerSecond, saturationSlopeLimit(offeredRps));
}

/** The default least load before a saturated ending: a quarter of the hold. */
export const DEFAULT_MIN_SECONDS_FRACTION = 0.25;

/**
 * Decides whether a running step can end now (see the file comment for the rules). Samples may come in any order;
 * non-finite ones are ignored. Bad context (a hold <= 0, no Pods, ...) throws CalibrationInputInvalidError.
 */
export function decideStepEnding(samples: readonly QueueSample[], context: StepEndingContext): StepEndingDecision {
  checkContext(context);
  const { settings, offeredRps, elapsedSeconds, plannedHoldSeconds, pods, requestLifetimeSeconds: lifetime } = context;
  if (!settings.enabled) return { action: 'continue', reason: 'early ending is off (plan.earlyStop.enabled false)' };
  if (lifetime === null)
    return {
      action: 'continue',
      reason: `after ${fmt(elapsedSeconds, 0)} s: no request has finished yet, so the load has not turned over once`,
    };
  const points = samples
    .filter((s) => Number.isFinite(s.tMs) && Number.isFinite(s.queue))
    .sort((a, b) => a.tMs - b.tMs);
  const at = `after ${fmt(elapsedSeconds, 0)} s of ${fmt(plannedHoldSeconds, 0)} s`;
  if (points.length < settings.minSamples) {
    return {
      action: 'continue',
      reason: `${at}: ${points.length} queue sample(s), fewer than the ${settings.minSamples} needed to decide`,
    };
  }

  const limit = saturationSlopeLimit(offeredRps);
  const earlyLimit = earlySaturationSlopeLimit(offeredRps);
  const fit = fitSlope(points);
  const t = tCritical(settings.confidence, fit.n - 2);
  const conf = `${fmt(settings.confidence * 100, 0)} %`;
  const slopeText = `queue slope ${fmt(fit.slopePerSecond, 2)} ± ${fmt(fit.standardError, 2)} req/s (SE, n = ${fit.n})`;
  const queues = points.map((p) => p.queue);
  const queueMax = Math.max(...queues);
  const queueNow = points[points.length - 1]?.queue ?? 0;
  const floor = SATURATION_RULES.queueMaxFloor;

  // The capacity is read from the saturated step's completions, corrected by W / (W − S): a window of a few request
  // lifetimes keeps that correction small and its error with it.
  const minSeconds = Math.max(
    settings.minSeconds ?? DEFAULT_MIN_SECONDS_FRACTION * plannedHoldSeconds,
    settings.saturatedMinLifetimes * lifetime,
  );
  const tStatistic =
    fit.standardError === 0 ? Number.POSITIVE_INFINITY : (fit.slopePerSecond - earlyLimit) / fit.standardError;
  if (
    elapsedSeconds >= minSeconds &&
    fit.slopePerSecond > earlyLimit &&
    tStatistic > t &&
    queueMax >= floor &&
    queueNow >= floor
  ) {
    return {
      action: 'end',
      kind: 'saturated',
      reason:
        `${at}: ${slopeText} is significantly above the early-ending limit ${fmt(earlyLimit, 2)} req/s ` +
        `(t = ${fmt(tStatistic, 1)} > ${fmt(t, 2)}, one-sided ${conf}, ${fit.n - 2} df) with ${fmt(queueNow, 0)} ` +
        `queued now (max ${fmt(queueMax, 0)}): the replica is not draining its queue`,
    };
  }

  // Steady state: every request in the replica arrived during the step, and the batch turned over.
  const stableAfter = Math.max(
    settings.stableAfterFraction * plannedHoldSeconds,
    settings.stableMinLifetimes * lifetime,
  );
  const queueAllowance = settings.stableQueueMaxPerPod * pods;
  if (elapsedSeconds >= stableAfter) {
    const upper = fit.slopePerSecond + t * fit.standardError;
    const recent = points.slice(Math.floor(points.length / 2));
    const recentFit = fitSlope(recent);
    const recentUpper =
      recent.length >= 3
        ? recentFit.slopePerSecond + tCritical(settings.confidence, recent.length - 2) * recentFit.standardError
        : Number.POSITIVE_INFINITY;
    const kv = kvCacheEvidence(context.kvCache);
    if (upper < limit && recentUpper < limit && queueMax <= queueAllowance && !kv.ok) {
      return {
        action: 'continue',
        reason: `${at}: ${slopeText} below the saturation limit ${fmt(limit, 2)} req/s, but ${kv.text}`,
      };
    }
    if (upper < limit && recentUpper < limit && queueMax <= queueAllowance) {
      return {
        action: 'end',
        kind: 'stable',
        reason:
          `${at}: ${slopeText}, its ${conf} upper bound ${fmt(upper, 2)} req/s (latest half ` +
          `${fmt(recentUpper, 2)} req/s) below the saturation limit ${fmt(limit, 2)} req/s, and the queue never ` +
          `above ${fmt(queueMax, 0)} (allowed ${fmt(queueAllowance, 0)}: ${fmt(settings.stableQueueMaxPerPod)} per ` +
          `Pod × ${pods})${kv.text === '' ? '' : `, ${kv.text}`}: the replica keeps up`,
      };
    }
  }
  return {
    action: 'continue',
    reason:
      `${at}: ${slopeText} against the limits ${fmt(earlyLimit, 2)} (saturated) and ${fmt(limit, 2)} req/s ` +
      `(stable), queue max ${fmt(queueMax, 0)}, now ${fmt(queueNow, 0)}: neither saturation nor stability is ` +
      'evident yet',
  };
}

/** What the KV cache says about a stable ending: ok when not given, or no preemption and the usage levelled off. */
function kvCacheEvidence(kvCache: StepEndingContext['kvCache']): { ok: boolean; text: string } {
  if (kvCache === undefined) return { ok: true, text: '' };
  if (!(Number.isFinite(kvCache.preemptions) && kvCache.preemptions >= 0)) {
    return { ok: false, text: `AMP answered ${kvCache.preemptions} preemptions: not a count, so nothing is concluded` };
  }
  if (kvCache.preemptions > KV_CACHE_RULES.maxPreemptions) {
    return {
      ok: false,
      text: `vLLM preempted ${fmt(kvCache.preemptions, 0)} sequences so far: the KV cache does not hold the batch`,
    };
  }
  const window = kvCacheWindowFromSamples(kvCache.samples);
  if (window === null) {
    return {
      ok: false,
      text: `${kvCache.samples.length} KV-cache sample(s), fewer than 3: whether it levelled off is not known yet`,
    };
  }
  // Ending now skips the rest of the hold, so no allowance for a cache still filling "far from full" (the verdict's):
  // on llama-2-13b-h100-kv a probe at 6.4 req/s ended stable at 18 s with its cache at 47 % → 64 % over the latest
  // half, and one at 6.7 req/s ended stable that its own verdict then called saturated (58 % → 77 %).
  const settling = kvCacheSettling(window, null);
  return settling.levelled
    ? { ok: true, text: `no preemption and ${settling.reason}` }
    : { ok: false, text: `${settling.reason}: a stable ending needs it levelled off` };
}

function checkContext(context: StepEndingContext): void {
  const issues: InputIssue[] = [];
  for (const field of ['offeredRps', 'plannedHoldSeconds', 'pods'] as const) {
    if (!(Number.isFinite(context[field]) && context[field] > 0))
      issues.push({ path: `context.${field}`, message: `got ${context[field]}; accepted: a number > 0` });
  }
  const lifetime = context.requestLifetimeSeconds;
  if (lifetime !== null && !(Number.isFinite(lifetime) && lifetime >= 0))
    issues.push({
      path: 'context.requestLifetimeSeconds',
      message: `got ${lifetime}; accepted: seconds >= 0, or null when no request has finished`,
    });
  if (!(Number.isFinite(context.elapsedSeconds) && context.elapsedSeconds >= 0))
    issues.push({
      path: 'context.elapsedSeconds',
      message: `got ${context.elapsedSeconds}; accepted: seconds >= 0`,
    });
  if (issues.length > 0) throw new CalibrationInputInvalidError(issues);
}
