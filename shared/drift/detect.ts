import type { HistoryRecord } from '../calibration/history/index.js';
import { evidenceHeld, fmt, SATURATION_RULES, type StepMeasurement } from '../calibration/index.js';
import type { LiveEvidence } from './evidence.js';

/**
 * Has a target drifted from its last calibration? Three kinds of finding, each with its evidence in words and figures:
 *
 * - `template`: the Pod template is not the one calibrated (image, model, GPU count, vLLM args, the memory flags
 *   included: they size the KV cache and so the capacity).
 * - `capacity`: the live queue grows while each Pod completes fewer requests than `rateFraction` × the calibrated
 *   capacity: the replica saturates below what the calibration measured. "Grows" is the calibration's own rule
 *   (SATURATION_RULES: a slope above max(0.1 req/s, 2 % of the rate), with a queue of at least 5).
 * - `latency`: at a live rate per Pod, the p95 is above `latencyFactor` × the p95 the calibration measured at a rate at
 *   least as high (a stable step): each request got slower at the same load.
 *
 * The live checks need traffic: below `minTrafficFraction` × the capacity per Pod they say so instead of judging.
 */
export interface DriftThresholds {
  rateFraction: number;
  latencyFactor: number;
  minTrafficFraction: number;
}

export const DRIFT_DEFAULTS: DriftThresholds = { rateFraction: 0.8, latencyFactor: 1.5, minTrafficFraction: 0.1 };

export const DRIFT_KINDS = { template: 'template', capacity: 'capacity', latency: 'latency' } as const;
export type DriftKind = (typeof DRIFT_KINDS)[keyof typeof DRIFT_KINDS];

export interface DriftFinding {
  kind: DriftKind;
  /** One sentence with the figures. */
  evidence: string;
}

export interface DriftAssessment {
  /** The calibration compared with; null when the target has none (then nothing can drift). */
  calibration: { execution: string; finishedAt: string; capacityPerPodRps: number | null } | null;
  findings: DriftFinding[];
  /** What was not judged, and why (no calibration, too little traffic, no stable step at this rate). */
  notJudged: string[];
}

/** The template differences (as `what: recorded → live`) and the live evidence, against the record. */
export function assessDrift(
  record: HistoryRecord | undefined,
  templateDifferences: readonly string[],
  live: LiveEvidence,
  thresholds: DriftThresholds = DRIFT_DEFAULTS,
): DriftAssessment {
  if (record === undefined)
    return { calibration: null, findings: [], notJudged: ['no calibration of this target: nothing to compare with'] };
  const { provenance, analysis, steps } = record.report;
  const capacity = analysis.capacityRps?.value ?? null;
  const calibration = {
    execution: provenance.executionName,
    finishedAt: provenance.finishedAt,
    capacityPerPodRps: capacity,
  };
  const findings: DriftFinding[] = [];
  const notJudged: string[] = [];
  if (templateDifferences.length > 0)
    findings.push({
      kind: DRIFT_KINDS.template,
      evidence: `the Pod template changed since calibration ${provenance.executionName}: ${templateDifferences.join('; ')}`,
    });

  const r = live.completedPerPodRps;
  const window = `the last ${live.windowSeconds} s`;
  if (capacity === null) {
    notJudged.push(`calibration ${provenance.executionName} found no capacity: the live load is not judged`);
    return { calibration, findings, notJudged };
  }
  if (live.pods === 0 || r < thresholds.minTrafficFraction * capacity) {
    notJudged.push(
      `too little traffic to judge the capacity: ${fmt(r)} req/s per Pod over ${window}, below ` +
        `${fmt(thresholds.minTrafficFraction * 100, 0)} % of the calibrated ${fmt(capacity)} req/s`,
    );
    return { calibration, findings, notJudged };
  }

  const totalRate = r * live.pods;
  const slopeLimit = Math.max(
    SATURATION_RULES.queueSlopeMinPerSecond,
    SATURATION_RULES.queueSlopeRateFraction * totalRate,
  );
  const below = thresholds.rateFraction * capacity;
  if (r < below && live.queueSlopePerSecond > slopeLimit && live.queueMean >= SATURATION_RULES.queueMaxFloor / 2)
    findings.push({
      kind: DRIFT_KINDS.capacity,
      evidence:
        `the queue grew ${fmt(live.queueSlopePerSecond)} req/s (mean ${fmt(live.queueMean, 1)} waiting) over ${window} ` +
        `while each of ${live.pods} Pod(s) completed ${fmt(r)} req/s, below ${fmt(thresholds.rateFraction * 100, 0)} % ` +
        `of the calibrated capacity (${fmt(capacity)} req/s per Pod): the replica saturates below what calibration ` +
        `${provenance.executionName} measured`,
    });

  const reference = stableStepAtOrAbove(steps, r);
  if (live.p95E2eSeconds === null) notJudged.push(`no request completed with a latency over ${window}`);
  else if (reference === undefined)
    notJudged.push(`no stable calibration step at ${fmt(r)} req/s per Pod or above: the latency is not judged`);
  else if (live.p95E2eSeconds > thresholds.latencyFactor * reference.p95)
    findings.push({
      kind: DRIFT_KINDS.latency,
      evidence:
        `p95 ${fmt(live.p95E2eSeconds)} s over ${window} at ${fmt(r)} req/s per Pod, above ` +
        `${fmt(thresholds.latencyFactor)} × the ${fmt(reference.p95)} s calibration ${provenance.executionName} ` +
        `measured at ${fmt(reference.perPodRps)} req/s per Pod: each request is slower at the same load`,
    });
  return { calibration, findings, notJudged };
}

/** The stable, evidence-holding step with the lowest rate per Pod at or above `perPodRps`, and its p95. */
function stableStepAtOrAbove(
  steps: readonly StepMeasurement[],
  perPodRps: number,
): { perPodRps: number; p95: number } | undefined {
  const candidates = steps
    .filter((s) => !s.verdict.saturated && evidenceHeld(s) && s.amp.p95E2eSeconds !== null)
    .map((s) => ({ perPodRps: s.rateRps / Math.max(1, s.amp.pods), p95: s.amp.p95E2eSeconds as number }))
    .filter((s) => s.perPodRps >= perPodRps)
    .sort((a, b) => a.perPodRps - b.perPodRps);
  return candidates[0];
}
