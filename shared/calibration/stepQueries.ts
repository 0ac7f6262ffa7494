/**
 * The PromQL of a calibration: what one load step's hold window and the readiness gate ask AMP. Every selector comes
 * from shared/metrics/promql.ts (values escaped, renamed vLLM series asked under both names); this file only adds
 * the window functions the calibration needs (`increase`, `*_over_time`, `count`) around them.
 */
import {
  aggregate,
  assertDuration,
  dropNaN,
  histogramQuantile,
  overVllmNames,
  ratio,
  VLLM,
  vllmGauge,
  type VllmMetricRef,
  vllmSelector,
} from '../metrics/index.js';
import type { Target } from '../config/index.js';
import type { CalibrationInput } from './input.js';
import { measuredDeployment } from './measuredDeployment.js';

/** The queries of one step, evaluated at the end of its hold window (the queue one as a range over the window). */
export interface StepQueries {
  /** `sum(vllm:num_requests_waiting{sel})`: a range query over the hold window. */
  queue: string;
  p95E2e: string;
  p95Ttft: string;
  p95InterToken: string;
  /** KV-cache usage of the busiest Pod: its highest sample, and its mean over the window. */
  kvCacheMax: string;
  kvCacheMean: string;
  /** KV-cache usage of the busiest Pod now, and where the window's latest half begins (`offset` its length). */
  kvCacheLast: string;
  kvCacheLatestHalfStart: string;
  preemptions: string;
  /** Requests completed in the window (all finish reasons); divide by the window length for a rate. */
  completed: string;
  /** Requests completed in the window's second half (its length: lateHalfSeconds). */
  completedLateHalf: string;
  /** Pods that had vLLM series during the window. */
  pods: string;
  /** Requests in the running batches (all Pods together), averaged over the window. */
  runningMean: string;
  /** The same averaged over the window's latest half (lateHalfSeconds). */
  runningLatestHalfMean: string;
  /**
   * The mean decode time of the requests that finished in the window: mean end-to-end − mean time to first token,
   * from the histograms' _sum / _count (exact means, not interpolated from buckets); empty when none finished.
   */
  meanLifetime: string;
}

/**
 * The `Target` the metrics module builds matchers from, taken from a calibration input: the Deployment the load goes
 * to (its shadow copy in deploy.mode shadow, whose Pods the target's own matcher never selects).
 */
export function calibrationTarget(input: CalibrationInput): Target {
  const { cluster, namespace, model, clusterLabel } = input.target;
  const deployment = measuredDeployment(input);
  return {
    name: `${namespace}/${deployment}`,
    cluster,
    namespace,
    deployment,
    model,
    ...(clusterLabel === undefined ? {} : { clusterLabel }),
  };
}

/** A window in whole seconds as a PromQL duration (`60s`); Prometheus ranges take integers. */
export function windowDuration(seconds: number): string {
  return assertDuration(`${Math.max(1, Math.round(seconds))}s`, 'window');
}

/** `increase(metric{sel}[window])` for every exposed name of `ref`. */
function increaseOf(target: Target, ref: VllmMetricRef, window: string, suffix = ''): string {
  return overVllmNames(ref, (name) => `increase(${vllmSelector(target, `${name}${suffix}`)}[${window}])`);
}

/** `fn(metric{sel}[window])` for every exposed name of `ref` (`fn` one of the `*_over_time` functions). */
function overTime(fn: 'max_over_time' | 'avg_over_time', target: Target, ref: VllmMetricRef, window: string): string {
  return overVllmNames(ref, (name) => `${fn}(${vllmSelector(target, name)}[${window}])`);
}

/**
 * The q-quantile of every request that finished in the window:
 * `histogram_quantile(q, sum by (le) (increase(<name>_bucket{sel}[window]))) > -Inf`. `increase` over the whole hold
 * (not `rate` over a trailing minute) so the quantile covers exactly the step's requests; NaN (no request finished)
 * is dropped, so an empty answer means "no requests".
 */
function windowQuantile(target: Target, q: number, ref: VllmMetricRef, window: string): string {
  return dropNaN(histogramQuantile(q, aggregate('sum', ['le'], increaseOf(target, ref, window, '_bucket'))));
}

/** The queries of a step whose hold window lasts `windowSeconds`. */
export function stepQueries(target: Target, windowSeconds: number): StepQueries {
  const window = windowDuration(windowSeconds);
  const kv: VllmMetricRef = { renamed: 'kvCacheUsage' };
  return {
    queue: aggregate('sum', [], vllmGauge(target, VLLM.numRequestsWaiting)),
    p95E2e: windowQuantile(target, 0.95, VLLM.e2eRequestLatency, window),
    p95Ttft: windowQuantile(target, 0.95, VLLM.timeToFirstToken, window),
    p95InterToken: windowQuantile(target, 0.95, { renamed: 'interTokenLatency' }, window),
    kvCacheMax: aggregate('max', [], overTime('max_over_time', target, kv, window)),
    kvCacheMean: aggregate('max', [], overTime('avg_over_time', target, kv, window)),
    kvCacheLast: aggregate('max', [], vllmGauge(target, kv)),
    kvCacheLatestHalfStart: aggregate(
      'max',
      [],
      overVllmNames(
        kv,
        (name) => `${vllmSelector(target, name)} offset ${windowDuration(lateHalfSeconds(windowSeconds))}`,
      ),
    ),
    preemptions: aggregate('sum', [], increaseOf(target, VLLM.numPreemptions, window)),
    completed: aggregate('sum', [], increaseOf(target, VLLM.requestSuccess, window)),
    // One count per Pod whatever other labels (instance, engine) the series carry.
    completedLateHalf: aggregate(
      'sum',
      [],
      increaseOf(target, VLLM.requestSuccess, windowDuration(lateHalfSeconds(windowSeconds))),
    ),
    pods: `count(${aggregate('max', ['pod'], overTime('max_over_time', target, VLLM.numRequestsRunning, window))})`,
    runningMean: aggregate('sum', [], overTime('avg_over_time', target, VLLM.numRequestsRunning, window)),
    runningLatestHalfMean: aggregate(
      'sum',
      [],
      overTime('avg_over_time', target, VLLM.numRequestsRunning, windowDuration(lateHalfSeconds(windowSeconds))),
    ),
    meanLifetime: dropNaN(
      `${windowMean(target, VLLM.e2eRequestLatency, window)} - ${windowMean(target, VLLM.timeToFirstToken, window)}`,
    ),
  };
}

/** The length of a window's second half as its query rounds it (whole seconds, at least 1). */
export function lateHalfSeconds(windowSeconds: number): number {
  return Math.max(1, Math.round(windowSeconds / 2));
}

/** The mean of the requests that finished in the window: increase(_sum) / increase(_count), summed over the Pods. */
function windowMean(target: Target, ref: VllmMetricRef, window: string): string {
  const sumOf = (suffix: string) => aggregate('sum', [], increaseOf(target, ref, window, suffix));
  return `(${ratio(sumOf('_sum'), sumOf('_count'))})`;
}

/** The readiness gate's queries. */
export interface ReadinessQueries {
  /** One series per Pod that has vLLM series now. */
  podsWithSeries: string;
  /** Mean end-to-end latency of the requests that finished in the window (NaN dropped: empty when none did). */
  recentMeanE2e: string;
  /** Requests that finished in the window. */
  recentCount: string;
}

/** The readiness queries; `windowSeconds` is the tail of the warmup whose requests are averaged. */
export function readinessQueries(target: Target, windowSeconds: number): ReadinessQueries {
  const window = windowDuration(windowSeconds);
  const e2e = VLLM.e2eRequestLatency;
  const sumOf = (suffix: string) => aggregate('sum', [], increaseOf(target, e2e, window, suffix));
  return {
    podsWithSeries: `count by (pod) (${vllmSelector(target, VLLM.numRequestsRunning)})`,
    // The histogram's _sum / _count over the window: the mean of exactly those requests (Prometheus docs,
    // "Histograms and summaries": rate(x_sum) / rate(x_count) is the average).
    recentMeanE2e: dropNaN(ratio(sumOf('_sum'), sumOf('_count'))),
    recentCount: sumOf('_count'),
  };
}

/**
 * Samples of one vLLM gauge series over `windowSeconds`: `max(count_over_time(vllm:num_requests_running{sel}[w]))`.
 * The window divided by it estimates the scrape interval (AMP does not expose the scrape configuration).
 */
export function scrapeSamplesQuery(target: Target, windowSeconds: number): string {
  const window = windowDuration(windowSeconds);
  return aggregate('max', [], `count_over_time(${vllmSelector(target, VLLM.numRequestsRunning)}[${window}])`);
}

/**
 * The newest sample AMP holds of the target's vLLM series, the Pod furthest behind deciding:
 * `min(timestamp(vllm:num_requests_running{sel}))` (seconds). A window is complete in AMP once this is past its end:
 * remote write delivers each series' samples in order, so nothing older can still arrive.
 */
export function latestSampleQuery(target: Target): string {
  return aggregate('min', [], `timestamp(${vllmSelector(target, VLLM.numRequestsRunning)})`);
}

/**
 * The target's completion counters, one series per Pod and finish reason (`vllm:request_success_total{sel}` under
 * every exposed name): Deploy reads them over the lookback to measure what the target already serves.
 */
export function completionCountersQuery(target: Target): string {
  return vllmGauge(target, VLLM.requestSuccess);
}
