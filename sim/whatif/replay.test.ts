import { describe, expect, it } from '@jest/globals';
import { scaledObject, type ScaledObjectInputSpec } from '../../shared/keda/index.js';
import { loadProfile } from '../profile/loadProfile.js';
import { candidateFromScaledObject, type Candidate } from './candidate.js';
import { measurePerformanceModel, type PerformanceModel } from './performanceModel.js';
import { replay, type ReplayInput } from './replay.js';
import type { RateTrace } from './trace.js';

/**
 * A replica that completes 10 req/s, with a p95 of 1 s up to 5 req/s and 8 s from 7 req/s on (a slow engine), and
 * no queue below capacity: the p95 climbs while `vllm:num_requests_waiting` stays 0, the case ADR 0019 is about.
 */
const SLOW_MODEL: PerformanceModel = {
  profile: 'test',
  shape: { promptTokens: 35, maxTokens: 100 },
  capacityRps: 10,
  points: [
    { rps: 1, p95S: 1, meanWaiting: 0 },
    { rps: 5, p95S: 1, meanWaiting: 0 },
    { rps: 7, p95S: 8, meanWaiting: 0 },
    { rps: 9.5, p95S: 8, meanWaiting: 0 },
  ],
};
/** The same replica with a flat 1 s p95 below capacity: only a backlog makes it slow. */
const FLAT_MODEL: PerformanceModel = { ...SLOW_MODEL, points: SLOW_MODEL.points.map((p) => ({ ...p, p95S: 1 })) };

function candidate(label: string, spec: Omit<ScaledObjectInputSpec, 'model' | 'ampWorkspaceUrl'> = {}): Candidate {
  return candidateFromScaledObject(
    label,
    scaledObject({ model: 'm', ampWorkspaceUrl: 'http://prometheus:9090', authentication: false, ...spec }),
  );
}

/** A trace of `parts` in order: each a rate held for some seconds. */
function trace(...parts: Array<[rps: number, seconds: number]>): RateTrace {
  return {
    source: 'test',
    rps: Float64Array.from(parts.flatMap(([rps, seconds]) => Array<number>(seconds).fill(rps))),
  };
}

function run(overrides: Partial<ReplayInput> & Pick<ReplayInput, 'trace' | 'candidate'>) {
  return replay({ model: FLAT_MODEL, modelLoadSeconds: 60, sloSeconds: 5, maxSeriesPoints: 1e6, ...overrides });
}

describe('Function: replay', () => {
  it('keeps minReplicaCount and meets the SLO every second under a constant rate below capacity', () => {
    // Prepare: 5 req/s against one replica of 10 req/s, for 2 hours.
    const input = { trace: trace([5, 7200]), candidate: candidate('guide-value') };

    // Act
    const result = run(input);

    // Assess
    expect(result.replicas).toEqual({ min: 1, max: 1 });
    expect(result.scalingEvents).toBe(0);
    expect(result.sloAttainment).toBe(1);
    expect(result.worstQueue.waiting).toBe(0);
    expect(result.completedRequests).toBeCloseTo(5 * 7200, 6);
  });

  it.each([
    { case: 'one Pod for 2 h', min: 1, hours: 2 },
    { case: 'three Pods for 2 h', min: 3, hours: 2 },
    { case: 'two Pods for 30 min', min: 2, hours: 0.5 },
  ])('counts GPU-hours as Pods × hours under a constant rate: $case', ({ min, hours }) => {
    // Act
    const result = run({ trace: trace([2, hours * 3600]), candidate: candidate('c', { minReplicaCount: min }) });

    // Assess
    expect(result.gpuHours).toBeCloseTo(min * hours, 9);
  });

  it('scales up after a step above capacity, Pods Ready only after the model load, at most 2 Pods per 60 s', () => {
    // Prepare: 10 min at 5 req/s, then 35 req/s (3.5 replicas' worth) for 40 min; the guide's behavior.
    const input = { trace: trace([5, 600], [35, 2400]), candidate: candidate('guide-value') };

    // Act
    const result = run(input);

    // Assess
    const { pods, readyPods } = result.series;
    const firstScaleUp = pods.findIndex((p) => p > 1);
    const firstReady = readyPods.findIndex((p) => p > 1);
    expect(firstScaleUp).toBeGreaterThanOrEqual(600);
    // Polls every 30 s; the scale-up window is 30 s: the first new Pod is asked for within about a minute.
    expect(firstScaleUp).toBeLessThan(600 + 90);
    expect(firstReady).toBe(firstScaleUp + 60);
    for (let s = 60; s < pods.length; s++) {
      const lowest = Math.min(...pods.slice(s - 59, s + 1));
      expect((pods[s] ?? 0) - lowest).toBeLessThanOrEqual(2);
    }
    // Enough Pods for 35 req/s at 10 each, within the guide's maxReplicaCount 5.
    expect(result.replicas.max).toBeGreaterThanOrEqual(4);
    expect(result.replicas.max).toBeLessThanOrEqual(5);
    expect(result.sloAttainment).toBeLessThan(1);
    // The step's backlog drains once the new Pods are Ready (within 10 min of the step).
    expect(result.series.queue.slice(600, 1200).some((queue) => queue === 0)).toBe(true);
  });

  it("scales on latency alone only in the Value form (ADR 0019): the guide's AverageValue asks for ceil(p95 / 5 s) Pods", () => {
    // Prepare: two Pods at 8 req/s each have a p95 of 8 s and no queue.
    const base = { trace: trace([16, 3600]), model: SLOW_MODEL };
    const form = (latencyMetricType: 'Value' | 'AverageValue') =>
      candidate(latencyMetricType, { minReplicaCount: 2, latencyMetricType });

    // Act
    const averageValue = run({ ...base, candidate: form('AverageValue') });
    const value = run({ ...base, candidate: form('Value') });

    // Assess: ceil(8 / 5) = 2 Pods, already running: the guide's form never scales and misses the SLO all hour.
    expect(averageValue.replicas).toEqual({ min: 2, max: 2 });
    expect(averageValue.sloAttainment).toBe(0);
    // ceil(2 × 8 / 5) = 4 Pods (policy: +2 per 60 s), one more while the 1 min window still holds the 8 s p95s.
    expect(value.replicas.max).toBeGreaterThanOrEqual(4);
    expect(value.sloAttainment).toBeGreaterThan(0.5);
  });

  it('replays a day of the demo profile with a curve measured by the engine, deterministically', async () => {
    // Prepare
    const profile = await loadProfile('demo');
    const model = measurePerformanceModel(profile, { promptTokens: 35, maxTokens: 100 });
    const day = trace([2, 6 * 3600], [30, 6 * 3600], [8, 12 * 3600]);
    const input = { trace: day, candidate: candidate('guide-value'), model, modelLoadSeconds: 2 };

    // Act
    const first = run(input);
    const second = run(input);

    // Assess: 30 req/s needs three replicas of the demo's ~12 req/s.
    expect(model.capacityRps).toBeGreaterThan(10);
    expect(model.points.map((p) => p.p95S)).toEqual([...model.points.map((p) => p.p95S)].sort((a, b) => a - b));
    expect(first.replicas.max).toBeGreaterThanOrEqual(3);
    expect(first.seconds).toBe(24 * 3600);
    expect(second).toEqual(first);
  });
});
