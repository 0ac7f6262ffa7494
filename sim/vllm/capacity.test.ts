import { describe, expect, it } from '@jest/globals';
import { VirtualClock } from '../../shared/clock/index.js';
import { loadProfile } from '../profile/loadProfile.js';
import { measureCapacity, measureLatency } from './capacity.js';
import { VllmEngine, engineConfigFromProfile } from './engine.js';
import { VllmMeasurementInputError } from './errors.js';

/** The guide's request shape: a ~35-token prompt and max_tokens 100. */
const GUIDE_SHAPE = { promptTokens: 35, maxTokens: 100 };
/** The demo's request shape: the same prompt, short answers. */
const DEMO_SHAPE = { promptTokens: 35, maxTokens: 32 };

describe('Function: measureCapacity', () => {
  it.each([
    {
      case: 'ministral-8b-l40s, the guide shape (guide: saturation between 50 and 60)',
      profile: 'ministral-8b-l40s',
      shape: GUIDE_SHAPE,
      min: 50,
      max: 60,
    },
    { case: 'demo, the demo shape', profile: 'demo', shape: DEMO_SHAPE, min: 30, max: 40 },
  ])('finds the capacity of one replica: $case', async ({ profile, shape, min, max }) => {
    // Prepare
    const loaded = await loadProfile(profile);

    // Act
    const result = measureCapacity(loaded, shape);

    // Assess
    expect(result.capacityRps).toBeGreaterThanOrEqual(min);
    expect(result.capacityRps).toBeLessThanOrEqual(max);
    expect(result.offeredRps).toBeGreaterThan(result.capacityRps);
    expect(result.limitedBy).toBe('maxNumSeqs');
    expect(result.reason).toContain('--max-num-seqs');
  });

  it('is lower when --max-num-seqs is lower', async () => {
    // Prepare
    const profile = await loadProfile('demo');

    // Act
    const full = measureCapacity(profile, DEMO_SHAPE);
    const halved = measureCapacity(profile, DEMO_SHAPE, { overrides: { maxNumSeqs: 16 } });

    // Assess
    expect(halved.capacityRps).toBeLessThan(full.capacityRps * 0.8);
  });

  it('says the KV cache is the limit when it cannot hold a full batch', async () => {
    // Prepare: 256 blocks of 16 tokens cannot hold 32 sequences of 35 + 200 tokens (15 blocks each).
    const profile = await loadProfile('demo');

    // Act
    const result = measureCapacity(profile, { promptTokens: 35, maxTokens: 200 });

    // Assess
    expect(result.limitedBy).toBe('kvCache');
    expect(result.meanKvCacheUsage).toBeGreaterThan(0.8);
    expect(result.meanRunning).toBeLessThan(32);
  });

  it('names the KV cache as the limit of the KV-bound bench profile, the batch far below --max-num-seqs', async () => {
    // Prepare
    const profile = await loadProfile('sim/profile/profiles/bench/llama-2-13b-h100-kv.yaml');

    // Act
    const result = measureCapacity(profile, { promptTokens: 512, maxTokens: 256 });

    // Assess: ~82 running of 256, the cache ~96 % full, decodes preempting (the figures in the profile's comment).
    expect(result.limitedBy).toBe('kvCache');
    expect(result.capacityRps).toBeGreaterThan(6);
    expect(result.capacityRps).toBeLessThan(6.6);
    expect(result.meanRunning).toBeLessThan(0.5 * 256);
    expect(result.meanKvCacheUsage).toBeGreaterThan(0.9);
    expect(result.preemptions).toBeGreaterThan(0);
  });

  it('names prefill as the limit of 1,500-token prompts with 64 output tokens', async () => {
    // Prepare
    const profile = await loadProfile('sim/profile/profiles/bench/llama-8b-l4-prefill.yaml');

    // Act
    const result = measureCapacity(profile, { promptTokens: 1500, maxTokens: 64 });

    // Assess: 5.1 req/s x 1,500 tokens at 9,000 tokens/s is ~85 % of the busy time.
    expect(result.limitedBy).toBe('prefill');
    expect(result.capacityRps).toBeGreaterThan(4.8);
    expect(result.capacityRps).toBeLessThan(5.4);
    expect(result.prefillShare).toBeGreaterThan(0.8);
    expect(result.preemptions).toBe(0);
    expect(result.reason).toContain('prefill is the limit');
  });

  it('gives the KV-bound replica no more than it can drain: a backlog above its capacity only grows', async () => {
    // Prepare: 4 % above the capacity, arrivals start without a warm-up, so the first slow steps leave a backlog.
    const profile = await loadProfile('sim/profile/profiles/bench/llama-2-13b-h100-kv.yaml');
    const shape = { promptTokens: 512, maxTokens: 256 };
    const capacity = measureCapacity(profile, shape).capacityRps;

    // Act
    const above = measureLatency(profile, shape, capacity * 1.04, 300, { warmup: false });
    const below = measureLatency(profile, shape, capacity * 0.96, 300, { warmup: false });

    // Assess
    expect(above.maxWaiting).toBeGreaterThan(50);
    expect(above.preemptions).toBeGreaterThan(100);
    expect(below.meanWaiting).toBeLessThan(20);
  });

  it.each([
    { case: 'a zero prompt', shape: { promptTokens: 0, maxTokens: 10 }, field: 'shape.promptTokens' },
    { case: 'a fractional max_tokens', shape: { promptTokens: 10, maxTokens: 1.5 }, field: 'shape.maxTokens' },
  ])('rejects $case, naming the field', async ({ shape, field }) => {
    // Prepare
    const profile = await loadProfile('demo');

    // Act
    const act = (): unknown => measureCapacity(profile, shape);

    // Assess
    expect(act).toThrow(VllmMeasurementInputError);
    expect(act).toThrow(field);
  });
});

describe('Function: measureCapacity with a request mix', () => {
  it('gives a mix of fixed lengths the capacity of the fixed shape', async () => {
    // Prepare
    const profile = await loadProfile('demo');
    const shape = { promptTokens: 35, maxTokens: 32 };
    const mix = {
      seed: 1,
      prompt: { distribution: 'fixed' as const, tokens: 35 },
      output: { distribution: 'fixed' as const, tokens: 32 },
    };

    // Act
    const mixed = measureCapacity(profile, shape, { mix });

    // Assess
    expect(mixed.capacityRps).toBeCloseTo(measureCapacity(profile, shape).capacityRps, 1);
  });

  it('simulates the drawn requests, not their means: long tails fill the KV cache sooner than the mean does', async () => {
    // Prepare: a quarter of the requests are 1,000-token prompts with 200-token answers, the rest short.
    const profile = await loadProfile('demo');
    const mix = {
      seed: 1,
      prompt: {
        distribution: 'histogram' as const,
        buckets: [
          { tokens: 16, weight: 3 },
          { tokens: 1000, weight: 1 },
        ],
      },
      output: {
        distribution: 'histogram' as const,
        buckets: [
          { tokens: 8, weight: 3 },
          { tokens: 200, weight: 1 },
        ],
      },
    };
    const means = { promptTokens: 262, maxTokens: 56 };

    // Act
    const mixed = measureCapacity(profile, means, { mix });
    const ofMeans = measureCapacity(profile, means);

    // Assess: the engine is not linear in the lengths (ceil(tokens / blockSize) blocks a sequence, preemption).
    expect(mixed.shape).toEqual(means);
    expect(mixed.limitedBy).toBe('kvCache');
    expect(mixed.capacityRps).toBeLessThan(ofMeans.capacityRps * 0.95);
  });
});

describe('Function: measureLatency', () => {
  it('gives ministral-8b-l40s a p95 of 2-3 s at 40 requests/s (guide: about 2.5 s below saturation)', async () => {
    // Prepare
    const profile = await loadProfile('ministral-8b-l40s');

    // Act
    const result = measureLatency(profile, GUIDE_SHAPE, 40, 60);

    // Assess
    expect(result.p95E2eS).toBeGreaterThanOrEqual(2);
    expect(result.p95E2eS).toBeLessThanOrEqual(3);
    expect(result.maxWaiting).toBeLessThan(5);
    expect(result.achievedRps).toBeGreaterThan(37);
    expect(result.preemptions).toBe(0);
  });

  it.each([
    { case: '10 requests/s', rps: 10 },
    { case: '20 requests/s', rps: 20 },
    { case: '30 requests/s', rps: 30 },
  ])('keeps the demo p95 between 0.5 and 1 s below saturation: $case', async ({ rps }) => {
    // Prepare
    const profile = await loadProfile('demo');

    // Act
    const result = measureLatency(profile, DEMO_SHAPE, rps, 30);

    // Assess
    expect(result.p95E2eS).toBeGreaterThanOrEqual(0.5);
    expect(result.p95E2eS).toBeLessThanOrEqual(1);
    expect(result.meanWaiting).toBeLessThan(1);
  });

  it('shows a growing queue and latency above the demo capacity', async () => {
    // Prepare
    const profile = await loadProfile('demo');

    // Act
    const below = measureLatency(profile, DEMO_SHAPE, 30, 30);
    const above = measureLatency(profile, DEMO_SHAPE, 50, 30);

    // Assess
    expect(above.maxWaiting).toBeGreaterThan(100);
    expect(above.p95E2eS).toBeGreaterThan(below.p95E2eS * 5);
    expect(above.achievedRps).toBeLessThan(40);
  });

  it.each([
    { case: 'a zero rate', rps: 0, durationS: 10, field: 'rps' },
    { case: 'a negative duration', rps: 10, durationS: -1, field: 'durationS' },
  ])('rejects $case, naming the field', async ({ rps, durationS, field }) => {
    // Prepare
    const profile = await loadProfile('demo');

    // Act
    const act = (): unknown => measureLatency(profile, DEMO_SHAPE, rps, durationS);

    // Assess
    expect(act).toThrow(VllmMeasurementInputError);
    expect(act).toThrow(field);
  });
});

describe('Profile: ministral-8b-l40s warm-up', () => {
  it('serves the first sequential requests in about 2.6 s, later ones much faster (guide: ~2.6 s, then lower)', async () => {
    // Prepare
    const profile = await loadProfile('ministral-8b-l40s');
    const clock = new VirtualClock(0);
    const engine = new VllmEngine(engineConfigFromProfile(profile), clock);
    clock.set(engine.loadedAtMs);
    const latencies: number[] = [];

    // Act: 20 sequential requests, like the guide's warm-up Job.
    for (let i = 0; i < 20; i++) {
      let done = false;
      engine.submit(GUIDE_SHAPE, (event) => {
        if (event.type !== 'finished') return;
        latencies.push((event.result.finishedMs - event.result.arrivalMs) / 1000);
        done = true;
      });
      while (!done) {
        clock.set(Math.max(clock.now(), engine.nextEventMs() ?? clock.now()) + 1e-6);
        engine.advanceTo(clock.now());
      }
    }

    // Assess
    expect(latencies[0]).toBeGreaterThan(2.3);
    expect(latencies[0]).toBeLessThan(2.9);
    expect(latencies[19]).toBeLessThan(1.5);
  });
});
