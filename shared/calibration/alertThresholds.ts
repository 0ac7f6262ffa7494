import { fmt } from './format.js';
import type { CalibrationInput } from './input.js';
import type { Derived, DerivedAlertThresholds, Thresholds } from './types.js';

/**
 * The alert thresholds a calibration derives for its target, from the same measurements as the KEDA thresholds, so
 * that the alerts speak of this replica and not of the guide's:
 *
 * - VLLMHighQueueDepth (waiting requests per Pod, held 2 min): a queue that holds `alertQueueWaitSeconds` of work at
 *   the replica's capacity C (1 s by default: every request waits about a second before it starts), and at least one
 *   above the KEDA queue threshold, so the alert never fires where KEDA has not yet been asked to scale. Held for its
 *   `for`, it means the scaling did not absorb the load (at maxReplicaCount, Pods Pending for a GPU). The guide: C ≈
 *   50-55 req/s → 50 (its alert's "> 50").
 * - VLLMHighLatency (p95 per model, held 2 min): the latency SLO when the calibration was given one; else the p95
 *   guardrail at which KEDA scales out (twice the stable p95). Held for its `for`, the scaling did not bring the p95
 *   back. The guide: 2 × 2.5 s = 5 s (its alert's default SLO and its KEDA threshold, both 5 s).
 *
 * Null without thresholds or a capacity: nothing measured to derive from.
 */
export function deriveAlertThresholds(
  thresholds: Thresholds | null,
  capacityPerPodRps: number | null,
  input: CalibrationInput,
): DerivedAlertThresholds | null {
  if (thresholds === null || capacityPerPodRps === null || !(capacityPerPodRps > 0)) return null;
  return {
    VLLMHighQueueDepth: queueAlert(thresholds, capacityPerPodRps, input),
    VLLMHighLatency: latencyAlert(thresholds, input),
  };
}

function queueAlert(thresholds: Thresholds, capacity: number, input: CalibrationInput): Derived<number> {
  const wait = input.thresholds.alertQueueWaitSeconds;
  const keda = thresholds.queueDepthPerPod.value;
  const fromWork = Math.floor(capacity * wait + 1e-9);
  const value = Math.max(keda + 1, fromWork);
  const capped = value > fromWork ? `, raised to one above the KEDA queue threshold (${keda})` : '';
  return {
    value,
    reason:
      `a queue of Q at one Pod holds about Q / C s of work at the replica's capacity C = ${fmt(capacity, 1)} req/s: ` +
      `${value} waiting requests delay every request by about ${fmt(value / capacity, 2)} s; held for the alert's ` +
      `\`for\`, the scaling has not absorbed the load${capped}. The guide: C ≈ 50 req/s, 1 s → 50 (its "> 50")`,
    formula:
      `max(KEDA queue threshold + 1, floor(C × alertQueueWaitSeconds)) = max(${keda + 1}, floor(${fmt(capacity, 1)} × ` +
      `${fmt(wait)})) = ${value}`,
  };
}

function latencyAlert(thresholds: Thresholds, input: CalibrationInput): Derived<number> {
  const slo = input.slo.p95LatencySeconds;
  if (slo !== undefined)
    return {
      value: slo,
      reason: 'the latency SLO the calibration was given (slo.p95LatencySeconds)',
      formula: `SLO = ${fmt(slo, 2)} s`,
    };
  const guard = thresholds.p95LatencySeconds.value;
  return {
    value: guard,
    reason:
      "no SLO was given: the p95 guardrail at which KEDA scales out (twice the stable p95); held for the alert's " +
      "`for`, the scaling has not brought the p95 back. The guide: 2 × 2.5 s = 5 s (its alert's default and its KEDA " +
      'threshold)',
    formula: `the KEDA p95 guardrail = ${thresholds.p95LatencySeconds.formula}`,
  };
}
