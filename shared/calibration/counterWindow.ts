/**
 * A step's counters read at the window's own samples: what each Pod's counters held at its last scrape before the
 * load began and at its last scrape in the window, so the completions, the preemptions and the mean request lifetime
 * cover exactly the time between those scrapes.
 *
 * Why not `increase(x[window])` alone: with the guide's 30 s scrapes a 45 s window holds one or two samples of each
 * series, and `increase` needs two inside the window, then extrapolates what lies between them to the window's edges
 * (Prometheus docs, "increase()": "extrapolated to cover the full time range"). One sample gives nothing at all (a
 * 30 s step would read 0 completions and look saturated), two give the rate of a part of the window stretched to all
 * of it. The sample before the load is exact instead: during the rest before a step the counters stand still (the
 * previous step's requests finished or were aborted), so every completion between it and the window's last sample
 * happened under the step's load, over (last sample − load start) seconds. Users beside the test completed requests
 * during the rest too: their share (the background rate Deploy measured, spread over the Pods) is taken off.
 *
 * Unusable (null; the caller keeps `increase`): a Pod without a sample before the load or in the window, a Pod
 * that appeared or vanished in between, or a counter that went down (a restarted vLLM resets its counters).
 * Refused (a named error from the shared AMP answer guard, never a number): two series for one Pod, a negative
 * counter or sample time, ±Inf.
 */
import type { InstantSample, MetricsSource } from '../metrics/index.js';
import { mapWithConcurrency } from '../util/index.js';
import {
  aggregate,
  guardByLabel,
  overVllmNames,
  VALUE_DOMAIN,
  VLLM,
  vllmSelector,
  type VllmMetricRef,
} from '../metrics/index.js';
import type { Target } from '../config/index.js';

/** The per-Pod queries read at the load's start and at the window's end. */
export interface CounterWindowQueries {
  /** `max by (pod) (timestamp(vllm:num_requests_running{sel}))`: when each Pod was last scraped (seconds). */
  scrapedAt: string;
  completed: string;
  preemptions: string;
  e2eSum: string;
  e2eCount: string;
  ttftSum: string;
  ttftCount: string;
  /** `vllm:request_inference_time_seconds`: a request's time in the running batch (scheduled to last token). */
  inferenceSum: string;
  inferenceCount: string;
}

export function counterWindowQueries(target: Target): CounterWindowQueries {
  const perPod = (ref: VllmMetricRef, suffix = '') =>
    aggregate(
      'sum',
      ['pod'],
      overVllmNames(ref, (name) => vllmSelector(target, `${name}${suffix}`)),
    );
  return {
    scrapedAt: aggregate(
      'max',
      ['pod'],
      overVllmNames(VLLM.numRequestsRunning, (name) => `timestamp(${vllmSelector(target, name)})`),
    ),
    completed: perPod(VLLM.requestSuccess),
    preemptions: perPod(VLLM.numPreemptions),
    e2eSum: perPod(VLLM.e2eRequestLatency, '_sum'),
    e2eCount: perPod(VLLM.e2eRequestLatency, '_count'),
    ttftSum: perPod(VLLM.timeToFirstToken, '_sum'),
    ttftCount: perPod(VLLM.timeToFirstToken, '_count'),
    inferenceSum: perPod(VLLM.requestInferenceTime, '_sum'),
    inferenceCount: perPod(VLLM.requestInferenceTime, '_count'),
  };
}

/** What the counters say about the window, summed over its Pods. */
export interface CounterWindow {
  /** Completed requests per second: each Pod's completions over the seconds from the load's start to its last sample. */
  completedRps: number;
  /** Seconds from the load's start to the Pods' last samples in the window (their mean): what completedRps covers. */
  spanSeconds: number;
  preemptions: number;
  /** Mean end-to-end − mean TTFT of the requests finished in between; null when none finished. */
  meanLifetimeSeconds: number | null;
  /** Their mean time in the running batch (vllm:request_inference_time_seconds); null when none finished. */
  meanInferenceSeconds: number | null;
  /**
   * The completions between each Pod's last sample before the window's middle and its last sample in the window, how
   * far into the load the earliest of those middle samples lies, and the mean time in the batch of the requests
   * finished in between (null when none did); null when a Pod has no sample in either half.
   */
  lateHalf: { completedRps: number; fromSeconds: number; meanInferenceSeconds: number | null } | null;
}

export interface CounterWindowParams {
  startMs: number;
  endMs: number;
  /** Requests/s the target's users send beside the test (0 when none): their completions during the rest are taken off. */
  backgroundRps: number;
}

type Readings = Record<keyof CounterWindowQueries, Map<string, number>>;

/** The counters summed over the Pods as they are (the completions are summed as rates, each over its Pod's span). */
const SUMMED = ['preemptions', 'e2eSum', 'e2eCount', 'ttftSum', 'ttftCount', 'inferenceSum', 'inferenceCount'] as const;

/** The counters also read at the window's middle, for its late half. */
const LATE_HALF_KEYS = ['scrapedAt', 'completed', 'inferenceSum', 'inferenceCount'] as const;
type LateHalfReadings = Pick<Readings, (typeof LATE_HALF_KEYS)[number]>;

/** Instant queries in flight at once, as measureStep's own: quick without bursting into AMP's query limits. */
const QUERY_CONCURRENCY = 4;

/** Reads the counters at the load's start and at the window's end; null when they cannot cover the window exactly. */
export async function measureCounterWindow(
  source: MetricsSource,
  target: Target,
  params: CounterWindowParams,
): Promise<CounterWindow | null> {
  const queries = counterWindowQueries(target);
  const keys = Object.keys(queries) as Array<keyof CounterWindowQueries>;
  const empty = (): Readings => Object.fromEntries(keys.map((key) => [key, new Map<string, number>()])) as Readings;
  const [before, middle, after] = [empty(), empty(), empty()];
  // Every counter at the load's start and at the window's end; at its middle only what the late half needs.
  const reads = [
    ...keys.map((key) => ({ into: before, timeMs: params.startMs, key })),
    ...LATE_HALF_KEYS.map((key) => ({
      into: middle,
      timeMs: (params.startMs + params.endMs) / 2,
      key,
    })),
    ...keys.map((key) => ({ into: after, timeMs: params.endMs, key })),
  ];
  await mapWithConcurrency(reads, QUERY_CONCURRENCY, async ({ into, timeMs, key }) => {
    into[key] = byPod(await source.instant(queries[key], { timeMs }), key, queries[key]);
  });
  return counterWindowFrom(before, after, params, middle);
}

/**
 * The window's figures from the readings at the load's start, at the window's end and (for the late half, only its
 * LATE_HALF_KEYS) at its middle. Pure; null when unusable (see the file comment).
 */
export function counterWindowFrom(
  before: Readings,
  after: Readings,
  params: CounterWindowParams,
  middle?: LateHalfReadings,
): CounterWindow | null {
  const pods = [...after.scrapedAt.keys()];
  if (pods.length === 0 || pods.length !== before.scrapedAt.size) return null;
  const startS = params.startMs / 1000;
  const share = Math.max(0, params.backgroundRps) / pods.length;
  let completedRps = 0;
  let spans = 0;
  const totals = Object.fromEntries(SUMMED.map((key) => [key, 0])) as Record<(typeof SUMMED)[number], number>;
  for (const pod of pods) {
    const t0 = before.scrapedAt.get(pod);
    const t1 = after.scrapedAt.get(pod) as number;
    // A sample before the load and one inside the window, at least a second in.
    if (t0 === undefined || t0 > startS || t1 < startS + 1) return null;
    const delta = (key: keyof CounterWindowQueries) => (after[key].get(pod) ?? 0) - (before[key].get(pod) ?? 0);
    const completed = delta('completed');
    const deltas = SUMMED.map((key) => [key, delta(key)] as const);
    if ([completed, ...deltas.map(([, d]) => d)].some((d) => !Number.isFinite(d) || d < 0)) return null;
    const span = t1 - startS;
    // The users' completions between the sample before the load and the load's start are not the step's.
    completedRps += Math.max(0, completed - share * (startS - t0)) / span;
    spans += span;
    for (const [key, d] of deltas) totals[key] += d;
  }
  const meanLifetimeSeconds =
    totals.e2eCount > 0 && totals.ttftCount > 0
      ? Math.max(0, totals.e2eSum / totals.e2eCount - totals.ttftSum / totals.ttftCount)
      : null;
  return {
    completedRps,
    spanSeconds: spans / pods.length,
    preemptions: totals.preemptions,
    meanLifetimeSeconds,
    meanInferenceSeconds: totals.inferenceCount > 0 ? totals.inferenceSum / totals.inferenceCount : null,
    lateHalf: middle === undefined ? null : lateHalfFrom(after, middle, pods, startS),
  };
}

/** The late half's completions per second (summed over the Pods) and where it begins; null when a Pod lacks a sample. */
function lateHalfFrom(
  after: Readings,
  middle: LateHalfReadings,
  pods: readonly string[],
  startS: number,
): CounterWindow['lateHalf'] {
  let completedRps = 0;
  let fromSeconds = Number.POSITIVE_INFINITY;
  let inferenceSum = 0;
  let inferenceCount = 0;
  for (const pod of pods) {
    const tm = middle.scrapedAt.get(pod);
    const t1 = after.scrapedAt.get(pod) as number;
    if (tm === undefined || tm < startS + 1 || t1 < tm + 1) return null;
    const delta = (key: (typeof LATE_HALF_KEYS)[number]) => (after[key].get(pod) ?? 0) - (middle[key].get(pod) ?? 0);
    const [completed, sum, count] = [delta('completed'), delta('inferenceSum'), delta('inferenceCount')];
    if ([completed, sum, count].some((d) => !Number.isFinite(d) || d < 0)) return null;
    completedRps += completed / (t1 - tm);
    fromSeconds = Math.min(fromSeconds, tm - startS);
    inferenceSum += sum;
    inferenceCount += count;
  }
  return { completedRps, fromSeconds, meanInferenceSeconds: inferenceCount > 0 ? inferenceSum / inferenceCount : null };
}

/**
 * Each Pod's value of one per-Pod answer, through the shared AMP answer guard: sample times are Unix seconds, the
 * counters, sums of latencies and counts are >= 0; NaN is no data (left out).
 */
function byPod(samples: readonly InstantSample[], key: keyof CounterWindowQueries, query: string): Map<string, number> {
  return guardByLabel(samples, 'pod', key === 'scrapedAt' ? VALUE_DOMAIN.timestamp : VALUE_DOMAIN.nonNegative, query);
}
