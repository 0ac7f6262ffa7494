/**
 * The analysis of a calibration: where one replica saturates, its capacity, and the autoscaling thresholds derived
 * from the last stable step, each with the reason and the formula (the method: docs/calibration.md).
 *
 * The formulas reproduce the AWS EKS guide "Identify scaling metric thresholds for AI inference" from its own
 * measurements: stable up to 50 req/s with p95 ≈ 2.5 s, saturated at 60 req/s → queue threshold 25, p95 guardrail
 * 5 s, scale in when the queue is 0 and p95 < 3 s for 5 minutes.
 */
import { deriveAlertThresholds } from './alertThresholds.js';
import { CalibrationMeasurementError } from './errors.js';
import { evidenceHeld } from './evidence.js';
import { floor1, fmt, round1 } from './format.js';
import type { CalibrationInput } from './input.js';
import { classifyStep } from './measure.js';
import { kneeEstimate, type KneeEstimate } from './capacityEstimate.js';
import { sentLoad } from './sentLoad.js';
import type { CalibrationAnalysis, Derived, StepMeasurement, Thresholds } from './types.js';

/** KEDA's activationThreshold for the queue trigger (the guide's ScaledObject: "1"). */
export const QUEUE_ACTIVATION = 1;

/** Names the saturation point, the last stable rate, one replica's capacity and the thresholds; says what was sent. */
export function analyze(measured: readonly StepMeasurement[], input: CalibrationInput): CalibrationAnalysis {
  return { ...analyzeSteps(measured, input), sent: sentLoad(measured, input) };
}

function analyzeSteps(measured: readonly StepMeasurement[], input: CalibrationInput): CalibrationAnalysis {
  // Only steps that are evidence (shared/calibration/evidence.ts): a step whose checks failed was repeated.
  const steps = measured.filter(evidenceHeld);
  if (steps.length === 0) {
    throw new CalibrationMeasurementError(
      measured.length === 0
        ? 'no load step was measured: there is nothing to analyse'
        : 'no load step passed its evidence checks: there is nothing to analyse',
    );
  }
  const sorted = [...steps].sort((a, b) => a.rateRps - b.rateRps || a.index - b.index);
  const notes = [...repeatNotes(measured), ...stepNotes(sorted, input)];
  const saturated = sorted.find((s) => s.verdict.saturated);
  const stable = sorted.filter((s) => !s.verdict.saturated);
  const highestRate = sorted[sorted.length - 1]?.rateRps ?? 0;

  if (saturated === undefined) {
    const top = stable[stable.length - 1] as StepMeasurement;
    const best = stable.reduce((a, b) =>
      perPod(b, input, b.amp.completedRps) > perPod(a, input, a.amp.completedRps) ? b : a,
    );
    notes.push(
      `no step saturated up to ${fmt(highestRate)} req/s: one replica's true capacity is above the plan, and the ` +
        'thresholds come from the highest step; add higher rates to plan.rates, or use plan.strategy adaptive, to ' +
        'find the saturation point',
    );
    const capacityRps = perPod(best, input, best.amp.completedRps);
    const thresholds = deriveThresholds(top, undefined, input, notes);
    return {
      saturation: {
        found: false,
        reason: `no step saturated within the plan (highest rate ${fmt(highestRate)} req/s)`,
      },
      lastStableRps: top.rateRps,
      capacityRps: {
        value: capacityRps,
        reason:
          `a lower bound: no step saturated, and the most a replica completed was ${fmt(best.amp.completedRps, 1)} ` +
          `req/s at ${fmt(best.rateRps)} req/s offered`,
        formula: `capacity ≥ max(completedRps of the stable steps)${podsSuffix(best, input)}`,
      },
      thresholds,
      // The capacity is a lower bound here: the queue alert derived from it errs low (earlier), never late.
      alerts: deriveAlertThresholds(thresholds, capacityRps, input),
      notes,
    };
  }

  const below = stable.filter((s) => s.rateRps < saturated.rateRps);
  const lastStable = below[below.length - 1];
  const above = stable.filter((s) => s.rateRps > saturated.rateRps);
  if (above.length > 0) {
    notes.push(
      `${above.map((s) => `${fmt(s.rateRps)} req/s`).join(', ')} measured stable although ${fmt(saturated.rateRps)} ` +
        'req/s saturated: the results are noisy (rerun, or lengthen plan.holdSeconds)',
    );
  }
  // Would the step have saturated without the SLO? If not, the replica kept up and only the latency broke the SLO.
  const sloOnly = !classifyStep(
    saturated.amp,
    saturated.k6,
    saturated.rateRps,
    { ...input, slo: {} },
    saturated.holdSeconds,
    saturated.ending,
  ).saturated;

  let capacity: Derived<number> | null;
  if (!sloOnly) {
    const knee = kneeEstimate(sorted) as KneeEstimate;
    capacity = {
      value: perPod(saturated, input, knee.value),
      reason:
        `under overload a server completes requests at its capacity and the excess waits in the queue (a saturated ` +
        `queue's departure rate is its service rate, and the queue grows at offered − capacity): at ` +
        `${fmt(saturated.rateRps)} req/s offered vLLM completed ${fmt(saturated.amp.completedRps, 1)} req/s within ` +
        `the window; ${knee.reason}`,
      formula:
        "capacity = the saturated step's completion rate over its window's second half (else completedRps × W / " +
        '(W − S), W the window, S the mean decode time), offered − queue slope (not when k6 dropped iterations), and ' +
        "running batch / time in it over the window's second half: the median of the three, or the mean of two that " +
        "agree within 10 %, else the batch's, else the completions; never above the lowest saturated rate" +
        `${podsSuffix(saturated, input)}`,
    };
  } else if (lastStable !== undefined) {
    notes.push(
      `the saturation at ${fmt(saturated.rateRps)} req/s came only from the latency SLO ` +
        `(${fmt(input.slo.p95LatencySeconds ?? 0, 2)} s): the replica still kept up with the load there, so the ` +
        'capacity given is the highest rate that met the SLO',
    );
    capacity = {
      value: perPod(lastStable, input, lastStable.rateRps),
      reason: `the highest offered rate whose p95 latency met the SLO of ${fmt(input.slo.p95LatencySeconds ?? 0, 2)} s`,
      formula: `capacity = last stable rate${podsSuffix(lastStable, input)}`,
    };
  } else {
    capacity = null;
    notes.push(
      `the first step (${fmt(saturated.rateRps)} req/s) already broke the latency SLO: no rate met it, so no ` +
        'capacity is given; check the SLO or rerun with lower rates',
    );
  }

  if (lastStable === undefined) {
    notes.push(
      `even the first step (${fmt(saturated.rateRps)} req/s) saturated: there is no stable step to derive ` +
        'thresholds from; rerun with lower rates in plan.rates, or with plan.strategy adaptive',
    );
  }
  const thresholds = lastStable === undefined ? null : deriveThresholds(lastStable, saturated, input, notes);
  return {
    saturation: {
      found: true,
      rateRps: saturated.rateRps,
      stepIndex: saturated.index,
      reasons: [...saturated.verdict.reasons],
    },
    lastStableRps: lastStable?.rateRps ?? null,
    capacityRps: capacity,
    thresholds,
    alerts: deriveAlertThresholds(thresholds, capacity?.value ?? null, input),
    notes,
  };
}

/**
 * The thresholds from the last stable step R (rate per Pod r, p95 p):
 * - queue per Pod = max(activation + 1, floor(r × maxQueueWaitSeconds)): a queue of Q at one Pod holds about Q / r s
 *   of work (Little's law), so the trigger fires once waiting would add more than maxQueueWaitSeconds;
 * - p95 guardrail = min(SLO, guardrailFactor × p), to 0.1 s;
 * - scale in when the queue is 0 and p95 < scaleInFactor × p for scaleInForSeconds.
 */
function deriveThresholds(
  base: StepMeasurement,
  saturated: StepMeasurement | undefined,
  input: CalibrationInput,
  notes: string[],
): Thresholds {
  const knobs = input.thresholds;
  const pods = podsOf(base, input);
  const r = base.rateRps / pods;
  const perPodText = pods > 1 ? ` (${fmt(base.rateRps)} req/s over ${pods} Pods)` : '';
  const queueValue = Math.max(QUEUE_ACTIVATION + 1, Math.floor(r * knobs.maxQueueWaitSeconds + 1e-9));

  const fromAmp = base.amp.p95E2eSeconds;
  const fromK6 = base.k6 === null ? null : base.k6.httpReqDurationMs.p95 / 1000;
  const p95 = fromAmp ?? fromK6 ?? 0;
  if (fromAmp === null) {
    notes.push(
      fromK6 === null
        ? `neither AMP nor k6 has a p95 latency for the step at ${fmt(base.rateRps)} req/s (it ended early, before ` +
            'k6 wrote a summary): the latency thresholds are at their 0.1 s floor; rerun with plan.earlyStop.enabled false'
        : `AMP had no p95 latency for the step at ${fmt(base.rateRps)} req/s: the thresholds use k6's client-side p95 ` +
            `(${fmt(p95, 2)} s) instead`,
    );
  }
  const p95Text = `${fmt(p95, 2)} s`;
  const guard = knobs.guardrailFactor * p95;
  const slo = input.slo.p95LatencySeconds;
  const cappedBySlo = slo !== undefined && slo < guard;
  const guardValue = Math.max(0.1, cappedBySlo ? floor1(slo) : round1(guard));
  const sloText = slo === undefined ? '' : `min(SLO ${fmt(slo, 2)} s, `;
  const guardFormula =
    `${sloText}${fmt(knobs.guardrailFactor)} × p95 at the last stable step = ` +
    `${fmt(knobs.guardrailFactor)} × ${p95Text} = ${fmt(guard, 2)} s${slo === undefined ? '' : ')'}` +
    ` → ${fmt(guardValue, 1)} s (to 0.1 s)`;
  const saturatedP95 = saturated?.amp.p95E2eSeconds ?? null;
  if (saturatedP95 !== null && guardValue >= saturatedP95) {
    notes.push(
      `the p95 guardrail (${fmt(guardValue, 1)} s) is not below the p95 measured at saturation ` +
        `(${fmt(saturatedP95, 2)} s): the latency trigger would fire late; lower thresholds.guardrailFactor`,
    );
  }

  let scaleInValue = Math.max(0.1, round1(knobs.scaleInFactor * p95));
  let scaleInCap = '';
  if (scaleInValue >= guardValue) {
    // Scaling in at a latency the scale-out trigger already counts as too high would make the replicas flap.
    scaleInValue = Math.max(0.1, round1(guardValue - 0.1));
    scaleInCap = `, capped at 0.1 s below the p95 guardrail (${fmt(guardValue, 1)} s)`;
    notes.push(
      `the scale-in latency was capped below the p95 guardrail: ${fmt(knobs.scaleInFactor)} × ${p95Text} is not ` +
        `below ${fmt(guardValue, 1)} s`,
    );
  }
  const sat =
    saturated === undefined || saturatedP95 === null
      ? ''
      : ` (p95 reached ${fmt(saturatedP95, 2)} s at ${fmt(saturated.rateRps)} req/s)`;

  return {
    queueDepthPerPod: {
      value: queueValue,
      reason:
        `a queue of Q at one Pod holds about Q / R s of work at the last stable rate R = ${fmt(r)} req/s per ` +
        `Pod${perPodText}: ${queueValue} queued requests wait about ${fmt(queueValue / r, 2)} s. The guide: R = 50, ` +
        '0.5 s → 25 (its threshold "25")',
      formula:
        `max(activation + 1, floor(R × maxQueueWaitSeconds)) = max(${QUEUE_ACTIVATION + 1}, floor(${fmt(r)} × ` +
        `${fmt(knobs.maxQueueWaitSeconds)})) = ${queueValue}`,
    },
    queueActivation: {
      value: QUEUE_ACTIVATION,
      reason:
        "KEDA's activation threshold: a single queued request does not activate scaling (the guide's " +
        'activationThreshold "1")',
      formula: `${QUEUE_ACTIVATION} (fixed)`,
    },
    p95LatencySeconds: {
      value: guardValue,
      reason: cappedBySlo
        ? `the latency SLO (${fmt(slo, 2)} s) is lower than ${fmt(knobs.guardrailFactor)} × the stable p95, so the ` +
          'guardrail is the SLO (to 0.1 s, rounded down)'
        : `scale out when p95 end-to-end latency reaches ${fmt(knobs.guardrailFactor)} × its stable value ` +
          `(${p95Text} at ${fmt(base.rateRps)} req/s)${sat}: well above normal variation, before users see ` +
          'saturation latency. The guide: 2 × 2.5 s = 5 s (its threshold "5")',
      formula: guardFormula,
    },
    scaleIn: {
      value: { queueDepth: 0, p95BelowSeconds: scaleInValue, forSeconds: knobs.scaleInForSeconds },
      reason:
        `scale in only when nothing waits and p95 is back near its stable value for ${fmt(knobs.scaleInForSeconds)} ` +
        's, slower than scaling out, so short lulls do not remove replicas. The guide: queue 0 and p95 < 3 s ' +
        '(1.2 × 2.5 s) for 5 minutes',
      formula:
        `queue = 0 and p95 < ${fmt(knobs.scaleInFactor)} × ${p95Text} = ${fmt(scaleInValue, 1)} s${scaleInCap} ` +
        `for ${fmt(knobs.scaleInForSeconds)} s`,
    },
  };
}

/** The Pods a step measured: AMP's count, or the planned test replicas when AMP had none. */
function podsOf(step: StepMeasurement, input: CalibrationInput): number {
  return step.amp.pods > 0 ? step.amp.pods : input.testReplicas;
}

function perPod(step: StepMeasurement, input: CalibrationInput, rps: number): number {
  return rps / podsOf(step, input);
}

function podsSuffix(step: StepMeasurement, input: CalibrationInput): string {
  const pods = podsOf(step, input);
  return pods > 1 ? ` / ${pods} Pods` : '';
}

/** The steps whose evidence failed, repeated and left out of the analysis, with why. */
function repeatNotes(steps: readonly StepMeasurement[]): string[] {
  return [...steps]
    .sort((a, b) => a.index - b.index)
    .filter((step) => !evidenceHeld(step))
    .map(
      (step) =>
        `step ${step.index + 1} at ${fmt(step.rateRps)} req/s was repeated and is not used: ` +
        (step.evidence?.reasons ?? []).join('; '),
    );
}

/** What a user should know about individual steps: Pod counts, drops, errors, steps without traffic, preemptions. */
function stepNotes(steps: readonly StepMeasurement[], input: CalibrationInput): string[] {
  const notes: string[] = [];
  for (const step of steps) {
    const at = `at ${fmt(step.rateRps)} req/s`;
    if (step.amp.pods !== input.testReplicas) {
      notes.push(
        `${at} AMP saw ${step.amp.pods} Pod(s) where the test runs ${input.testReplicas}: per-replica figures ` +
          `divide by ${podsOf(step, input)}`,
      );
    }
    const k6 = step.k6;
    if (k6?.httpReqs === 0 || step.amp.completedRps === 0) {
      notes.push(
        `${at} no requests ${k6?.httpReqs === 0 ? 'were sent by k6' : 'completed in vLLM'}: the step ` +
          'measured no traffic (check the k6 Job and the Service)',
      );
    }
    if (k6 !== null && k6.httpReqFailed > 0) {
      notes.push(`${at} ${k6.httpReqFailed} of ${k6.httpReqs} k6 requests failed`);
    }
    if (k6 !== null && !step.verdict.saturated && k6.droppedIterations > 0) {
      notes.push(
        `${at} k6 dropped ${k6.droppedIterations} iterations (under the 1 % that counts as saturation): ` +
          `consider a larger plan.maxVUs`,
      );
    }
    // Preemptions make a step saturated (KV_CACHE_RULES); the note says what to change to get more from a replica.
    if (step.amp.preemptions > 0) {
      notes.push(
        `${at} vLLM preempted ${fmt(step.amp.preemptions, 0)} sequences (KV-cache max ` +
          `${fmt(step.amp.kvCacheUsageMax * 100, 0)} %), so the step counts as saturated: the KV cache is short for ` +
          'this request shape (more GPU memory for it, or a lower --max-model-len, raises the capacity)',
      );
    }
  }
  return notes;
}
