import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../../../shared/clock/index.js';
import { K6_SUMMARY_MARKER, k6SummarySchema } from '../../../shared/kube/index.js';
import type { RequestMix } from '../../../shared/load/index.js';
import { sampleRequestAt } from '../../mix/sampler.js';
import { loadProfile } from '../../profile/loadProfile.js';
import { replicaIdentity } from '../../twin/identity.js';
import { startVllmReplica, type VllmReplica } from '../../vllm/server.js';
import type { K6Plan } from './k6Plan.js';
import { K6_EXIT_CODES, runK6 } from './runK6.js';

/** A tiny completions server: answers after `delayMs` with `status`; counts requests and the most in flight. */
function startServer(status: number, delayMs: number) {
  const stats = { requests: 0, inFlight: 0, maxInFlight: 0, bodies: [] as unknown[] };
  const server = http.createServer((req, res) => {
    stats.requests += 1;
    stats.inFlight += 1;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      stats.bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      setTimeout(() => {
        stats.inFlight -= 1;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ usage: { completion_tokens: 4 } }));
      }, delayMs);
    });
  });
  return new Promise<{ url: string; stats: typeof stats; close(): Promise<void> }>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        stats,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      }),
    ),
  );
}

const common = {
  script: '/scripts/load.js',
  model: 'm',
  promptTokens: 35,
  maxTokens: 4,
  requestTimeoutSeconds: 10,
  restAddress: 'localhost:6565',
};

async function run(plan: K6Plan, resolve: (url: string) => string = (u) => u) {
  const lines: string[] = [];
  const result = await runK6({
    plan,
    resolve,
    clock: systemClock,
    log: (line) => lines.push(line),
    progressIntervalMs: 200,
  });
  return { result, lines };
}

describe('Function: runK6', () => {
  let ok: Awaited<ReturnType<typeof startServer>>;
  let failing: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    ok = await startServer(200, 20);
    failing = await startServer(500, 1);
  });
  afterAll(async () => {
    await ok.close();
    await failing.close();
  });

  it('shared-iterations: V VUs share N iterations, each VU waiting for its answer; the summary ends the log', async () => {
    // Prepare
    ok.stats.requests = 0;
    ok.stats.maxInFlight = 0;

    // Act
    const { result, lines } = await run({
      ...common,
      targetUrl: ok.url,
      executor: 'shared-iterations',
      vus: 3,
      iterations: 12,
    });

    // Assess
    expect(result.exitCode).toBe(K6_EXIT_CODES.ok);
    expect(ok.stats.requests).toBe(12);
    expect(ok.stats.maxInFlight).toBe(3);
    const last = lines.at(-1) as string;
    expect(last.startsWith(K6_SUMMARY_MARKER)).toBe(true);
    const summary = k6SummarySchema.parse(JSON.parse(last.slice(K6_SUMMARY_MARKER.length)));
    expect(summary).toMatchObject({
      executor: 'shared-iterations',
      rate: null,
      iterations: 12,
      httpReqs: 12,
      httpReqFailed: 0,
      droppedIterations: 0,
    });
    expect(summary.httpReqDurationMs.min).toBeGreaterThanOrEqual(20);
    expect(summary.httpReqDurationMs.min).toBeLessThanOrEqual(summary.httpReqDurationMs.p95);
    expect(ok.stats.bodies.at(-1)).toMatchObject({ model: 'm', max_tokens: 4, temperature: 0.7 });
  });

  it('constant-arrival-rate: starts R iterations per second and prints k6-like progress lines', async () => {
    // Act
    const { result, lines } = await run({
      ...common,
      targetUrl: ok.url,
      executor: 'constant-arrival-rate',
      rate: 20,
      durationSeconds: 1,
      preAllocatedVUs: 5,
      maxVUs: 50,
    });

    // Assess
    expect(result.exitCode).toBe(K6_EXIT_CODES.ok);
    expect(result.summary).toMatchObject({
      executor: 'constant-arrival-rate',
      rate: 20,
      iterations: 20,
      droppedIterations: 0,
      httpReqFailed: 0,
    });
    expect(
      lines.some((l) => l.includes('* default: 20.00 iterations/s for 1s (maxVUs: 5-50, gracefulStop: 30s)')),
    ).toBe(true);
    expect(
      lines.some((l) => /^running \(0m0\d\.\ds\), \d+\/50 VUs, \d+ complete and 0 interrupted iterations$/.test(l)),
    ).toBe(true);
  });

  it('fails with exit 99 when every request failed, as an http_req_failed threshold would', async () => {
    // Act
    const { result, lines } = await run({
      ...common,
      targetUrl: failing.url,
      executor: 'shared-iterations',
      vus: 1,
      iterations: 3,
    });

    // Assess
    expect(result.exitCode).toBe(K6_EXIT_CODES.thresholdsHaveFailed);
    expect(result.summary).toMatchObject({ httpReqs: 3, httpReqFailed: 3, iterations: 3 });
    expect(lines.some((l) => l.includes("thresholds on metrics 'http_req_failed' have been crossed"))).toBe(true);
    expect(lines.at(-1)?.startsWith(K6_SUMMARY_MARKER)).toBe(true);
  });

  it('fails with exit 107 and sends nothing when the in-cluster target name resolves to no Service', async () => {
    // Act
    const { result, lines } = await run({
      ...common,
      targetUrl: 'http://missing-svc.default.svc:8000',
      executor: 'constant-arrival-rate',
      rate: 5,
      durationSeconds: 1,
      preAllocatedVUs: 1,
      maxVUs: 1,
    });

    // Assess
    expect(result.exitCode).toBe(K6_EXIT_CODES.scriptException);
    expect(result.summary.httpReqs).toBe(0);
    expect(lines.some((l) => l.includes('lookup missing-svc.default.svc') && l.includes('no such host'))).toBe(true);
  });

  it('counts dropped iterations when maxVUs are all busy', async () => {
    // Prepare: 1 VU and a 20 ms server cannot take 100 iterations per second.
    // Act
    const { result, lines } = await run({
      ...common,
      targetUrl: ok.url,
      executor: 'constant-arrival-rate',
      rate: 100,
      durationSeconds: 0.5,
      preAllocatedVUs: 1,
      maxVUs: 1,
    });

    // Assess
    expect(result.summary.droppedIterations).toBeGreaterThan(0);
    expect(result.summary.iterations + result.summary.droppedIterations).toBe(50);
    expect(lines.some((l) => l.includes('Insufficient VUs, reached 1 active VUs'))).toBe(true);
  });
});

describe('Function: runK6 against a twin vLLM replica (the demo profile): a request mix, streamed', () => {
  let replica: VllmReplica;
  beforeAll(async () => {
    const profile = await loadProfile('demo');
    replica = await startVllmReplica({
      profile,
      identity: replicaIdentity(profile, 0, 'us-east-2'),
      clock: systemClock,
    });
    for (
      let i = 0;
      i < 200 &&
      (await fetch(`${replica.url}/health`).then(
        (r) => r.status,
        () => 0,
      )) !== 200;
      i++
    )
      await new Promise((done) => setTimeout(done, 100));
  }, 60_000);
  afterAll(async () => {
    await replica?.stop();
  });

  it('draws the lengths the script draws, reads the SSE stream and reports TTFT, inter-token latency and tokens', async () => {
    // Prepare: 40 requests, 4 at a time; prompts 100-300 tokens, outputs mostly 8, some 32.
    const requestMix: RequestMix = {
      seed: 11,
      prompt: { distribution: 'uniform', min: 100, max: 300 },
      output: {
        distribution: 'histogram',
        buckets: [
          { tokens: 8, weight: 3 },
          { tokens: 32, weight: 1 },
        ],
      },
    };
    const iterations = 40;
    const drawn = Array.from({ length: iterations }, (_, i) => sampleRequestAt(requestMix, i));
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

    // Act
    const { result } = await run({
      ...common,
      targetUrl: replica.url,
      model: replica.servedModelName,
      executor: 'shared-iterations',
      vus: 4,
      iterations,
      requestMix,
      stream: true,
    });

    // Assess
    expect(result.exitCode).toBe(K6_EXIT_CODES.ok);
    const summary = result.summary;
    expect(summary.httpReqFailed).toBe(0);
    // vLLM generates max_tokens exactly: the completions' mean is the drawn outputs' mean.
    expect(summary.completionTokensAvg).toBeCloseTo(mean(drawn.map((d) => d.maxTokens)), 2);
    // The prompt is padded to the drawn length as the twin counts tokens.
    expect(Math.abs((summary.promptTokensAvg ?? 0) - mean(drawn.map((d) => d.promptTokens)))).toBeLessThan(3);
    // TTFT: at least one engine step (15 ms base); ITL: about one step per token with a few sequences running.
    expect(summary.ttftMs?.med).toBeGreaterThan(10);
    expect(summary.ttftMs?.p95).toBeGreaterThanOrEqual(summary.ttftMs?.med ?? Infinity);
    expect(summary.ttftMs?.max).toBeLessThan(summary.httpReqDurationMs.max);
    expect(summary.itlMs?.avg).toBeGreaterThan(5);
    expect(summary.itlMs?.avg).toBeLessThan(500);
  }, 60_000);
});
