import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { type ClusterClient, type KubeObject, type ObjectRef, updateWithRetry } from '../kube/index.js';
import { KubeClusterClient } from '../kube/connection/index.js';
import { startFakeApiServer, type FakeApiServer } from '../kube/testing/fakeApiServer.js';
import {
  CalibrationDependencyUnavailableError,
  CalibrationInputInvalidError,
  CalibrationTargetNotFoundError,
  type Thresholds,
} from '../calibration/index.js';
import { scaledObject as productScaledObject } from './scaledObjectManifest.js';
import {
  CalibrationThresholdInvalidError,
  CalibrationTriggerAmbiguousError,
  CalibrationTriggerNotFoundError,
} from './errors.js';
import { KEDA_PAUSED_REPLICAS_ANNOTATION, PAUSE_RECORD_ANNOTATION } from './kinds.js';
import { pauseScaledObject, resumeScaledObject } from './pause.js';
import { applyThresholdChange, planThresholdChange, rollbackThresholdChange } from './thresholds.js';
import { findTriggers } from './triggers.js';

const SO_PATH = '/apis/keda.sh/v1alpha1/namespaces/default/scaledobjects/vllm-inference-app';
const REF = { namespace: 'default', name: 'vllm-inference-app' };
const QUEUE_QUERY = 'sum(vllm:num_requests_waiting) or vector(0)';
const LATENCY_QUERY =
  'histogram_quantile(0.95, sum(rate(vllm:e2e_request_latency_seconds_bucket[1m])) by (le)) or vector(0)';

type Trigger = { type: string; name?: string; metricType?: string; metadata: Record<string, string> };

function so(triggers: Trigger[], annotations?: Record<string, string>): KubeObject {
  return {
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'ScaledObject',
    metadata: { name: 'vllm-inference-app', namespace: 'default', ...(annotations ? { annotations } : {}) },
    spec: { scaleTargetRef: { name: 'vllm-inference-app' }, triggers },
  };
}

/** The guide's two triggers (EKS user guide, "Autoscale AI inference with HPA and KEDA"). */
const guideQueue: Trigger = {
  type: 'prometheus',
  metadata: { query: QUEUE_QUERY, threshold: '25', activationThreshold: '1' },
};
const guideLatency: Trigger = {
  type: 'prometheus',
  metricType: 'AverageValue',
  metadata: { query: LATENCY_QUERY, threshold: '5' },
};
/** The latency trigger as the product writes it: compared as a whole (ADR 0019). */
const productLatency: Trigger = { ...guideLatency, metricType: 'Value' };
const cpu: Trigger = { type: 'cpu', metadata: { value: '80' } };

/** A ScaledObject someone wrote by hand: latency first, a CPU trigger in between, named triggers. */
function adopted(): KubeObject {
  return so([{ ...guideLatency, name: 'slo' }, cpu, { ...guideQueue, name: 'queue' }]);
}

function thresholds(queue: number, activation: number, latency: number): Thresholds {
  const derived = <T>(value: T) => ({ value, reason: 'test', formula: 'test' });
  return {
    queueDepthPerPod: derived(queue),
    queueActivation: derived(activation),
    p95LatencySeconds: derived(latency),
    scaleIn: derived({ queueDepth: 0 as const, p95BelowSeconds: 3, forSeconds: 300 }),
  };
}

function triggersOf(object: Record<string, unknown> | undefined): Trigger[] {
  return (object?.spec as { triggers: Trigger[] }).triggers;
}

describe('Function: findTriggers', () => {
  it("finds the product's own triggers", () => {
    // Prepare
    const object = productScaledObject({ model: 'm', ampWorkspaceUrl: 'http://127.0.0.1:9090', authentication: false });

    // Act
    const found = findTriggers(object);

    // Assess
    expect([found.queueDepth.index, found.p95Latency.index]).toEqual([0, 1]);
  });

  it('finds them by their queries in an adopted ScaledObject that orders them differently', () => {
    // Act
    const found = findTriggers(adopted());

    // Assess
    expect(found.queueDepth).toMatchObject({ index: 2, name: 'queue', query: QUEUE_QUERY });
    expect(found.p95Latency).toMatchObject({ index: 0, name: 'slo', query: LATENCY_QUERY });
  });

  it.each([
    {
      case: 'no queue trigger',
      triggers: [guideLatency, cpu],
      error: CalibrationTriggerNotFoundError,
      message:
        'ScaledObject default/vllm-inference-app has no queue depth trigger; accepted: a prometheus trigger whose query mentions vllm:num_requests_waiting',
    },
    {
      case: 'no latency trigger',
      triggers: [guideQueue],
      error: CalibrationTriggerNotFoundError,
      message:
        /has no p95 latency trigger; accepted: a prometheus trigger whose query mentions e2e_request_latency_seconds/,
    },
    {
      case: 'a trigger on vllm:num_requests_waiting_by_reason only (another series)',
      triggers: [
        { type: 'prometheus', metadata: { query: 'sum(vllm:num_requests_waiting_by_reason)', threshold: '5' } },
        guideLatency,
      ],
      error: CalibrationTriggerNotFoundError,
      message: /has no queue depth trigger/,
    },
    {
      case: 'the queue query under a non-prometheus trigger',
      triggers: [{ type: 'metrics-api', metadata: { query: QUEUE_QUERY } }, guideLatency],
      error: CalibrationTriggerNotFoundError,
      message: /has no queue depth trigger/,
    },
    {
      case: 'two queue triggers',
      triggers: [guideQueue, guideLatency, { ...guideQueue, name: 'second' }],
      error: CalibrationTriggerAmbiguousError,
      message: /has 2 triggers that could be the queue depth trigger \(spec\.triggers\[0\], spec\.triggers\[2\]\)/,
    },
    {
      case: 'one query reading both series',
      triggers: [
        {
          type: 'prometheus',
          metadata: { query: `${QUEUE_QUERY} + ${LATENCY_QUERY}`, threshold: '1' },
        },
      ],
      error: CalibrationTriggerAmbiguousError,
      message: /could be the p95 latency trigger \(spec\.triggers\[0\]\)/,
    },
  ])('refuses a ScaledObject with $case, naming what it looked for', ({ triggers, error, message }) => {
    // Act
    const act = () => findTriggers(so(triggers));

    // Assess
    expect(act).toThrow(error);
    expect(act).toThrow(message);
  });
});

describe('Function: planThresholdChange', () => {
  it('shows the previous and next values and a diff of the changed lines, naming each trigger', () => {
    // Act
    const change = planThresholdChange(adopted(), thresholds(27, 1, 4.2));

    // Assess
    expect(change).toEqual({
      scaledObject: REF,
      previous: {
        queueDepthPerPod: '25',
        queueActivation: '1',
        p95LatencySeconds: '5',
        p95LatencyMetricType: 'AverageValue',
      },
      next: { queueDepthPerPod: '27', queueActivation: '1', p95LatencySeconds: '4.2', p95LatencyMetricType: 'Value' },
      diff: [
        '--- default/vllm-inference-app (live)',
        '+++ default/vllm-inference-app (calibrated)',
        '@@ spec.triggers[2] "queue": queue depth (vllm:num_requests_waiting) @@',
        '- threshold: "25"',
        '+ threshold: "27"',
        '@@ spec.triggers[0] "slo": p95 latency (e2e_request_latency_seconds) @@',
        '- threshold: "5"',
        '+ threshold: "4.2"',
        '- metricType: "AverageValue"',
        '+ metricType: "Value"',
      ].join('\n'),
      applied: false,
    });
  });

  it('reports a field the ScaledObject lacks as null and adds it in the diff', () => {
    // Prepare: no activationThreshold (KEDA's default 0).
    const object = so([{ type: 'prometheus', metadata: { query: QUEUE_QUERY, threshold: '25' } }, productLatency]);

    // Act
    const change = planThresholdChange(object, thresholds(25, 1, 5));

    // Assess
    expect(change.previous.queueActivation).toBeNull();
    expect(change.diff.split('\n').slice(2)).toEqual([
      '@@ spec.triggers[0]: queue depth (vllm:num_requests_waiting) @@',
      '+ activationThreshold: "1"',
    ]);
  });

  it('has an empty diff when the ScaledObject already has the thresholds', () => {
    // Act
    const change = planThresholdChange(so([guideQueue, productLatency]), thresholds(25, 1, 5));

    // Assess
    expect(change.diff).toBe('');
  });

  it("sets the guide's per-Pod latency trigger, or one without metricType (KEDA's AverageValue), to Value", () => {
    // Prepare
    const withoutType: Trigger = { type: 'prometheus', metadata: { query: LATENCY_QUERY, threshold: '5' } };

    // Act
    const fromGuide = planThresholdChange(so([guideQueue, guideLatency]), thresholds(25, 1, 5));
    const fromNone = planThresholdChange(so([guideQueue, withoutType]), thresholds(25, 1, 5));

    // Assess
    expect(fromGuide.diff.split('\n').slice(2)).toEqual([
      '@@ spec.triggers[1]: p95 latency (e2e_request_latency_seconds) @@',
      '- metricType: "AverageValue"',
      '+ metricType: "Value"',
    ]);
    expect(fromNone.previous.p95LatencyMetricType).toBeNull();
    expect(fromNone.diff.split('\n').slice(2)).toEqual([
      '@@ spec.triggers[1]: p95 latency (e2e_request_latency_seconds) @@',
      '+ metricType: "Value"',
    ]);
  });

  it.each([
    { case: 'integers stay integers', input: [40, 2, 3], next: ['40', '2', '3'] },
    { case: 'queue values are rounded to integers', input: [26.6, 0.4, 2.5], next: ['27', '0', '2.5'] },
    { case: 'latency keeps at most one decimal', input: [25, 1, 4.26], next: ['25', '1', '4.3'] },
    { case: 'a whole latency has no decimals', input: [25, 1, 6.0], next: ['25', '1', '6'] },
  ])('writes KEDA strings: $case', ({ input, next }) => {
    // Act
    const change = planThresholdChange(
      so([guideQueue, guideLatency]),
      thresholds(...(input as [number, number, number])),
    );

    // Assess
    expect([change.next.queueDepthPerPod, change.next.queueActivation, change.next.p95LatencySeconds]).toEqual(next);
  });

  it.each([
    { case: 'a queue threshold below 1', input: [0.4, 1, 5], message: /^thresholds\.queueDepthPerPod: 0\.4 cannot/ },
    { case: 'a negative activation', input: [25, -1, 5], message: /^thresholds\.queueActivation: -1 cannot/ },
    { case: 'a latency below 0.1 s', input: [25, 1, 0.04], message: /^thresholds\.p95LatencySeconds: 0\.04 cannot/ },
    { case: 'a latency that is not a number', input: [25, 1, NaN], message: /^thresholds\.p95LatencySeconds: NaN/ },
  ])('refuses $case, naming the field', ({ input, message }) => {
    // Act
    const act = () =>
      planThresholdChange(so([guideQueue, guideLatency]), thresholds(...(input as [number, number, number])));

    // Assess
    expect(act).toThrow(CalibrationThresholdInvalidError);
    expect(act).toThrow(message);
  });
});

describe('Functions: applying, rolling back, pausing and resuming on a cluster', () => {
  let api: FakeApiServer;
  let client: KubeClusterClient;

  beforeAll(async () => {
    api = await startFakeApiServer();
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'fake', server: api.url, skipTLSVerify: true }],
      users: [{ name: 'tester', token: 'test-token' }],
      contexts: [{ name: 'fake', cluster: 'fake', user: 'tester' }],
      currentContext: 'fake',
    });
    client = new KubeClusterClient(kubeConfig);
  });

  afterAll(() => api.stop());

  beforeEach(() => {
    api.objects.clear();
    api.requests.length = 0;
  });

  async function store(object: KubeObject): Promise<void> {
    await client.apply(object);
    api.requests.length = 0;
  }

  function puts(): number {
    return api.requests.filter((request) => request.method === 'PUT').length;
  }

  function annotations(): Record<string, string> {
    return (api.objects.get(SO_PATH)?.metadata as { annotations?: Record<string, string> }).annotations ?? {};
  }

  /** The adapter, with another writer changing the ScaledObject right after the first read: a real Conflict follows. */
  function racing(change: (object: Record<string, unknown>) => void): ClusterClient {
    let raced = false;
    const racer: ClusterClient = {
      apply: <T extends KubeObject>(object: T) => client.apply(object),
      get: async <T extends KubeObject>(ref: ObjectRef) => {
        const live = await client.get<T>(ref);
        if (!raced) {
          raced = true;
          api.touch(SO_PATH, change);
        }
        return live;
      },
      list: (ref) => client.list(ref),
      patchMerge: (ref, patch) => client.patchMerge(ref, patch),
      replace: <T extends KubeObject>(object: T) => client.replace(object),
      delete: (ref, options) => client.delete(ref, options),
      scale: (deployment, replicas) => client.scale(deployment, replicas),
      readPodLog: (namespace, pod, options) => client.readPodLog(namespace, pod, options),
      listPods: (namespace, selector) => client.listPods(namespace, selector),
      proxyGet: (ref, options) => client.proxyGet(ref, options),
      updateWithRetry: (ref, mutate, options) => updateWithRetry(racer, ref, mutate, options),
    };
    return racer;
  }

  describe('Function: applyThresholdChange', () => {
    it('writes the new values into the right triggers of an adopted ScaledObject and leaves the rest alone', async () => {
      // Prepare
      await store(adopted());
      const change = planThresholdChange(adopted(), thresholds(27, 2, 4.2));

      // Act
      const result = await applyThresholdChange(client, change);

      // Assess
      expect(result.applied).toBe(true);
      expect(triggersOf(api.objects.get(SO_PATH))).toEqual([
        { type: 'prometheus', name: 'slo', metricType: 'Value', metadata: { query: LATENCY_QUERY, threshold: '4.2' } },
        cpu,
        {
          type: 'prometheus',
          name: 'queue',
          metadata: { query: QUEUE_QUERY, threshold: '27', activationThreshold: '2' },
        },
      ]);
    });

    it('writes nothing when the same change is applied again', async () => {
      // Prepare
      await store(adopted());
      const change = planThresholdChange(adopted(), thresholds(27, 2, 4.2));
      await applyThresholdChange(client, change);
      const afterFirst = puts();

      // Act
      const again = await applyThresholdChange(client, change);

      // Assess
      expect(afterFirst).toBe(1);
      expect(puts()).toBe(1);
      expect(again.applied).toBe(true);
    });

    it('re-reads and re-applies after a Conflict, keeping the other writer’s change', async () => {
      // Prepare
      await store(adopted());
      const change = planThresholdChange(adopted(), thresholds(30, 1, 4));
      const cluster = racing((object) => {
        (object.metadata as Record<string, unknown>).labels = { team: 'ml-platform' };
      });

      // Act
      await applyThresholdChange(cluster, change);

      // Assess
      const live = api.objects.get(SO_PATH);
      expect((live?.metadata as { labels?: Record<string, string> }).labels).toEqual({ team: 'ml-platform' });
      expect(triggersOf(live)[2]?.metadata.threshold).toBe('30');
      expect(api.requests.filter((r) => r.method === 'PUT').length).toBe(2);
    });

    it('finds the triggers again on the live object when they moved after the plan', async () => {
      // Prepare: planned on the guide's order, but the live object lists latency first.
      const change = planThresholdChange(so([guideQueue, guideLatency]), thresholds(30, 1, 4));
      await store(so([guideLatency, guideQueue]));

      // Act
      await applyThresholdChange(client, change);

      // Assess
      expect(triggersOf(api.objects.get(SO_PATH)).map((t) => t.metadata.threshold)).toEqual(['4', '30']);
    });

    it('fails with CalibrationTargetNotFoundError when the ScaledObject is gone', async () => {
      // Prepare
      const change = planThresholdChange(adopted(), thresholds(30, 1, 4));

      // Act
      const act = applyThresholdChange(client, change);

      // Assess
      await expect(act).rejects.toThrow(CalibrationTargetNotFoundError);
      await expect(applyThresholdChange(client, change)).rejects.toThrow(
        'cannot apply the thresholds to ScaledObject default/vllm-inference-app: it does not exist',
      );
    });

    it('fails with the retryable CalibrationDependencyUnavailableError when the API server is unavailable', async () => {
      // Prepare
      await store(adopted());
      api.failNext({
        status: 503,
        method: 'GET',
        body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'ServiceUnavailable', code: 503 },
      });

      // Act
      const act = applyThresholdChange(client, planThresholdChange(adopted(), thresholds(30, 1, 4)));

      // Assess
      await expect(act).rejects.toThrow(CalibrationDependencyUnavailableError);
    });
  });

  describe('Function: rollbackThresholdChange', () => {
    it("puts the previous values back (the guide's metricType too) and removes a field that was absent before", async () => {
      // Prepare: no activationThreshold before the calibration; the guide's AverageValue latency trigger.
      const before = so([{ type: 'prometheus', metadata: { query: QUEUE_QUERY, threshold: '25' } }, guideLatency]);
      await store(before);
      const change = await applyThresholdChange(client, planThresholdChange(before, thresholds(27, 2, 4.2)));

      // Act
      const rolledBack = await rollbackThresholdChange(client, change);

      // Assess
      expect(rolledBack.applied).toBe(false);
      expect(triggersOf(api.objects.get(SO_PATH))).toEqual(triggersOf(before));
    });

    it('removes the metricType it added to a trigger that had none, and leaves it alone for a change that did not manage it', async () => {
      // Prepare
      const withoutType: Trigger = { type: 'prometheus', metadata: { query: LATENCY_QUERY, threshold: '5' } };
      const before = so([guideQueue, withoutType]);
      await store(before);
      const change = await applyThresholdChange(client, planThresholdChange(before, thresholds(27, 2, 4.2)));
      const applied = triggersOf(api.objects.get(SO_PATH))[1]?.metricType;
      // A change recorded before the metricType was managed (no p95LatencyMetricType in previous or next).
      const { p95LatencyMetricType: _p, ...olderPrevious } = change.previous;
      const { p95LatencyMetricType: _n, ...olderNext } = change.next;
      await applyThresholdChange(client, { ...change, previous: olderPrevious, next: olderNext });
      const afterOlder = triggersOf(api.objects.get(SO_PATH))[1]?.metricType;

      // Act
      await rollbackThresholdChange(client, change);

      // Assess
      expect([applied, afterOlder]).toEqual(['Value', 'Value']);
      expect(triggersOf(api.objects.get(SO_PATH))).toEqual(triggersOf(before));
    });
  });

  describe('Functions: pauseScaledObject and resumeScaledObject', () => {
    it('pauses at the test replicas and resumes autoscaling when the user had no pause', async () => {
      // Prepare
      await store(adopted());

      // Act
      const paused = await pauseScaledObject(client, REF, 1);
      const whilePaused = annotations();
      const resumed = await resumeScaledObject(client, REF);

      // Assess
      expect(paused).toEqual({ scaledObject: REF, pausedReplicas: '1', previousPausedReplicas: null });
      expect(whilePaused).toEqual({ [KEDA_PAUSED_REPLICAS_ANNOTATION]: '1', [PAUSE_RECORD_ANNOTATION]: '' });
      expect(resumed).toMatchObject({ action: 'resumed', pausedReplicas: null });
      expect(annotations()).toEqual({});
    });

    it("gives a user's own pause back on resume", async () => {
      // Prepare
      await store(so([guideQueue, guideLatency], { [KEDA_PAUSED_REPLICAS_ANNOTATION]: '3', owner: 'team-a' }));

      // Act
      const paused = await pauseScaledObject(client, REF, 1);
      const resumed = await resumeScaledObject(client, REF);

      // Assess
      expect(paused.previousPausedReplicas).toBe('3');
      expect(resumed).toMatchObject({ action: 'restoredUserPause', pausedReplicas: '3' });
      expect(annotations()).toEqual({ [KEDA_PAUSED_REPLICAS_ANNOTATION]: '3', owner: 'team-a' });
    });

    it("keeps the first record when the pause is retried, so the user's pause still comes back", async () => {
      // Prepare
      await store(so([guideQueue, guideLatency], { [KEDA_PAUSED_REPLICAS_ANNOTATION]: '3' }));
      await pauseScaledObject(client, REF, 1);

      // Act
      const retried = await pauseScaledObject(client, REF, 1);
      await resumeScaledObject(client, REF);

      // Assess
      expect(retried.previousPausedReplicas).toBe('3');
      expect(annotations()[KEDA_PAUSED_REPLICAS_ANNOTATION]).toBe('3');
    });

    it('does nothing on a resume without a pause by the calibration, and says so', async () => {
      // Prepare
      await store(so([guideQueue, guideLatency], { [KEDA_PAUSED_REPLICAS_ANNOTATION]: '2' }));

      // Act
      const resumed = await resumeScaledObject(client, REF);

      // Assess
      expect(resumed).toMatchObject({ action: 'notPaused', pausedReplicas: '2' });
      expect(resumed.reason).toContain(PAUSE_RECORD_ANNOTATION);
      expect(puts()).toBe(0);
    });

    it('refuses a replica count that is not a whole number', async () => {
      // Act
      const act = pauseScaledObject(client, REF, 1.5);

      // Assess
      await expect(act).rejects.toThrow(CalibrationInputInvalidError);
    });

    it('fails with CalibrationTargetNotFoundError when the ScaledObject does not exist', async () => {
      // Act
      const act = pauseScaledObject(client, REF, 1);

      // Assess
      await expect(act).rejects.toThrow(CalibrationTargetNotFoundError);
    });
  });
});
