import { describe, expect, it } from '@jest/globals';
import { estimateCapacity, heldLongEnough, kneeEstimate, MIN_LIFETIMES_FOR_THROUGHPUT } from './capacityEstimate.js';
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

  it('never puts the capacity above the lowest saturated rate, whatever higher steps read', () => {
    // Prepare: the twin's KV-bound replica: 6.7 req/s saturated (its cache still filling to 87 %, completions keeping
    // up), 10 req/s overloaded read 7.0 (its late half drained a backlog unevenly); 6.5 req/s stable.
    const input = testInput();
    const steps = buildSteps(
      [
        { rateRps: 6.5, amp: { completedRps: 6.4, meanLifetimeSeconds: 9.2 } },
        {
          rateRps: 6.7,
          amp: {
            completedRps: 6.6,
            completedRpsLateHalf: 6.6,
            meanLifetimeSeconds: 9.9,
            kvCacheUsageLast: 0.87,
            kvCacheUsageLatestHalfStart: 0.6,
          },
        },
        { ...saturatedAt8, rateRps: 10, amp: { ...saturatedAt8.amp, completedRpsLateHalf: 7, queueSlopePerSecond: 3 } },
      ],
      input,
    );

    // Act
    const estimate = kneeEstimate(steps);

    // Assess: 6.6 and 7.0 agree within 10 % and average to 6.8, above where the replica saturated.
    expect(steps[1]?.verdict.saturated).toBe(true);
    expect(estimate?.value).toBe(6.7);
    expect(estimate?.reason).toContain('capped at 6.7 req/s, where a step saturated');
  });

  it('raises the estimate to what a stable step of at least two lifetimes completed', () => {
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
    expect(estimate?.value).toBe(6.5);
    expect(estimate?.reason).toContain('raised to 6.5 req/s');
  });
});

describe('Function: estimateCapacity', () => {
  // ministral-8b-l40s-fast at 4 × its capacity of 56.7 req/s: a full batch of 256, 4.5 s in it. The window's late half
  // caught one wave of completions less than its share (51.2 req/s); the queue's slope is flattened by k6's maxVUs.
  const overloaded = {
    rateRps: 246,
    holdSeconds: 46,
    amp: {
      queueSlopePerSecond: 4.2,
      queueMax: 244,
      queueMean: 240,
      completedRps: 48.8,
      completedRpsLateHalf: 51.2,
      preemptions: 0,
      meanLifetimeSeconds: 4.44,
      runningMean: 256,
      meanInferenceSeconds: 4.5,
    },
  };

  it('takes the median of completions, queue and batch, so that one estimate off does not move it', () => {
    // Prepare
    const [step] = buildSteps([overloaded], testInput());

    // Act
    const estimate = estimateCapacity(step!);

    // Assess: completions 51.2 (a wave short), offered − slope 241.8 (flattened), batch 256 / 4.5 = 56.9.
    expect(estimate.fromBatch).toBeCloseTo(56.89, 2);
    expect(estimate.value).toBeCloseTo(56.89, 2);
    expect(estimate.reason).toBe(
      'median of completions 51.20, offered − queue slope 241.80 and running batch / time in it 56.89 req/s',
    );
  });

  it('leaves the batch out after preemptions (time waiting again counts as inference time)', () => {
    const [step] = buildSteps([{ ...overloaded, amp: { ...overloaded.amp, preemptions: 3 } }], testInput());

    const estimate = estimateCapacity(step!);

    expect(estimate.fromBatch).toBeNull();
    expect(estimate.value).toBeCloseTo(51.2, 2);
    expect(estimate.reason).toMatch(/^completions 51\.20 req\/s; offered − queue slope 241\.80 req\/s disagrees/);
  });

  it('leaves the queue out when k6 dropped iterations (its pool, not the server, capped the queue), then trusts the batch over completions that disagree', () => {
    // Prepare: an early ending's last k6 reading had dropped 8521 iterations; the late half missed a wave (45.0).
    const amp = { ...overloaded.amp, completedRpsLateHalf: 45 };
    const [step] = buildSteps([{ ...overloaded, amp }], testInput());
    const ended = {
      ...step!,
      k6: null,
      ending: {
        kind: 'saturated-early' as const,
        reason: 'k6: 8521 iteration(s) dropped',
        evidence: 'k6' as const,
        droppedIterations: 8521,
        heldSeconds: 46,
        plannedHoldSeconds: 60,
      },
    };

    // Act
    const estimate = estimateCapacity(ended);

    // Assess: no offered − slope (241.8); batch 56.89 against completions 45.0 → the batch.
    expect(estimate.fromQueue).toBeNull();
    expect(estimate.value).toBeCloseTo(56.89, 2);
    expect(estimate.reason).toMatch(/^running batch \/ time in it 56\.89 req\/s; completions 45\.00 req\/s disagree/);
    expect(estimate.reason).toContain("the queue's slope not used: k6 dropped 8521 iterations");
  });

  it("takes the batch over the window's latest half when measured (the whole window's includes its filling)", () => {
    // Prepare: a prefill-heavy replica whose batch filled over the first 15 s: 62.5 on average, 85 in the latest half,
    // where a request spent 16.7 s in it (15.4 s over the whole window: the first ran in a smaller, faster batch).
    const amp = {
      ...overloaded.amp,
      queueSlopePerSecond: 0,
      queueMax: 0,
      queueMean: 0,
      completedRpsLateHalf: 4.3,
      meanLifetimeSeconds: 12.2,
      runningMean: 62.5,
      runningLatestHalfMean: 85,
      meanInferenceSeconds: 15.4,
      meanInferenceSecondsLateHalf: 16.7,
    };
    const [step] = buildSteps([{ ...overloaded, rateRps: 10, amp }], testInput());
    const wholeWindow = {
      ...step!,
      amp: { ...step!.amp, runningLatestHalfMean: null, meanInferenceSecondsLateHalf: null },
    };

    // Act
    const estimate = estimateCapacity(step!);
    const fromWholeWindow = estimateCapacity(wholeWindow);

    // Assess: 85 / 16.7 = 5.09; the whole window's 62.5 / 15.4 = 4.06.
    expect(estimate.fromBatch).toBeCloseTo(5.09, 2);
    expect(fromWholeWindow.fromBatch).toBeCloseTo(4.06, 2);
  });

  it('averages completions and batch when the queue did not grow and they agree within 10 %', () => {
    const amp = { ...overloaded.amp, queueSlopePerSecond: 0, queueMax: 0, queueMean: 0, meanInferenceSeconds: 4.7 };
    const [step] = buildSteps([{ ...overloaded, amp }], testInput());

    const estimate = estimateCapacity(step!);

    expect(estimate.value).toBeCloseTo((51.2 + 256 / 4.7) / 2, 2);
    expect(estimate.reason).toContain('mean of completions 51.20 and running batch / time in it 54.47 req/s');
  });
});
