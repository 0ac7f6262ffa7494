import { describe, expect, it } from '@jest/globals';
import { decideK6Signal, K6_SIGNAL_RULES, type K6Reading, type K6SignalDecision } from './k6Signal.js';
import { seededRandom } from './strategies/testing/saturatingServer.js';
import { testInput } from './testing/steps.js';

// Synthetic k6 runs as WatchLoadStep reads them: one reading of k6's /v1/metrics per look, under constant arrival.

const HOLD = 60;
const T0 = Date.UTC(2025, 5, 2, 9, 0, 0);
const SETTINGS = testInput().plan.earlyStop;

/**
 * A constant-arrival run at `rate` req/s: the requests in flight at t are `inFlight(t)` plus noise (never below 0,
 * whole requests); iterations finish from `firstDoneSeconds` on at the served rate; k6 drops what exceeds `maxVUs`.
 */
interface Run {
  rate: number;
  inFlight: (t: number) => number;
  firstDoneSeconds: number;
  servedRps: number;
  maxVUs?: number;
}

function reading(run: Run, t: number, noise: () => number): K6Reading {
  const wanted = Math.max(0, Math.round(run.inFlight(t) + noise()));
  const vus = Math.min(wanted, run.maxVUs ?? Number.POSITIVE_INFINITY);
  const iterations = t < run.firstDoneSeconds ? 0 : Math.round(run.servedRps * (t - run.firstDoneSeconds) + 1);
  const droppedIterations = run.maxVUs !== undefined && wanted > run.maxVUs ? Math.round((wanted - run.maxVUs) / 2) : 0;
  return { tMs: T0 + t * 1000, vus, iterations, droppedIterations, httpReqs: iterations };
}

/** Replays the workflow's looks (one reading each, every `lookSeconds`): the first ending, or the hold reached. */
function replay(
  run: Run,
  noise: () => number = () => 0,
  lookSeconds = 5,
): { decision: K6SignalDecision; atSeconds: number; readings: K6Reading[] } {
  const readings: K6Reading[] = [];
  let decision: K6SignalDecision = { action: 'continue', reason: 'not looked yet' };
  for (let t = lookSeconds; t < HOLD; t += lookSeconds) {
    readings.push(reading(run, t, noise));
    decision = decideK6Signal(readings.slice(-K6_SIGNAL_RULES.keptReadings), {
      offeredRps: run.rate,
      loadStartMs: T0,
      nowMs: T0 + t * 1000,
      plannedHoldSeconds: HOLD,
      settings: SETTINGS,
    });
    if (decision.action === 'end') return { decision, atSeconds: t, readings };
  }
  return { decision, atSeconds: HOLD, readings };
}

/** A server that keeps up: in flight fills to rate × latency within the latency, then holds (Little's law). */
const keepsUp = (rate: number, latency: number): Run => ({
  rate,
  inFlight: (t) => rate * Math.min(t, latency),
  firstDoneSeconds: latency,
  servedRps: rate,
});
/** A server serving `capacity` of `rate`: in flight grows by the difference every second. */
const fallsBehind = (rate: number, capacity: number, latency: number): Run => ({
  rate,
  inFlight: (t) => capacity * Math.min(t, latency) + (rate - capacity) * t,
  firstDoneSeconds: latency,
  servedRps: capacity,
});

/** AR(1) noise scaled to a stationary sd (in flight at successive looks is correlated when latency is long). */
const ar1Noise = (sd: number, phi: number, seed: number) => {
  const r = seededRandom(seed);
  let x = sd * r.normal();
  return () => {
    x = phi * x + sd * Math.sqrt(1 - phi * phi) * r.normal();
    return x;
  };
};

/** Runs many stable steps with noise and counts the ones ended as saturated. */
function falsePositiveRate(run: Run, noise: (seed: number) => () => number, lookSeconds: number, runs = 2000): number {
  let saturated = 0;
  for (let seed = 1; seed <= runs; seed++)
    if (replay(run, noise(seed), lookSeconds).decision.action === 'end') saturated += 1;
  return saturated / runs;
}

// 20 req/s answered in 2.5 s: about 50 in flight, the sd of a Poisson count of 50 (about 7), iid or correlated.
const FP_IID = falsePositiveRate(keepsUp(20, 2.5), (seed) => ar1Noise(7, 0, seed), 5);
const FP_AR1 = falsePositiveRate(keepsUp(20, 2.5), (seed) => ar1Noise(7, 0.6, seed), 5);
const FP_FAST_LOOKS = falsePositiveRate(keepsUp(30, 1), (seed) => ar1Noise(5.5, 0.3, seed), 2);

const pct = (fraction: number) => `${(fraction * 100).toFixed(2)} %`;

describe('Function: decideK6Signal', () => {
  it(`ends no stable step with noisy readings as saturated (false positives: iid ${pct(FP_IID)}, AR(1) φ 0.6 ${pct(FP_AR1)}, looks every 2 s ${pct(FP_FAST_LOOKS)} of 2000 runs)`, () => {
    // Assess: the test is against the verdict's limit at 99 %, over every look of the step.
    expect(FP_IID).toBeLessThanOrEqual(0.01);
    expect(FP_AR1).toBeLessThanOrEqual(0.01);
    expect(FP_FAST_LOOKS).toBeLessThanOrEqual(0.01);
  });

  it.each([
    { case: '40 req/s on a 35 req/s replica (in flight +5/s)', rate: 40, capacity: 35, by: 25 },
    { case: '70 req/s on a 35 req/s replica (in flight +35/s)', rate: 70, capacity: 35, by: 25 },
    { case: '20 req/s on a 18.5 req/s replica (in flight +1.5/s)', rate: 20, capacity: 18.5, by: 40 },
  ])('ends $case as saturated by $by s of 60, not before a quarter of the hold', ({ rate, capacity, by }) => {
    // Act
    const { decision, atSeconds } = replay(fallsBehind(rate, capacity, 2), ar1Noise(3, 0.3, 7));

    // Assess
    expect(decision).toMatchObject({ action: 'end', kind: 'saturated' });
    expect(decision.reason).toMatch(
      /^k6: requests in flight rose from \d+ to \d+ over \d+ s \(\+[\d.]+\/s, t = [\d.]+ against the limit [\d.]+\/s \(critical [\d.]+, one-sided 99 %, n = \d\)\): the replica does not keep up$/,
    );
    expect(atSeconds).toBeGreaterThanOrEqual(0.25 * HOLD);
    expect(atSeconds).toBeLessThanOrEqual(by);
  });

  it('ends a step whose k6 dropped iterations (every VU busy) as saturated, naming the drops', () => {
    // Prepare: 70 req/s on 35, maxVUs 50: the pool runs out within 2 s.
    const run = { ...fallsBehind(70, 35, 1), maxVUs: 50 };

    // Act
    const { decision, atSeconds } = replay(run);

    // Assess
    expect(decision).toMatchObject({ action: 'end', kind: 'saturated' });
    expect(decision.reason).toMatch(/^k6: \d+ iteration\(s\) dropped with 50 requests in flight \(every VU busy\)/);
    expect(atSeconds).toBe(15);
  });

  it('does not count the fill of the first seconds (nothing finished yet) as growth', () => {
    // Prepare: answers take 20 s (a long prompt at a high rate): in flight climbs 20/s until the first one finishes.
    const run = keepsUp(20, 20);

    // Act
    const { decision, readings } = replay(run, () => 0, 5);

    // Assess
    expect(readings[2]?.vus).toBe(300);
    expect(decision.action).toBe('continue');
  });

  it('does not end a step whose in flight rose once and levelled off (the latency settled higher)', () => {
    // Prepare: the batch filled over its first 6 s, latency from 1 s to 3 s, then flat.
    const run: Run = {
      rate: 20,
      inFlight: (t) => 20 * Math.min(3, 1 + t / 3),
      firstDoneSeconds: 1,
      servedRps: 20,
    };

    // Act
    const { decision } = replay(run);

    // Assess
    expect(decision.action).toBe('continue');
    expect(decision.reason).toMatch(/^k6: requests in flight from \d+ to 60 over \d+ s .*: no sustained growth$/);
  });

  it.each([
    { case: 'before a quarter of the hold', nowSeconds: 12, reason: /no ending before 15 s of load/ },
    { case: 'with 3 readings', nowSeconds: 40, reason: /3 reading\(s\) since a request first finished/ },
  ])('keeps loading $case, saying why', ({ nowSeconds, reason }) => {
    // Prepare: steep growth, but too early or too few readings.
    const readings = [10, 20, 30].map((t) => reading(fallsBehind(70, 35, 1), t, () => 0));

    // Act
    const decision = decideK6Signal(readings, {
      offeredRps: 70,
      loadStartMs: T0,
      nowMs: T0 + nowSeconds * 1000,
      plannedHoldSeconds: HOLD,
      settings: SETTINGS,
    });

    // Assess
    expect(decision.action).toBe('continue');
    expect(decision.reason).toMatch(reason);
  });

  it('ignores readings of before the load began (an earlier look at another Job)', () => {
    // Prepare
    const old = { tMs: T0 - 60_000, vus: 0, iterations: 500, droppedIterations: 3, httpReqs: 500 };

    // Act
    const decision = decideK6Signal([old], {
      offeredRps: 10,
      loadStartMs: T0,
      nowMs: T0 + 30_000,
      plannedHoldSeconds: HOLD,
      settings: SETTINGS,
    });

    // Assess
    expect(decision).toEqual({ action: 'continue', reason: 'k6: no live reading yet' });
  });
});
