import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { K6_SUMMARY_MARKER, type K6Summary, k6SummarySchema, rolloutStatus } from '../../../shared/kube/index.js';
import type { KubeObject } from '../types.js';
import { isPodReady } from './podStatus.js';
import {
  dcgmExporterDaemonSet,
  k6Job,
  podsOf,
  startTestWorld,
  statusOf,
  TEST_MODEL,
  type TestWorld,
  vllmDeployment,
  vllmService,
  vllmServiceMonitor,
  waitFor,
} from './testWorld.js';

const APP = 'vllm-inference-app';
const SVC = 'vllm-inference-svc';
const TARGET = `http://${SVC}.default.svc:8000`;

// Real servers on a real clock: generous limits, as Pods load models and k6 runs for seconds.
jest.setTimeout(60_000);

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});

async function startWithDeployment(replicas: number, extraArgs: string[] = []): Promise<TestWorld> {
  world = await startTestWorld();
  world.store.create(vllmDeployment(APP, replicas, extraArgs));
  world.store.create(vllmService(SVC, APP));
  const w = world;
  await waitFor(
    `${replicas} Ready Pods`,
    () => readyPods(w).length === replicas && statusOf(w.store, 'Deployment', APP)['availableReplicas'] === replicas,
  );
  return w;
}

function readyPods(w: TestWorld): KubeObject[] {
  return podsOf(w.store, APP).filter(isPodReady);
}

function gpuNodes(w: TestWorld): KubeObject[] {
  return w.store.list('Node').filter((n) => n.metadata.labels?.['nvidia.com/gpu.present'] === 'true');
}

function scale(w: TestWorld, replicas: number): void {
  const d = w.store.get('Deployment', 'default', APP) as KubeObject;
  w.store.update({ ...d, spec: { ...(d.spec as object), replicas } });
}

function conditionOf(status: Record<string, unknown>, type: string): Record<string, unknown> | undefined {
  return (status['conditions'] as Array<Record<string, unknown>> | undefined)?.find((c) => c['type'] === type);
}

/** The Pods of `app` the scheduler could not place (PodScheduled False). */
function unschedulablePods(w: TestWorld, app: string): KubeObject[] {
  return podsOf(w.store, app).filter(
    (p) => conditionOf((p.status ?? {}) as Record<string, unknown>, 'PodScheduled')?.['status'] === 'False',
  );
}

/** `type reason (component): message` of every event about a Pod (in no particular order). */
function podEvents(w: TestWorld, pod: string): string[] {
  return w.store
    .list('Event')
    .filter((e) => (e['involvedObject'] as { name: string }).name === pod)
    .map((e) => {
      const component = (e['source'] as { component: string }).component;
      return `${e['type'] as string} ${e['reason'] as string} (${component}): ${e['message'] as string}`;
    });
}

function rolloutDone(w: TestWorld, deployment: string): boolean {
  return rolloutStatus(w.store.get('Deployment', 'default', deployment) as KubeObject).done;
}

async function post(url: string, body: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

function summaryOf(w: TestWorld, pod: string): K6Summary {
  const line = (w.logs.read('default', pod) ?? '').trimEnd().split('\n').at(-1) ?? '';
  expect(line.startsWith(K6_SUMMARY_MARKER)).toBe(true);
  return k6SummarySchema.parse(JSON.parse(line.slice(K6_SUMMARY_MARKER.length)));
}

async function finishedJob(w: TestWorld, name: string): Promise<Record<string, unknown>> {
  return waitFor(`Job ${name} to finish`, () => {
    const status = statusOf(w.store, 'Job', name);
    return conditionOf(status, 'Complete') || conditionOf(status, 'Failed') ? status : undefined;
  });
}

describe('Function: startWorkloadControllers', () => {
  describe('Deployments', () => {
    it('keeps a Ready Pod in its Service through one failed readiness probe, and takes it out after failureThreshold', async () => {
      // Prepare: the kubelet probes a Ready container every 5 s; the Deployment's probe has no failureThreshold, so
      // Kubernetes' default of 3 failed probes in a row applies.
      const w = await startWithDeployment(1);
      const [replica] = w.workloads.replicas();
      if (replica === undefined) throw new Error('the Deployment should run one replica');

      // Act: the server stops answering (/health refused).
      await replica.vllm.stop();
      const stoppedMs = Date.now();
      await new Promise((done) => setTimeout(done, 7_000));
      const afterOneOrTwoProbes = readyPods(w).length;
      await waitFor('the Pod not Ready', () => readyPods(w).length === 0, 40_000);

      // Assess: Ready through the first failures; not Ready only after about three probe periods.
      expect(afterOneOrTwoProbes).toBe(1);
      expect(Date.now() - stoppedMs).toBeGreaterThanOrEqual(10_000);
      expect(w.workloads.serviceUrl('default', SVC)).toBeDefined();
    });

    it('runs each Pod of a Deployment as a Ready vLLM replica on a GPU node of its own', async () => {
      // Act
      const w = await startWithDeployment(2);

      // Assess
      const pods = readyPods(w);
      const rsName = pods[0]?.metadata.ownerReferences?.[0]?.name as string;
      expect(rsName).toMatch(new RegExp(`^${APP}-[4-9bcdf]+$`));
      for (const pod of pods) {
        expect(pod.metadata.name).toMatch(new RegExp(`^${rsName}-[bcdfghjklmnpqrstvwxz2456789]{5}$`));
        expect(pod.metadata.labels?.['pod-template-hash']).toBe(rsName.slice(APP.length + 1));
        expect(pod.status).toMatchObject({
          phase: 'Running',
          podIP: '127.0.0.1',
          containerStatuses: [{ name: 'vllm', ready: true, started: true, restartCount: 0 }],
        });
        expect(w.logs.read('default', pod.metadata.name)).toMatch(
          /Starting vLLM API server[\s\S]*Application startup complete/,
        );
        const models = (await (
          await fetch(`${w.workloads.podEndpoint('default', pod.metadata.name)}/v1/models`)
        ).json()) as { data: Array<{ id: string }> };
        expect(models.data[0]?.id).toBe(TEST_MODEL);
      }
      const nodes = gpuNodes(w);
      expect(new Set(pods.map((p) => (p.spec as { nodeName: string }).nodeName))).toEqual(
        new Set(nodes.map((n) => n.metadata.name)),
      );
      for (const node of nodes) {
        expect(node.metadata.name).toMatch(/^ip-10-0-\d+-\d+\.us-east-2\.compute\.internal$/);
        expect(node.metadata.labels).toMatchObject({
          'node.kubernetes.io/instance-type': 'g6e.4xlarge',
          'karpenter.sh/nodepool': 'gpu-inf',
        });
        expect(node.status).toMatchObject({ capacity: { 'nvidia.com/gpu': '1' } });
      }
      expect(w.workloads.replicas().map((r) => r.ready)).toEqual([true, true]);
      const status = statusOf(w.store, 'Deployment', APP);
      expect(status).toMatchObject({
        observedGeneration: 1,
        replicas: 2,
        updatedReplicas: 2,
        readyReplicas: 2,
        availableReplicas: 2,
      });
      expect(conditionOf(status, 'Available')).toMatchObject({ status: 'True', reason: 'MinimumReplicasAvailable' });
      expect(conditionOf(status, 'Progressing')).toMatchObject({ status: 'True', reason: 'NewReplicaSetAvailable' });
    });

    it('scales to 3 and back to 1, stopping the removed replicas and terminating their nodes', async () => {
      // Prepare
      const w = await startWithDeployment(2);

      // Act
      scale(w, 3);
      await waitFor(
        '3 Ready Pods',
        () => readyPods(w).length === 3 && statusOf(w.store, 'Deployment', APP)['readyReplicas'] === 3,
      );
      const threeUrls = w.workloads.replicas().map((r) => r.url);
      scale(w, 1);
      await waitFor(
        '1 Pod',
        () => podsOf(w.store, APP).length === 1 && gpuNodes(w).length === 1 && w.workloads.replicas().length === 1,
      );

      // Assess
      expect(threeUrls).toHaveLength(3);
      expect(statusOf(w.store, 'Deployment', APP)).toMatchObject({ replicas: 1, availableReplicas: 1 });
      const kept = w.workloads.replicas()[0]?.url;
      for (const url of threeUrls.filter((u) => u !== kept)) await expect(fetch(`${url}/health`)).rejects.toThrow();
      const reasons = w.store.list('Event').map((e) => `${e['reason'] as string}: ${e['message'] as string}`);
      expect(reasons).toContainEqual(
        expect.stringMatching(/^ScalingReplicaSet: Scaled down replica set .* from 3 to 1$/),
      );
    });

    it('rolls a template change out one new Pod at a time, never below the desired ready count', async () => {
      // Prepare
      const w = await startWithDeployment(2);
      const livePods = new Set(podsOf(w.store, APP).map((p) => p.metadata.name));
      let maxPods = livePods.size;
      let minAvailable = Infinity;
      const unwatchPods = w.store.watch('Pod', (e) => {
        if (e.type === 'ADDED') livePods.add(e.object.metadata.name);
        if (e.type === 'DELETED') livePods.delete(e.object.metadata.name);
        maxPods = Math.max(maxPods, livePods.size);
      });
      const unwatchDeployment = w.store.watch('Deployment', (e) => {
        minAvailable = Math.min(
          minAvailable,
          Number((e.object.status as { availableReplicas?: number } | undefined)?.availableReplicas ?? 0),
        );
      });

      // Act
      const d = w.store.get('Deployment', 'default', APP) as KubeObject;
      const template = vllmDeployment(APP, 2, ['--max-num-seqs', '16']).spec as { template: unknown };
      w.store.update({ ...d, spec: { ...(d.spec as object), template: template.template } });
      const status = await waitFor('the rollout to finish', () => {
        const s = statusOf(w.store, 'Deployment', APP);
        const done =
          s['observedGeneration'] === 2 &&
          s['updatedReplicas'] === 2 &&
          s['replicas'] === 2 &&
          s['availableReplicas'] === 2 &&
          conditionOf(s, 'Progressing')?.['reason'] === 'NewReplicaSetAvailable' &&
          w.workloads.replicas().length === 2;
        return done ? s : undefined;
      });
      unwatchPods();
      unwatchDeployment();

      // Assess
      expect(w.workloads.replicas().map((r) => r.vllm.engine.config.maxNumSeqs)).toEqual([16, 16]);
      expect(maxPods).toBeLessThanOrEqual(3);
      expect(minAvailable).toBeGreaterThanOrEqual(2);
      expect(String(conditionOf(status, 'Progressing')?.['message'])).toContain(
        readyPods(w)[0]?.metadata.labels?.['pod-template-hash'],
      );
      const replicaSets = w.store.list('ReplicaSet', { namespace: 'default' });
      expect(replicaSets.map((rs) => (rs.spec as { replicas: number }).replicas).sort()).toEqual([0, 2]);
    });

    it('crashes a container with a bad vLLM flag: CrashLoopBackOff, the error in its log, never Ready', async () => {
      // Prepare
      world = await startTestWorld();
      const w = world;

      // Act
      w.store.create(vllmDeployment(APP, 1, ['--max-num-seqs', 'lots']));
      const pod = await waitFor('a crashed Pod', () =>
        podsOf(w.store, APP).find((p) => JSON.stringify(p.status ?? {}).includes('CrashLoopBackOff')),
      );

      // Assess
      expect(isPodReady(pod)).toBe(false);
      expect(pod.status).toMatchObject({
        containerStatuses: [{ ready: false, lastState: { terminated: { exitCode: 2, reason: 'Error' } } }],
      });
      expect(w.logs.read('default', pod.metadata.name)).toContain('argument --max-num-seqs: invalid value: "lots"');
      expect(statusOf(w.store, 'Deployment', APP)).toMatchObject({
        replicas: 1,
        readyReplicas: 0,
        unavailableReplicas: 1,
      });
      expect(conditionOf(statusOf(w.store, 'Deployment', APP), 'Available')).toMatchObject({ status: 'False' });
    });
  });

  describe("Karpenter's GPU limit", () => {
    // The guide's NodePool with `limits: nvidia.com/gpu: 2`: two g6e.4xlarge nodes (one GPU each) at most.
    const OTHER = 'chat';
    const UNSCHEDULABLE =
      '0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: ' +
      '1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.';

    async function startAtLimit(): Promise<{ w: TestWorld; waiting: KubeObject }> {
      world = await startTestWorld({ karpenter: { gpuLimit: 2 } });
      const w = world;
      w.store.create(vllmDeployment(APP, 3));
      const [waiting] = await waitFor(
        '2 Ready Pods and 1 Unschedulable',
        () => readyPods(w).length === 2 && unschedulablePods(w, APP).length === 1 && unschedulablePods(w, APP),
      );
      return { w, waiting: waiting as KubeObject };
    }

    it('keeps the Pod beyond the limit Pending and unbound, says why once, and the rollout unfinished', async () => {
      // Prepare
      const { w, waiting } = await startAtLimit();

      // Act: a few resyncs (every 500 ms) retry the waiting Pod.
      await new Promise((done) => setTimeout(done, 2_000));

      // Assess
      const pod = w.store.get('Pod', 'default', waiting.metadata.name) as KubeObject;
      expect(gpuNodes(w)).toHaveLength(2);
      expect((pod.spec as { nodeName?: string }).nodeName).toBeUndefined();
      expect(pod.status).toEqual({
        phase: 'Pending',
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: UNSCHEDULABLE,
            lastProbeTime: null,
            lastTransitionTime: expect.any(String),
          },
        ],
        qosClass: expect.any(String),
      });
      expect(podEvents(w, pod.metadata.name)).toEqual([
        `Warning FailedScheduling (default-scheduler): ${UNSCHEDULABLE}`,
      ]);
      expect(w.lines.filter((line) => line.startsWith('karpenter: could not schedule'))).toEqual([
        `karpenter: could not schedule pod default/${pod.metadata.name}: all available instance types exceed limits for nodepool "gpu-inf" (limits nvidia.com/gpu: 2; 2 GPU node(s) up)`,
      ]);
      expect(w.workloads.replicas()).toHaveLength(2);
      expect(statusOf(w.store, 'Deployment', APP)).toMatchObject({ replicas: 3, availableReplicas: 2 });
      expect(rolloutStatus(w.store.get('Deployment', 'default', APP) as KubeObject)).toMatchObject({
        done: false,
        reason: '2 of 3 updated replicas available',
      });
    });

    it('gives a freed GPU to the Pod waiting longest, and lets a Pending Pod be deleted cleanly', async () => {
      // Prepare: Deployment A's third Pod waits; then a Pod of Deployment B, then A's replacement, queue behind it.
      const { w, waiting } = await startAtLimit();
      w.store.create(vllmDeployment(OTHER, 1));
      await waitFor(`${OTHER}'s Pod Unschedulable`, () => unschedulablePods(w, OTHER).length === 1);
      const running = readyPods(w)[0] as KubeObject;

      // Act: a running Pod of A goes, and its GPU node with it.
      w.store.delete('Pod', 'default', running.metadata.name);
      const scheduled = await waitFor(`${waiting.metadata.name} Ready`, () => {
        const pod = w.store.get('Pod', 'default', waiting.metadata.name);
        return pod && isPodReady(pod) ? pod : undefined;
      });

      // Assess: A's waiting Pod got the GPU, not B's nor A's replacement (created later).
      const nodeName = (scheduled.spec as { nodeName: string }).nodeName;
      expect(gpuNodes(w).map((n) => n.metadata.name)).toContain(nodeName);
      expect(gpuNodes(w)).toHaveLength(2);
      expect(conditionOf(scheduled.status as Record<string, unknown>, 'PodScheduled')).toEqual({
        type: 'PodScheduled',
        status: 'True',
        lastProbeTime: null,
        lastTransitionTime: expect.any(String),
      });
      const events = podEvents(w, waiting.metadata.name);
      expect(events.filter((e) => e.includes('(default-scheduler)')).sort()).toEqual([
        `Normal Scheduled (default-scheduler): Successfully assigned default/${waiting.metadata.name} to ${nodeName}`,
        `Warning FailedScheduling (default-scheduler): ${UNSCHEDULABLE}`,
      ]);
      const replacement = await waitFor("A's replacement Unschedulable", () => unschedulablePods(w, APP)[0]);
      expect(unschedulablePods(w, OTHER)).toHaveLength(1);

      // Act: A scales to 2, which deletes its Pending replacement first (an unscheduled Pod goes first).
      scale(w, 2);
      await waitFor('A rolled out at 2', () => podsOf(w.store, APP).length === 2 && rolloutDone(w, APP));

      // Assess
      expect(w.store.get('Pod', 'default', replacement.metadata.name)).toBeUndefined();
      expect(w.workloads.podEndpoint('default', replacement.metadata.name)).toBeUndefined();
      expect(unschedulablePods(w, OTHER)).toHaveLength(1);

      // Act: A scales to 1; the GPU it frees goes to B's Pod.
      scale(w, 1);
      await waitFor(`${OTHER} rolled out`, () => rolloutDone(w, OTHER) && podsOf(w.store, APP).length === 1);

      // Assess
      expect(gpuNodes(w)).toHaveLength(2);
      expect(w.workloads.replicas()).toHaveLength(2);
      expect(w.lines.filter((line) => line.includes('reconcile failed'))).toEqual([]);
    });
  });

  describe('Services', () => {
    it('balances requests round-robin over the Ready Pods and streams responses through', async () => {
      // Prepare
      const w = await startWithDeployment(2);
      const url = await waitFor('the Service with 2 endpoints', async () => {
        const u = w.workloads.serviceUrl('default', SVC);
        return u && (await fetch(`${u}/health`)).status === 200 ? u : undefined;
      });
      const before = w.workloads.replicas().map((r) => r.vllm.telemetry().promptTokensTotal);

      // Act
      for (let i = 0; i < 4; i++) {
        const answer = await post(`${url}/v1/completions`, { model: TEST_MODEL, prompt: 'hello there', max_tokens: 2 });
        expect(answer.status).toBe(200);
      }
      const added = w.workloads.replicas().map((r, i) => r.vllm.telemetry().promptTokensTotal - (before[i] ?? 0));
      const streamed = await post(`${url}/v1/completions`, {
        model: TEST_MODEL,
        prompt: 'hi',
        max_tokens: 3,
        stream: true,
      });

      // Assess: the same prompt twice on each replica.
      expect(added[0]).toBeGreaterThan(0);
      expect(added[0]).toBe(added[1]);
      expect(streamed.status).toBe(200);
      expect(streamed.text.match(/^data: /gm)?.length).toBeGreaterThanOrEqual(4);
      expect(streamed.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
      const service = w.store.get('Service', 'default', SVC);
      expect((service?.spec as { clusterIP: string }).clusterIP).toMatch(/^10\.100\.\d+\.\d+$/);
    });

    it('answers 503 with a clear body when no Ready Pod matches', async () => {
      // Prepare
      world = await startTestWorld();
      const w = world;
      w.store.create(vllmService('lonely-svc', 'nobody'));
      const url = await waitFor('the Service proxy', () => w.workloads.serviceUrl('default', 'lonely-svc'));

      // Act
      const answer = await post(`${url}/v1/completions`, { prompt: 'x', max_tokens: 1 });

      // Assess
      expect(answer.status).toBe(503);
      expect(answer.text).toContain('service default/lonely-svc has no ready endpoints');
    });

    it('resolve: maps a Service that lives outside the store (the monitoring stack) to its URL', async () => {
      // Prepare
      world = await startTestWorld({
        externalServices: [
          { namespace: 'monitoring', name: 'kube-prometheus-stack-prometheus', url: 'http://127.0.0.1:9999' },
        ],
      });

      // Act
      const resolved = world.workloads.resolve(
        'http://kube-prometheus-stack-prometheus.monitoring.svc:9090/api/v1/query',
      );

      // Assess
      expect(resolved).toBe('http://127.0.0.1:9999/api/v1/query');
    });

    it.each([
      { case: 'svc.ns.svc with the Service port', url: `http://${SVC}.default.svc:8000/v1/models?x=1`, mapped: true },
      { case: 'the cluster.local form', url: `http://${SVC}.default.svc.cluster.local:8000`, mapped: true },
      { case: 'a port the Service does not expose', url: `http://${SVC}.default.svc:9000/v1/models`, mapped: false },
      { case: 'an unknown Service', url: 'http://nope.default.svc:8000/v1/models', mapped: false },
      { case: 'a URL outside the cluster', url: 'http://127.0.0.1:1234/v1/models', mapped: false },
    ])('resolve: $case', async ({ url, mapped }) => {
      // Prepare
      world = await startTestWorld();
      const w = world;
      w.store.create(vllmService(SVC, APP));
      const proxy = await waitFor('the Service proxy', () => w.workloads.serviceUrl('default', SVC));

      // Act
      const resolved = w.workloads.resolve(url);

      // Assess
      if (!mapped) expect(resolved).toBe(url);
      else expect(resolved).toBe(url.replace(/^http:\/\/[^/?]+/, proxy));
    });
  });

  describe('Scrape targets', () => {
    it('scrapes vLLM only with a ServiceMonitor and GPU metrics only with the dcgm-exporter DaemonSet', async () => {
      // Prepare
      const w = await startWithDeployment(2);
      const last = () => w.targets.at(-1);

      // Act / Assess: cAdvisor is always there; nothing else yet.
      await waitFor('cAdvisor targets of both GPU nodes', () => last()?.['kubelet-cadvisor']?.length === 2);
      expect(last()?.vllm).toEqual([]);
      expect(last()?.['dcgm-exporter']).toEqual([]);

      w.store.create(vllmServiceMonitor(APP, APP));
      const vllm = await waitFor('vLLM targets', () => (last()?.vllm?.length === 2 ? last()?.vllm : undefined));
      expect(vllm.map((g) => g.labels)).toEqual(
        expect.arrayContaining(
          readyPods(w).map((p) => ({
            namespace: 'default',
            pod: p.metadata.name,
            service: SVC,
            container: 'vllm',
            endpoint: 'http',
          })),
        ),
      );
      expect(vllm.map((g) => g.targets[0]).sort()).toEqual(
        w.workloads
          .replicas()
          .map((r) => new URL(r.url).host)
          .sort(),
      );

      w.store.create(dcgmExporterDaemonSet());
      await waitFor('dcgm targets', () => last()?.['dcgm-exporter']?.length === 2);
      expect(statusOf(w.store, 'DaemonSet', 'nvidia-dcgm-exporter', 'gpu-operator')).toMatchObject({
        desiredNumberScheduled: 2,
        numberReady: 2,
        currentNumberScheduled: 2,
      });

      w.store.delete('ServiceMonitor', 'default', APP);
      await waitFor('no vLLM targets', () => last()?.vllm?.length === 0);
    });
  });

  describe('DaemonSets', () => {
    it('runs one Pod on each GPU node and follows the nodes as they come and go', async () => {
      // Prepare
      const w = await startWithDeployment(2);
      const exporterPods = () => w.store.list('Pod', { namespace: 'gpu-operator' });

      // Act
      w.store.create(dcgmExporterDaemonSet());
      await waitFor('2 exporter Pods', () => exporterPods().filter(isPodReady).length === 2);
      const onNodes = exporterPods().map((p) => (p.spec as { nodeName: string }).nodeName);
      scale(w, 1);
      await waitFor('1 exporter Pod', () => exporterPods().length === 1 && gpuNodes(w).length === 1);

      // Assess: never on the system node (no GPU label, and the GPU taint is what it tolerates).
      expect(onNodes).toHaveLength(2);
      expect(onNodes).not.toContain('ip-10-0-0-10.us-east-2.compute.internal');
      expect((exporterPods()[0]?.spec as { nodeName: string }).nodeName).toBe(gpuNodes(w)[0]?.metadata.name);
      await waitFor(
        'DaemonSet status for 1 node',
        () => statusOf(w.store, 'DaemonSet', 'nvidia-dcgm-exporter', 'gpu-operator')['desiredNumberScheduled'] === 1,
      );
      expect(statusOf(w.store, 'DaemonSet', 'nvidia-dcgm-exporter', 'gpu-operator')).toMatchObject({
        desiredNumberScheduled: 1,
        currentNumberScheduled: 1,
        numberMisscheduled: 0,
      });
    });
  });

  describe('k6 Jobs', () => {
    it('runs constant-arrival-rate load below capacity at the offered rate and completes the Job', async () => {
      // Prepare
      const w = await startWithDeployment(1);
      const rate = 20;

      // Act
      w.store.create(
        k6Job('load-20', {
          targetUrl: TARGET,
          model: TEST_MODEL,
          executor: 'constant-arrival-rate',
          rate: String(rate),
          durationSeconds: '5',
          maxTokens: '4',
          preAllocatedVUs: '5',
          maxVUs: '50',
        }),
      );
      const status = await finishedJob(w, 'load-20');

      // Assess
      expect(conditionOf(status, 'Complete')).toMatchObject({ status: 'True' });
      expect(status).toMatchObject({ succeeded: 1 });
      expect(status['completionTime']).toEqual(expect.any(String));
      const pod = podsOf(w.store, 'load-20')[0] as KubeObject;
      expect((pod.status as { phase: string }).phase).toBe('Succeeded');
      const summary = summaryOf(w, pod.metadata.name);
      expect(summary).toMatchObject({
        executor: 'constant-arrival-rate',
        rate,
        droppedIterations: 0,
        httpReqFailed: 0,
        iterations: 100,
      });
      // The run lasts the 5 s window plus the drain of its last requests (longer on a busy machine), never less.
      expect(summary.iterationsRate).toBeLessThanOrEqual(1.05 * rate);
      expect(summary.durationSeconds).toBeGreaterThanOrEqual(5);
      expect(summary.durationSeconds).toBeLessThanOrEqual(5 + summary.httpReqDurationMs.max / 1000 + 2);
      expect(w.logs.read('default', pod.metadata.name)).toMatch(/running \(0m0\d\.\ds\)/);
    });

    it('runs k6 in a container named k6 from a custom image (a k6 built with xk6-sse, from a private registry)', async () => {
      // Prepare
      const w = await startWithDeployment(1);
      const job = k6Job('custom-k6', {
        targetUrl: TARGET,
        model: TEST_MODEL,
        executor: 'constant-arrival-rate',
        rate: '10',
        durationSeconds: '2',
        maxTokens: '4',
        preAllocatedVUs: '5',
        maxVUs: '20',
      });
      const spec = job.spec as { template: { spec: { containers: Array<{ image: string }> } } };
      (spec.template.spec.containers[0] as { image: string }).image =
        '123456789012.dkr.ecr.eu-west-1.amazonaws.com/k6-sse:0.54.0';

      // Act
      w.store.create(job);
      const status = await finishedJob(w, 'custom-k6');

      // Assess
      expect(conditionOf(status, 'Complete')).toMatchObject({ status: 'True' });
      const pod = podsOf(w.store, 'custom-k6')[0] as KubeObject;
      expect(summaryOf(w, pod.metadata.name)).toMatchObject({
        executor: 'constant-arrival-rate',
        rate: 10,
        iterations: 20,
      });
    });

    it('reports dropped iterations when maxVUs are too few for the rate', async () => {
      // Prepare
      const w = await startWithDeployment(1);

      // Act
      w.store.create(
        k6Job('load-drops', {
          targetUrl: TARGET,
          model: TEST_MODEL,
          executor: 'constant-arrival-rate',
          rate: '40',
          durationSeconds: '2',
          maxTokens: '64',
          preAllocatedVUs: '1',
          maxVUs: '1',
        }),
      );
      await finishedJob(w, 'load-drops');

      // Assess
      const summary = summaryOf(w, (podsOf(w.store, 'load-drops')[0] as KubeObject).metadata.name);
      expect(summary.droppedIterations).toBeGreaterThan(0);
      expect(summary.iterations + summary.droppedIterations).toBe(80);
    });

    it('stops the emulation when its Job is deleted', async () => {
      // Prepare
      const w = await startWithDeployment(1);
      const replica = w.workloads.replicas()[0];
      w.store.create(
        k6Job('long-load', {
          targetUrl: TARGET,
          model: TEST_MODEL,
          rate: '10',
          durationSeconds: '120',
          maxTokens: '2',
        }),
      );
      await waitFor('load to reach the replica', () => (replica?.vllm.telemetry().promptTokensTotal ?? 0) > 0);

      // Act
      w.store.delete('Job', 'default', 'long-load', { propagationPolicy: 'Background' });
      await waitFor('the k6 Pod to go', () => podsOf(w.store, 'long-load').length === 0);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const afterDelete = replica?.vllm.telemetry().promptTokensTotal ?? 0;
      await new Promise((resolve) => setTimeout(resolve, 1_000));

      // Assess: no completion arrives any more (10/s would have sent ~10); the kubelet's /health probes do not count.
      expect(replica?.vllm.telemetry().promptTokensTotal ?? 0).toBe(afterDelete);
    });

    it.each([
      // The Service name does not resolve: the script fails in setup.
      { case: 'a target Service that does not exist', target: 'http://no-such-svc.default.svc:8000', exitCode: 107 },
      // A Service with no Ready Pod: every request gets 503.
      { case: 'a target Service without Ready Pods', target: 'http://lonely-svc.default.svc:8000', exitCode: 99 },
    ])('fails the Job (BackoffLimitExceeded) for $case', async ({ target, exitCode }) => {
      // Prepare
      world = await startTestWorld();
      const w = world;
      w.store.create(vllmService('lonely-svc', 'nobody'));
      await waitFor('the Service proxy', () => w.workloads.serviceUrl('default', 'lonely-svc'));

      // Act
      w.store.create(
        k6Job('doomed', {
          targetUrl: target,
          model: TEST_MODEL,
          executor: 'shared-iterations',
          vus: '1',
          iterations: '3',
        }),
      );
      const status = await finishedJob(w, 'doomed');

      // Assess
      expect(conditionOf(status, 'Failed')).toMatchObject({ status: 'True', reason: 'BackoffLimitExceeded' });
      expect(status).toMatchObject({ failed: 1 });
      const pod = podsOf(w.store, 'doomed')[0] as KubeObject;
      expect(pod.status).toMatchObject({
        phase: 'Failed',
        containerStatuses: [{ state: { terminated: { exitCode } } }],
      });
      expect(summaryOf(w, pod.metadata.name).iterations).toBe(exitCode === 99 ? 3 : 0);
    });

    it('completes a Job with another container (neither named k6 nor from a k6 image) at once', async () => {
      // Prepare
      world = await startTestWorld();
      const w = world;
      const job = k6Job('busybox', {});
      const spec = job.spec as { template: { spec: { containers: Array<{ name: string; image: string }> } } };
      Object.assign(spec.template.spec.containers[0] as object, { name: 'shell', image: 'busybox:1.36' });

      // Act
      w.store.create(job);
      const status = await finishedJob(w, 'busybox');

      // Assess
      expect(conditionOf(status, 'Complete')).toMatchObject({ status: 'True' });
      expect((podsOf(w.store, 'busybox')[0]?.status as { phase: string }).phase).toBe('Succeeded');
    });
  });
});
