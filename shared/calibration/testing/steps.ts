/**
 * Realistic calibration data for unit tests: inputs, k6 summaries and measured steps. The verdict of every built
 * step comes from `classifyStep`, so the numbers decide whether a step saturated, never a hand-set flag.
 *
 * `guideSteps` is shaped like the AWS EKS guide's own run ("Identify scaling metric thresholds for AI inference"):
 * Ministral 3 8B on one L40S, queue near 0 up to 50 req/s, 150-350 queued at 60 req/s, p95 steady at about 2.5 s
 * rising to 6-10 s at saturation. `ministralTwinSteps` carries the numbers the twin's `ministral-8b-l40s` profile
 * gives (sim/vllm/capacity.ts `measureLatency`, 60 s per rate), including its 94 % completion at 50 req/s.
 */
import type { K6Summary } from '../../kube/index.js';
import { parseCalibrationInput, type CalibrationInput, type CalibrationInputSpec } from '../input.js';
import { classifyStep } from '../measure.js';
import type { AmpStepMeasurement, StepMeasurement } from '../types.js';

export const T0_MS = Date.UTC(2025, 5, 2, 9, 0, 0);

/** A valid input for the guide's target; `overrides` replace whole top-level sections. */
export function testInput(overrides: Partial<CalibrationInputSpec> = {}): CalibrationInput {
  return parseCalibrationInput({
    target: {
      cluster: 'ai-eks-docs',
      region: 'us-east-2',
      namespace: 'default',
      deployment: 'vllm-inference-app',
      model: 'mistralai/Ministral-3-8B-Instruct-2512',
      ampWorkspaceUrl: 'https://aps-workspaces.us-east-2.amazonaws.com/workspaces/ws-0123/',
    },
    // The target's own Pods are measured (the default, shadow, measures its copy's: stepQueries.test.ts).
    deploy: { mode: 'adopt' },
    ...overrides,
  });
}

/** A k6 constant-arrival-rate summary of a step that sent everything and got every answer. */
export function k6Summary(rateRps: number, holdSeconds = 60, overrides: Partial<K6Summary> = {}): K6Summary {
  const sent = Math.round(rateRps * holdSeconds);
  const latencyMs = overrides.httpReqDurationMs ?? {
    avg: 2000,
    min: 900,
    med: 1900,
    max: 3100,
    p90: 2300,
    p95: 2500,
    p99: 2900,
  };
  const durationSeconds = holdSeconds + latencyMs.max / 1000;
  return {
    executor: 'constant-arrival-rate',
    rate: rateRps,
    durationSeconds,
    iterations: sent,
    droppedIterations: 0,
    httpReqs: sent,
    httpReqFailed: 0,
    iterationsRate: sent / durationSeconds,
    ...overrides,
    httpReqDurationMs: latencyMs,
  };
}

/** AMP figures of a stable step at `rateRps` (override what the case is about). */
export function ampStable(rateRps: number, overrides: Partial<AmpStepMeasurement> = {}): AmpStepMeasurement {
  return {
    queueMean: 0.1,
    queueMax: 1,
    queueSlopePerSecond: 0,
    p95E2eSeconds: 2.5,
    p95TtftSeconds: 0.06,
    p95InterTokenSeconds: 0.03,
    kvCacheUsageMean: 0.04,
    kvCacheUsageMax: 0.06,
    preemptions: 0,
    completedRps: rateRps * 0.98,
    pods: 1,
    ...overrides,
  };
}

export interface StepSpec {
  rateRps: number;
  amp?: Partial<AmpStepMeasurement>;
  k6?: Partial<K6Summary>;
  holdSeconds?: number;
}

/** Builds measured steps in order, each classified by `classifyStep` against `input`. */
export function buildSteps(specs: readonly StepSpec[], input: CalibrationInput): StepMeasurement[] {
  return specs.map((spec, index) => {
    const holdSeconds = spec.holdSeconds ?? 60;
    const startMs = T0_MS + index * (holdSeconds + 30) * 1000;
    const amp = ampStable(spec.rateRps, spec.amp);
    const k6 = k6Summary(spec.rateRps, holdSeconds, spec.k6);
    return {
      index,
      rateRps: spec.rateRps,
      holdSeconds,
      windowStart: new Date(startMs).toISOString(),
      windowEnd: new Date(startMs + holdSeconds * 1000).toISOString(),
      k6,
      amp,
      verdict: classifyStep(amp, k6, spec.rateRps, input, holdSeconds),
    };
  });
}

/** The guide's run: stable 10-50 req/s with p95 creeping up to 2.5 s, saturated at 60 (queue 150-350, p95 8 s). */
export const GUIDE_STEP_SPECS: readonly StepSpec[] = [
  { rateRps: 10, amp: { p95E2eSeconds: 2.3, queueMax: 0, queueMean: 0, completedRps: 9.8 } },
  { rateRps: 20, amp: { p95E2eSeconds: 2.35, queueMax: 0, queueMean: 0, completedRps: 19.6 } },
  { rateRps: 30, amp: { p95E2eSeconds: 2.4, queueMax: 1, completedRps: 29.4 } },
  { rateRps: 40, amp: { p95E2eSeconds: 2.45, queueMax: 1, completedRps: 39.1 } },
  { rateRps: 50, amp: { p95E2eSeconds: 2.5, queueMax: 2, queueMean: 0.3, completedRps: 48.6 } },
  {
    rateRps: 60,
    amp: {
      queueMean: 150,
      queueMax: 350,
      queueSlopePerSecond: 5.6,
      p95E2eSeconds: 8.0,
      p95TtftSeconds: 5.1,
      kvCacheUsageMean: 0.08,
      kvCacheUsageMax: 0.09,
      completedRps: 54.5,
    },
    k6: {
      httpReqDurationMs: { avg: 6000, min: 1000, med: 5800, max: 10400, p90: 9000, p95: 9800, p99: 10200 },
    },
  },
];

/** The twin's ministral-8b-l40s profile through the plan (sim/vllm/capacity.ts, 60 s per rate, mean latency). */
export const MINISTRAL_TWIN_STEP_SPECS: readonly StepSpec[] = [
  { rateRps: 10, amp: { p95E2eSeconds: 1.31, queueMax: 0, queueMean: 0, completedRps: 9.8 } },
  { rateRps: 20, amp: { p95E2eSeconds: 1.56, queueMax: 0, queueMean: 0, completedRps: 19.5 } },
  { rateRps: 30, amp: { p95E2eSeconds: 1.92, queueMax: 0, queueMean: 0, completedRps: 29.1 } },
  {
    rateRps: 40,
    amp: { p95E2eSeconds: 2.5, queueMax: 0, queueMean: 0, completedRps: 38.4 },
    k6: { httpReqDurationMs: { avg: 2100, min: 1200, med: 2000, max: 2900, p90: 2400, p95: 2500, p99: 2800 } },
  },
  {
    rateRps: 50,
    // 94 % of the offered rate completed inside the window: the rest were still in flight when it closed.
    amp: { p95E2eSeconds: 3.6, queueMax: 1, queueMean: 0.4, completedRps: 47.0 },
    k6: { httpReqDurationMs: { avg: 2900, min: 1300, med: 2800, max: 4100, p90: 3400, p95: 3600, p99: 3900 } },
  },
  {
    rateRps: 60,
    amp: {
      p95E2eSeconds: 8.64,
      p95TtftSeconds: 4.38,
      queueMax: 249,
      queueMean: 108.9,
      queueSlopePerSecond: 4.1,
      completedRps: 51.6,
    },
    k6: { httpReqDurationMs: { avg: 5200, min: 1300, med: 4900, max: 9900, p90: 8000, p95: 8600, p99: 9500 } },
  },
];
