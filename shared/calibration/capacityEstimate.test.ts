import { describe, expect, it } from '@jest/globals';
import { heldLongEnough, kneeEstimate, MIN_LIFETIMES_FOR_THROUGHPUT } from './capacityEstimate.js';
import { buildSteps, testInput } from './testing/steps.js';

// A KV-bound replica (llama-2-13b-h100-kv, 512/256 tokens): capacity ~6.3 req/s, a request lives ~13 s at the knee.
const LIFETIME = 13;
const saturatedAt8 = {
  rateRps: 8,
  holdSeconds: 60,
  amp: {
    queueSlopePerSecond: 1.8,
    queueMax: 90,
    queueMean: 45,
    completedRps: 6.2,
    completedRpsLateHalf: 6.3,
    preemptions: 120,
    meanLifetimeSeconds: LIFETIME,
  },
};

describe('Function: kneeEstimate', () => {
  it('takes no floor from a stable step shorter than two request lifetimes (it may have ended before the KV cache filled)', () => {
    // Prepare: a probe at 7.3 req/s ended "stable" after 20 s (1.5 lifetimes): above the capacity, yet it completed
    // its rate.
    const input = testInput();
    const steps = buildSteps(
      [{ rateRps: 7.3, holdSeconds: 20, amp: { completedRps: 7.2, meanLifetimeSeconds: LIFETIME } }, saturatedAt8],
      input,
    );

    // Act
    const estimate = kneeEstimate(steps);

    // Assess: the saturated step's completions stand (6.3), not the short probe's 7.3 (16 % high).
    expect(steps[0]?.verdict.saturated).toBe(false);
    expect(heldLongEnough(steps[0]!)).toBe(false);
    expect(estimate?.floorRps).toBe(0);
    expect(estimate?.value).toBeCloseTo(6.3, 1);
  });

  it('raises an estimate below a rate a stable step of at least two lifetimes held to the middle of the bracket', () => {
    // Prepare: 6.5 req/s held for 30 s (2.3 lifetimes) with the cache levelled: the replica held it.
    const input = testInput();
    const steps = buildSteps(
      [
        {
          rateRps: 6.5,
          holdSeconds: 30,
          amp: {
            completedRps: 6.4,
            meanLifetimeSeconds: LIFETIME,
            kvCacheUsageLast: 0.75,
            kvCacheUsageLatestHalfStart: 0.74,
          },
        },
        saturatedAt8,
      ],
      input,
    );

    // Act
    const estimate = kneeEstimate(steps);

    // Assess
    expect(30).toBeGreaterThanOrEqual(MIN_LIFETIMES_FOR_THROUGHPUT * LIFETIME);
    expect(estimate?.floorRps).toBe(6.5);
    expect(estimate?.value).toBe(7.25);
    expect(estimate?.reason).toContain(
      'below 6.5 req/s, which a stable step held, so raised to 7.25 req/s, the middle of the bracket [6.5, 8] req/s',
    );
  });
});
