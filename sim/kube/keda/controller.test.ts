import { afterEach, describe, expect, it } from '@jest/globals';
import { VirtualClock } from '../../../shared/clock/index.js';
import { type InstantSample, MetricsNetworkError } from '../../../shared/metrics/index.js';
import { MemoryObjectStore } from '../store.js';
import type { KubeObject } from '../types.js';
import { type KedaController, startKedaController } from './controller.js';
import { formatHpaTargets } from './scaledObject.js';

const START = Date.parse('2026-03-02T10:00:00Z');
const QUEUE_QUERY = 'sum(vllm:num_requests_waiting) or vector(0)';
const LATENCY_QUERY =
  'histogram_quantile(0.95, sum(rate(vllm:e2e_request_latency_seconds_bucket[1m])) by (le)) or vector(0)';
const SERVER = 'http://kube-prometheus-stack-prometheus.monitoring.svc:9090';

/** The guide's ScaledObject (EKS user guide, "Autoscale AI inference with HPA and KEDA"), with optional changes. */
function guideScaledObject(spec: Record<string, unknown> = {}, name = 'vllm-inference-app'): KubeObject {
  return {
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'ScaledObject',
    metadata: { name, namespace: 'default' },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'vllm-inference-app' },
      minReplicaCount: 1,
      maxReplicaCount: 5,
      advanced: {
        horizontalPodAutoscalerConfig: {
          name: 'vllm-inference-app',
          behavior: {
            scaleUp: {
              stabilizationWindowSeconds: 30,
              policies: [{ type: 'Pods', value: 2, periodSeconds: 60 }],
              selectPolicy: 'Max',
            },
            scaleDown: {
              stabilizationWindowSeconds: 300,
              policies: [{ type: 'Pods', value: 1, periodSeconds: 120 }],
              selectPolicy: 'Min',
            },
          },
        },
      },
      triggers: [
        {
          type: 'prometheus',
          metricType: 'AverageValue',
          metadata: { serverAddress: SERVER, query: QUEUE_QUERY, threshold: '25', activationThreshold: '1' },
        },
        {
          type: 'prometheus',
          metricType: 'AverageValue',
          metadata: { serverAddress: SERVER, query: LATENCY_QUERY, threshold: '5' },
        },
      ],
      ...spec,
    },
  };
}

const KEDA_CRD: KubeObject = {
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
};

function deployment(replicas: number): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'vllm-inference-app', namespace: 'default' },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'vllm-inference-app' } },
      template: {
        metadata: { labels: { app: 'vllm-inference-app' } },
        spec: { containers: [{ name: 'vllm', image: 'vllm/vllm-openai:latest' }] },
      },
    },
  };
}

/** A world with KEDA installed (unless told otherwise), the guide's Deployment at 1 replica, and fake metrics. */
function world(options: { installed?: boolean; replicas?: number } = {}) {
  const clock = new VirtualClock(START);
  const store = new MemoryObjectStore({ clock });
  store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  if (options.installed ?? true) store.create(KEDA_CRD);
  store.create(deployment(options.replicas ?? 1));
  const values = new Map<string, number | Error | InstantSample[]>([
    [QUEUE_QUERY, 0],
    [LATENCY_QUERY, 0],
  ]);
  const queries: string[] = [];
  const query = (promql: string): Promise<InstantSample[]> => {
    queries.push(promql);
    const value = values.get(promql) ?? [];
    if (value instanceof Error) return Promise.reject(value);
    if (Array.isArray(value)) return Promise.resolve(value);
    return Promise.resolve([{ labels: {}, value, timestampMs: clock.now() }]);
  };
  const lines: string[] = [];
  const controller = startKedaController({
    store,
    prometheusUrl: 'http://127.0.0.1:9',
    clock,
    query,
    autoPoll: false,
    log: (line) => lines.push(line),
  });
  running.push(controller);
  return {
    clock,
    store,
    values,
    queries,
    lines,
    controller,
    replicas: () => (store.get('Deployment', 'default', 'vllm-inference-app')?.spec as { replicas: number }).replicas,
    hpa: (name = 'vllm-inference-app') => store.get('HorizontalPodAutoscaler', 'default', name),
    scaledObject: (name = 'vllm-inference-app') => store.get('ScaledObject', 'default', name),
    condition: (type: string, name = 'vllm-inference-app') =>
      (
        store.get('ScaledObject', 'default', name)?.status as
          { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> } | undefined
      )?.conditions?.find((condition) => condition.type === type),
    hpaCondition: (type: string) =>
      (
        store.get('HorizontalPodAutoscaler', 'default', 'vllm-inference-app')?.status as
          { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> } | undefined
      )?.conditions?.find((condition) => condition.type === type),
    events: (reason: string) => store.list('Event').filter((event) => event.reason === reason),
  };
}

const running: KedaController[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((controller) => controller.stop()));
});

/** Polls every `stepSeconds` for `totalSeconds`, returning the replica changes as [seconds since start, replicas]. */
async function runFor(
  w: ReturnType<typeof world>,
  totalSeconds: number,
  stepSeconds: number,
  each?: (seconds: number) => void,
): Promise<Array<[number, number]>> {
  const changes: Array<[number, number]> = [];
  let last = w.replicas();
  for (let seconds = stepSeconds; seconds <= totalSeconds; seconds += stepSeconds) {
    w.clock.advance(stepSeconds * 1000);
    each?.(seconds);
    await w.controller.pollNow();
    const now = w.replicas();
    if (now !== last) changes.push([Math.round((w.clock.now() - START) / 1000), now]);
    last = now;
  }
  return changes;
}

describe('Function: startKedaController', () => {
  describe('the HPA and the ScaledObject status', () => {
    it("creates the HPA KEDA would create for the guide's ScaledObject", async () => {
      // Prepare
      const w = world();
      const so = w.store.create(guideScaledObject());

      // Act
      await w.controller.pollNow();

      // Assess
      const hpa = w.hpa();
      expect(hpa?.metadata.ownerReferences).toEqual([
        {
          apiVersion: 'keda.sh/v1alpha1',
          kind: 'ScaledObject',
          name: 'vllm-inference-app',
          uid: so.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      expect(hpa?.spec).toEqual({
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'vllm-inference-app' },
        minReplicas: 1,
        maxReplicas: 5,
        metrics: [
          {
            type: 'External',
            external: {
              metric: {
                name: 's0-prometheus',
                selector: { matchLabels: { 'scaledobject.keda.sh/name': 'vllm-inference-app' } },
              },
              target: { type: 'AverageValue', averageValue: '25' },
            },
          },
          {
            type: 'External',
            external: {
              metric: {
                name: 's1-prometheus',
                selector: { matchLabels: { 'scaledobject.keda.sh/name': 'vllm-inference-app' } },
              },
              target: { type: 'AverageValue', averageValue: '5' },
            },
          },
        ],
        behavior: (guideScaledObject().spec as { advanced: { horizontalPodAutoscalerConfig: { behavior: unknown } } })
          .advanced.horizontalPodAutoscalerConfig.behavior,
      });
      expect(hpa?.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'keda-operator' });
    });

    it('shows TARGETS as `kubectl get hpa` does in the guide, with the current replicas', async () => {
      // Prepare
      const w = world();
      w.store.create(guideScaledObject());

      // Act
      await w.controller.pollNow();

      // Assess
      const hpa = w.hpa() as KubeObject;
      expect(formatHpaTargets(hpa)).toBe('0/25 (avg), 0/5 (avg)');
      expect(hpa.status).toMatchObject({ currentReplicas: 1, desiredReplicas: 1 });
      expect((hpa.status as { conditions: Array<{ type: string }> }).conditions.map((c) => c.type)).toEqual([
        'AbleToScale',
        'ScalingActive',
        'ScalingLimited',
      ]);
    });

    it('keeps the ScaledObject status as KEDA does: READY True, ACTIVE False when idle', async () => {
      // Prepare
      const w = world({ replicas: 2 });
      w.store.create(guideScaledObject());

      // Act
      await w.controller.pollNow();

      // Assess
      const so = w.scaledObject() as KubeObject;
      expect(so.metadata.labels).toEqual({ 'scaledobject.keda.sh/name': 'vllm-inference-app' });
      expect(so.status).toMatchObject({
        hpaName: 'vllm-inference-app',
        originalReplicaCount: 2,
        externalMetricNames: ['s0-prometheus', 's1-prometheus'],
        scaleTargetKind: 'apps/v1.Deployment',
        conditions: [
          { type: 'Ready', status: 'True', reason: 'ScaledObjectReady' },
          { type: 'Active', status: 'False', reason: 'ScalerNotActive' },
          { type: 'Fallback', status: 'False', reason: 'NoFallbackFound' },
          { type: 'Paused', status: 'Unknown' },
        ],
      });
      expect((so.status as { lastActiveTime?: string }).lastActiveTime).toBeUndefined();
    });

    it('names the HPA keda-hpa-<name> when the ScaledObject does not name it', async () => {
      // Prepare
      const w = world();
      w.store.create(guideScaledObject({ advanced: {} }, 'queue'));

      // Act
      await w.controller.pollNow();

      // Assess
      expect(w.hpa('keda-hpa-queue')?.spec).toMatchObject({ minReplicas: 1, maxReplicas: 5 });
      expect((w.scaledObject('queue')?.status as { hpaName: string }).hpaName).toBe('keda-hpa-queue');
    });

    it('follows spec changes: a new threshold reaches the HPA', async () => {
      // Prepare
      const w = world();
      const so = w.store.create(guideScaledObject());
      await w.controller.pollNow();
      const spec = structuredClone(so.spec) as { triggers: Array<{ metadata: Record<string, string> }> };
      (spec.triggers[0] as { metadata: Record<string, string> }).metadata.threshold = '40';

      // Act
      w.store.update({ ...(w.scaledObject() as KubeObject), spec });
      await w.controller.pollNow();

      // Assess
      expect(formatHpaTargets(w.hpa() as KubeObject)).toBe('0/40 (avg), 0/5 (avg)');
    });

    it('replaces the HPA when the ScaledObject renames it', async () => {
      // Prepare
      const w = world();
      w.store.create(guideScaledObject());
      await w.controller.pollNow();
      const spec = structuredClone(w.scaledObject()?.spec) as {
        advanced: { horizontalPodAutoscalerConfig: { name: string } };
      };
      spec.advanced.horizontalPodAutoscalerConfig.name = 'vllm-hpa';

      // Act
      w.store.update({ ...(w.scaledObject() as KubeObject), spec });
      await w.controller.pollNow();

      // Assess
      expect(w.hpa()).toBeUndefined();
      expect(w.hpa('vllm-hpa')).toBeDefined();
      expect((w.scaledObject()?.status as { hpaName: string }).hpaName).toBe('vllm-hpa');
    });

    it('puts the Deployment back to its original size on deletion when restoreToOriginalReplicaCount is set', async () => {
      // Prepare: the Deployment had 2 replicas; the queue scales it to 4.
      const w = world({ replicas: 2 });
      w.store.create(
        guideScaledObject({
          advanced: {
            restoreToOriginalReplicaCount: true,
            horizontalPodAutoscalerConfig: { name: 'vllm-inference-app' },
          },
        }),
      );
      w.values.set(QUEUE_QUERY, 100);
      await w.controller.pollNow();
      await runFor(w, 30, 30);
      const scaled = w.replicas();

      // Act
      w.store.delete('ScaledObject', 'default', 'vllm-inference-app');
      await w.controller.pollNow();

      // Assess
      expect(scaled).toBe(4);
      expect(w.replicas()).toBe(2);
    });

    it('deletes the HPA with the ScaledObject', async () => {
      // Prepare
      const w = world();
      w.store.create(guideScaledObject());
      await w.controller.pollNow();

      // Act
      w.store.delete('ScaledObject', 'default', 'vllm-inference-app');

      // Assess
      expect(w.hpa()).toBeUndefined();
    });
  });

  describe('scaling', () => {
    it('scales out by at most 2 Pods per 60 s up to max 5, then in by one Pod per 120 s after the 300 s window', async () => {
      // Prepare: KEDA's default 30 s polling; a queue of 200 for five minutes, then none.
      const w = world();
      w.store.create(guideScaledObject());
      await w.controller.pollNow();

      // Act
      const changes = await runFor(w, 1200, 30, (seconds) => w.values.set(QUEUE_QUERY, seconds <= 300 ? 200 : 0));

      // Assess: +2 at once (the idle recommendations are already 30 s old), +2 one period later, capped at 5;
      // the last high recommendation is at 300 s, so the first Pod goes at 600 s, then one per 120 s down to 1.
      expect(changes).toEqual([
        [30, 3],
        [90, 5],
        [600, 4],
        [720, 3],
        [840, 2],
        [960, 1],
      ]);
      expect(w.events('SuccessfulRescale').map((event) => event.message)).toEqual([
        expect.stringMatching(
          /^New size: 3; reason: external metric s0-prometheus above target \(.*200 \/ 25 per Pod → 8.*\+2 Pods per 60 s → 3/,
        ),
        expect.stringMatching(/^New size: 5; reason: external metric s0-prometheus above target/),
        expect.stringMatching(/^New size: 4; reason: All metrics below target \(.*−1 Pod per 120 s → 4/),
        expect.stringMatching(/^New size: 3; /),
        expect.stringMatching(/^New size: 2; /),
        expect.stringMatching(/^New size: 1; /),
      ]);
    });

    it('shows the per-Pod average, ACTIVE True and the last scale while busy', async () => {
      // Prepare
      const w = world();
      w.store.create(guideScaledObject());
      await w.controller.pollNow();
      w.values.set(QUEUE_QUERY, 80);

      // Act
      await runFor(w, 60, 30);

      // Assess: 80 waiting over the 3 replicas after the first scale-up → 26667m per Pod.
      const hpa = w.hpa() as KubeObject;
      expect(formatHpaTargets(hpa)).toBe('26667m/25 (avg), 0/5 (avg)');
      expect(hpa.status).toMatchObject({
        currentReplicas: 3,
        desiredReplicas: 3,
        lastScaleTime: '2026-03-02T10:00:30Z',
      });
      expect(w.condition('Active')).toMatchObject({ status: 'True', reason: 'ScalerActive' });
      expect((w.scaledObject()?.status as { lastActiveTime: string }).lastActiveTime).toBe('2026-03-02T10:01:00Z');
    });

    it('does not go below minReplicaCount 1 while the queue stays under the activation threshold', async () => {
      // Prepare
      const w = world({ replicas: 2 });
      w.store.create(guideScaledObject());

      // Act: a queue of 1 is not above activationThreshold "1" (inactive), and asks for ceil(1 / 25) = 1.
      w.values.set(QUEUE_QUERY, 1);
      await w.controller.pollNow();
      const changes = await runFor(w, 900, 30);

      // Assess: the 2 recorded at the first poll leaves the 300 s scale-down window at 300 s; 1 is the floor.
      expect(changes).toEqual([[300, 1]]);
      expect(w.condition('Active')).toMatchObject({ status: 'False' });
    });

    it('scales to zero after the cooldown with minReplicaCount 0, and activates again from zero', async () => {
      // Prepare
      const w = world({ replicas: 1 });
      w.store.create(guideScaledObject({ minReplicaCount: 0, cooldownPeriod: 60 }));
      w.values.set(QUEUE_QUERY, 5);
      await w.controller.pollNow();

      // Act: busy until 30 s, idle until 180 s, busy again.
      const changes = await runFor(w, 210, 30, (seconds) =>
        w.values.set(QUEUE_QUERY, seconds <= 30 || seconds > 180 ? 5 : 0),
      );

      // Assess: last active at 30 s; 90 s is exactly the end of the cooldown, so 120 s deactivates; 210 s activates.
      expect(changes).toEqual([
        [120, 0],
        [210, 1],
      ]);
      expect(w.events('KEDAScaleTargetDeactivated').map((event) => event.message)).toEqual([
        'Deactivated apps/v1.Deployment default/vllm-inference-app from 1 to 0',
      ]);
      expect(w.events('KEDAScaleTargetActivated')).toHaveLength(1);
    });

    it('reports the HPA as disabled while the target is at zero', async () => {
      // Prepare
      const w = world({ replicas: 0 });
      w.store.create(guideScaledObject({ minReplicaCount: 0 }));

      // Act
      await w.controller.pollNow();

      // Assess
      expect(w.replicas()).toBe(0);
      expect(w.hpaCondition('ScalingActive')).toMatchObject({ status: 'False', reason: 'ScalingDisabled' });
    });
  });

  describe('failures', () => {
    it('turns Ready False with the error and does not scale while Prometheus is down', async () => {
      // Prepare
      const w = world({ replicas: 3 });
      w.store.create(guideScaledObject());
      await w.controller.pollNow();
      const down = new MetricsNetworkError('http://127.0.0.1:9/', { cause: new Error('connect ECONNREFUSED') });
      w.values.set(QUEUE_QUERY, down);
      w.values.set(LATENCY_QUERY, down);

      // Act: ten minutes without metrics (an empty queue would have scaled down by now).
      const changes = await runFor(w, 600, 30);

      // Assess
      expect(changes).toEqual([]);
      expect(w.condition('Ready')).toEqual({
        type: 'Ready',
        status: 'False',
        reason: 'TriggerError',
        message: expect.stringMatching(
          /^Triggers defined in ScaledObject are not working correctly: s0-prometheus: could not reach http:\/\/127\.0\.0\.1:9\//,
        ),
      });
      expect(w.hpaCondition('ScalingActive')).toMatchObject({ status: 'False', reason: 'FailedGetExternalMetric' });
      expect(formatHpaTargets(w.hpa() as KubeObject)).toBe('<unknown>/25 (avg), <unknown>/5 (avg)');
    });

    it('turns Ready True again when Prometheus is back', async () => {
      // Prepare
      const w = world();
      w.store.create(guideScaledObject());
      w.values.set(QUEUE_QUERY, new Error('HTTP 503'));
      await w.controller.pollNow();
      expect(w.condition('Ready')).toMatchObject({ status: 'False' });

      // Act
      w.values.set(QUEUE_QUERY, 0);
      await runFor(w, 30, 30);

      // Assess
      expect(w.condition('Ready')).toMatchObject({ status: 'True', reason: 'ScaledObjectReady' });
    });

    it('fails the trigger on an empty answer when ignoreNullValues is false', async () => {
      // Prepare
      const w = world();
      const so = guideScaledObject();
      const triggers = (so.spec as { triggers: Array<{ metadata: Record<string, string> }> }).triggers;
      (triggers[1] as { metadata: Record<string, string> }).metadata.ignoreNullValues = 'false';
      w.store.create(so);
      w.values.set(LATENCY_QUERY, []);

      // Act
      await w.controller.pollNow();

      // Assess
      expect(w.condition('Ready')).toMatchObject({
        status: 'False',
        message: expect.stringContaining("s1-prometheus: prometheus metrics 'prometheus' target may be lost"),
      });
    });

    it('turns Ready False naming the bad field of a trigger, and queries nothing', async () => {
      // Prepare
      const w = world();
      const so = guideScaledObject();
      const triggers = (so.spec as { triggers: Array<{ metadata: Record<string, string> }> }).triggers;
      (triggers[0] as { metadata: Record<string, string> }).metadata.threshold = 'twenty-five';
      w.store.create(so);

      // Act
      await w.controller.pollNow();

      // Assess
      expect(w.condition('Ready')).toMatchObject({
        status: 'False',
        reason: 'ScaledObjectCheckFailed',
        message: expect.stringContaining('spec.triggers[0].metadata.threshold: got "twenty-five"'),
      });
      expect(w.condition('Active')).toMatchObject({ status: 'Unknown', reason: 'UnknownState' });
      expect(w.queries).toEqual([]);
      expect(w.hpa()).toBeUndefined();
    });

    it.each([
      {
        case: 'minReplicaCount above maxReplicaCount',
        spec: { minReplicaCount: 6 },
        message:
          "ScaledObject doesn't have correct Idle/Min/Max Replica Counts specification: spec.minReplicaCount: 6 is greater than maxReplicaCount 5",
      },
      {
        case: 'a behavior the API server would reject',
        spec: {
          advanced: {
            horizontalPodAutoscalerConfig: {
              behavior: { scaleUp: { policies: [{ type: 'Pods', value: 2, periodSeconds: 0 }] } },
            },
          },
        },
        message:
          'failed to ensure HPA is correctly created for ScaledObject: spec.advanced.horizontalPodAutoscalerConfig.behavior.scaleUp.policies[0].periodSeconds: got 0',
      },
      {
        case: 'a StatefulSet target',
        spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'vllm-inference-app' } },
        message:
          "ScaledObject doesn't have correct scaleTargetRef specification: spec.scaleTargetRef: got apps/v1/StatefulSet",
      },
    ])('turns Ready False on $case with KEDA’s message and the field', async ({ spec, message }) => {
      // Prepare
      const w = world();
      w.store.create(guideScaledObject(spec));

      // Act
      await w.controller.pollNow();

      // Assess
      expect(w.condition('Ready')).toMatchObject({
        status: 'False',
        reason: 'ScaledObjectCheckFailed',
        message: expect.stringContaining(message),
      });
    });

    it('turns Ready False when the Deployment does not exist', async () => {
      // Prepare
      const w = world();
      w.store.create(guideScaledObject({ scaleTargetRef: { name: 'no-such-app' } }));

      // Act
      await w.controller.pollNow();

      // Assess
      expect(w.condition('Ready')).toMatchObject({
        status: 'False',
        message: expect.stringContaining("scale target default/no-such-app: Target resource doesn't exist"),
      });
    });
  });

  describe('pause annotations', () => {
    const PAUSED_REPLICAS = 'autoscaling.keda.sh/paused-replicas';
    const PAUSED = 'autoscaling.keda.sh/paused';

    /** Sets (string) or removes (null) annotations on the ScaledObject, as `kubectl annotate` does. */
    function annotate(w: ReturnType<typeof world>, changes: Record<string, string | null>): void {
      const so = w.scaledObject() as KubeObject;
      const annotations = { ...(so.metadata.annotations ?? {}) };
      for (const [key, value] of Object.entries(changes)) {
        if (value === null) delete annotations[key];
        else annotations[key] = value;
      }
      w.store.update({ ...so, metadata: { ...so.metadata, annotations } });
    }

    function pausedReplicaCount(w: ReturnType<typeof world>): number | undefined {
      return (w.scaledObject()?.status as { pausedReplicaCount?: number } | undefined)?.pausedReplicaCount;
    }

    it('scales the target to paused-replicas, deletes the HPA and stops autoscaling while the queue is long', async () => {
      // Prepare: a queue of 200 has scaled the guide's Deployment to 3.
      const w = world();
      w.store.create(guideScaledObject());
      w.values.set(QUEUE_QUERY, 200);
      await w.controller.pollNow();
      await runFor(w, 30, 30);
      const before = w.replicas();
      const queriesBefore = w.queries.length;

      // Act: KEDA sees the annotation on its next reconcile (the watch delivers it after this tick).
      annotate(w, { [PAUSED_REPLICAS]: '1' });
      await w.controller.pollNow();
      const changes = await runFor(w, 600, 30);

      // Assess
      expect(before).toBe(3);
      expect(w.replicas()).toBe(1);
      expect(changes).toEqual([]);
      expect(w.hpa()).toBeUndefined();
      expect(w.queries).toHaveLength(queriesBefore);
      expect(w.condition('Paused')).toEqual({
        type: 'Paused',
        status: 'True',
        reason: 'ScaledObjectPaused',
        message: 'ScaledObject is paused',
      });
      expect(w.condition('Ready')).toMatchObject({ status: 'True' });
      expect(pausedReplicaCount(w)).toBe(1);
      expect(w.lines).toContain(
        'keda: default/vllm-inference-app: paused (autoscaling.keda.sh/paused-replicas is "1"): scaled default/vllm-inference-app from 3 to 1',
      );
    });

    it('keeps the current count with paused "true" while an empty queue would scale in', async () => {
      // Prepare
      const w = world({ replicas: 3 });
      w.store.create(guideScaledObject());
      await w.controller.pollNow();

      // Act: twenty idle minutes (unpaused, the guide's behaviour goes down to 1 within 15).
      annotate(w, { [PAUSED]: 'true' });
      const changes = await runFor(w, 1200, 30);

      // Assess
      expect(changes).toEqual([]);
      expect(w.replicas()).toBe(3);
      expect(w.hpa()).toBeUndefined();
      expect(w.condition('Paused')).toMatchObject({ status: 'True', reason: 'ScaledObjectPaused' });
      expect(pausedReplicaCount(w)).toBeUndefined();
    });

    it('gives paused-replicas precedence when both annotations are set', async () => {
      // Prepare
      const w = world({ replicas: 3 });
      w.store.create(guideScaledObject());
      await w.controller.pollNow();

      // Act
      annotate(w, { [PAUSED]: 'true', [PAUSED_REPLICAS]: '2' });
      await w.controller.pollNow();

      // Assess
      expect(w.replicas()).toBe(2);
      expect(pausedReplicaCount(w)).toBe(2);
    });

    it('puts the target back to the paused count after someone scales it by hand', async () => {
      // Prepare
      const w = world();
      w.store.create(guideScaledObject());
      annotate(w, { [PAUSED_REPLICAS]: '2' });
      await w.controller.pollNow();
      const deployment = w.store.get('Deployment', 'default', 'vllm-inference-app') as KubeObject;

      // Act: `kubectl scale --replicas=4`
      w.store.update({ ...deployment, spec: { ...(deployment.spec as object), replicas: 4 } });
      await runFor(w, 30, 30);

      // Assess
      expect(w.replicas()).toBe(2);
    });

    it('resumes when the annotation is removed: Paused False, the HPA back, and the queue scales again', async () => {
      // Prepare: paused at 1 with a long queue.
      const w = world();
      w.store.create(guideScaledObject());
      w.values.set(QUEUE_QUERY, 200);
      annotate(w, { [PAUSED_REPLICAS]: '1' });
      await runFor(w, 120, 30);

      // Act
      annotate(w, { [PAUSED_REPLICAS]: null });
      const changes = await runFor(w, 120, 30);

      // Assess: the new HPA starts from its current count as its only recommendation (as the HPA controller does),
      // so the 30 s scale-up window holds it at 1 until 180 s; then +2 Pods, and 2 more one 60 s period later.
      expect(w.condition('Paused')).toEqual({
        type: 'Paused',
        status: 'False',
        reason: 'ScaledObjectUnpaused',
        message: 'pause annotation removed for ScaledObject',
      });
      expect(pausedReplicaCount(w)).toBeUndefined();
      expect(w.hpa()).toBeDefined();
      expect(changes).toEqual([
        [180, 3],
        [240, 5],
      ]);
    });

    it('scales to zero with paused-replicas "0"', async () => {
      // Prepare
      const w = world({ replicas: 2 });
      w.store.create(guideScaledObject());

      // Act
      annotate(w, { [PAUSED_REPLICAS]: '0' });
      await w.controller.pollNow();

      // Assess
      expect(w.replicas()).toBe(0);
      expect(pausedReplicaCount(w)).toBe(0);
    });

    it.each([
      { case: '"false"', value: 'false', paused: false },
      { case: '"0"', value: '0', paused: false },
      { case: '"True"', value: 'True', paused: true },
      { case: '"yes" (not a Go boolean, which KEDA reads as true)', value: 'yes', paused: true },
    ])('reads paused $case as Go’s ParseBool does', async ({ value, paused }) => {
      // Prepare
      const w = world();
      w.store.create(guideScaledObject());

      // Act
      annotate(w, { [PAUSED]: value });
      await w.controller.pollNow();

      // Assess
      expect(w.hpa() === undefined).toBe(paused);
      expect(w.condition('Paused')?.status).toBe(paused ? 'True' : 'Unknown');
    });

    it.each([
      { case: 'a word', value: 'one' },
      { case: 'a negative count', value: '-1' },
      { case: 'a decimal', value: '1.5' },
    ])(
      'turns Ready False naming the annotation for paused-replicas of $case, and does not scale',
      async ({ value }) => {
        // Prepare
        const w = world({ replicas: 2 });
        w.store.create(guideScaledObject());

        // Act
        annotate(w, { [PAUSED_REPLICAS]: value });
        await w.controller.pollNow();

        // Assess
        expect(w.replicas()).toBe(2);
        expect(w.condition('Ready')).toMatchObject({
          status: 'False',
          reason: 'ScaledObjectCheckFailed',
          message: expect.stringContaining(
            `failed to ensure HPA is correctly created for ScaledObject: metadata.annotations["autoscaling.keda.sh/paused-replicas"]: got "${value}"`,
          ),
        });
      },
    );
  });

  describe('installation', () => {
    it('leaves ScaledObjects alone while the KEDA CRD is absent, and takes them up once it is installed', async () => {
      // Prepare
      const w = world({ installed: false });
      w.store.create(guideScaledObject());
      w.values.set(QUEUE_QUERY, 200);

      // Act
      await w.controller.pollNow();
      const before = { hpa: w.hpa(), status: w.scaledObject()?.status, queries: w.queries.length };
      w.store.create(KEDA_CRD);
      await w.controller.pollNow();

      // Assess
      expect(before).toEqual({ hpa: undefined, status: undefined, queries: 0 });
      expect(w.hpa()).toBeDefined();
      expect(w.condition('Ready')).toMatchObject({ status: 'True' });
      expect(w.lines).toContain(
        'keda: the scaledobjects.keda.sh CRD is absent (KEDA not installed); ScaledObjects are left alone',
      );
    });
  });
});
