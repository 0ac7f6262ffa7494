import { describe, expect, it } from '@jest/globals';
import { analyze } from '../analyze.js';
import { CalibrationInputInvalidError } from '../errors.js';
import type { CalibrationInput, CalibrationInputSpec } from '../input.js';
import { MINISTRAL_TWIN_STEP_SPECS, buildSteps, testInput } from '../testing/steps.js';
import type { StepMeasurement, StrategyDecision } from '../types.js';
import { adaptiveStrategy, decideAdaptive, restBefore } from './adaptive.js';
import { estimateCapacity } from '../capacityEstimate.js';
import { STRATEGIES } from './registry.js';
import { SaturatingServer, runStrategy } from './testing/saturatingServer.js';

/** The guide's plan as linear runs it: 7 steps of 60 s hold and 30 s rest. */
const LINEAR_GUIDE_SECONDS = 7 * (60 + 30);

/** An adaptive input; k6 gets VUs enough for 1024 req/s at a few seconds each (the default 500 caps it near 250). */
function adaptiveInput(plan: Partial<NonNullable<CalibrationInputSpec['plan']>> = {}): CalibrationInput {
  return testInput({ plan: { strategy: 'adaptive', maxVUs: 10000, ...plan } });
}

type LoadDecision = Extract<StrategyDecision, { done: false }>;

/** Measures `decision` on `server` as the next step of `steps`. */
function stepOn(
  server: SaturatingServer,
  steps: StepMeasurement[],
  decision: StrategyDecision,
  input: CalibrationInput,
) {
  if (decision.done) throw new Error(`expected a load step, got done: ${decision.reason}`);
  return [...steps, server.measure(decision, steps.length, input)];
}

/** Runs adaptive on a server of capacity `capacity` until it asks for a step at or above `untilRate` (inclusive). */
function stepsUntil(capacity: number, input: CalibrationInput, stop: (steps: StepMeasurement[]) => boolean) {
  const server = new SaturatingServer({ capacityRps: capacity, seed: 3 });
  let steps: StepMeasurement[] = [];
  while (!stop(steps)) steps = stepOn(server, steps, adaptiveStrategy.next(steps, input.plan), input);
  return steps;
}

const SEEDS = [1, 2, 3, 4, 5];
const CAPACITIES = [
  { capacity: 3, inGuideRange: false },
  { capacity: 8, inGuideRange: false },
  { capacity: 25, inGuideRange: true },
  { capacity: 55, inGuideRange: true },
  { capacity: 120, inGuideRange: false },
  { capacity: 300, inGuideRange: false },
  { capacity: 900, inGuideRange: false },
];

describe('Object: adaptiveStrategy', () => {
  it('is registered under the name plan.strategy uses', () => {
    // Assess
    expect(STRATEGIES.adaptive).toBe(adaptiveStrategy);
    expect(testInput({ plan: { strategy: 'adaptive' } }).plan.strategy).toBe('adaptive');
  });

  describe('Method: next (run to completion on a synthetic saturating replica)', () => {
    it.each(CAPACITIES)(
      'finds a capacity of $capacity req/s within 5 % in at most maxSteps steps',
      ({ capacity, inGuideRange }) => {
        for (const seed of SEEDS) {
          // Prepare
          const input = adaptiveInput();
          const server = new SaturatingServer({ capacityRps: capacity, seed });

          // Act
          const run = runStrategy(adaptiveStrategy, server, input);
          const state = decideAdaptive(run.steps, input.plan);

          // Assess
          const estimate = state.capacity?.value ?? Number.NaN;
          expect(Math.abs(estimate / capacity - 1)).toBeLessThanOrEqual(0.05);
          expect(run.reason).toContain(`capacity ≈ ${Number(estimate.toFixed(1))} req/s`);
          expect(run.steps.length).toBeLessThanOrEqual(input.plan.adaptive.maxSteps);
          const rates = run.steps.map((s) => s.rateRps);
          expect(new Set(rates).size).toBe(rates.length);
          expect(Math.max(...rates)).toBeLessThanOrEqual(input.plan.adaptive.maxRps);
          for (const rate of rates) {
            expect(rate < 10 ? Math.round(rate * 10) / 10 : Math.round(rate)).toBe(rate);
          }
          // The bracket holds the capacity (a stable step below it, a saturated one above it).
          expect(state.stableRps).not.toBeNull();
          expect(state.stableRps as number).toBeLessThanOrEqual(capacity);
          expect(state.saturatedRps as number).toBeGreaterThan(capacity);
          if (inGuideRange) expect(run.loadSeconds).toBeLessThanOrEqual(0.4 * LINEAR_GUIDE_SECONDS);
        }
      },
    );

    it.each([
      { case: 'an in-range capacity', capacity: 25 },
      { case: 'a capacity found from a first saturated step', capacity: 3 },
    ])('pins $case to a bracket within ±5 % (or the verdict’s resolution)', ({ capacity }) => {
      // Prepare
      const input = adaptiveInput();

      // Act
      const run = runStrategy(adaptiveStrategy, new SaturatingServer({ capacityRps: capacity, seed: 1 }), input);
      const state = decideAdaptive(run.steps, input.plan);

      // Assess
      const c = state.capacity?.value as number;
      expect(state.stableRps as number).toBeGreaterThanOrEqual(c * 0.95 * 0.99);
      // Below ~25 req/s the verdict cannot see 5 % of overload: the upper side is its least visible overload instead.
      expect(state.saturatedRps as number).toBeLessThanOrEqual(Math.max(c * 1.05 * 1.01, c + 0.7));
      expect(run.reason).toMatch(/^bracket \[/);
    });

    it('reports "not saturated up to maxRps" when a step at maxRps is stable, never offering more', () => {
      // Prepare
      const input = adaptiveInput({ adaptive: { maxRps: 100 } });

      // Act
      const run = runStrategy(adaptiveStrategy, new SaturatingServer({ capacityRps: 5000 }), input);

      // Assess: 10 req/s used 0.1 % of the KV cache, which bounds the capacity at 10,000 req/s: straight to maxRps.
      expect(run.steps.map((s) => s.rateRps)).toEqual([10, 100]);
      expect(run.reason).toBe('not saturated up to maxRps: every step was stable, up to 100 req/s');
    });

    it('gives the same decision for the same steps, and the same run for the same seed', () => {
      // Prepare
      const input = adaptiveInput();
      const first = runStrategy(adaptiveStrategy, new SaturatingServer({ capacityRps: 55, seed: 9 }), input);

      // Act
      const again = runStrategy(adaptiveStrategy, new SaturatingServer({ capacityRps: 55, seed: 9 }), input);
      const replayed = first.steps.map((_, i) => adaptiveStrategy.next(first.steps.slice(0, i), input.plan));
      const shuffled = adaptiveStrategy.next([...first.steps].reverse(), input.plan);

      // Assess
      expect(again).toEqual(first);
      expect(replayed).toEqual(first.decisions.slice(0, -1));
      expect(shuffled).toEqual(first.decisions[first.decisions.length - 1]);
    });

    it('re-estimates lower when the lower probe saturates', () => {
      // Prepare: bracketed on a 50 req/s replica; the probe below runs on one that now manages only 40.
      const input = adaptiveInput();
      let steps = stepsUntil(50, input, (s) => s.some((x) => x.verdict.saturated));
      const probe = adaptiveStrategy.next(steps, input.plan) as LoadDecision;
      steps = stepOn(new SaturatingServer({ capacityRps: 40, seed: 5 }), steps, probe, input);

      // Act
      const next = adaptiveStrategy.next(steps, input.plan) as LoadDecision;

      // Assess
      expect(probe.rateRps).toBe(48);
      expect(steps[steps.length - 1]?.verdict.saturated).toBe(true);
      expect(next.done).toBe(false);
      expect(next.rateRps).toBeGreaterThanOrEqual(36);
      expect(next.rateRps).toBeLessThanOrEqual(39);
      expect(next.reason).toMatch(/^confirm below/);
    });

    it('raises the estimate when the upper probe is stable, probing between it and the saturated step', () => {
      // Prepare: bracketed on 50 req/s and confirmed below; the probe above runs on a replica that manages 60.
      const input = adaptiveInput();
      let steps = stepsUntil(50, input, (s) => s.length > 0 && s[s.length - 1]?.rateRps === 48);
      const probe = adaptiveStrategy.next(steps, input.plan) as LoadDecision;
      steps = stepOn(new SaturatingServer({ capacityRps: 60, seed: 5 }), steps, probe, input);

      // Act
      const next = adaptiveStrategy.next(steps, input.plan) as LoadDecision;

      // Assess
      expect(steps[steps.length - 1]?.verdict.saturated).toBe(false);
      expect(next.done).toBe(false);
      expect(next.rateRps).toBeGreaterThan(probe.rateRps);
      expect(next.rateRps).toBeLessThan(64);
    });

    it('finds a capacity below the first rate by estimating it from that saturated step', () => {
      // Prepare
      const input = adaptiveInput();
      const steps = stepsUntil(3, input, (s) => s.length === 1);

      // Act
      const next = adaptiveStrategy.next(steps, input.plan) as LoadDecision;

      // Assess
      expect(steps[0]?.verdict.saturated).toBe(true);
      expect(next.rateRps).toBeGreaterThanOrEqual(2.8);
      expect(next.rateRps).toBeLessThanOrEqual(3);
    });

    it('ends with the reason once maxSteps steps were measured', () => {
      // Prepare
      const input = adaptiveInput({ adaptive: { maxSteps: 3 } });

      // Act
      const server = new SaturatingServer({ capacityRps: 200, kvCacheUsageAtCapacity: 0 });
      const run = runStrategy(adaptiveStrategy, server, input);

      // Assess
      expect(run.steps).toHaveLength(3);
      expect(run.reason).toMatch(/^step budget spent \(maxSteps 3\) before any step saturated/);
    });

    it('asks the probes near the knee to wait half the hold before a stable ending, the bracket steps not', () => {
      // Prepare
      const input = adaptiveInput();

      // Act
      // No KV usage reported: the bracket grows × 3.
      const server = new SaturatingServer({ capacityRps: 56.7, seed: 2, kvCacheUsageAtCapacity: 0 });
      const run = runStrategy(adaptiveStrategy, server, input);

      // Assess: 10, 30 (bracket), 90 (saturated), then probes around 56.7
      const loads = run.decisions.filter((d): d is LoadDecision => !d.done);
      const bracket = loads.filter((d) => d.reason.startsWith('bracket'));
      const probes = loads.filter((d) => !d.reason.startsWith('bracket'));
      expect(bracket.map((d) => d.rateRps)).toEqual([10, 30, 90]);
      expect(bracket.every((d) => d.stableAfterFraction === undefined)).toBe(true);
      expect(probes.length).toBeGreaterThanOrEqual(2);
      expect(probes.every((d) => d.stableAfterFraction === 0.5)).toBe(true);
      // A probe that ended stable did so after half its hold at the earliest.
      for (const step of run.steps.filter((s) => s.ending?.kind === 'stable-early' && s.rateRps > 40))
        expect(step.ending?.heldSeconds).toBeGreaterThanOrEqual(0.5 * step.holdSeconds);
    });

    it.each([
      [
        'the KV cache',
        { kvCacheUsageAtCapacity: 0.5 },
        40,
        /\(10 req\/s used 12\.5 % of the KV cache, so it fills at about 80 req\/s\)/,
        100,
      ],
      [
        'the batch against --max-num-seqs',
        { kvCacheUsageAtCapacity: 0.5, maxNumSeqs: 64 },
        30,
        /\(10 req\/s ran 15\.3 requests at once, so --max-num-seqs 64 × 1 Pod\(s\) hold at most 41\.7 req\/s\)/,
        52,
      ],
    ])(
      'jumps from a stable step to 1.25 × the capacity bound it gives (%s), saturating in one step',
      (_limit, options, capacity, reason, jump) => {
        // Prepare
        const input = adaptiveInput();

        // Act
        const run = runStrategy(adaptiveStrategy, new SaturatingServer({ capacityRps: capacity, ...options }), input);

        // Assess
        const loads = run.decisions.filter((d): d is LoadDecision => !d.done);
        expect(loads[1]?.rateRps).toBe(jump);
        expect(loads[1]?.reason).toMatch(reason);
        expect(run.steps[1]?.verdict.saturated).toBe(true);
        const found = decideAdaptive(run.steps, input.plan).capacity?.value as number;
        expect(found).toBeGreaterThan(capacity * 0.95);
        expect(found).toBeLessThan(capacity * 1.05);
      },
    );

    it('grows × growthFactor when the bound is lower than that, and never jumps beyond growthFactor³', () => {
      // Prepare: a cache that is 95 % full at capacity bounds little above it; one 0.1 % full at 10,000 req/s bounds
      // far above it.
      const input = adaptiveInput();
      const tight = runStrategy(
        adaptiveStrategy,
        new SaturatingServer({ capacityRps: 20, kvCacheUsageAtCapacity: 0.95 }),
        input,
      );
      const loose = runStrategy(adaptiveStrategy, new SaturatingServer({ capacityRps: 10_000 }), input);

      // Assess
      expect(tight.steps[1]?.rateRps).toBe(30);
      expect(tight.decisions[1]?.reason).toBe('bracket: 10 req/s was stable, so × 3');
      expect(loose.steps[1]?.rateRps).toBe(270);
      expect(loose.decisions[1]?.reason).toMatch(/capped at × 3³ \(270\)$/);
    });

    it('holds bracket steps for bracketHoldSeconds and the probes for holdSeconds', () => {
      // Prepare
      const input = adaptiveInput({
        holdSeconds: 60,
        adaptive: { bracketHoldSeconds: 20, startRps: 4, growthFactor: 2 },
        earlyStop: { enabled: false },
      });

      // Act
      const run = runStrategy(
        adaptiveStrategy,
        new SaturatingServer({ capacityRps: 25, kvCacheUsageAtCapacity: 0 }),
        input,
      );

      // Assess
      const holds = run.decisions.filter((d): d is LoadDecision => !d.done).map((d) => [d.rateRps, d.holdSeconds]);
      expect(holds).toEqual([
        [4, 20],
        [8, 20],
        [16, 20],
        [32, 20],
        [24, 60],
        [26, 60],
      ]);
    });
  });
});

describe('Function: restBefore', () => {
  it('rests long enough to drain a saturated step held in full, briefly after a stable one, never over restSeconds', () => {
    // Prepare
    const input = adaptiveInput({ restSeconds: 120, earlyStop: { enabled: false } });
    const stable = stepsUntil(55, input, (s) => s.length === 1);
    const saturated = stepsUntil(55, input, (s) => s.some((x) => x.verdict.saturated));
    const short = adaptiveInput({ restSeconds: 2 });

    // Act
    const afterStable = restBefore(stable, input.plan, null);
    const afterSaturated = restBefore(saturated, input.plan, 55);
    const capped = restBefore(saturated, short.plan, 55);

    // Assess
    const last = saturated[saturated.length - 1] as StepMeasurement;
    expect(afterStable).toBeLessThanOrEqual(5);
    expect(afterSaturated).toBeGreaterThanOrEqual(Math.ceil(last.amp.queueMax / 55));
    expect(afterSaturated).toBeGreaterThan(afterStable);
    expect(capped).toBe(2);
  });

  it('rests one request lifetime and a second after a step that ended early: its load was stopped and aborted', () => {
    // Prepare
    const input = adaptiveInput({ restSeconds: 30 });
    const saturated = stepsUntil(55, input, (s) => s.some((x) => x.verdict.saturated));
    const last = saturated[saturated.length - 1] as StepMeasurement;

    // Act
    const rest = restBefore(saturated, input.plan, 55);

    // Assess
    expect(last.ending?.kind).toBe('saturated-early');
    expect(rest).toBe(Math.ceil((last.amp.p95E2eSeconds ?? 0) - (last.amp.p95TtftSeconds ?? 0)) + 1);
    expect(rest).toBeLessThan(Math.ceil(last.amp.queueMax / 55));
  });

  it('counts the seconds the step then waited for AMP as rest: its Job had stopped, the replica was idle', () => {
    // Prepare: a saturated step held in full, measured once AMP held its window 20 s, then 200 s, after it.
    const input = adaptiveInput({ restSeconds: 120, earlyStop: { enabled: false } });
    const saturated = stepsUntil(55, input, (s) => s.some((x) => x.verdict.saturated));
    const last = saturated[saturated.length - 1] as StepMeasurement;
    const waited = (seconds: number) => [
      ...saturated.slice(0, -1),
      { ...last, ingestion: { waitedSeconds: seconds, looks: 3, reason: 'AMP held samples past the window' } },
    ];

    // Act
    const full = restBefore(saturated, input.plan, 55);
    const partly = restBefore(waited(20), input.plan, 55);
    const none = restBefore(waited(200), input.plan, 55);

    // Assess
    expect(full).toBeGreaterThan(20);
    expect(partly).toBe(full - 20);
    expect(none).toBe(0);
  });
});

describe('Function: estimateCapacity', () => {
  it("comes within 2 % of the twin's ministral capacity (56.7 req/s) where the raw completions are 9 % low", () => {
    // Prepare: the twin's ministral-8b-l40s at 60 req/s over 60 s (sim/vllm/capacity.ts; capacity ~56.7 req/s).
    const input = testInput();
    const saturated = buildSteps(MINISTRAL_TWIN_STEP_SPECS, input).find((s) => s.verdict.saturated) as StepMeasurement;

    // Act
    const estimate = estimateCapacity(saturated);

    // Assess
    expect(saturated.amp.completedRps).toBe(51.6);
    expect(estimate.fromQueue).toBeCloseTo(55.9, 5);
    expect(estimate.fromCompletions).toBeCloseTo((51.6 * 60) / (60 - (8.64 - 4.38)), 5);
    expect(Math.abs(estimate.value / 56.7 - 1)).toBeLessThan(0.02);
    expect(estimate.reason).toMatch(/^mean of completions/);
  });

  it('uses the completions alone when the queue slope disagrees by more than 10 %', () => {
    // Prepare: k6 ran out of VUs, so the queue grew far slower than offered − capacity.
    const input = testInput();
    const [step] = buildSteps(
      [
        {
          rateRps: 100,
          amp: { completedRps: 50, queueSlopePerSecond: 10, queueMax: 300, p95E2eSeconds: null, p95TtftSeconds: null },
        },
      ],
      input,
    );

    // Act
    const estimate = estimateCapacity(step as StepMeasurement);

    // Assess
    expect(estimate.value).toBe(50);
    expect(estimate.fromQueue).toBe(90);
    expect(estimate.reason).toContain('completions alone');
  });
});

describe('Function: analyze (with adaptive’s out-of-order rates)', () => {
  it('takes the bracket from the rates, not from the order the steps ran in', () => {
    // Prepare: adaptive measures 64 (saturated) before 53 and 57.
    const input = adaptiveInput();
    const run = runStrategy(adaptiveStrategy, new SaturatingServer({ capacityRps: 55, seed: 1 }), input);
    const state = decideAdaptive(run.steps, input.plan);

    // Act
    const analysis = analyze(run.steps, input);

    // Assess
    expect(analysis.saturation.found && analysis.saturation.rateRps).toBe(state.saturatedRps);
    expect(analysis.lastStableRps).toBe(state.stableRps);
    expect(analysis.notes.filter((n) => n.includes('noisy'))).toEqual([]);
  });
});

describe('Input: plan.adaptive', () => {
  it('defaults to startRps 10, growthFactor 3, maxRps 1024, resolution 0.05, maxSteps 10', () => {
    // Assess
    expect(testInput().plan.adaptive).toEqual({
      startRps: 10,
      growthFactor: 3,
      maxRps: 1024,
      resolution: 0.05,
      maxSteps: 10,
    });
  });

  it.each([
    { case: 'a zero start rate', adaptive: { startRps: 0 }, path: 'plan.adaptive.startRps', says: 'must be > 0' },
    { case: 'a growth of 1', adaptive: { growthFactor: 1 }, path: 'plan.adaptive.growthFactor', says: 'must be > 1' },
    { case: 'a text maxRps', adaptive: { maxRps: '100' }, path: 'plan.adaptive.maxRps', says: 'must be a number' },
    { case: 'a resolution of 60 %', adaptive: { resolution: 0.6 }, path: 'plan.adaptive.resolution', says: '<= 0.5' },
    { case: 'one step', adaptive: { maxSteps: 1 }, path: 'plan.adaptive.maxSteps', says: 'must be >= 2' },
    { case: 'fractional steps', adaptive: { maxSteps: 4.5 }, path: 'plan.adaptive.maxSteps', says: 'integer' },
    {
      case: 'a start above maxRps',
      adaptive: { startRps: 200, maxRps: 100 },
      path: 'plan.adaptive.startRps',
      says: '200 is above maxRps (100)',
    },
    { case: 'an unknown key', adaptive: { startRate: 4 }, path: 'plan.adaptive.startRate', says: 'accepted: startRps' },
    {
      case: 'a zero bracket hold',
      adaptive: { bracketHoldSeconds: 0 },
      path: 'plan.adaptive.bracketHoldSeconds',
      says: 'must be > 0 seconds',
    },
  ])('refuses $case, naming the field', ({ adaptive, path, says }) => {
    // Act
    const parse = () => testInput({ plan: { adaptive } as unknown as CalibrationInputSpec['plan'] });

    // Assess
    expect(parse).toThrow(CalibrationInputInvalidError);
    try {
      parse();
    } catch (error) {
      const issues = (error as CalibrationInputInvalidError).issues;
      expect(issues).toEqual([{ path, message: expect.stringContaining(says) }]);
    }
  });
});
