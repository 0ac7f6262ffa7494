import { describe, expect, it } from '@jest/globals';
import { VirtualClock } from '../../shared/clock/index.js';
import { type Profile, profileSchema } from '../profile/profile.js';
import {
  type EngineConfig,
  engineConfigFromProfile,
  type RequestEvent,
  type RequestResult,
  VllmEngine,
} from './engine.js';
import { VllmConfigInvalidError, VllmNotLoadedError, VllmRequestInvalidError } from './errors.js';

/** A small engine with round numbers: step = 10 ms + 0.5 ms per sequence + prefill at 10 000 tokens/s. */
function config(overrides: Partial<EngineConfig> = {}): EngineConfig {
  return {
    maxNumSeqs: 32,
    kvCacheBlocks: 1024,
    blockSize: 16,
    maxNumBatchedTokens: 2048,
    prefillTokensPerSecond: 10_000,
    decodeStepMs: { base: 10, perSequence: 0.5 },
    maxModelLen: 4096,
    modelLoadSeconds: 0,
    warmupRequests: 0,
    warmupSlowdown: 1,
    ...overrides,
  };
}

/** Runs the engine until idle, moving the virtual clock from event to event. */
function drain(engine: VllmEngine, clock: VirtualClock): void {
  for (let next = engine.nextEventMs(); next !== undefined; next = engine.nextEventMs()) {
    clock.set(Math.max(clock.now(), next) + 1e-6);
    engine.advanceTo(clock.now());
  }
}

function collect(): { events: RequestEvent[]; listener: (event: RequestEvent) => void; result: () => RequestResult } {
  const events: RequestEvent[] = [];
  return {
    events,
    listener: (event) => events.push(event),
    result: () => {
      const finished = events.find((event) => event.type === 'finished');
      if (finished?.type !== 'finished') throw new Error('request did not finish');
      return finished.result;
    },
  };
}

const baseProfile: Profile = profileSchema.parse({
  name: 'test',
  model: 'test/model',
  replicas: 1,
  vllmVersion: 'latest',
  engine: {
    maxNumSeqs: 8,
    kvCacheBlocks: 64,
    blockSize: 16,
    maxNumBatchedTokens: 512,
    prefillTokensPerSecond: 10_000,
    decodeStepMs: { base: 10, perSequence: 0.5 },
    maxModelLen: 1024,
  },
  gpu: { model: 'NVIDIA L40S', memoryMiB: 46068, gpuMemoryUtilization: 0.9 },
  startup: { modelLoadSeconds: 5, warmupRequests: 2, warmupSlowdown: 3 },
  prometheus: { scrapeIntervalSeconds: 1 },
});

describe('Function: engineConfigFromProfile', () => {
  it('applies container-arg overrides over the profile', () => {
    // Act
    const result = engineConfigFromProfile(baseProfile, { maxNumSeqs: 4, maxModelLen: 512 });

    // Assess
    expect(result).toMatchObject({ maxNumSeqs: 4, maxModelLen: 512, kvCacheBlocks: 64, modelLoadSeconds: 5 });
  });

  it.each([
    { case: 'a zero --max-num-seqs', overrides: { maxNumSeqs: 0 }, field: 'overrides.maxNumSeqs' },
    { case: 'a fractional --max-model-len', overrides: { maxModelLen: 10.5 }, field: 'overrides.maxModelLen' },
    {
      case: 'a --max-model-len the KV cache cannot hold (64 blocks x 16)',
      overrides: { maxModelLen: 2048 },
      field: 'engine.maxModelLen',
    },
  ])('rejects $case, naming the field', ({ overrides, field }) => {
    // Act
    const act = (): EngineConfig => engineConfigFromProfile(baseProfile, overrides);

    // Assess
    expect(act).toThrow(VllmConfigInvalidError);
    expect(act).toThrow(field);
  });
});

describe('Class: VllmEngine', () => {
  describe('Method: submit', () => {
    it('refuses requests until the model is loaded, then accepts them', () => {
      // Prepare
      const clock = new VirtualClock(1_000);
      const engine = new VllmEngine(config({ modelLoadSeconds: 5 }), clock);

      // Act
      let early: unknown;
      try {
        engine.submit({ promptTokens: 10, maxTokens: 5 });
      } catch (error) {
        early = error;
      }
      const loadedBefore = engine.telemetry().loaded;
      clock.set(6_000);

      // Assess
      expect(early).toBeInstanceOf(VllmNotLoadedError);
      expect(loadedBefore).toBe(false);
      expect(engine.telemetry().loaded).toBe(true);
      expect(engine.submit({ promptTokens: 10, maxTokens: 5 }).arrivalMs).toBe(6_000);
    });

    it.each([
      {
        case: 'prompt + max_tokens over max_model_len',
        request: { promptTokens: 4000, maxTokens: 100 },
        message:
          "'max_tokens' or 'max_completion_tokens' is too large: 100. This model's maximum context length is 4096 tokens and your request has 4000 input tokens (100 > 4096 - 4000).",
      },
      {
        case: 'a prompt longer than max_model_len',
        request: { promptTokens: 5000, maxTokens: 1 },
        message:
          "This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens. Please reduce the length of the input messages.",
      },
      {
        case: 'max_tokens 0',
        request: { promptTokens: 10, maxTokens: 0 },
        message: 'max_tokens must be at least 1, got 0.',
      },
    ])("rejects $case with vLLM's message", ({ request, message }) => {
      // Prepare
      const engine = new VllmEngine(config(), new VirtualClock(0));

      // Act
      const act = (): unknown => engine.submit(request);

      // Assess
      expect(act).toThrow(VllmRequestInvalidError);
      expect(act).toThrow(message);
    });
  });

  describe('Method: advanceTo', () => {
    it('emits queued, scheduled, max_tokens tokens and finished with reason length, in order', () => {
      // Prepare
      const clock = new VirtualClock(0);
      const engine = new VllmEngine(config(), clock);
      const { events, listener, result } = collect();

      // Act
      engine.submit({ promptTokens: 20, maxTokens: 5 }, listener);
      drain(engine, clock);

      // Assess
      expect(events.map((event) => event.type)).toEqual([
        'queued',
        'scheduled',
        'token',
        'token',
        'token',
        'token',
        'token',
        'finished',
      ]);
      const tokens = events.filter((event) => event.type === 'token');
      expect(tokens.map((event) => event.type === 'token' && event.first)).toEqual([true, false, false, false, false]);
      expect(tokens.at(-1)).toMatchObject({ last: true, index: 4 });
      expect(result()).toMatchObject({ finishReason: 'length', generatedTokens: 5, preemptions: 0 });
    });

    it('at low load, e2e latency is the prefill plus max_tokens steps', () => {
      // Prepare: one request at a time; a step with one sequence takes 10 + 0.5 = 10.5 ms.
      const clock = new VirtualClock(0);
      const engine = new VllmEngine(config(), clock);
      const results: RequestResult[] = [];

      // Act
      for (let i = 0; i < 5; i++) {
        clock.set(i * 2_000);
        const { listener, result } = collect();
        engine.submit({ promptTokens: 200, maxTokens: 100 }, listener);
        drain(engine, clock);
        results.push(result());
      }

      // Assess: 200 prompt tokens at 10 000 tokens/s = 20 ms, then 100 tokens x 10.5 ms.
      const expectedMs = 20 + 100 * 10.5;
      for (const r of results) {
        expect(Math.abs(r.finishedMs - r.arrivalMs - expectedMs) / expectedMs).toBeLessThan(0.1);
      }
    });

    it('admits a request only in a step that starts at or after its arrival', () => {
      // Prepare: request A's first step (prefill of 1000 tokens) runs from 0 to 110.5 ms.
      const clock = new VirtualClock(0);
      const engine = new VllmEngine(config(), clock);
      const b = collect();
      engine.submit({ promptTokens: 1000, maxTokens: 10 });
      engine.advanceTo(1);

      // Act: B arrives in the middle of that step.
      clock.set(50);
      engine.submit({ promptTokens: 10, maxTokens: 10 }, b.listener);
      drain(engine, clock);

      // Assess: B is scheduled when A's first step ends, not when it arrived.
      const scheduled = b.events.find((event) => event.type === 'scheduled');
      expect(scheduled?.atMs).toBeCloseTo(110.5, 6);
      expect((b.result().firstTokenMs ?? 0) - b.result().arrivalMs).toBeGreaterThan(60);
    });

    it('makes the first requests slower while warming up', () => {
      // Prepare: the first 3 requests to complete run with steps 3x slower.
      const clock = new VirtualClock(0);
      const engine = new VllmEngine(config({ warmupRequests: 3, warmupSlowdown: 3 }), clock);
      const latencies: number[] = [];

      // Act: sequential requests, like the guide's warm-up Job.
      for (let i = 0; i < 6; i++) {
        const { listener, result } = collect();
        engine.submit({ promptTokens: 35, maxTokens: 50 }, listener);
        drain(engine, clock);
        latencies.push(result().finishedMs - result().arrivalMs);
      }

      // Assess
      const [first = 0, , third = 0, fourth = 0, , sixth = 0] = latencies;
      expect(first / sixth).toBeCloseTo(3, 1);
      expect(third).toBeCloseTo(first, 6);
      expect(fourth).toBeCloseTo(sixth, 6);
    });

    it('above capacity, the queue grows at about offered minus capacity per second', () => {
      // Prepare: 8 sequences x 50 tokens; a full step is 10 + 8 x 0.5 = 14 ms plus prefill, so the capacity is
      // a little under 8 / (50 x 0.014) = 11.4 requests/s. Offer 21 requests/s.
      const clock = new VirtualClock(0);
      const engine = new VllmEngine(config({ maxNumSeqs: 8 }), clock);
      let completedBetween = 0;
      const waitingAt = new Map<number, number>();

      // Act
      for (let i = 0; i < 21 * 40; i++) {
        const arrivalMs = (i * 1000) / 21;
        clock.set(arrivalMs);
        engine.submit({ promptTokens: 35, maxTokens: 50 }, (event) => {
          if (event.type === 'finished' && event.atMs >= 10_000 && event.atMs < 40_000) completedBetween += 1;
        });
        if (i === 21 * 10 || i === 21 * 40 - 1) waitingAt.set(i, engine.stats().waiting);
      }

      // Assess
      const capacity = completedBetween / 30;
      const growth = ((waitingAt.get(21 * 40 - 1) ?? 0) - (waitingAt.get(21 * 10) ?? 0)) / 30;
      expect(capacity).toBeGreaterThan(10);
      expect(capacity).toBeLessThan(11.5);
      expect(growth).toBeGreaterThan((21 - capacity) * 0.9);
      expect(growth).toBeLessThan((21 - capacity) * 1.1);
    });

    it('raises KV-cache usage with concurrency', () => {
      // Prepare
      const usageAt = (concurrency: number): number => {
        const clock = new VirtualClock(0);
        const engine = new VllmEngine(config(), clock);
        for (let i = 0; i < concurrency; i++) engine.submit({ promptTokens: 100, maxTokens: 200 });
        clock.set(500);
        return engine.stats().kvCacheUsage;
      };

      // Act
      const usages = [1, 4, 16, 32].map(usageAt);

      // Assess
      expect(usages[0]).toBeGreaterThan(0);
      for (let i = 1; i < usages.length; i++) expect(usages[i]).toBeGreaterThan(usages[i - 1] ?? 1);
    });

    it.each([
      { case: 'plenty of KV blocks', kvCacheBlocks: 1024, preempts: false },
      { case: 'few KV blocks', kvCacheBlocks: 260, preempts: true },
    ])('preempts only when the KV cache runs out ($case), and every request still completes', (row) => {
      // Prepare: 32 sequences growing to 100 + 300 tokens need 32 x 25 = 800 blocks at their longest.
      const clock = new VirtualClock(0);
      const engine = new VllmEngine(config({ kvCacheBlocks: row.kvCacheBlocks }), clock);
      const results: RequestResult[] = [];

      // Act
      for (let i = 0; i < 32; i++) {
        engine.submit({ promptTokens: 100, maxTokens: 300 }, (event) => {
          if (event.type === 'finished') results.push(event.result);
        });
      }
      drain(engine, clock);

      // Assess
      const preemptions = engine.stats().preemptions;
      expect(preemptions > 0).toBe(row.preempts);
      expect(engine.metrics.numPreemptions).toBe(preemptions);
      expect(results).toHaveLength(32);
      expect(results.every((r) => r.generatedTokens === 300 && r.finishReason === 'length')).toBe(true);
      expect(engine.stats().kvCacheUsage).toBe(0);
    });
  });

  describe('Scheduling under overload', () => {
    it('keeps completing at its capacity at twice the rate of 1,500-token prompts (running work before admissions)', () => {
      // Prepare: the prefill-bound shape of the bench profile llama-8b-l4-prefill (about 5.1 req/s): step = 27 ms
      // + 0.14 ms per sequence + prefill at 9,000 tokens/s, a 2,048-token budget, 128 sequences at most.
      const clock = new VirtualClock(0);
      const engine = new VllmEngine(
        config({
          maxNumSeqs: 128,
          kvCacheBlocks: 11_800,
          maxNumBatchedTokens: 2048,
          prefillTokensPerSecond: 9000,
          decodeStepMs: { base: 27, perSequence: 0.14 },
          maxModelLen: 16_384,
        }),
        clock,
      );
      const finishedAt: number[] = [];
      let worstGapMs = 0;
      const lastTokenMs = new Map<number, number>();

      // Act: 10 req/s for 60 s, then read what finished in the last 30 s.
      for (let i = 0; i < 600; i++) {
        clock.set(i * 100);
        engine.submit({ promptTokens: 1500, maxTokens: 64 }, (event) => {
          if (event.type === 'token') {
            const previous = lastTokenMs.get(i);
            if (previous !== undefined) worstGapMs = Math.max(worstGapMs, event.atMs - previous);
            lastTokenMs.set(i, event.atMs);
          }
          if (event.type === 'finished') finishedAt.push(event.atMs);
        });
      }
      clock.set(60_000);
      engine.advanceTo(60_000);

      // Assess: ~5 completions/s while the queue holds ~250 requests, and a decoding request gets a token every step
      // (a step with a full 2,048-token chunk lasts 27 + 0.14 x 128 + 228 = 273 ms at most): admissions never starve
      // the running batch.
      const lateHalf = finishedAt.filter((atMs) => atMs >= 30_000).length / 30;
      expect(lateHalf).toBeGreaterThan(4.8);
      expect(lateHalf).toBeLessThan(5.4);
      expect(engine.stats().waiting).toBeGreaterThan(200);
      expect(worstGapMs).toBeLessThan(280);
    });
  });

  describe('Method: abort', () => {
    it.each([
      { case: 'a waiting request', advanceMs: 0 },
      { case: 'a running request', advanceMs: 100 },
    ])('finishes $case with reason abort and frees its KV blocks', ({ advanceMs }) => {
      // Prepare
      const clock = new VirtualClock(0);
      const engine = new VllmEngine(config(), clock);
      const { listener, result } = collect();
      const { id } = engine.submit({ promptTokens: 100, maxTokens: 500 }, listener);
      clock.set(advanceMs);

      // Act
      const aborted = engine.abort(id);
      drain(engine, clock);

      // Assess
      expect(aborted).toBe(true);
      expect(result().finishReason).toBe('abort');
      expect(engine.metrics.requestSuccess.abort).toBe(1);
      expect(engine.metrics.requestSuccess.length).toBe(0);
      expect(engine.stats()).toMatchObject({ running: 0, waiting: 0, kvCacheUsage: 0 });
    });
  });

  describe('Method: telemetry', () => {
    it('reports busy time equal to the executed step time, and token totals', () => {
      // Prepare
      const clock = new VirtualClock(0);
      const engine = new VllmEngine(config(), clock);

      // Act
      engine.submit({ promptTokens: 200, maxTokens: 10 });
      drain(engine, clock);
      clock.set(10_000);
      const telemetry = engine.telemetry();

      // Assess: (10.5 + 20) ms for the prefill step, then 9 steps of 10.5 ms.
      expect(telemetry.busySecondsTotal).toBeCloseTo((30.5 + 9 * 10.5) / 1000, 9);
      expect(telemetry).toMatchObject({
        loaded: true,
        promptTokensTotal: 200,
        generationTokensTotal: 10,
        running: 0,
        waiting: 0,
        requestsReceivedTotal: 1,
      });
    });
  });

  describe('Method: setFault', () => {
    it('slows every step by the multiplier and counts unavailable KV blocks as used', () => {
      // Prepare
      const clock = new VirtualClock(0);
      const engine = new VllmEngine(config(), clock);
      engine.setFault({ stepTimeMultiplier: 2, kvBlocksUnavailable: 512 });
      const { listener, result } = collect();

      // Act
      engine.submit({ promptTokens: 200, maxTokens: 10 }, listener);
      drain(engine, clock);

      // Assess
      expect(result().finishedMs - result().arrivalMs).toBeCloseTo(2 * (30.5 + 9 * 10.5), 6);
      expect(engine.stats().kvCacheUsage).toBe(0.5);
    });

    it('preempts running sequences at the storm rate under a steady load, and stops when cleared', () => {
      // Prepare: 16 requests always in flight (each one re-submitted as it finishes), KV cache ample, so that
      // nothing but the fault preempts.
      const clock = new VirtualClock(0);
      const engine = new VllmEngine(config(), clock);
      const keepBusy = (): void => {
        engine.submit({ promptTokens: 35, maxTokens: 200 }, (event) => {
          if (event.type === 'finished') keepBusy();
        });
      };
      for (let i = 0; i < 16; i++) keepBusy();
      const runUntil = (endMs: number): void => {
        for (let next = engine.nextEventMs(); next !== undefined && next < endMs; next = engine.nextEventMs()) {
          clock.set(Math.max(clock.now(), next) + 1e-6);
          engine.advanceTo(clock.now());
        }
        clock.set(endMs);
        engine.advanceTo(endMs);
      };
      runUntil(1_000);
      const before = engine.stats().preemptions;

      // Act
      engine.setFault({ preemptionsPerSecond: 10 });
      runUntil(31_000);
      const during = engine.stats().preemptions - before;
      engine.setFault({});
      runUntil(41_000);
      const after = engine.stats().preemptions - before - during;

      // Assess
      expect(before).toBe(0);
      expect(during).toBeGreaterThanOrEqual(270);
      expect(during).toBeLessThanOrEqual(330);
      expect(engine.metrics.numPreemptions).toBe(during);
      expect(after).toBe(0);
      // Preempted sequences went back to the queue and were re-admitted: the load kept running.
      expect(engine.stats()).toMatchObject({ running: 16, waiting: 0 });
    });

    it('preempts nothing when nothing runs', () => {
      // Prepare
      const clock = new VirtualClock(0);
      const engine = new VllmEngine(config(), clock);
      engine.setFault({ preemptionsPerSecond: 50 });

      // Act: idle for 10 s, then one short request.
      clock.set(10_000);
      const { listener, result } = collect();
      engine.submit({ promptTokens: 20, maxTokens: 2 }, listener);
      drain(engine, clock);

      // Assess
      expect(result().preemptions).toBe(0);
      expect(engine.stats().preemptions).toBe(0);
    });

    it.each([
      { case: 'a negative rate', rate: -1 },
      { case: 'an infinite rate', rate: Number.POSITIVE_INFINITY },
      { case: 'NaN', rate: Number.NaN },
    ])('refuses $case of preemptions per second, naming the field', ({ rate }) => {
      // Prepare
      const engine = new VllmEngine(config(), new VirtualClock(0));

      // Act
      const act = (): void => engine.setFault({ preemptionsPerSecond: rate });

      // Assess
      expect(act).toThrow(VllmConfigInvalidError);
      expect(act).toThrow('fault.preemptionsPerSecond');
    });
  });
});
