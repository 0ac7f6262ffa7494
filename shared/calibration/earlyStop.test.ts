import { describe, expect, it } from '@jest/globals';
import { CalibrationInputInvalidError } from './errors.js';
import { decideStepEnding, fitSlope, tCritical, type QueueSample, type StepEndingDecision } from './earlyStop.js';
import { parseCalibrationInput, type EarlyStopSettings } from './input.js';
import { seededRandom } from './strategies/testing/saturatingServer.js';
import { testInput } from './testing/steps.js';

// Synthetic queues as WatchLoadStep sees them: one sample every 2 s (a 60 s hold's query step), a look every 10 s.

const HOLD = 60;
const SAMPLE_SECONDS = 2;
const LOOK_SECONDS = 10;
/** A request's decode time in these steps (the guide's ministral: about 2 s): 4 lifetimes fit in a quarter hold. */
const LIFETIME = 2;
const T0 = Date.UTC(2025, 5, 2, 9, 0, 0);
const DEFAULTS: EarlyStopSettings = testInput().plan.earlyStop;

/** A queue over the hold: `level(t)` plus noise, never below 0, rounded (a queue holds whole requests). */
function queueSeries(level: (t: number) => number, noise: (t: number) => number): QueueSample[] {
  const samples: QueueSample[] = [];
  for (let t = 0; t <= HOLD; t += SAMPLE_SECONDS)
    samples.push({ tMs: T0 + t * 1000, queue: Math.max(0, Math.round(level(t) + noise(t))) });
  return samples;
}

/** Replays the workflow's looks over a series: the first ending, or the hold reached. */
function replay(
  samples: readonly QueueSample[],
  offeredRps: number,
  settings: EarlyStopSettings = DEFAULTS,
  lifetime: number | null = LIFETIME,
): { decision: StepEndingDecision; atSeconds: number } {
  let decision: StepEndingDecision = { action: 'continue', reason: 'not looked yet' };
  for (let look = LOOK_SECONDS; look < HOLD; look += LOOK_SECONDS) {
    const seen = samples.filter((s) => s.tMs <= T0 + look * 1000);
    decision = decideStepEnding(seen, {
      offeredRps,
      elapsedSeconds: look,
      plannedHoldSeconds: HOLD,
      pods: 1,
      requestLifetimeSeconds: lifetime,
      settings,
    });
    if (decision.action === 'end') return { decision, atSeconds: look };
  }
  return { decision, atSeconds: HOLD };
}

const iidNoise = (sd: number, seed: number) => {
  const r = seededRandom(seed);
  return () => sd * r.normal();
};
/** AR(1) noise x_t = φ x_{t−1} + e_t, scaled to a stationary sd: a queue's fluctuations are correlated in time. */
const ar1Noise = (sd: number, phi: number, seed: number) => {
  const r = seededRandom(seed);
  let x = sd * r.normal();
  return () => {
    x = phi * x + sd * Math.sqrt(1 - phi * phi) * r.normal();
    return x;
  };
};

/** Runs many noise-only steps and counts the ones ended as saturated. */
function falsePositiveRate(noise: (seed: number) => () => number, runs: number): number {
  let saturated = 0;
  for (let seed = 1; seed <= runs; seed++) {
    const { decision } = replay(
      queueSeries(() => 3, noise(seed)),
      30,
    );
    if (decision.action === 'end' && decision.kind === 'saturated') saturated += 1;
  }
  return saturated / runs;
}

const RUNS = 2000;
const FP_IID = falsePositiveRate((seed) => iidNoise(3, seed), RUNS);
const FP_AR1 = falsePositiveRate((seed) => ar1Noise(3, 0.8, seed), RUNS);

describe('Function: decideStepEnding', () => {
  it(`ends no step of pure noise as saturated (false positives: iid ${FP_IID * 100} %, AR(1) φ 0.8 ${FP_AR1 * 100} % of ${RUNS} runs)`, () => {
    // Assess: the test is against the verdict's limit at 99 %, so noise around a flat queue almost never passes it.
    expect(FP_IID).toBeLessThanOrEqual(0.01);
    expect(FP_AR1).toBeLessThanOrEqual(0.01);
  });

  it.each([
    { case: 'a queue growing 5 req/s (40 req/s on a 35 req/s replica)', slope: 5, offered: 40, by: 20 },
    { case: 'a queue growing 25 req/s (twice the capacity)', slope: 25, offered: 50, by: 20 },
    { case: 'a queue growing 1.5 req/s at 20 req/s offered', slope: 1.5, offered: 20, by: 40 },
  ])('ends $case as saturated early, by $by s of 60', ({ slope, offered, by }) => {
    // Prepare
    const samples = queueSeries((t) => slope * t, iidNoise(2, 7));

    // Act
    const { decision, atSeconds } = replay(samples, offered);

    // Assess
    expect(decision).toMatchObject({ action: 'end', kind: 'saturated' });
    expect(decision.reason).toMatch(/significantly above the early-ending limit .* req\/s \(t = .*one-sided 99 %/);
    expect(atSeconds).toBeGreaterThanOrEqual(HOLD * 0.25);
    expect(atSeconds).toBeLessThanOrEqual(by);
  });

  it('ends a late knee (flat, then growing from 35 % of the hold) as saturated when stable endings wait for half of it', () => {
    // Prepare: a knee later than stableAfterFraction is beyond what the look can see, so this plan waits longer.
    const knee = 0.35 * HOLD;
    const samples = queueSeries((t) => (t < knee ? 0.5 : 4 * (t - knee)), iidNoise(0.5, 11));

    // Act
    const { decision, atSeconds } = replay(samples, 40, { ...DEFAULTS, stableAfterFraction: 0.5 });

    // Assess
    expect(decision).toMatchObject({ action: 'end', kind: 'saturated' });
    expect(atSeconds).toBeGreaterThan(knee);
  });

  it('ends a step whose queue stays near 0 as stable, not before a quarter of the hold', () => {
    // Prepare
    const samples = queueSeries(() => 0.3, iidNoise(0.4, 5));

    // Act
    const { decision, atSeconds } = replay(samples, 20);

    // Assess
    expect(decision).toMatchObject({ action: 'end', kind: 'stable' });
    expect(decision.reason).toMatch(/upper bound .* below the saturation limit 0.4 req\/s.*the replica keeps up/);
    expect(atSeconds).toBe(20);
    expect(atSeconds).toBeGreaterThanOrEqual(0.25 * HOLD);
  });

  it.each([
    {
      // The KV-bound probe above capacity: the queue stays empty while the cache fills (40 % → 95 % over the
      // hold); two lifetimes in, the queue alone would have ended it stable.
      case: 'a KV cache still filling',
      usage: (t: number) => Math.min(0.95, 0.4 + 0.0092 * t),
      preemptions: 0,
      expected: /KV cache still filling .*: a stable ending needs it levelled off/,
    },
    {
      case: 'preemptions so far',
      usage: () => 0.6,
      preemptions: 4,
      expected: /vLLM preempted 4 sequences so far: the KV cache does not hold the batch/,
    },
  ])('does not end a step with an empty queue as stable with $case', ({ usage, preemptions, expected }) => {
    // Prepare
    const samples = queueSeries(
      () => 0,
      () => 0,
    );
    const kvSamples = samples.map((s) => ({ tMs: s.tMs, usage: usage((s.tMs - T0) / 1000) }));

    // Act: a look at 30 s, past a quarter of the hold and many lifetimes.
    const seen = (tMs: number) => tMs <= T0 + 30_000;
    const decision = decideStepEnding(
      samples.filter((s) => seen(s.tMs)),
      {
        offeredRps: 20,
        elapsedSeconds: 30,
        plannedHoldSeconds: HOLD,
        pods: 1,
        requestLifetimeSeconds: LIFETIME,
        settings: DEFAULTS,
        kvCache: { samples: kvSamples.filter((s) => seen(s.tMs)), preemptions },
      },
    );

    // Assess
    expect(decision.action).toBe('continue');
    expect(decision.reason).toMatch(expected);
  });

  it('ends a step as stable once the KV cache levelled off without preemptions, saying so', () => {
    // Prepare: the cache fills in the first 10 s, then holds at 70 %.
    const samples = queueSeries(
      () => 0,
      () => 0,
    ).filter((s) => s.tMs <= T0 + 30_000);
    const kvSamples = samples.map((s) => ({ tMs: s.tMs, usage: Math.min(0.7, (0.07 * (s.tMs - T0)) / 1000) }));

    // Act
    const decision = decideStepEnding(samples, {
      offeredRps: 20,
      elapsedSeconds: 30,
      plannedHoldSeconds: HOLD,
      pods: 1,
      requestLifetimeSeconds: LIFETIME,
      settings: DEFAULTS,
      kvCache: { samples: kvSamples, preemptions: 0 },
    });

    // Assess
    expect(decision).toMatchObject({ action: 'end', kind: 'stable' });
    expect(decision.reason).toContain('no preemption and KV cache levelled off (70 % → 70 %');
  });

  it.each([
    { case: 'a queue above 2 per Pod', level: 8, noise: 1 },
    { case: 'a noisy queue whose slope cannot be bounded', level: 1.5, noise: 6 },
  ])('holds $case to the end: neither ending is evident', ({ level, noise }) => {
    // Prepare
    const samples = queueSeries(() => level, iidNoise(noise, 3));

    // Act
    const { decision, atSeconds } = replay(samples, 20);

    // Assess
    expect(decision.action).toBe('continue');
    expect(atSeconds).toBe(HOLD);
  });

  it('does not end a clearly saturated step before minSeconds', () => {
    // Prepare
    const samples = queueSeries(
      (t) => 10 * t,
      () => 0,
    );
    const settings = { ...DEFAULTS, minSeconds: 35 };

    // Act
    const { decision, atSeconds } = replay(samples, 40, settings);

    // Assess
    expect(decision).toMatchObject({ action: 'end', kind: 'saturated' });
    expect(atSeconds).toBe(40);
  });

  it('keeps going with fewer samples than minSamples, saying how many it has', () => {
    // Prepare
    const samples = queueSeries(
      (t) => 10 * t,
      () => 0,
    ).slice(0, 5);

    // Act
    const decision = decideStepEnding(samples, {
      offeredRps: 40,
      elapsedSeconds: 30,
      plannedHoldSeconds: HOLD,
      pods: 1,
      requestLifetimeSeconds: LIFETIME,
      settings: DEFAULTS,
    });

    // Assess
    expect(decision).toEqual({
      action: 'continue',
      reason: 'after 30 s of 60 s: 5 queue sample(s), fewer than the 6 needed to decide',
    });
  });

  it.each([
    { case: 'no request has finished yet', lifetime: null, endsBy: null },
    { case: 'requests live 12 s (4 lifetimes = 48 s of 60)', lifetime: 12, endsBy: 50 },
  ])('waits for the load to turn over before a saturated ending when $case', ({ lifetime, endsBy }) => {
    // Prepare: a queue that clearly grows from the start, which ends by 20 s with 2 s requests.
    const samples = queueSeries((t) => 5 * t, iidNoise(2, 7));

    // Act
    const { decision, atSeconds } = replay(samples, 40, DEFAULTS, lifetime);

    // Assess
    if (endsBy === null) {
      expect(decision).toMatchObject({
        action: 'continue',
        reason: expect.stringContaining('no request has finished'),
      });
    } else {
      expect(decision).toMatchObject({ action: 'end', kind: 'saturated' });
      expect(atSeconds).toBeGreaterThanOrEqual(4 * lifetime);
      expect(atSeconds).toBeLessThanOrEqual(endsBy);
    }
  });

  it('never ends a step when early ending is off', () => {
    // Prepare
    const samples = queueSeries(
      (t) => 10 * t,
      () => 0,
    );

    // Act
    const { decision, atSeconds } = replay(samples, 40, { ...DEFAULTS, enabled: false });

    // Assess
    expect(decision).toEqual({ action: 'continue', reason: 'early ending is off (plan.earlyStop.enabled false)' });
    expect(atSeconds).toBe(HOLD);
  });

  it.each([
    { case: 'a hold of 0 s', context: { plannedHoldSeconds: 0 }, field: /context\.plannedHoldSeconds: got 0/ },
    { case: 'no Pods', context: { pods: 0 }, field: /context\.pods: got 0/ },
    { case: 'negative elapsed time', context: { elapsedSeconds: -1 }, field: /context\.elapsedSeconds: got -1/ },
    { case: 'an offered rate of NaN', context: { offeredRps: Number.NaN }, field: /context\.offeredRps: got NaN/ },
    {
      case: 'a negative request lifetime',
      context: { requestLifetimeSeconds: -1 },
      field: /context\.requestLifetimeSeconds: got -1/,
    },
  ])('refuses $case, naming the field', ({ context, field }) => {
    // Act
    const act = () =>
      decideStepEnding([], {
        offeredRps: 10,
        elapsedSeconds: 10,
        plannedHoldSeconds: HOLD,
        pods: 1,
        requestLifetimeSeconds: LIFETIME,
        settings: DEFAULTS,
        ...context,
      });

    // Assess
    expect(act).toThrow(CalibrationInputInvalidError);
    expect(act).toThrow(field);
  });
});

describe('Function: fitSlope', () => {
  it('finds the slope of a noisy line, with a standard error that covers the truth', () => {
    // Prepare
    const samples = queueSeries((t) => 100 + 3 * t, iidNoise(2, 1));

    // Act
    const fit = fitSlope(samples);

    // Assess
    expect(fit.n).toBe(31);
    expect(Math.abs(fit.slopePerSecond - 3)).toBeLessThan(3 * fit.standardError);
    expect(fit.standardError).toBeGreaterThan(0);
  });
});

describe('Function: tCritical', () => {
  it.each([
    { case: '99 %, 10 df', confidence: 0.99, df: 10, t: 2.764 },
    { case: '95 %, 4 df', confidence: 0.95, df: 4, t: 2.132 },
    { case: '90 %, 1 df', confidence: 0.9, df: 1, t: 3.078 },
    { case: '99 %, 35 df (the 30 df row: conservative)', confidence: 0.99, df: 35, t: 2.457 },
    { case: '99 %, 10 000 df (the normal limit)', confidence: 0.99, df: 10_000, t: 2.358 },
  ])('gives the table value for $case', ({ confidence, df, t }) => {
    // Act / Assess
    expect(tCritical(confidence, df)).toBe(t);
  });

  it('refuses a confidence the table has no column for', () => {
    // Act / Assess
    expect(() => tCritical(0.975, 10)).toThrow(/confidence: got 0.975; accepted: 0.9, 0.95, 0.99/);
  });
});

describe('Input: plan.earlyStop', () => {
  const target = testInput().target;

  it('is on by default, at 99 %, with the documented knobs', () => {
    // Act
    const input = parseCalibrationInput({ target });

    // Assess
    expect(input.plan.earlyStop).toEqual({
      enabled: true,
      confidence: 0.99,
      minSamples: 6,
      stableAfterFraction: 0.25,
      saturatedMinLifetimes: 4,
      stableMinLifetimes: 2,
      stableQueueMaxPerPod: 2,
      watchSeconds: 5,
    });
  });

  it.each([
    {
      case: 'an unsupported confidence',
      earlyStop: { confidence: 0.97 },
      field: /plan\.earlyStop\.confidence.*0\.97 is not supported; accepted: 0\.9, 0\.95, 0\.99/,
    },
    { case: 'a negative minSeconds', earlyStop: { minSeconds: -1 }, field: /plan\.earlyStop\.minSeconds/ },
    { case: 'too few samples', earlyStop: { minSamples: 3 }, field: /plan\.earlyStop\.minSamples: must be >= 4/ },
    {
      case: 'a fraction above 1',
      earlyStop: { stableAfterFraction: 1.5 },
      field: /plan\.earlyStop\.stableAfterFraction/,
    },
    { case: 'an unknown key', earlyStop: { enable: false }, field: /plan\.earlyStop.*enable/ },
  ])('refuses $case, naming the field', ({ earlyStop, field }) => {
    // Act
    const act = () => parseCalibrationInput({ target, plan: { earlyStop } });

    // Assess
    expect(act).toThrow(CalibrationInputInvalidError);
    expect(act).toThrow(field);
  });
});
