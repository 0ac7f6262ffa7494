/**
 * Measuring a load step: what AMP says about the step's hold window, what k6 says about the load it sent, and the
 * verdict (stable or saturated, with the reasons). Also the readiness gate run before the first step, and the
 * parsing of the k6 summary from the Job's log.
 */
import {
  type InstantSample,
  MetricsError,
  type MetricsSource,
  type RangeSeries,
  VALUE_DOMAIN,
  type ValueDomain,
  domainOfMetric,
  guardByLabel,
  guardSingleValue,
  guardSinglePoints,
} from '../metrics/index.js';
import { K6_SUMMARY_MARKER, type K6Summary, k6SummarySchema } from '../kube/index.js';
import { mapWithConcurrency, mean } from '../util/index.js';
import {
  CalibrationDependencyUnavailableError,
  CalibrationInputInvalidError,
  CalibrationJobFailedError,
  CalibrationWindowEmptyError,
  type InputIssue,
} from './errors.js';
import { fmt, pct } from './format.js';
import type { CalibrationInput } from './input.js';
import { READINESS_RULES, SATURATION_RULES, queueStepSeconds } from './rules.js';
import {
  calibrationTarget,
  lateHalfSeconds,
  readinessQueries,
  scrapeSamplesQuery,
  stepQueries,
  type StepQueries,
} from './stepQueries.js';
import { kvCacheSaturationReasons, type KvCacheWindow } from './kvCache.js';
import { measureCounterWindow } from './counterWindow.js';
import type { AmpStepMeasurement, StepEnding, StepMeasurement, StepVerdict } from './types.js';

export interface MeasureDeps {
  source: MetricsSource;
}

/** One load step's hold window: the offered rate and the epoch-ms bounds the AMP figures cover. */
export interface StepWindow {
  index: number;
  /** The rate offered in all: k6's plus the target's own traffic (background). */
  rateRps: number;
  /** k6's share of it; default rateRps (the target serves nobody else). */
  k6RateRps?: number;
  holdSeconds: number;
  startMs: number;
  endMs: number;
  /** The engine's `--max-num-seqs` per Pod, when known: recorded with the measurement for the strategy. */
  maxNumSeqs?: number | null;
}

/** Instant queries in flight at once: finishes quickly without bursting into AMP's query limits. */
const QUERY_CONCURRENCY = 4;

/**
 * Measures one step from AMP over [startMs, endMs] (instant queries evaluated at endMs over the window, the queue as
 * a range query, the counters per Pod at the window's start, middle and end: ./counterWindow.ts) and classifies it. `k6` is null when the step ended early (its Job was stopped before k6 printed a
 * summary); `ending` says how the step ended and is recorded with it. A failing AMP query that may succeed later
 * throws CalibrationDependencyUnavailableError; no vLLM series, or no queue sample, in the window throws
 * CalibrationWindowEmptyError (a CalibrationMeasurementError; the workflow records it as failed evidence:
 * emptyWindowStep).
 */
export async function measureStep(
  deps: MeasureDeps,
  input: CalibrationInput,
  window: StepWindow,
  k6: K6Summary | null,
  ending?: StepEnding,
): Promise<StepMeasurement> {
  checkWindow(window);
  const target = calibrationTarget(input);
  const windowSeconds = (window.endMs - window.startMs) / 1000;
  const queries = stepQueries(target, windowSeconds);
  const where = `${target.namespace}/${target.deployment} (model ${JSON.stringify(input.target.model)})`;
  const span = `${new Date(window.startMs).toISOString()} to ${new Date(window.endMs).toISOString()}`;

  const instantKeys = [
    'pods',
    'completed',
    'completedLateHalf',
    'p95E2e',
    'p95Ttft',
    'p95InterToken',
    'kvCacheMax',
    'kvCacheMean',
    'kvCacheLast',
    'kvCacheLatestHalfStart',
    'preemptions',
    'meanLifetime',
    'runningMean',
    'runningLatestHalfMean',
  ] as const satisfies ReadonlyArray<keyof StepQueries>;
  // The counters at the window's own samples when they cover it (exact with any scrape interval), else `increase`:
  // read beside the window's other queries.
  const counterWindow = ask(`the counters of ${where}`, () =>
    measureCounterWindow(deps.source, target, {
      startMs: window.startMs,
      endMs: window.endMs,
      backgroundRps: window.rateRps - (window.k6RateRps ?? window.rateRps),
    }),
  );
  const [queueSeries, values, counters] = await Promise.all([
    ask(`the queue depth of ${where}`, () =>
      deps.source.range(queries.queue, {
        startMs: window.startMs,
        endMs: window.endMs,
        stepSeconds: queueStepSeconds(windowSeconds),
      }),
    ),
    mapWithConcurrency(instantKeys, QUERY_CONCURRENCY, (key) =>
      ask(`${key} of ${where}`, () => deps.source.instant(queries[key], { timeMs: window.endMs })),
    ),
    counterWindow,
  ]);
  const value = (key: (typeof instantKeys)[number]): number | null =>
    singleValue(values[instantKeys.indexOf(key)] ?? [], queries[key], stepValueDomain(key));
  // Mean end-to-end − mean TTFT may fall below 0 (see VALUE_DOMAIN.difference): a decode time is at least 0.
  const meanLifetime = value('meanLifetime');
  const meanLifetimeSeconds = meanLifetime === null ? null : Math.max(0, meanLifetime);

  const pods = value('pods') ?? 0;
  if (pods === 0) {
    throw new CalibrationWindowEmptyError(
      `step ${window.index + 1} (${fmt(window.rateRps)} req/s): AMP has no vLLM series for ${where} from ${span}; ` +
        'check that the ServiceMonitor selects the vLLM Service and that the Pods were Ready during the step',
    );
  }
  const queue = queuePoints(queueSeries, queries.queue);
  if (queue.length === 0) {
    throw new CalibrationWindowEmptyError(
      `step ${window.index + 1} (${fmt(window.rateRps)} req/s): AMP has no vllm:num_requests_waiting samples for ` +
        `${where} from ${span}, although ${pods} Pod(s) had vLLM series; the scrapes may have failed during the step`,
    );
  }

  const amp: AmpStepMeasurement = {
    queueMean: mean(queue.map((p) => p.value)),
    queueMax: Math.max(...queue.map((p) => p.value)),
    queueSlopePerSecond: leastSquaresSlope(queue),
    p95E2eSeconds: value('p95E2e'),
    p95TtftSeconds: value('p95Ttft'),
    p95InterTokenSeconds: value('p95InterToken'),
    kvCacheUsageMean: value('kvCacheMean') ?? 0,
    kvCacheUsageMax: value('kvCacheMax') ?? 0,
    kvCacheUsageLast: value('kvCacheLast'),
    kvCacheUsageLatestHalfStart: value('kvCacheLatestHalfStart'),
    preemptions: value('preemptions') ?? 0,
    completedRps: (value('completed') ?? 0) / windowSeconds,
    completedRpsLateHalf: (value('completedLateHalf') ?? 0) / lateHalfSeconds(windowSeconds),
    pods,
    meanLifetimeSeconds,
    runningMean: value('runningMean'),
    runningLatestHalfMean: value('runningLatestHalfMean'),
    ...(counters === null
      ? {}
      : {
          completedRps: counters.completedRps,
          completedSpanSeconds: counters.spanSeconds,
          completedRpsLateHalf: counters.lateHalf?.completedRps ?? null,
          completedLateHalfFromSeconds: counters.lateHalf?.fromSeconds ?? null,
          preemptions: counters.preemptions,
          meanLifetimeSeconds: counters.meanLifetimeSeconds ?? meanLifetimeSeconds,
          meanInferenceSeconds: counters.meanInferenceSeconds,
          meanInferenceSecondsLateHalf: counters.lateHalf?.meanInferenceSeconds ?? null,
        }),
  };
  return {
    index: window.index,
    rateRps: window.rateRps,
    holdSeconds: window.holdSeconds,
    windowStart: new Date(window.startMs).toISOString(),
    windowEnd: new Date(window.endMs).toISOString(),
    k6,
    amp,
    verdict: classifyStep(amp, k6, window.rateRps, input, window.holdSeconds, ending, window.k6RateRps),
    ...(window.k6RateRps === undefined ? {} : { k6RateRps: window.k6RateRps }),
    ...(window.maxNumSeqs === undefined ? {} : { maxNumSeqs: window.maxNumSeqs }),
    ...(ending === undefined ? {} : { ending }),
  };
}

/**
 * A step whose window AMP held no sample of (`reason`: the CalibrationWindowEmptyError's message), as the report
 * records it: AMP's figures at zero or unknown, and a verdict that is never used (the step's evidence failed, so it
 * is repeated and not judged) saying why. k6's summary is kept: it shows what was sent.
 */
export function emptyWindowStep(
  window: StepWindow,
  k6: K6Summary | null,
  reason: string,
  ending?: StepEnding,
): StepMeasurement {
  checkWindow(window);
  return {
    index: window.index,
    rateRps: window.rateRps,
    holdSeconds: window.holdSeconds,
    windowStart: new Date(window.startMs).toISOString(),
    windowEnd: new Date(window.endMs).toISOString(),
    k6,
    amp: {
      queueMean: 0,
      queueMax: 0,
      queueSlopePerSecond: 0,
      p95E2eSeconds: null,
      p95TtftSeconds: null,
      p95InterTokenSeconds: null,
      kvCacheUsageMean: 0,
      kvCacheUsageMax: 0,
      kvCacheUsageLast: null,
      kvCacheUsageLatestHalfStart: null,
      preemptions: 0,
      completedRps: 0,
      completedRpsLateHalf: null,
      pods: 0,
      runningMean: null,
      runningLatestHalfMean: null,
      meanLifetimeSeconds: null,
    },
    verdict: { saturated: false, reasons: [`not judged: ${reason}`] },
    ...(window.k6RateRps === undefined ? {} : { k6RateRps: window.k6RateRps }),
    ...(window.maxNumSeqs === undefined ? {} : { maxNumSeqs: window.maxNumSeqs }),
    ...(ending === undefined ? {} : { ending }),
  };
}

/**
 * The saturation verdict of one step: saturated when ANY of these holds (SATURATION_RULES):
 * 1. the queue keeps growing: slope > max(0.1, 2 % of the rate) req/s and a queue of at least 5 at some point;
 * 2. vLLM's completions fall behind: completedRps < 95 % × rate × (1 − L / hold), L = k6's mean request latency.
 *    The window closes on about rate × L requests still in flight (Little's law, L = λW), which complete after it and
 *    are not "behind";
 * 3. k6 got fewer than 95 % of ITS rate (the rate less the target's own users) as successful responses per second of
 *    hold, or dropped more than 1 % of its planned iterations (its rate × hold);
 * 4. p95 end-to-end latency exceeds `input.slo.p95LatencySeconds`, when an SLO is set;
 * 5. the step was ended early because the queue's growth was statistically evident (shared/calibration/earlyStop.ts);
 * 6. the KV cache (KV_CACHE_RULES, shared/calibration/kvCache.ts): vLLM preempted sequences in the window, or the
 *    cache had not levelled off by the window's end (it rose more than 3 points over the latest half and, rising so,
 *    would pass 90 % within another half window). A KV-bound replica's queue grows only once its cache is full, so without
 *    this a step above its capacity reads stable while the cache is still filling.
 * Without a k6 summary (a step ended early: its Job was stopped) rule 3 is skipped, and the in-flight allowance of
 * rule 2 uses AMP's p95 latency instead of k6's mean (larger: the allowance errs towards "stable").
 * Every reason is a sentence with the numbers.
 */
export function classifyStep(
  amp: AmpStepMeasurement,
  k6: K6Summary | null,
  rateRps: number,
  input: CalibrationInput,
  holdSeconds: number = input.plan.holdSeconds,
  ending?: StepEnding,
  k6RateRps: number = rateRps,
): StepVerdict {
  const rules = SATURATION_RULES;
  const reasons: string[] = [];
  // With users beside the test, the replica is offered k6's rate plus theirs: the AMP rules judge the total, k6's
  // own rules (3) judge what k6 sent.
  const users = rateRps - k6RateRps;
  const offered =
    users > 0.0005
      ? `at ${fmt(rateRps)} req/s offered (k6 ${fmt(k6RateRps)} + the target's users ${fmt(users)})`
      : `at ${fmt(rateRps)} req/s offered`;

  const slopeLimit = Math.max(rules.queueSlopeMinPerSecond, rules.queueSlopeRateFraction * rateRps);
  if (amp.queueSlopePerSecond > slopeLimit && amp.queueMax >= rules.queueMaxFloor) {
    reasons.push(
      `queue grew ${fmt(amp.queueSlopePerSecond, 1)} req/s (max ${fmt(amp.queueMax, 0)}) ${offered}: ` +
        `more than ${fmt(slopeLimit, 2)} req/s with at least ${rules.queueMaxFloor} queued, so the replica is not ` +
        'draining its queue',
    );
  }

  const latencySeconds = k6 === null ? (amp.p95E2eSeconds ?? 0) : k6.httpReqDurationMs.avg / 1000;
  // The completions cover the hold, or the seconds up to the window's last sample when read at the samples.
  const completedSeconds = amp.completedSpanSeconds ?? holdSeconds;
  const inFlightSeconds = Math.min(completedSeconds, Math.max(0, latencySeconds));
  const expectedRps = rules.completionFraction * rateRps * (1 - inFlightSeconds / completedSeconds);
  if (amp.completedRps < expectedRps) {
    reasons.push(
      `vLLM completed ${fmt(amp.completedRps, 1)} req/s ${offered}, below ${fmt(expectedRps, 1)} req/s ` +
        `(${pct(rules.completionFraction, 0)} of the rate, less the ${fmt(inFlightSeconds, 1)} s of requests still ` +
        'in flight when the window closed): completions fall behind the offered rate',
    );
  }

  if (k6 !== null) reasons.push(...k6Reasons(k6, k6RateRps, holdSeconds, offered));

  const slo = input.slo.p95LatencySeconds;
  if (slo !== undefined && amp.p95E2eSeconds !== null && amp.p95E2eSeconds > slo) {
    reasons.push(
      `p95 end-to-end latency ${fmt(amp.p95E2eSeconds, 2)} s ${offered} exceeds the SLO of ${fmt(slo, 2)} s`,
    );
  }
  reasons.push(...kvCacheSaturationReasons(kvCacheWindowOf(amp, holdSeconds), amp.preemptions, offered));

  if (ending?.kind === 'saturated-early') {
    reasons.push(
      `the step was ended after ${fmt(ending.heldSeconds, 0)} s of its ${fmt(ending.plannedHoldSeconds, 0)} s hold ` +
        `${offered}: ${ending.reason}`,
    );
  }
  return { saturated: reasons.length > 0, reasons };
}

/** Rule 6's figures from a step's AMP measurement; null when AMP had no KV sample (or an older report). */
function kvCacheWindowOf(amp: AmpStepMeasurement, windowSeconds: number): KvCacheWindow | null {
  const last = amp.kvCacheUsageLast;
  const latestHalfStart = amp.kvCacheUsageLatestHalfStart;
  if (last === undefined || last === null || latestHalfStart === undefined || latestHalfStart === null) return null;
  return { last, latestHalfStart, latestHalfSeconds: lateHalfSeconds(windowSeconds) };
}

/** Rule 3 of classifyStep: what k6 saw of the load it sent. */
function k6Reasons(k6: K6Summary, rateRps: number, holdSeconds: number, offered: string): string[] {
  const rules = SATURATION_RULES;
  const reasons: string[] = [];
  const achievedRps = Math.max(0, k6.httpReqs - k6.httpReqFailed) / holdSeconds;
  if (achievedRps < rules.k6AchievedFraction * rateRps) {
    reasons.push(
      `k6 got ${fmt(achievedRps, 1)} successful responses/s ${offered} (${pct(achievedRps / rateRps)}), below ` +
        `${pct(rules.k6AchievedFraction, 0)}` +
        (k6.httpReqFailed > 0 ? `; ${k6.httpReqFailed} of ${k6.httpReqs} requests failed` : ''),
    );
  }
  const planned = Math.max(1, Math.round(rateRps * holdSeconds));
  if (k6.droppedIterations / planned > rules.k6DroppedFraction) {
    reasons.push(
      `k6 dropped ${k6.droppedIterations} of ${planned} planned iterations (${pct(k6.droppedIterations / planned)}) ` +
        `${offered}, more than ${pct(rules.k6DroppedFraction, 0)}: every VU was waiting on a slow response`,
    );
  }
  return reasons;
}

/**
 * The k6 summary from a k6 Pod's log: the last line starting with K6_SUMMARY_MARKER, validated. Missing or invalid
 * throws CalibrationJobFailedError saying what was wrong.
 */
export function parseK6SummaryFromLog(log: string): K6Summary {
  const line = log
    .split(/\r?\n/)
    .reverse()
    .find((l) => l.startsWith(K6_SUMMARY_MARKER));
  if (line === undefined) {
    throw new CalibrationJobFailedError(
      `the k6 log has no summary line (a line starting with ${JSON.stringify(K6_SUMMARY_MARKER)}): the script ` +
        `did not reach handleSummary; last log line: ${JSON.stringify(lastLine(log))}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(line.slice(K6_SUMMARY_MARKER.length));
  } catch (error) {
    throw new CalibrationJobFailedError(
      `the k6 summary line is not JSON (${error instanceof Error ? error.message : String(error)}): ` +
        JSON.stringify(line.slice(0, 200)),
    );
  }
  const parsed = k6SummarySchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new CalibrationJobFailedError(`the k6 summary line does not have the expected fields: ${problems}`);
  }
  return parsed.data;
}

export interface ReadinessParams {
  /** The Ready Pods of the Deployment (names). */
  pods: string[];
  /** The warmup Job's k6 summary. */
  warmup: K6Summary;
  nowMs: number;
  /**
   * When the warmup Job finished (its completionTime). The latency check looks at the warmup's last requests, so it
   * is evaluated one scrape after this time, not at `nowMs`: polling again later sees the same requests once AMP has
   * them. Default: `nowMs`.
   */
  warmupEndedMs?: number;
}

export interface ReadinessResult {
  ready: boolean;
  /** One sentence per check, passed or not. */
  reasons: string[];
}

/**
 * The readiness gate before the first load step:
 * 1. every listed Ready Pod has vLLM series in AMP now (`count by (pod) (vllm:num_requests_running{sel})`);
 * 2. the first-request slowness is over: the mean end-to-end latency of the requests that finished in the warmup's
 *    tail (the last 25 % of its duration, at least 2.5 scrape intervals; from `increase` of the histogram's _sum and
 *    _count) is at most 25 % above the warmup's median (k6). The slow first requests raise the mean of the whole
 *    warmup but not its median, so a tail as fast as the median shows they are behind us. With 1 VU the client's
 *    duration is the server's latency plus a few ms of HTTP, so the two compare.
 */
export async function readinessCheck(
  deps: MeasureDeps,
  input: CalibrationInput,
  params: ReadinessParams,
): Promise<ReadinessResult> {
  const target = calibrationTarget(input);
  const rules = READINESS_RULES;
  const { warmup, nowMs } = params;
  const warmupEndMs = Math.min(nowMs, params.warmupEndedMs ?? nowMs);
  const reasons: string[] = [];
  let ready = true;

  const podsQuery = readinessQueries(target, 1).podsWithSeries;
  const [withSeries, probe] = await Promise.all([
    ask('the Pods with vLLM series', () => deps.source.instant(podsQuery, { timeMs: nowMs })),
    ask('the scrape interval', () =>
      deps.source.instant(scrapeSamplesQuery(target, rules.scrapeProbeSeconds), { timeMs: warmupEndMs }),
    ),
  ]);
  const missing = podsWithoutSeries(params.pods, withSeries, podsQuery);
  if (params.pods.length === 0) {
    ready = false;
    reasons.push('no Ready Pods were listed: nothing to measure yet');
  } else if (missing.length > 0) {
    ready = false;
    reasons.push(
      `${missing.length} of ${params.pods.length} Ready Pods have no vLLM series in AMP yet (${missing.join(', ')}): ` +
        'waiting for their first scrapes to be remote-written (AMP can lag by about a minute)',
    );
  } else {
    reasons.push(`all ${params.pods.length} Ready Pods have vLLM series in AMP`);
  }

  if (warmup.httpReqs === 0) {
    reasons.push('no warmup requests were sent (warmup.requests = 0): the first-request slowness was not checked');
    return { ready, reasons };
  }
  const samples = singleValue(probe) ?? 0;
  const scrapeSeconds =
    samples >= 2 ? rules.scrapeProbeSeconds / samples : (rules.defaultScrapeIntervalSeconds as number);
  const tailSeconds = Math.ceil(
    Math.max(rules.minTailScrapes * scrapeSeconds, rules.warmupTailFraction * warmup.durationSeconds),
  );
  // One scrape after the warmup's end, so the last requests are in the window.
  const evalMs = Math.min(nowMs, warmupEndMs + scrapeSeconds * 1000);
  const queries = readinessQueries(target, tailSeconds);
  const [meanSamples, countSamples] = await Promise.all([
    ask('the mean latency of the last warmup requests', () =>
      deps.source.instant(queries.recentMeanE2e, { timeMs: evalMs }),
    ),
    ask('the count of the last warmup requests', () => deps.source.instant(queries.recentCount, { timeMs: evalMs })),
  ]);
  const recentMean = singleValue(meanSamples);
  const recentCount = singleValue(countSamples) ?? 0;
  const medianSeconds = warmup.httpReqDurationMs.med / 1000;
  const limit = medianSeconds * (1 + rules.recentLatencyTolerance);
  const tail = `the ${tailSeconds} s before ${new Date(evalMs).toISOString()}`;
  if (recentMean === null || recentCount < 1) {
    ready = false;
    reasons.push(
      `no warmup request finished in AMP in ${tail} yet: waiting for the data (AMP can lag by about a minute)`,
    );
  } else if (recentMean > limit) {
    ready = false;
    reasons.push(
      `the last ${fmt(recentCount, 0)} warmup requests (${tail}) took ${fmt(recentMean, 2)} s on average, more ` +
        `than ${pct(rules.recentLatencyTolerance, 0)} above the warmup's median of ${fmt(medianSeconds, 2)} s: the ` +
        'GPU is still warming up (raise warmup.requests if this persists)',
    );
  } else {
    reasons.push(
      `the last ${fmt(recentCount, 0)} warmup requests (${tail}) took ${fmt(recentMean, 2)} s on average, within ` +
        `${pct(rules.recentLatencyTolerance, 0)} of the warmup's median of ${fmt(medianSeconds, 2)} s: the ` +
        'first-request slowness is over',
    );
  }
  return { ready, reasons };
}

/**
 * The domain of a step query's value: the KV cache's are 0-1 fractions, the mean lifetime a difference of two means
 * (it may fall below 0), every other one a count, rate or latency (>= 0).
 */
function stepValueDomain(key: keyof StepQueries): ValueDomain {
  if (key.startsWith('kvCache')) return domainOfMetric({ renamed: 'kvCacheUsage' });
  return key === 'meanLifetime' ? VALUE_DOMAIN.difference : VALUE_DOMAIN.nonNegative;
}

/**
 * The Pods of `pods` with no vLLM series in the answer to `readinessQueries(...).podsWithSeries` (`count by (pod)`: one
 * series per Pod, a count), through the shared AMP answer guard: two series for one Pod, a series without `pod`, a
 * negative count or ±Inf is a named error, never a Pod counted as seen.
 */
export function podsWithoutSeries(pods: readonly string[], answer: readonly InstantSample[], query: string): string[] {
  const seen = guardByLabel(answer, 'pod', VALUE_DOMAIN.nonNegative, query);
  return pods.filter((pod) => !seen.has(pod));
}

// ---------------------------------------------------------------------------------------------------------------

/** Runs one AMP query; an error that may pass (throttling, 5xx, network, timeout) becomes the retryable one. */
async function ask<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof MetricsError && error.retryable) {
      throw new CalibrationDependencyUnavailableError(`AMP did not answer the query for ${what}: ${error.message}`, {
        cause: error,
      });
    }
    throw error;
  }
}

/**
 * The value of a one-series answer (the queries aggregate to one series); null for no data (empty, NaN). Several
 * series, ±Inf and values outside `domain` are named errors (the shared AMP answer guard), never a number.
 */
function singleValue(
  samples: readonly InstantSample[],
  query = 'a calibration query',
  domain: ValueDomain = VALUE_DOMAIN.nonNegative,
): number | null {
  return guardSingleValue(samples, domain, query) ?? null;
}

/** The queue depth's points (a count, >= 0), NaN dropped; several series or a bad value is a named error. */
function queuePoints(series: readonly RangeSeries[], query: string): Array<{ t: number; value: number }> {
  return guardSinglePoints(series, VALUE_DOMAIN.nonNegative, query).map((p) => ({
    t: p.timestampMs / 1000,
    value: p.value,
  }));
}

/** Ordinary least-squares slope of value over t (per second): Σ(t−t̄)(y−ȳ) / Σ(t−t̄)²; 0 with fewer than 2 points. */
export function leastSquaresSlope(points: ReadonlyArray<{ t: number; value: number }>): number {
  if (points.length < 2) return 0;
  const tMean = mean(points.map((p) => p.t));
  const yMean = mean(points.map((p) => p.value));
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.t - tMean) * (p.value - yMean);
    den += (p.t - tMean) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

function checkWindow(window: StepWindow): void {
  const issues: InputIssue[] = [];
  if (!Number.isInteger(window.index) || window.index < 0) {
    issues.push({ path: 'window.index', message: `got ${window.index}; accepted: an integer >= 0` });
  }
  for (const field of ['rateRps', 'holdSeconds'] as const) {
    if (!(Number.isFinite(window[field]) && window[field] > 0)) {
      issues.push({ path: `window.${field}`, message: `got ${window[field]}; accepted: a number > 0` });
    }
  }
  for (const field of ['startMs', 'endMs'] as const) {
    if (!Number.isFinite(window[field])) {
      issues.push({ path: `window.${field}`, message: `got ${window[field]}; accepted: epoch milliseconds` });
    }
  }
  if (issues.length === 0 && window.endMs - window.startMs < 1000) {
    issues.push({
      path: 'window.endMs',
      message: `got ${window.endMs}, ${window.endMs - window.startMs} ms after startMs; accepted: at least 1 s after it`,
    });
  }
  if (issues.length > 0) throw new CalibrationInputInvalidError(issues);
}

function lastLine(log: string): string {
  const lines = log.trimEnd().split(/\r?\n/);
  return (lines[lines.length - 1] ?? '').slice(0, 200);
}
