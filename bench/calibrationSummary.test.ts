import { describe, expect, it } from '@jest/globals';
import { testInput, buildSteps, GUIDE_STEP_SPECS, type StepSpec } from '../shared/calibration/testing/steps.js';
import { guideReport } from '../shared/calibration/testing/report.js';
import { linearStrategy } from '../shared/calibration/strategies/index.js';
import type { CalibrationReport, StepMeasurement } from '../shared/calibration/index.js';
import {
  adaptiveToLinear,
  detectedSaturation,
  errorPercent,
  fullGuidePlanSeconds,
  loadTestSeconds,
  renderCalibrationBench,
  replayRests,
  stepTimes,
  summarizeRun,
  type CalibrationBenchResults,
  type StrategyRun,
} from './calibrationSummary.js';
import { BenchError } from './errors.js';

/** A saturated step at `rateRps`: the queue grows and completions stay at `capacityRps`. */
const saturatedSpec = (rateRps: number, capacityRps: number): StepSpec => ({
  rateRps,
  amp: { queueMean: 40, queueMax: 90, queueSlopePerSecond: rateRps - capacityRps, completedRps: capacityRps },
});

/** The report of the given step specs, analysed for real (holds of `holdSeconds`). */
function reportOf(specs: readonly StepSpec[], holdSeconds = 60, strategy = 'linear'): CalibrationReport {
  const input = testInput({ plan: { holdSeconds, restSeconds: 30 } });
  const steps = buildSteps(
    specs.map((s) => ({ ...s, holdSeconds })),
    input,
  );
  const report = guideReport({ input, steps });
  return { ...report, provenance: { ...report.provenance, strategy } };
}

/** A step that ended early (the `ending` field, which older reports lack). */
function endedEarly(step: StepMeasurement, heldSeconds: number): StepMeasurement {
  return {
    ...step,
    ending: { kind: 'saturated-early', reason: 'queue slope significant', heldSeconds, plannedHoldSeconds: 8 },
  };
}

describe('Function: errorPercent', () => {
  it.each([
    { name: 'the guide profile: 60 req/s for a 56.7 req/s replica', detected: 60, truth: 56.7, expected: 5.82 },
    { name: 'exact', detected: 25, truth: 25, expected: 0 },
    { name: 'below the truth is negative', detected: 114, truth: 120, expected: -5 },
    { name: "linear's first step above an 8 req/s replica", detected: 10, truth: 8, expected: 25 },
  ])('$name', ({ detected, truth, expected }) => {
    // Act
    const error = errorPercent(detected, truth);

    // Assess
    expect(error).toBeCloseTo(expected, 2);
  });

  it.each([
    { name: 'zero', truth: 0 },
    { name: 'negative', truth: -3 },
    { name: 'not a number', truth: Number.NaN },
  ])('refuses a true capacity that is $name', ({ truth }) => {
    // Act
    const act = () => errorPercent(10, truth);

    // Assess
    expect(act).toThrow(BenchError);
    expect(act).toThrow(/true capacity must be a positive number of requests\/s/);
  });
});

describe('Function: replayRests', () => {
  it('gives no rest before the first step and the plan rest, rounded up to whole seconds, before every other', () => {
    // Prepare
    const input = testInput({ plan: { holdSeconds: 8, restSeconds: 2.5 } });
    const steps = buildSteps(
      GUIDE_STEP_SPECS.map((s) => ({ ...s, holdSeconds: 8 })),
      input,
    );

    // Act
    const rests = replayRests(linearStrategy, steps, input.plan);

    // Assess
    expect(rests).toEqual([0, 3, 3, 3, 3, 3]);
  });

  it('refuses steps whose rates the strategy would not have planned', () => {
    // Prepare
    const input = testInput();
    const steps = buildSteps([{ rateRps: 10 }, { rateRps: 25 }], input);

    // Act
    const act = () => replayRests(linearStrategy, steps, input.plan);

    // Assess
    expect(act).toThrow(/plans 20 req\/s for step 2, but 25 req\/s was measured/);
  });

  it('refuses a step measured after the strategy said done', () => {
    // Prepare
    const input = testInput();
    const steps = buildSteps([saturatedSpec(10, 8), { rateRps: 20 }], input);

    // Act
    const act = () => replayRests(linearStrategy, steps, input.plan);

    // Assess
    expect(act).toThrow(/says "done" .* before step 2/);
  });
});

describe('Function: stepTimes', () => {
  it('counts the held seconds an early ending recorded, and the planned hold for steps without one', () => {
    // Prepare
    const input = testInput({ plan: { holdSeconds: 8, restSeconds: 4 } });
    const [first, second, third] = buildSteps(
      [{ rateRps: 10 }, { rateRps: 20 }, saturatedSpec(40, 30)].map((s) => ({ ...s, holdSeconds: 8 })),
      input,
    ) as [StepMeasurement, StepMeasurement, StepMeasurement];

    // Act
    const times = stepTimes([first, second, endedEarly(third, 3.5)], [0, 4, 4]);

    // Assess
    expect(times.map((t) => [t.rateRps, t.heldSeconds, t.restBeforeSeconds, t.ending, t.saturated])).toEqual([
      [10, 8, 0, null, false],
      [20, 8, 4, null, false],
      [40, 3.5, 4, 'saturated-early', true],
    ]);
    expect(loadTestSeconds(times)).toBe(8 + 4 + 8 + 4 + 3.5);
  });

  it('refuses a rest list that does not match the steps', () => {
    // Prepare
    const steps = buildSteps([{ rateRps: 10 }, { rateRps: 20 }], testInput());

    // Act
    const act = () => stepTimes(steps, [0]);

    // Assess
    expect(act).toThrow(/2 steps but 1 rests/);
  });
});

describe('Function: fullGuidePlanSeconds', () => {
  it.each([
    { name: "the guide's 60 s hold and 30 s rest", hold: 60, rest: 30, expected: 600 },
    { name: 'the bench default 8 s and 4 s', hold: 8, rest: 4, expected: 80 },
  ])('$name: 7 holds and 6 rests', ({ hold, rest, expected }) => {
    // Act & Assess
    expect(fullGuidePlanSeconds(hold, rest)).toBe(expected);
  });
});

describe('Function: detectedSaturation', () => {
  it.each([
    {
      name: 'a saturated step above a stable one is found',
      specs: GUIDE_STEP_SPECS,
      expected: { kind: 'found', saturationRps: 60, lastStableRps: 50 },
    },
    {
      name: 'a saturated first step lies below the plan',
      specs: [saturatedSpec(10, 8)],
      expected: { kind: 'belowPlan', saturationRps: 10 },
    },
    {
      name: 'no saturated step is not found within the plan',
      specs: [10, 20, 30, 40, 50, 60, 70].map((rateRps) => ({ rateRps })),
      expected: { kind: 'notFound', highestRps: 70 },
    },
  ])('$name', ({ specs, expected }) => {
    // Act
    const detected = detectedSaturation(reportOf(specs));

    // Assess
    expect(detected).toMatchObject(expected);
  });

  it("reads adaptive's answer as its capacity estimate inside its bracket, whatever order the rates ran in", () => {
    // Prepare: 4 → 8 → 16 (saturated) → 12.6 (stable) → 13.9 (saturated)
    const report = reportOf(
      [{ rateRps: 4 }, { rateRps: 8 }, saturatedSpec(16, 13.2), { rateRps: 12.6 }, saturatedSpec(13.9, 13.2)],
      8,
      'adaptive',
    );

    // Act
    const detected = detectedSaturation(report);

    // Assess
    expect(detected).toMatchObject({ kind: 'knee', lastStableRps: 12.6, saturatedRps: 13.9 });
    expect(detected.kind === 'knee' && detected.saturationRps).toBe(report.analysis.capacityRps?.value);
    expect(detected.kind === 'knee' && detected.saturationRps).toBeGreaterThanOrEqual(12.6);
    expect(detected.kind === 'knee' && detected.saturationRps).toBeLessThanOrEqual(13.9);
  });
});

describe('Function: summarizeRun', () => {
  it("gives the guide run's error, capacity estimate, steps and load-test seconds", () => {
    // Prepare
    const report = reportOf(GUIDE_STEP_SPECS);

    // Act
    const run = summarizeRun(report, 56.7, [0, 30, 30, 30, 30, 30], 612);

    // Assess
    expect(run).toMatchObject({ strategy: 'linear', status: 'succeeded', wallSeconds: 612 });
    if (run.status !== 'succeeded') throw new Error('expected a succeeded run');
    expect(run.errorPct).toBeCloseTo(5.82, 2);
    expect(run.capacityEstimateRps).toBeCloseTo(55.83, 2);
    expect(run.capacityErrorPct).toBeCloseTo(-1.53, 2);
    expect(run.steps).toHaveLength(6);
    expect(run.loadTestSeconds).toBe(6 * 60 + 5 * 30);
  });

  it('has no error when nothing saturated, but still a lower-bound capacity', () => {
    // Prepare
    const report = reportOf([10, 20, 30, 40, 50, 60, 70].map((rateRps) => ({ rateRps })));

    // Act
    const run = summarizeRun(report, 121, [0, 30, 30, 30, 30, 30, 30], 700);

    // Assess
    if (run.status !== 'succeeded') throw new Error('expected a succeeded run');
    expect(run.errorPct).toBeNull();
    expect(run.capacityEstimateRps).toBeCloseTo(70 * 0.98, 6);
    expect(run.loadTestSeconds).toBe(7 * 60 + 6 * 30);
  });
});

const succeeded = (strategy: string, seconds: number): Extract<StrategyRun, { status: 'succeeded' }> => ({
  strategy,
  status: 'succeeded',
  detected: { kind: 'found', saturationRps: 60, lastStableRps: 55 },
  capacityEstimateRps: 56,
  errorPct: 5.8,
  capacityErrorPct: -1.2,
  steps: [],
  loadTestSeconds: seconds,
  wallSeconds: seconds + 30,
});

describe('Function: adaptiveToLinear', () => {
  it.each([
    { name: 'both succeeded', runs: [succeeded('linear', 80), succeeded('adaptive', 30)], expected: 0.375 },
    {
      name: 'adaptive failed',
      runs: [succeeded('linear', 80), { strategy: 'adaptive', status: 'failed', error: 'x', wallSeconds: 1 } as const],
      expected: null,
    },
    { name: 'adaptive did not run', runs: [succeeded('linear', 80)], expected: null },
    {
      name: 'linear did not run: its full guide plan stands for it',
      runs: [succeeded('adaptive', 30)],
      expected: 0.25,
    },
    {
      name: 'linear ran and failed',
      runs: [{ strategy: 'linear', status: 'failed', error: 'x', wallSeconds: 1 } as const, succeeded('adaptive', 30)],
      expected: null,
    },
  ])('$name', ({ runs, expected }) => {
    // Act & Assess
    expect(adaptiveToLinear(runs, 120)).toBe(expected);
  });
});

describe('Function: renderCalibrationBench', () => {
  const results: CalibrationBenchResults = {
    startedAt: '2025-06-02T09:00:00.000Z',
    condition: { name: 'guide-30s', description: "the guide's 30 s scrapes, and samples reach AMP 30-60 s late" },
    environment: { node: 'v20.19.0', platform: 'linux x64', cpu: 'Test CPU', cpus: 2 },
    scaling: { holdSeconds: 8, restSeconds: 4, watchSeconds: 2, guideHoldSeconds: 60, guideRestSeconds: 30 },
    warmupRequests: 12,
    profiles: [
      {
        profile: 'llama-8b-h100',
        shapedAfter: 'meta-llama/Llama-3.1-8B-Instruct on NVIDIA H100 80GB HBM3',
        request: { promptTokens: 35, maxTokens: 100 },
        trueCapacityRps: 121.2,
        limitedBy: 'maxNumSeqs',
        runs: [
          {
            ...succeeded('linear', 80),
            detected: { kind: 'notFound', highestRps: 70, reason: 'no step saturated' },
            errorPct: null,
            capacityEstimateRps: 68.6,
            capacityErrorPct: -43.4,
          },
          {
            ...succeeded('adaptive', 30),
            detected: { kind: 'found', saturationRps: 124, lastStableRps: 117 },
            errorPct: 2.3,
          },
        ],
        adaptiveToLinear: 0.375,
      },
      {
        profile: 'llama-70b-h100',
        shapedAfter: 'meta-llama/Llama-3.3-70B-Instruct on NVIDIA H100 80GB HBM3',
        request: { promptTokens: 1500, maxTokens: 64 },
        trueCapacityRps: 8.01,
        limitedBy: 'maxNumSeqs',
        runs: [
          {
            ...succeeded('linear', 8),
            detected: { kind: 'belowPlan', saturationRps: 10 },
            errorPct: 24.8,
          },
          {
            strategy: 'adaptive',
            status: 'failed',
            error: 'CalibrationInputInvalidError: unknown strategy',
            wallSeconds: 2,
          },
        ],
        adaptiveToLinear: null,
      },
    ],
    totalWallSeconds: 431.2,
  };

  it('shows the scaling, each profile once with both strategies, the errors and the ratio', () => {
    // Act
    const text = renderCalibrationBench(results);

    // Assess
    expect(text).toContain("Condition guide-30s: the guide's 30 s scrapes, and samples reach AMP 30-60 s late.");
    expect(text).toContain('hold 8 s, rest 4 s per step (the guide: 60 s / 30 s');
    expect(text).toContain('early-ending look every 2 s');
    expect(text).toContain(
      'every hold and rest in full (80 s, which adaptive / linear divides by when linear did not run)',
    );
    const lines = text.split('\n');
    const h100 = lines.filter((l) => l.includes('llama-8b-h100'));
    expect(h100).toHaveLength(1);
    expect(h100[0]).toMatch(
      /llama-8b-h100 \(35\/100\) +121 \(maxNumSeqs\) +linear +not found within the plan \(≤ 70 stable\) +- +≥ 68\.6 \(a lower bound\)/,
    );
    expect(lines.find((l) => /^ +adaptive +124 \(stable 117\)/.test(l))).toMatch(/\+2\.3 % .* 30 +37\.5 %$/);
    expect(text).toMatch(/llama-70b-h100 \(1500\/64\)/);
    expect(text).toMatch(/not found within the plan \(its first step, 10, saturated\) +\+24\.8 %/);
    expect(text).toContain('failed: CalibrationInputInvalidError: unknown strategy');
    expect(text).toContain('Total 431 s wall.');
  });

  it('renders a Markdown table for docs/benchmarks.md, one row per profile and strategy', () => {
    // Act
    const text = renderCalibrationBench(results, 'markdown');

    // Assess
    const rows = text.split('\n').filter((l) => l.startsWith('|'));
    expect(rows).toHaveLength(2 + 4);
    expect(rows[0]).toBe(
      '| profile | true capacity req/s | strategy | detected saturation req/s | error | capacity estimate req/s | steps | load-test s | adaptive / linear |',
    );
    expect(rows[1]).toMatch(/^\|( -+:? \|)+$/);
    expect(rows[3]).toContain('| adaptive | 124 (stable 117) | +2.3 % |');
  });
});
