import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../../../shared/clock/index.js';
import { type KedaController, startKedaController } from './controller.js';
import { formatHpaTargets } from './scaledObject.js';
import { MemoryObjectStore } from '../store.js';
import type { KubeObject } from '../types.js';
import { ensurePrometheus } from '../../prometheus/ensurePrometheus.js';
import { type PrometheusInstance, startPrometheus } from '../../prometheus/startPrometheus.js';
import { sleep } from '../../../test/helpers/twin.js';

// The KEDA emulation against the real Prometheus: a gauge we control → Prometheus → the product's AMP client →
// the HPA algorithm → the Deployment's spec.replicas. The guide's ScaledObject with its windows and periods shortened:
// polling 1 s; up: 2 s window, 2 Pods per 4 s; down: 6 s window, 1 Pod per 4 s; min 1, max 5.

const UP_PERIOD_MS = 4_000;
const DOWN_PERIOD_MS = 4_000;
const DOWN_WINDOW_MS = 6_000;
/** Slack for the few milliseconds between the controller's decision and the watch event that records it. */
const SLACK_MS = 100;

/** A stand-in for vLLM's /metrics with the one gauge KEDA's queue trigger reads. */
async function startQueueExporter(): Promise<{
  address: string;
  set: (waiting: number) => void;
  close: () => Promise<void>;
}> {
  let waiting = 0;
  const server: Server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    response.end(
      '# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n' +
        '# TYPE vllm:num_requests_waiting gauge\n' +
        `vllm:num_requests_waiting{engine="0",model_name="ministral-8b"} ${waiting}\n`,
    );
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    set: (value) => {
      waiting = value;
    },
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

const SERVER = 'http://kube-prometheus-stack-prometheus.monitoring.svc:9090';

const scaledObject: KubeObject = {
  apiVersion: 'keda.sh/v1alpha1',
  kind: 'ScaledObject',
  metadata: { name: 'vllm-inference-app', namespace: 'default' },
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'vllm-inference-app' },
    pollingInterval: 1,
    minReplicaCount: 1,
    maxReplicaCount: 5,
    advanced: {
      horizontalPodAutoscalerConfig: {
        name: 'vllm-inference-app',
        behavior: {
          scaleUp: {
            stabilizationWindowSeconds: 2,
            policies: [{ type: 'Pods', value: 2, periodSeconds: UP_PERIOD_MS / 1000 }],
            selectPolicy: 'Max',
          },
          scaleDown: {
            stabilizationWindowSeconds: DOWN_WINDOW_MS / 1000,
            policies: [{ type: 'Pods', value: 1, periodSeconds: DOWN_PERIOD_MS / 1000 }],
            selectPolicy: 'Min',
          },
        },
      },
    },
    triggers: [
      {
        type: 'prometheus',
        metricType: 'AverageValue',
        metadata: {
          serverAddress: SERVER,
          query: 'sum(vllm:num_requests_waiting) or vector(0)',
          threshold: '25',
          activationThreshold: '1',
        },
      },
      {
        type: 'prometheus',
        metricType: 'AverageValue',
        metadata: {
          serverAddress: SERVER,
          query:
            'histogram_quantile(0.95, sum(rate(vllm:e2e_request_latency_seconds_bucket[1m])) by (le)) or vector(0)',
          threshold: '5',
        },
      },
    ],
  },
};

function setUpStore(): MemoryObjectStore {
  const store = new MemoryObjectStore({ clock: systemClock });
  store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  store.create({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'scaledobjects.keda.sh' },
    spec: {
      group: 'keda.sh',
      names: { kind: 'ScaledObject', listKind: 'ScaledObjectList', plural: 'scaledobjects', singular: 'scaledobject' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          subresources: { status: {} },
        },
      ],
    },
  });
  store.create({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'vllm-inference-app', namespace: 'default' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'vllm-inference-app' } },
      template: {
        metadata: { labels: { app: 'vllm-inference-app' } },
        spec: { containers: [{ name: 'vllm', image: 'vllm/vllm-openai:latest' }] },
      },
    },
  });
  return store;
}

/** Waits until `check` holds, polling every 100 ms; gives up after `limitMs` (a guard, not a speed assertion). */
async function until(check: () => boolean, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!check() && Date.now() < deadline) await sleep(100);
}

describe('KEDA emulation with a real Prometheus', () => {
  let exporter: Awaited<ReturnType<typeof startQueueExporter>>;
  let prometheus: PrometheusInstance;
  let controller: KedaController | undefined;
  const store = setUpStore();
  /** [epoch ms, spec.replicas] each time the Deployment's replica count changes. */
  const timeline: Array<[number, number]> = [];
  const log: string[] = [];
  let raisedAt = 0;
  let loweredAt = 0;
  let targetsAtPeak = '';

  beforeAll(async () => {
    const installation = await ensurePrometheus({ allowInstall: false });
    exporter = await startQueueExporter();
    prometheus = await startPrometheus({
      bin: installation.bin,
      scrapeIntervalSeconds: 1,
      targetGroups: {
        vllm: [
          {
            targets: [exporter.address],
            labels: { namespace: 'default', pod: 'vllm-inference-app-7d9c8b6f5d-x2k4q', service: 'vllm-inference-app' },
          },
        ],
      },
    });
    await prometheus.waitForTargets({ timeoutMs: 30_000 });

    let last = 1;
    store.watch('Deployment', (event) => {
      const replicas = (event.object.spec as { replicas: number }).replicas;
      if (replicas !== last) timeline.push([Date.now(), replicas]);
      last = replicas;
    });
    controller = startKedaController({
      store,
      prometheusUrl: prometheus.url,
      clock: systemClock,
      log: (line) => log.push(line),
    });
    store.create(scaledObject);
    const replicas = () =>
      (store.get('Deployment', 'default', 'vllm-inference-app')?.spec as { replicas: number }).replicas;
    const hpa = () => store.get('HorizontalPodAutoscaler', 'default', 'vllm-inference-app');

    // Idle: a few polls at 1 replica, then the queue jumps to 200 (→ ceil(200 / 25) = 8 wanted, max 5).
    await sleep(3_000);
    exporter.set(200);
    raisedAt = Date.now();
    await until(() => replicas() === 5, 60_000);
    // 200 waiting over 5 Pods: the HPA status shows 40 per Pod against 25.
    await until(
      () => hpa() !== undefined && formatHpaTargets(hpa() as KubeObject) === '40/25 (avg), 0/5 (avg)',
      10_000,
    );
    targetsAtPeak = formatHpaTargets(hpa() as KubeObject);

    exporter.set(0);
    loweredAt = Date.now();
    await until(() => replicas() === 1, 90_000);
    // One more down period: nothing may go below minReplicaCount.
    await sleep(DOWN_PERIOD_MS + 1_000);
  }, 240_000);

  afterAll(async () => {
    await controller?.stop();
    await prometheus?.stop();
    await exporter?.close();
  });

  it('scales out in steps of at most 2 Pods per 4 s period, up to max 5', () => {
    // Prepare
    const up = timeline.filter(([at]) => at >= raisedAt && at < loweredAt);
    const steps = up.map(([at, replicas], index) => ({
      at,
      change: replicas - (index === 0 ? 1 : (up[index - 1]?.[1] ?? 1)),
    }));

    // Assess
    expect(up.map(([, replicas]) => replicas)).toEqual([3, 5]);
    for (const step of steps) {
      const withinPeriod = steps.filter((other) => other.at <= step.at && step.at - other.at < UP_PERIOD_MS - SLACK_MS);
      expect(withinPeriod.reduce((sum, other) => sum + other.change, 0)).toBeLessThanOrEqual(2);
    }
    expect(Math.max(...timeline.map(([, replicas]) => replicas))).toBe(5);
    expect(targetsAtPeak).toBe('40/25 (avg), 0/5 (avg)');
  });

  it('scales in one Pod per 4 s period, starting after the 6 s window, down to min 1', () => {
    // Prepare
    const down = timeline.filter(([at]) => at >= loweredAt);
    const gaps = down.slice(1).map(([at], index) => at - (down[index]?.[0] ?? 0));

    // Assess
    expect(down.map(([, replicas]) => replicas)).toEqual([4, 3, 2, 1]);
    expect((down[0]?.[0] ?? 0) - loweredAt).toBeGreaterThanOrEqual(DOWN_WINDOW_MS - SLACK_MS);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(DOWN_PERIOD_MS - SLACK_MS);
  });

  it('records each rescale as a SuccessfulRescale event with the reason', () => {
    // Act
    const messages = store
      .list('Event')
      .filter((event) => event.reason === 'SuccessfulRescale')
      .map((event) => event.message as string);

    // Assess
    expect(messages).toHaveLength(6);
    expect(messages[0]).toMatch(
      /^New size: 3; reason: external metric s0-prometheus above target \(.*200 \/ 25 per Pod → 8/,
    );
    expect(messages[5]).toMatch(/^New size: 1; reason: All metrics below target/);
  });

  it('keeps the ScaledObject Ready, and Active False once the queue is empty', () => {
    // Act
    const conditions = (
      store.get('ScaledObject', 'default', 'vllm-inference-app')?.status as {
        conditions: Array<{ type: string; status: string }>;
      }
    ).conditions;

    // Assess
    expect(conditions.slice(0, 3).map(({ type, status }) => `${type}=${status}`)).toEqual([
      'Ready=True',
      'Active=False',
      'Fallback=False',
    ]);
  });
});
