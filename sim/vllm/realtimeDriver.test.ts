import { describe, expect, it } from '@jest/globals';
import { systemClock } from '../../shared/clock/index.js';
import { type EngineConfig, type RequestEvent, VllmEngine } from './engine.js';
import { RealtimeEngineDriver } from './realtimeDriver.js';

const config: EngineConfig = {
  maxNumSeqs: 8,
  kvCacheBlocks: 256,
  blockSize: 16,
  maxNumBatchedTokens: 2048,
  prefillTokensPerSecond: 10_000,
  decodeStepMs: { base: 10, perSequence: 0 },
  maxModelLen: 1024,
  modelLoadSeconds: 0,
  warmupRequests: 0,
  warmupSlowdown: 1,
};

function busyWait(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // Keep the event loop blocked, as a busy host would.
  }
}

describe('Class: RealtimeEngineDriver', () => {
  it('serves a request in real time, and a blocked event loop does not change the simulated token timing', async () => {
    // Prepare
    const engine = new VllmEngine(config, systemClock);
    const driver = new RealtimeEngineDriver(engine, systemClock);
    const events: RequestEvent[] = [];
    const finished = new Promise<void>((resolve) => {
      engine.submit({ promptTokens: 10, maxTokens: 20 }, (event) => {
        events.push(event);
        if (event.type === 'finished') resolve();
      });
    });

    // Act: block the loop for longer than the whole request takes in simulated time (~200 ms).
    busyWait(300);
    await finished;
    driver.stop();

    // Assess: 20 tokens, each one simulated step (10 ms, the first plus 1 ms of prefill) after the previous.
    const tokenTimes = events.flatMap((event) => (event.type === 'token' ? [event.atMs] : []));
    expect(tokenTimes).toHaveLength(20);
    for (let i = 1; i < tokenTimes.length; i++) {
      expect((tokenTimes[i] ?? 0) - (tokenTimes[i - 1] ?? 0)).toBeCloseTo(10, 6);
    }
    const result = events.at(-1);
    expect(result?.type === 'finished' && result.result.finishedMs - result.result.arrivalMs).toBeCloseTo(201, 0);
  });

  it('stops: no step runs after stop()', async () => {
    // Prepare
    const engine = new VllmEngine(config, systemClock);
    const driver = new RealtimeEngineDriver(engine, systemClock);
    let tokens = 0;
    engine.submit({ promptTokens: 10, maxTokens: 500 }, (event) => {
      if (event.type === 'token') tokens += 1;
    });

    // Act
    driver.stop();
    await new Promise((resolve) => setTimeout(resolve, 100));

    // Assess
    expect(tokens).toBe(0);
  });
});
