import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { systemClock } from '../../shared/clock/index.js';
import { type ConstantArrivalOptions, type LoadSummary, runConstantArrivalLoad } from './constantArrival.js';
import { replicaIdentity } from '../twin/identity.js';
import { loadProfile } from '../profile/loadProfile.js';
import type { Profile } from '../profile/profile.js';
import { startVllmReplica, type VllmReplica } from '../vllm/server.js';

// The constant-arrival-rate load generator against ONE real simulated vLLM replica (the demo profile, real time, no
// Prometheus). The demo profile decodes a step in about 15-26 ms, so 200 tokens take a few seconds per request.

let profile: Profile;
let replica: VllmReplica;

/** Polls /health until the replica has loaded its model (demo: 2 s). */
async function waitForHealth(url: string): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const status = await fetch(`${url}/health`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`${url}/health never answered 200`);
}

/** Runs the load against the replica with the demo's request shape, overridden by `options`. */
function load(options: Partial<ConstantArrivalOptions>): Promise<LoadSummary> {
  return runConstantArrivalLoad({
    urls: [replica.url],
    model: profile.model,
    rps: 10,
    durationS: 1,
    promptTokens: 35,
    maxTokens: 16,
    ...options,
  });
}

beforeAll(async () => {
  profile = await loadProfile('demo');
  replica = await startVllmReplica({ profile, identity: replicaIdentity(profile, 0, 'us-east-2'), clock: systemClock });
  await waitForHealth(replica.url);
}, 60_000);

afterAll(async () => {
  await replica?.stop();
});

describe('Function: runConstantArrivalLoad', () => {
  it('offers the asked rate below capacity: every iteration is sent and completes, none dropped', async () => {
    // Act
    const summary = await load({ rps: 20, durationS: 2, maxTokens: 32 });

    // Assess
    expect(summary).toMatchObject({ offeredRps: 20, iterations: 40, completed: 40, failed: 0, droppedIterations: 0 });
    expect(summary.failures).toEqual({});
    expect(summary.achievedRps).toBeGreaterThanOrEqual(16);
    expect(summary.achievedRps).toBeLessThanOrEqual(24);
    expect(summary.generatedTokens).toBe(40 * 32);
    expect(summary.latencyMs.p50).toBeGreaterThan(0);
    expect(summary.latencyMs.p95).toBeGreaterThanOrEqual(summary.latencyMs.p50);
  }, 60_000);

  it('drops the iterations that would need more than maxVUs requests in flight, as k6 does', async () => {
    // Act: 40 arrivals within 1 s, but each request decodes 200 tokens (seconds) and only 2 may be in flight.
    const summary = await load({ rps: 40, durationS: 1, maxTokens: 200, maxVUs: 2 });

    // Assess
    expect(summary.droppedIterations).toBeGreaterThan(0);
    expect(summary.iterations + summary.droppedIterations).toBe(40);
    expect(summary.iterations).toBeGreaterThanOrEqual(2);
    expect(summary.completed).toBe(summary.iterations);
    expect(summary.failures).toEqual({});
    expect(summary.failed).toBe(0);
  }, 60_000);

  it('counts requests slower than requestTimeoutMs as failures under "timeout" instead of throwing', async () => {
    // Act
    const summary = await load({ rps: 10, durationS: 0.5, maxTokens: 200, requestTimeoutMs: 50 });

    // Assess
    expect(summary).toMatchObject({ iterations: 5, completed: 0, failed: 5, droppedIterations: 0 });
    expect(summary.failures).toEqual({ timeout: 5 });
    expect(summary.latencyMs.p95).toBeNaN();
  }, 60_000);

  it('stops sending once the signal aborts and still resolves with a summary', async () => {
    // Prepare: 20 req/s for 10 s would be 200 iterations.
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 1_000);

    // Act
    const summary = await load({ rps: 20, durationS: 10, signal: stop.signal });

    // Assess
    expect(summary.iterations).toBeGreaterThan(0);
    expect(summary.iterations + summary.droppedIterations).toBeLessThan(200);
    expect(summary.completed + summary.failed).toBe(summary.iterations);
  }, 60_000);

  // Ctrl-C on `twin load` must not wait for long requests to finish.
  it('aborts the requests in flight when the signal aborts (counted as "stopped")', async () => {
    // Prepare: requests of 1000 tokens take far longer than the run lasts before the abort.
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 500);

    // Act
    const summary = await load({
      rps: 10,
      durationS: 10,
      maxTokens: 1_000,
      gracefulStopMs: 2_000,
      signal: stop.signal,
    });

    // Assess
    expect(summary.completed).toBe(0);
    expect(summary.failures).toEqual({ stopped: summary.iterations });
    expect(summary.durationS).toBeLessThan(10);
  }, 60_000);

  it('counts answers of a wrong model name by HTTP status (404), as vLLM answers them', async () => {
    // Act
    const summary = await load({ model: 'no-such-model', rps: 10, durationS: 0.5 });

    // Assess
    expect(summary).toMatchObject({ iterations: 5, completed: 0, failed: 5 });
    expect(summary.failures).toEqual({ 'HTTP 404': 5 });
  }, 60_000);
});
