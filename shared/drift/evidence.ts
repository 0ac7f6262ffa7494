import type { Target } from '../config/index.js';
import {
  aggregate,
  guardByLabel,
  guardSingleValue,
  type MetricsSource,
  VALUE_DOMAIN,
  VLLM,
  vllmGauge,
  vllmHistogramQuantile,
  vllmRate,
} from '../metrics/index.js';

/** What the target's live metrics say over the last `windowSeconds` (read from AMP at `timeMs`). */
export interface LiveEvidence {
  windowSeconds: number;
  /** Pods that completed requests in the window. */
  pods: number;
  /** Completed requests per second per Pod (the mean over those Pods). */
  completedPerPodRps: number;
  /** How fast the queue (waiting requests, all Pods) grew: PromQL's deriv() over the window, requests/s. */
  queueSlopePerSecond: number;
  /** The mean waiting requests (all Pods) over the window. */
  queueMean: number;
  /** The target's p95 end-to-end latency over the window; null when no request completed. */
  p95E2eSeconds: number | null;
}

/**
 * Reads the live evidence of one target's capacity from AMP: the same series the calibration reads, over a recent
 * window. Every answer goes through the answer guard (a negative rate, ±Inf, two series where one is expected are
 * named errors, never figures).
 */
export async function readLiveEvidence(
  source: MetricsSource,
  target: Target,
  windowSeconds: number,
  timeMs: number,
): Promise<LiveEvidence> {
  const window = `${windowSeconds}s`;
  const at = { timeMs };
  const completed = aggregate('sum', ['pod'], vllmRate(target, VLLM.requestSuccess, window));
  const waiting = vllmGauge(target, VLLM.numRequestsWaiting);
  const slope = `sum(deriv(${waiting}[${window}]))`;
  const mean = `sum(avg_over_time(${waiting}[${window}]))`;
  const p95 = vllmHistogramQuantile(target, 0.95, VLLM.e2eRequestLatency, window);
  const [perPod, slopeAnswer, meanAnswer, p95Answer] = await Promise.all([
    source.instant(completed, at),
    source.instant(slope, at),
    source.instant(mean, at),
    source.instant(p95, at),
  ]);
  const rates = [...guardByLabel(perPod, 'pod', VALUE_DOMAIN.nonNegative, completed).values()].filter((r) => r > 0);
  return {
    windowSeconds,
    pods: rates.length,
    completedPerPodRps: rates.length === 0 ? 0 : rates.reduce((a, b) => a + b, 0) / rates.length,
    queueSlopePerSecond: guardSingleValue(slopeAnswer, VALUE_DOMAIN.difference, slope) ?? 0,
    queueMean: guardSingleValue(meanAnswer, VALUE_DOMAIN.nonNegative, mean) ?? 0,
    p95E2eSeconds: guardSingleValue(p95Answer, VALUE_DOMAIN.nonNegative, p95) ?? null,
  };
}
