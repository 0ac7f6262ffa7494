import { describe, expect, it } from '@jest/globals';
import { analyze } from './analyze.js';
import { CalibrationMeasurementError } from './errors.js';
import { GUIDE_STEP_SPECS, MINISTRAL_TWIN_STEP_SPECS, buildSteps, testInput, type StepSpec } from './testing/steps.js';
import type { StepMeasurement } from './types.js';

/** Stable steps 10..top with the guide's p95 of 2.5 s at the top. */
function stableUpTo(top: number): StepSpec[] {
  const specs: StepSpec[] = [];
  for (let rate = 10; rate <= top; rate += 10) specs.push({ rateRps: rate, amp: { completedRps: rate * 0.98 } });
  return specs;
}

describe('Function: analyze', () => {
  it("reproduces the guide's thresholds from the guide's own numbers (25 / 5 s / 3 s for 300 s)", () => {
    // Prepare
    const input = testInput();
    const steps = buildSteps(GUIDE_STEP_SPECS, input);

    // Act
    const analysis = analyze(steps, input);

    // Assess
    expect(analysis.saturation).toEqual({
      found: true,
      rateRps: 60,
      stepIndex: 5,
      reasons: [expect.stringContaining('queue grew 5.6 req/s (max 350) at 60 req/s offered')],
    });
    expect(analysis.lastStableRps).toBe(50);
    // 54.5 completed within the window, in-flight corrected to 57.3, and 60 − 5.6 = 54.4 from the queue: they agree.
    expect(analysis.capacityRps?.value).toBeCloseTo(55.8, 1);
    expect(analysis.capacityRps?.formula).toMatch(
      /^capacity = the saturated step's completion rate over its window's second half/,
    );
    const t = analysis.thresholds;
    expect(t?.queueDepthPerPod.value).toBe(25);
    expect(t?.queueDepthPerPod.formula).toBe(
      'max(activation + 1, floor(R × maxQueueWaitSeconds)) = max(2, floor(50 × 0.5)) = 25',
    );
    expect(t?.queueActivation.value).toBe(1);
    expect(t?.p95LatencySeconds.value).toBe(5);
    expect(t?.p95LatencySeconds.formula).toContain('2 × 2.5 s = 5 s');
    expect(t?.scaleIn.value).toEqual({ queueDepth: 0, p95BelowSeconds: 3, forSeconds: 300 });
    expect(t?.scaleIn.formula).toBe('queue = 0 and p95 < 1.2 × 2.5 s = 3 s for 300 s');
    // The alerts from the same numbers: a queue holding 1 s of work at the capacity (the guide's alert: > 50), and
    // the p95 guardrail when no SLO is given (the guide's: 5 s).
    expect(analysis.alerts?.VLLMHighQueueDepth.value).toBe(55);
    expect(analysis.alerts?.VLLMHighQueueDepth.formula).toBe(
      'max(KEDA queue threshold + 1, floor(C × alertQueueWaitSeconds)) = max(26, floor(55.8 × 1)) = 55',
    );
    expect(analysis.alerts?.VLLMHighLatency.value).toBe(5);
    expect(analysis.alerts?.VLLMHighLatency.formula).toContain('the KEDA p95 guardrail = 2 × p95');
    expect(analysis.notes).toEqual([]);
  });

  it("finds the twin's ministral profile saturating at 60, not at 50 where 6 % were still in flight", () => {
    // Prepare
    const input = testInput();
    const steps = buildSteps(MINISTRAL_TWIN_STEP_SPECS, input);

    // Act
    const analysis = analyze(steps, input);

    // Assess
    expect(analysis.saturation).toMatchObject({ found: true, rateRps: 60 });
    expect(analysis.lastStableRps).toBe(50);
    // `vllm-pilot twin capacity` gives 56.7 for this profile; the raw completions inside the window read 51.6.
    expect(analysis.capacityRps?.value).toBeCloseTo(55.7, 1);
    expect(analysis.thresholds?.p95LatencySeconds.value).toBe(7.2);
  });

  it('says saturation was not found and gives the capacity as a lower bound when every step was stable', () => {
    // Prepare
    const input = testInput();
    const steps = buildSteps(stableUpTo(70), input);

    // Act
    const analysis = analyze(steps, input);

    // Assess
    expect(analysis.saturation).toEqual({
      found: false,
      reason: 'no step saturated within the plan (highest rate 70 req/s)',
    });
    expect(analysis.lastStableRps).toBe(70);
    expect(analysis.capacityRps?.value).toBeCloseTo(68.6);
    expect(analysis.capacityRps?.formula).toContain('capacity ≥');
    expect(analysis.thresholds?.queueDepthPerPod.value).toBe(35);
    expect(analysis.notes).toEqual([expect.stringContaining('true capacity is above the plan')]);
  });

  it('derives no thresholds when the first step already saturated, but still estimates the capacity', () => {
    // Prepare
    const input = testInput({ plan: { rates: [10, 20] } });
    const steps = buildSteps(
      [{ rateRps: 10, amp: { queueMax: 120, queueMean: 60, queueSlopePerSecond: 2, completedRps: 7.5 } }],
      input,
    );

    // Act
    const analysis = analyze(steps, input);

    // Assess
    expect(analysis.saturation).toMatchObject({ found: true, rateRps: 10, stepIndex: 0 });
    expect(analysis.lastStableRps).toBeNull();
    expect(analysis.thresholds).toBeNull();
    expect(analysis.alerts).toBeNull();
    expect(analysis.capacityRps?.value).toBeCloseTo(7.9, 1);
    expect(analysis.notes).toEqual([expect.stringContaining('even the first step (10 req/s) saturated')]);
  });

  it('takes the last stable rate as the capacity when only the latency SLO was broken', () => {
    // Prepare
    const input = testInput({ slo: { p95LatencySeconds: 3 } });
    const specs = stableUpTo(40).map((s) => ({ ...s, amp: { ...s.amp, p95E2eSeconds: 2.0 } }));
    specs.push({ rateRps: 50, amp: { p95E2eSeconds: 3.4, completedRps: 49 } });
    const steps = buildSteps(specs, input);

    // Act
    const analysis = analyze(steps, input);

    // Assess
    expect(analysis.saturation).toEqual({
      found: true,
      rateRps: 50,
      stepIndex: 4,
      reasons: ['p95 end-to-end latency 3.4 s at 50 req/s offered exceeds the SLO of 3 s'],
    });
    expect(analysis.capacityRps?.value).toBe(40);
    expect(analysis.capacityRps?.formula).toBe('capacity = last stable rate');
    // min(SLO 3 s, 2 × 2.0 s = 4 s) = 3 s; scale-in 1.2 × 2.0 = 2.4 s stays below it.
    expect(analysis.thresholds?.p95LatencySeconds.value).toBe(3);
    expect(analysis.thresholds?.scaleIn.value.p95BelowSeconds).toBe(2.4);
    // The latency alert is the SLO given; the queue alert 1 s of work at 40 req/s.
    expect(analysis.alerts?.VLLMHighLatency).toMatchObject({ value: 3, formula: 'SLO = 3 s' });
    expect(analysis.alerts?.VLLMHighQueueDepth.value).toBe(40);
    expect(analysis.notes).toEqual([expect.stringContaining('came only from the latency SLO')]);
  });

  it('counts k6 drops above 1 % as saturation and notes smaller drops at stable steps', () => {
    // Prepare
    const input = testInput();
    const specs: StepSpec[] = [
      { rateRps: 10 },
      { rateRps: 20, k6: { droppedIterations: 3 } },
      { rateRps: 30, amp: { p95E2eSeconds: 6 }, k6: { droppedIterations: 40, httpReqs: 1760, iterations: 1760 } },
    ];
    const steps = buildSteps(specs, input);

    // Act
    const analysis = analyze(steps, input);

    // Assess
    expect(analysis.saturation).toMatchObject({ found: true, rateRps: 30 });
    expect(analysis.saturation.found && analysis.saturation.reasons).toEqual([
      'k6 dropped 40 of 1800 planned iterations (2.2 %) at 30 req/s offered, more than 1 %: every VU was waiting on a ' +
        'slow response',
    ]);
    expect(analysis.lastStableRps).toBe(20);
    expect(analysis.notes).toEqual([expect.stringContaining('at 20 req/s k6 dropped 3 iterations')]);
  });

  it('divides by the Pods measured when the test ran more than one replica', () => {
    // Prepare
    const input = testInput({ testReplicas: 2 });
    const specs = GUIDE_STEP_SPECS.map((s) => ({
      ...s,
      rateRps: s.rateRps * 2,
      amp: {
        ...s.amp,
        pods: 2,
        completedRps: (s.amp?.completedRps ?? 0) * 2,
        queueSlopePerSecond: (s.amp?.queueSlopePerSecond ?? 0) * 2,
      },
    }));
    const steps = buildSteps(specs, input);

    // Act
    const analysis = analyze(steps, input);

    // Assess
    expect(analysis.saturation).toMatchObject({ found: true, rateRps: 120 });
    expect(analysis.lastStableRps).toBe(100);
    expect(analysis.capacityRps?.value).toBeCloseTo(55.8, 1);
    expect(analysis.capacityRps?.formula).toMatch(/\/ 2 Pods$/);
    expect(analysis.thresholds?.queueDepthPerPod.value).toBe(25);
    expect(analysis.notes).toEqual([]);
  });

  it.each([
    {
      case: 'fewer Pods than the test asked for',
      spec: { rateRps: 10, amp: { pods: 2 } },
      note: 'at 10 req/s AMP saw 2 Pod(s) where the test runs 1',
    },
    {
      case: 'a step with no traffic',
      spec: { rateRps: 10, amp: { completedRps: 0 } },
      note: 'at 10 req/s no requests completed in vLLM',
    },
    {
      case: 'failed k6 requests',
      spec: { rateRps: 10, k6: { httpReqFailed: 2 } },
      note: 'at 10 req/s 2 of 600 k6 requests failed',
    },
    {
      case: 'preemptions',
      spec: { rateRps: 10, amp: { preemptions: 12, kvCacheUsageMax: 0.97 } },
      note: 'at 10 req/s vLLM preempted 12 sequences (KV-cache max 97 %), so the step counts as saturated',
    },
  ])('notes $case', ({ spec, note }) => {
    // Prepare
    const input = testInput();
    const steps = buildSteps([spec, ...stableUpTo(30).slice(1)], input);

    // Act
    const analysis = analyze(steps, input);

    // Assess
    expect(analysis.notes).toContainEqual(expect.stringContaining(note));
  });

  it('notes a stable step above the saturation point as noise', () => {
    // Prepare
    const input = testInput({ plan: { stopAtSaturation: false } });
    const specs = [...GUIDE_STEP_SPECS, { rateRps: 70 }];
    const steps = buildSteps(specs, input);

    // Act
    const analysis = analyze(steps, input);

    // Assess
    expect(analysis.saturation).toMatchObject({ found: true, rateRps: 60 });
    expect(analysis.lastStableRps).toBe(50);
    expect(analysis.notes).toContainEqual(expect.stringContaining('70 req/s measured stable although 60 req/s'));
  });

  it('caps the scale-in latency below the guardrail when the SLO pulls the guardrail down', () => {
    // Prepare
    const input = testInput({ slo: { p95LatencySeconds: 2.8 } });
    const steps = buildSteps([...GUIDE_STEP_SPECS.slice(0, 4), { rateRps: 50, amp: { p95E2eSeconds: 2.5 } }], input);

    // Act
    const analysis = analyze(steps, input);

    // Assess
    expect(analysis.thresholds?.p95LatencySeconds.value).toBe(2.8);
    expect(analysis.thresholds?.scaleIn.value.p95BelowSeconds).toBe(2.7);
    expect(analysis.notes).toContainEqual(expect.stringContaining('scale-in latency was capped'));
  });

  it('keeps the queue alert above the KEDA queue threshold when the capacity holds little work', () => {
    // Prepare: 1 s → 0.2 s of work at the capacity; KEDA's threshold (0.5 s at the last stable rate) is higher.
    const input = testInput({ thresholds: { alertQueueWaitSeconds: 0.2 } });
    const steps = buildSteps(GUIDE_STEP_SPECS, input);

    // Act
    const analysis = analyze(steps, input);

    // Assess: max(25 + 1, floor(55.8 × 0.2) = 11) = 26.
    expect(analysis.alerts?.VLLMHighQueueDepth.value).toBe(26);
    expect(analysis.alerts?.VLLMHighQueueDepth.reason).toContain('raised to one above the KEDA queue threshold (25)');
  });

  it('uses the tuning knobs of the input in the formulas', () => {
    // Prepare
    const input = testInput({
      thresholds: { maxQueueWaitSeconds: 1, guardrailFactor: 1.5, scaleInFactor: 1.1, scaleInForSeconds: 600 },
    });
    const steps = buildSteps(GUIDE_STEP_SPECS, input);

    // Act
    const t = analyze(steps, input).thresholds;

    // Assess
    expect(t?.queueDepthPerPod.value).toBe(50);
    expect(t?.p95LatencySeconds.value).toBe(3.8);
    expect(t?.scaleIn.value).toEqual({ queueDepth: 0, p95BelowSeconds: 2.8, forSeconds: 600 });
  });

  it('refuses to analyse when no step was measured', () => {
    // Act / Assess
    expect(() => analyze([], testInput())).toThrow(CalibrationMeasurementError);
  });
});

describe('Function: analyze (step evidence)', () => {
  it('derives nothing from a step whose evidence failed: its saturated verdict is ignored, the repeat counts', () => {
    // Prepare: step 2 read "completed 12.6/s" at 20 req/s (Prometheus paused across its end): saturated, but not evidence.
    const input = testInput();
    const [a, b, c, d] = buildSteps(
      [
        { rateRps: 10 },
        { rateRps: 20, amp: { completedRps: 12.6 } },
        { rateRps: 20 },
        { rateRps: 40, amp: { queueMax: 200, queueSlopePerSecond: 4, completedRps: 33 } },
      ],
      input,
    );
    const failed = { ...b, evidence: { ok: false, reasons: ['a gap'], attempt: 1 } } as StepMeasurement;
    expect(failed.verdict.saturated).toBe(true);

    // Act
    const analysis = analyze([a, failed, c, d] as StepMeasurement[], input);

    // Assess
    expect(analysis.saturation).toMatchObject({ found: true, rateRps: 40, stepIndex: 3 });
    expect(analysis.lastStableRps).toBe(20);
    expect(analysis.notes).toContain('step 2 at 20 req/s was repeated and is not used: a gap');
  });
});
