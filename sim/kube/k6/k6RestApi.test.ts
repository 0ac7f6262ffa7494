import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { systemClock } from '../../../shared/clock/index.js';
import { KubeUnavailableError, parseK6Metrics, type K6LiveMetrics } from '../../../shared/kube/index.js';
import { KubeClusterClient } from '../../../shared/kube/connection/index.js';
import { MemoryPodLogStore } from '../logs.js';
import { MemoryObjectStore } from '../store.js';
import { startKubeApiServer, type KubeApiServer } from '../server/startKubeApiServer.js';
import { renderKubeconfig } from '../server/writeKubeconfig.js';
import type { K6Plan } from './k6Plan.js';
import { k6MetricsDocument } from './k6RestApi.js';
import { runK6 } from './runK6.js';

// k6's REST API in the twin: a run serves /v1/metrics while it lasts, and the product reads it as on EKS, through
// the API server's Pod proxy with client-node (KubeClusterClient.proxyGet).

/** A completions server answering after `delayMs`, at most `concurrency` requests at a time (the rest wait). */
async function startServer(delayMs: number, concurrency: number) {
  let busy = 0;
  const waiting: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    req.resume();
    const serve = () => {
      busy += 1;
      setTimeout(() => {
        busy -= 1;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ usage: { completion_tokens: 4 } }));
        waiting.shift()?.();
      }, delayMs);
    };
    req.on('end', () => (busy < concurrency ? serve() : waiting.push(serve)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((done) => {
        waiting.length = 0;
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

const POD = 'k6-load-abc12';
let api: KubeApiServer;
let client: KubeClusterClient;
/** The k6 REST API of the run in progress, as the kubelet would know it. */
let restUrl: string | undefined;

function plan(targetUrl: string, rate: number, durationSeconds: number, restAddress = '0.0.0.0:6565'): K6Plan {
  return {
    executor: 'constant-arrival-rate',
    script: '/scripts/load.js',
    targetUrl,
    model: 'm',
    promptTokens: 35,
    maxTokens: 4,
    requestTimeoutSeconds: 30,
    restAddress,
    rate,
    durationSeconds,
    preAllocatedVUs: 5,
    maxVUs: 500,
  };
}

function startRun(p: K6Plan, signal?: AbortSignal) {
  return runK6({
    plan: p,
    resolve: (u) => u,
    clock: systemClock,
    log: () => undefined,
    onRestApi: (url) => (restUrl = url),
    ...(signal ? { signal } : {}),
  });
}

const readK6 = async (): Promise<K6LiveMetrics> =>
  parseK6Metrics(await client.proxyGet({ namespace: 'default', pod: POD, port: 6565, path: '/v1/metrics' }));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  const store = new MemoryObjectStore();
  store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  store.create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: POD, namespace: 'default' },
    spec: {
      containers: [{ name: 'k6', image: 'grafana/k6:0.54.0', ports: [{ name: 'k6-api', containerPort: 6565 }] }],
    },
  });
  api = await startKubeApiServer({
    store,
    logs: new MemoryPodLogStore(),
    clusterName: 'vllm-demo',
    region: 'us-east-2',
    tokens: { admin: ['admin'], readOnly: ['read-only'] },
    podEndpoint: (namespace, name) => (namespace === 'default' && name === POD ? restUrl : undefined),
  });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(renderKubeconfig({ server: api.url, clusterName: 'vllm-demo', token: 'read-only' }));
  client = new KubeClusterClient(kubeConfig);
});

afterAll(async () => {
  await api.stop();
});

describe("Function: runK6 (k6's REST API through the Pod proxy)", () => {
  it('serves the live figures while the run lasts: requests in flight level at rate × latency when the server keeps up', async () => {
    // Prepare: 20 req/s, answers in 300 ms, no concurrency limit: Little's law puts about 6 in flight.
    const server = await startServer(300, 1_000);
    const run = startRun(plan(server.url, 20, 3));

    // Act
    await sleep(1_200);
    const early = await readK6();
    await sleep(1_000);
    const later = await readK6();
    const result = await run;
    let after: unknown;
    await readK6().catch((error: unknown) => (after = error));
    await server.close();

    // Assess
    for (const reading of [early, later]) {
      expect(reading.vus).toBeGreaterThanOrEqual(3);
      expect(reading.vus).toBeLessThanOrEqual(10);
      expect(reading.droppedIterations).toBe(0);
      expect(reading.httpReqFailedRate).toBe(0);
      expect(reading.httpReqDurationMs?.med).toBeGreaterThanOrEqual(300);
    }
    expect(later.iterations).toBeGreaterThan(early.iterations);
    expect(later.iterations).toBeGreaterThanOrEqual(25);
    expect(later.httpReqs).toBe(later.iterations);
    expect(result.summary.iterations).toBe(60);
    // k6 exits with its run: nothing answers on the port any more.
    expect(after).toBeInstanceOf(KubeUnavailableError);
  }, 20_000);

  it('shows requests in flight growing when the server cannot keep up (20 req/s offered, 5 served per second)', async () => {
    // Prepare: one request at a time, 200 ms each: 5 req/s served, the rest wait.
    const server = await startServer(200, 1);
    const stop = new AbortController();
    const run = startRun(plan(server.url, 20, 3), stop.signal);

    // Act
    await sleep(1_000);
    const first = await readK6();
    await sleep(1_500);
    const second = await readK6();
    // Stopped as the calibration stops a saturated step (its Job deleted): the backlog is not drained.
    stop.abort();
    await run;
    await server.close();

    // Assess: in flight grows by about 20 − 5 = 15 per second.
    expect(second.vus - first.vus).toBeGreaterThanOrEqual(15);
    expect(second.vusMax).toBeGreaterThanOrEqual(second.vus);
    expect((second.iterations - first.iterations) / 1.5).toBeLessThan(8);
  }, 20_000);

  it("is out of the proxy's reach when --address keeps it on localhost (k6's default)", async () => {
    // Prepare
    const server = await startServer(50, 1_000);
    const run = startRun(plan(server.url, 10, 1, 'localhost:6565'));

    // Act
    await sleep(400);
    let error: unknown;
    await readK6().catch((caught: unknown) => (error = caught));
    await run;
    await server.close();

    // Assess
    expect(error).toBeInstanceOf(KubeUnavailableError);
  }, 20_000);
});

describe('Function: k6MetricsDocument', () => {
  it("writes k6's JSON:API wire format: counters {count, rate}, trends in ms, metrics listed once observed", () => {
    // Act
    const document = k6MetricsDocument({
      elapsedMs: 10_000,
      vus: 7,
      vusMax: 50,
      iterations: 100,
      droppedIterations: 0,
      httpReqs: 100,
      httpReqFailed: 2,
      durationsMs: [100, 200, 300],
    });

    // Assess
    expect(document.data.map((m) => m.id)).toEqual([
      'vus',
      'vus_max',
      'iterations',
      'http_reqs',
      'http_req_failed',
      'http_req_duration',
    ]);
    expect(document.data[0]).toEqual({
      type: 'metrics',
      id: 'vus',
      attributes: { type: 'gauge', contains: 'default', tainted: null, sample: { value: 7 } },
    });
    expect(document.data[2]?.attributes.sample).toEqual({ count: 100, rate: 10 });
    expect(document.data[4]?.attributes.sample).toEqual({ rate: 0.02 });
    expect(document.data[5]?.attributes).toMatchObject({
      type: 'trend',
      contains: 'time',
      sample: { avg: 200, min: 100, med: 200, max: 300, 'p(90)': 280, 'p(95)': 290 },
    });
  });
});
