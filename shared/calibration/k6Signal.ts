/**
 * Saturation from k6's live metrics (its REST API, read through the Pod proxy at each look): a signal without AMP's
 * lag. Pure: the readings and the time come in as parameters.
 *
 * Under constant arrival, k6 starts `rate` iterations per second whatever the answers' latency, and each busy VU has
 * one request in flight. Little's law (L = λW; any queueing text, e.g. Harchol-Balter, "Performance Modeling and
 * Design of Computer Systems", 6.4): when the server keeps up, the requests in flight level off at about rate ×
 * latency; when it does not, the unanswered ones pile up and L grows at about (offered − served) per second without
 * bound. So the step is saturated when:
 * - the requests in flight keep growing: the least-squares slope of `vus` over the readings since a request first
 *   finished (before that L is still filling towards λW) is significantly ABOVE the early-ending limit
 *   max(0.5, 2 % of the rate) req/s (SATURATION_RULES.earlyEndingSlopeMinPerSecond; one-sided t-test with n − 2
 *   df, as shared/calibration/earlyStop.ts tests the queue: it reuses its fitSlope and tCritical), it still grew over the latest interval, and it rose by at least
 *   SATURATION_RULES.queueMaxFloor, after minSeconds of load, minReadings readings and minSpanSeconds; or
 * - k6 dropped iterations: every VU was busy (heavy overload: the pool of maxVUs ran out), after minSeconds.
 * It never decides `stable`: stability is judged from AMP, whose series are the judge of the step's verdict.
 */
import { earlySaturationSlopeLimit, fitSlope, tCritical, DEFAULT_MIN_SECONDS_FRACTION } from './earlyStop.js';
import { fmt } from './format.js';
import type { EarlyStopSettings } from './input.js';
import { SATURATION_RULES } from './rules.js';

/** One look at k6's live metrics (shared/kube/k6.ts), as WatchLoadStep keeps it in `$.watch.k6Readings`. */
export interface K6Reading {
  /** When k6 answered, epoch ms. */
  tMs: number;
  /** VUs busy: requests in flight. */
  vus: number;
  iterations: number;
  droppedIterations: number;
  httpReqs: number;
  /** The fastest request so far, ms (about one unloaded request's lifetime); absent before any answer. */
  minDurationMs?: number;
}

export const K6_SIGNAL_RULES = {
  /**
   * Readings in the slope fit: n − 2 = 3 degrees of freedom at least (critical t 4.54 at 99 %). With 4, successive
   * looks at a stable step whose readings are correlated (AR(1) φ 0.6) ended 1.15 % of 2000 runs as saturated; with 5,
   * 0.7 % (k6Signal.test.ts).
   */
  minReadings: 5,
  /** The fitted readings span at least this many seconds: a trend, not the jitter of one moment. */
  minSpanSeconds: 10,
  /** Readings kept in the watch state (the latest ones): enough for any hold at one look per second or more. */
  keptReadings: 40,
} as const;

export interface K6SignalContext {
  /** The rate offered in all (k6's and the background's), requests/s: the slope limit scales with it. */
  offeredRps: number;
  loadStartMs: number;
  nowMs: number;
  plannedHoldSeconds: number;
  settings: Pick<EarlyStopSettings, 'enabled' | 'confidence' | 'minSeconds'>;
}

/** Keep loading (the reason says what k6 showed), or end the step now as saturated. */
export type K6SignalDecision =
  { action: 'continue'; reason: string } | { action: 'end'; kind: 'saturated'; reason: string };

/** Decides from one step's k6 readings whether it is saturated already (see the file comment for the rules). */
export function decideK6Signal(readings: readonly K6Reading[], context: K6SignalContext): K6SignalDecision {
  const { settings, offeredRps, loadStartMs, nowMs, plannedHoldSeconds } = context;
  if (!settings.enabled) return { action: 'continue', reason: 'k6: early ending is off' };
  const points = readings
    .filter((r) => [r.tMs, r.vus, r.iterations, r.droppedIterations].every(Number.isFinite) && r.tMs >= loadStartMs)
    .sort((a, b) => a.tMs - b.tMs);
  const latest = points.at(-1);
  if (latest === undefined) return { action: 'continue', reason: 'k6: no live reading yet' };
  const elapsed = (nowMs - loadStartMs) / 1000;
  const minSeconds = settings.minSeconds ?? DEFAULT_MIN_SECONDS_FRACTION * plannedHoldSeconds;
  if (elapsed < minSeconds)
    return {
      action: 'continue',
      reason: `k6: ${fmt(latest.vus, 0)} requests in flight after ${fmt(elapsed, 0)} s; no ending before ${fmt(minSeconds, 0)} s of load`,
    };

  const dropped = latest.droppedIterations;
  const droppedText = `${fmt(dropped, 0)} iteration(s) dropped`;
  // Before a request finished, L is still filling towards rate × latency: growth then says nothing.
  const settled = points.filter((r) => r.iterations > 0);
  const growth = slopeTest(settled, offeredRps, settings.confidence);
  if (growth.saturated)
    return {
      action: 'end',
      kind: 'saturated',
      reason: `k6: ${growth.text}${dropped > 0 ? `; ${droppedText}` : ''}: the replica does not keep up`,
    };
  if (dropped > 0)
    return {
      action: 'end',
      kind: 'saturated',
      reason: `k6: ${droppedText} with ${fmt(latest.vus, 0)} requests in flight (every VU busy); ${growth.text}`,
    };
  return { action: 'continue', reason: `k6: ${growth.text}${growth.tested ? ': no sustained growth' : ''}` };
}

/** The in-flight growth test over `points` (sorted): whether it says saturated, and what it saw. */
function slopeTest(
  points: readonly K6Reading[],
  offeredRps: number,
  confidence: number,
): { saturated: boolean; tested: boolean; text: string } {
  const { minReadings, minSpanSeconds } = K6_SIGNAL_RULES;
  const first = points[0];
  const last = points.at(-1);
  if (first === undefined || last === undefined || points.length < minReadings)
    return {
      saturated: false,
      tested: false,
      text: `${points.length} reading(s) since a request first finished (${minReadings} needed)`,
    };
  const span = (last.tMs - first.tMs) / 1000;
  const rose = `requests in flight from ${fmt(first.vus, 0)} to ${fmt(last.vus, 0)} over ${fmt(span, 0)} s`;
  if (span < minSpanSeconds)
    return { saturated: false, tested: false, text: `${rose} (${minSpanSeconds} s needed for a trend)` };

  const fit = fitSlope(points.map((r) => ({ tMs: r.tMs, queue: r.vus })));
  const limit = earlySaturationSlopeLimit(offeredRps);
  const critical = tCritical(confidence, fit.n - 2);
  const t = fit.standardError === 0 ? Number.POSITIVE_INFINITY : (fit.slopePerSecond - limit) / fit.standardError;
  const previous = points.at(-2) as K6Reading;
  const lastSlope = (last.vus - previous.vus) / Math.max(1e-3, (last.tMs - previous.tMs) / 1000);
  const stats =
    `${fit.slopePerSecond >= 0 ? '+' : ''}${fmt(fit.slopePerSecond, 1)}/s, t = ${fmt(t, 1)} against the limit ` +
    `${fmt(limit, 2)}/s (critical ${fmt(critical, 2)}, one-sided ${fmt(confidence * 100, 0)} %, n = ${fit.n})`;
  const saturated =
    fit.slopePerSecond > limit &&
    t > critical &&
    lastSlope > limit &&
    last.vus - first.vus >= SATURATION_RULES.queueMaxFloor;
  return {
    saturated,
    tested: true,
    text: saturated
      ? `requests in flight rose from ${fmt(first.vus, 0)} to ${fmt(last.vus, 0)} over ${fmt(span, 0)} s (${stats})`
      : `${rose} (${stats})`,
  };
}
