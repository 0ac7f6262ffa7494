import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { access, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeClusterCommand, EKSClient } from '@aws-sdk/client-eks';
import { parse as parseYaml } from 'yaml';
import {
  K6_SUMMARY_MARKER,
  type K6Summary,
  k6SummarySchema,
  type KubeObject,
  type ObjectRef,
} from '../../shared/kube/index.js';
import {
  k6LoadJob,
  type K6LoadJobInputSpec,
  k6ScriptConfigMap,
  vllmServiceUrl,
} from '../../shared/kube/manifests/index.js';
import { ampTriggerAuthentication, SCALED_OBJECT_TRIGGERS, scaledObject } from '../../shared/keda/index.js';
import { TWIN_LOCAL_URL_ANNOTATION } from '../kube/controllers/ServiceController.js';
import { twinStateSchema } from './stateFile.js';
import { TWIN_CREDENTIALS } from './constants.js';
import type { Twin } from './twin.js';
import { measureCapacity, type RequestShape } from '../vllm/capacity.js';
import { httpRequest, postJson } from '../../test/helpers/http.js';
import {
  kubectl,
  type KubectlRun,
  kubectlRow,
  parseKubectlTables,
  requireKubectl,
} from '../../test/helpers/kubectl.js';
import { runCli } from '../../test/helpers/cli.js';
import { pollFor } from '../../test/helpers/poll.js';
import { startDemoTwin } from '../../test/helpers/twin.js';

// The twin as a cluster, end to end: real kubectl with the kubeconfigs the twin writes, the CLI's `render` piped
// into `kubectl apply`, k6 Jobs and KEDA through the product's own manifests and ClusterClient, and the state file.
// One twin per describe block; timeouts are guards against hanging, never speed requirements.

jest.setTimeout(180_000);

beforeAll(() => {
  requireKubectl();
});

/** A twin with a state file in a scratch folder, and kubectl bound to its kubeconfigs. */
interface ClusterFixture {
  twin: Twin;
  scratch: string;
  /** kubectl with the admin kubeconfig, or the read-only one. */
  kubectl(args: readonly string[], options?: { readOnly?: boolean; stdin?: string }): Promise<KubectlRun>;
  stop(): Promise<void>;
}

async function startCluster(overrides: { replicas?: number } = {}): Promise<ClusterFixture> {
  const scratch = await mkdtemp(join(tmpdir(), 'twin-cluster-'));
  const twin = await startDemoTwin(overrides, join(scratch, 'twin-state.json'));
  return {
    twin,
    scratch,
    kubectl: (args, options = {}) =>
      kubectl(args, {
        kubeconfig: options.readOnly ? twin.state.readOnlyKubeconfigPath : twin.state.kubeconfigPath,
        cacheDir: join(scratch, 'kube-cache'),
        ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
      }),
    stop: async () => {
      await twin.stop();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}

/** `kubectl get` that must succeed; returns its tables. */
async function getTables(fixture: ClusterFixture, args: readonly string[]) {
  const run = await fixture.kubectl(['get', ...args]);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  return parseKubectlTables(run.stdout);
}

/** `vllm-pilot render <kind> ...` as a user runs it from a clone (`node bin/vllm-pilot.js`). */
async function renderManifest(kind: string, sets: readonly string[]): Promise<string> {
  const result = await runCli(['render', kind, ...sets.flatMap((set) => ['--set', set])]);
  if (result.code !== 0) throw new Error(`vllm-pilot render ${kind} failed: ${result.stderr}`);
  return result.stdout;
}

function jobRef(namespace: string, name: string): ObjectRef {
  return { apiVersion: 'batch/v1', kind: 'Job', namespace, name };
}

interface JobStatus {
  succeeded?: number;
  failed?: number;
  conditions?: Array<{ type: string; status: string }>;
}

/** A finished k6 Job as the product reads it: status, Pod, log, and the parsed summary line. */
interface K6Outcome {
  status: JobStatus;
  log: string;
  summary: K6Summary;
}

/** Applies a k6 load Job through the product's client, waits for it to finish, and reads its summary. */
async function runK6LoadJob(twin: Twin, spec: K6LoadJobInputSpec & { durationSeconds: number }): Promise<K6Outcome> {
  const job = k6LoadJob(spec);
  const namespace = job.metadata.namespace ?? 'default';
  await twin.cluster.apply(job);
  const status = await pollFor(
    `Job ${job.metadata.name} finished`,
    async () => {
      const live = await twin.cluster.get(jobRef(namespace, job.metadata.name));
      const s = (live?.status ?? {}) as JobStatus;
      return (s.succeeded ?? 0) + (s.failed ?? 0) > 0 ? s : undefined;
    },
    { timeoutMs: spec.durationSeconds * 1000 + 120_000, intervalMs: 500 },
  );
  const pods = await twin.cluster.listPods(namespace, { 'job-name': job.metadata.name });
  expect(pods).toHaveLength(1);
  const log = await twin.cluster.readPodLog(namespace, pods[0]?.metadata.name ?? '');
  const line = log.split('\n').find((l) => l.startsWith(K6_SUMMARY_MARKER));
  if (line === undefined) throw new Error(`no ${K6_SUMMARY_MARKER.trim()} line in the log of Job ${job.metadata.name}`);
  return { status, log, summary: k6SummarySchema.parse(JSON.parse(line.slice(K6_SUMMARY_MARKER.length))) };
}

const QUANTITY = /^(\d+(?:\.\d+)?)(m|k|M|G|T|P|E)?$/;
const QUANTITY_SCALE: Record<string, number> = { m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/** A Kubernetes quantity as the HPA status writes metric values (`13`, `66500m`, `1500k`). */
function parseQuantity(text: string): number {
  const match = QUANTITY.exec(text);
  if (!match) throw new Error(`"${text}" is not a decimal-SI quantity such as 13, 66500m or 2k`);
  return Number(match[1]) * (QUANTITY_SCALE[match[2] ?? ''] ?? Number.NaN);
}

describe('Function: startTwin (the twin as a cluster)', () => {
  describe('kubectl with the kubeconfigs of the state file (demo profile, 2 replicas)', () => {
    let fixture: ClusterFixture;
    let twin: Twin;

    beforeAll(async () => {
      fixture = await startCluster();
      twin = fixture.twin;
    });

    afterAll(async () => {
      await fixture?.stop();
    });

    it('lists the Deployment READY 2/2, its Pods Running 1/1 and the Service', async () => {
      // Act
      const tables = await getTables(fixture, ['deployments,pods,services,jobs,scaledobjects,hpa', '-A']);

      // Assess
      const { namespace, deployment, service } = twin.state;
      expect(kubectlRow(tables, `deployment.apps/${deployment}`)).toMatchObject({
        NAMESPACE: namespace,
        READY: '2/2',
        'UP-TO-DATE': '2',
        AVAILABLE: '2',
      });
      const pods = twin.replicas().map((replica) => replica.pod);
      expect(pods).toHaveLength(2);
      for (const pod of pods) {
        expect({ pod, row: kubectlRow(tables, `pod/${pod}`) }).toMatchObject({
          pod,
          row: { NAMESPACE: namespace, READY: '1/1', STATUS: 'Running', RESTARTS: '0' },
        });
      }
      expect(kubectlRow(tables, `service/${service}`)).toMatchObject({
        NAMESPACE: namespace,
        TYPE: 'ClusterIP',
        'PORT(S)': '8000/TCP',
      });
      expect(kubectlRow(tables, `service/${service}`)?.['CLUSTER-IP']).toMatch(/^10\.100\.\d+\.\d+$/);
      // Nothing autoscales the Deployment yet.
      expect(
        tables.flatMap((table) => table.rows).filter((row) => /^(scaledobject|horizontalpod)/.test(row['NAME'] ?? '')),
      ).toEqual([]);
    });

    it('lists the GPU nodes the vLLM Pods run on', async () => {
      // Act
      const tables = await getTables(fixture, [
        'nodes',
        '-L',
        'node.kubernetes.io/instance-type,nvidia.com/gpu.product',
      ]);

      // Assess: one L40S node (g6e.4xlarge, the guide's) per replica, Ready, plus the system node for add-ons and Jobs.
      const gpuNodes = tables[0]?.rows.filter((row) => row['GPU.PRODUCT'] !== '') ?? [];
      expect(gpuNodes.map((row) => row['NAME']).sort()).toEqual(
        twin
          .replicas()
          .map((r) => r.node)
          .sort(),
      );
      for (const row of gpuNodes) {
        expect(row).toMatchObject({ STATUS: 'Ready', 'INSTANCE-TYPE': 'g6e.4xlarge', 'GPU.PRODUCT': 'NVIDIA-L40S' });
      }
      expect(tables[0]?.rows).toHaveLength(gpuNodes.length + 1);
    });

    it("lists the product's ScaledObject and its HPA, whose TARGETS show both triggers, once applied", async () => {
      // Prepare: the guide's ScaledObject (queue 25 per Pod, p95 5 s, 1-5 Pods), querying the twin's Prometheus.
      const { namespace, deployment } = twin.state;
      await twin.cluster.apply(ampTriggerAuthentication({ namespace }));
      await twin.cluster.apply(
        scaledObject({
          name: deployment,
          namespace,
          model: twin.state.model,
          ampWorkspaceUrl: twin.state.prometheusUrl,
          region: twin.state.region,
        }),
      );
      // The HPA shows values once KEDA has polled both triggers.
      await pollFor('the HPA status with both metric values', async () => {
        const hpa = await twin.cluster.get({
          apiVersion: 'autoscaling/v2',
          kind: 'HorizontalPodAutoscaler',
          namespace,
          name: deployment,
        });
        const metrics = (hpa?.status as { currentMetrics?: Array<{ external?: { current?: object } }> } | undefined)
          ?.currentMetrics;
        return metrics?.length === 2 && metrics.every((m) => Object.keys(m.external?.current ?? {}).length > 0)
          ? true
          : undefined;
      });

      // Act
      const tables = await getTables(fixture, ['deployments,pods,services,jobs,scaledobjects,hpa', '-A']);

      // Assess
      expect(kubectlRow(tables, `scaledobject.keda.sh/${deployment}`)).toMatchObject({
        NAMESPACE: namespace,
        SCALETARGETKIND: 'apps/v1.Deployment',
        SCALETARGETNAME: deployment,
        MIN: '1',
        MAX: '5',
        READY: 'True',
        TRIGGERS: 'prometheus',
        AUTHENTICATIONS: 'keda-trigger-auth-aws-credentials',
      });
      expect(kubectlRow(tables, `horizontalpodautoscaler.autoscaling/${deployment}`)).toMatchObject({
        NAMESPACE: namespace,
        REFERENCE: `Deployment/${deployment}`,
        // The queue per Pod (AverageValue), the p95 as a whole (Value: kubectl prints no "(avg)").
        TARGETS: '0/25 (avg), 0/5',
        MINPODS: '1',
        MAXPODS: '5',
        REPLICAS: '2',
      });
    });

    it('applies `vllm-pilot render deployment` and `render service`: Pods Ready, the Service answers, re-apply unchanged', async () => {
      // Prepare
      const sets = ['name=chat', 'model=chat-model', 'maxModelLen=4096'];
      const manifests = await Promise.all([renderManifest('deployment', sets), renderManifest('service', sets)]);

      // Act
      const created = await Promise.all(manifests.map((stdin) => fixture.kubectl(['apply', '-f', '-'], { stdin })));
      const pod = await pollFor('a Ready Pod of the chat Deployment', async () => {
        const tables = await getTables(fixture, ['pods', '-l', 'app=chat']);
        const rows = tables[0]?.rows ?? [];
        return rows.length === 1 && rows[0]?.['READY'] === '1/1' && rows[0]['STATUS'] === 'Running'
          ? rows[0]
          : undefined;
      });
      const urlRun = await fixture.kubectl([
        'get',
        'service',
        'chat-svc',
        '-o',
        `jsonpath={.metadata.annotations.${TWIN_LOCAL_URL_ANNOTATION.replace(/\./g, '\\.')}}`,
      ]);
      const answer = await postJson(`${urlRun.stdout.trim()}/v1/completions`, {
        model: 'chat-model',
        prompt: 'Say hello to the cluster.',
        max_tokens: 8,
      });
      const again = await Promise.all(manifests.map((stdin) => fixture.kubectl(['apply', '-f', '-'], { stdin })));

      // Assess
      expect(created.map((run) => ({ code: run.code, stdout: run.stdout.trim() }))).toEqual([
        { code: 0, stdout: 'deployment.apps/chat created' },
        { code: 0, stdout: 'service/chat-svc created' },
      ]);
      expect(pod['NAME']).toMatch(/^chat-[a-z0-9]+-[a-z0-9]{5}$/);
      expect(urlRun.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(answer.status).toBe(200);
      expect((JSON.parse(answer.text) as { model?: string }).model).toBe('chat-model');
      expect(again.map((run) => ({ code: run.code, stdout: run.stdout.trim() }))).toEqual([
        { code: 0, stdout: 'deployment.apps/chat unchanged' },
        { code: 0, stdout: 'service/chat-svc unchanged' },
      ]);
    });

    it('refuses `kubectl delete` with the read-only kubeconfig and keeps the Deployment', async () => {
      // Act
      const read = await fixture.kubectl(['get', 'deployment', twin.state.deployment], { readOnly: true });
      const deleted = await fixture.kubectl(['delete', 'deployment', twin.state.deployment], { readOnly: true });

      // Assess
      expect(read.code).toBe(0);
      expect(deleted.code).not.toBe(0);
      expect(deleted.stderr).toMatch(/forbidden/i);
      const tables = await getTables(fixture, ['deployment', twin.state.deployment]);
      expect(kubectlRow(tables, twin.state.deployment)?.['READY']).toBe('2/2');
    });
  });

  describe("k6 Jobs through the product's manifests and ClusterClient (demo profile, 2 replicas)", () => {
    /** A short answer keeps the tail of in-flight requests small next to the run, so the rate is measurable. */
    const SHAPE: RequestShape = { promptTokens: 35, maxTokens: 16 };
    let fixture: ClusterFixture;
    let twin: Twin;
    let target: Pick<K6LoadJobInputSpec, 'namespace' | 'targetUrl' | 'model' | 'promptTokens' | 'maxTokens'>;

    beforeAll(async () => {
      fixture = await startCluster();
      twin = fixture.twin;
      const { namespace, deployment, model } = twin.state;
      await twin.cluster.apply(k6ScriptConfigMap({ namespace }));
      target = { namespace, targetUrl: vllmServiceUrl({ name: deployment, namespace }), model, ...SHAPE };
    });

    afterAll(async () => {
      await fixture?.stop();
    });

    it('offers half the capacity for 20 s: every iteration inside the window, the run ends with its slowest request, nothing dropped or failed', async () => {
      // Prepare: R = 50 % of (replicas x one replica's capacity for the shape), from the engine model.
      const capacityRps = measureCapacity(twin.profile, SHAPE).capacityRps;
      const rate = Math.round(0.5 * twin.profile.replicas * capacityRps);
      const durationSeconds = 20;

      // Act
      const { status, summary } = await runK6LoadJob(twin, {
        ...target,
        name: 'k6-half-capacity',
        rate,
        durationSeconds,
      });

      // Assess
      expect(status).toMatchObject({ succeeded: 1 });
      expect(status.conditions).toContainEqual(expect.objectContaining({ type: 'Complete', status: 'True' }));
      expect(summary).toMatchObject({
        executor: 'constant-arrival-rate',
        rate,
        droppedIterations: 0,
        httpReqFailed: 0,
      });
      expect(Math.abs(summary.iterations - rate * durationSeconds)).toBeLessThanOrEqual(1);
      // k6's iteration rate counts the whole run: the 20 s of arrivals and the drain of the requests still in flight.
      // On a busy machine (the CI runs several twins on 2 CPUs) the drain stretches with the latency, so the run is
      // bounded by the window plus its slowest request, not by a fixed 5 %. A generator that fell behind its
      // schedule would end later than that; one that sent too fast would beat the window.
      expect(summary.iterationsRate).toBeLessThanOrEqual(1.05 * rate);
      expect(summary.durationSeconds).toBeGreaterThanOrEqual(durationSeconds);
      expect(summary.durationSeconds).toBeLessThanOrEqual(durationSeconds + summary.httpReqDurationMs.max / 1000 + 2);
    });

    it('drops iterations when 2 VUs cannot carry the rate', async () => {
      // Prepare: a request takes at least maxTokens decode steps of decodeStepMs.base, so 2 VUs carry at most
      // 2 / (maxTokens x base) requests per second; offer five times that.
      const carryRps = (2 * 1000) / (SHAPE.maxTokens * twin.profile.engine.decodeStepMs.base);
      const rate = Math.ceil(5 * carryRps);
      const durationSeconds = 5;

      // Act
      const { status, log, summary } = await runK6LoadJob(twin, {
        ...target,
        name: 'k6-two-vus',
        rate,
        durationSeconds,
        preAllocatedVUs: 1,
        maxVUs: 2,
      });

      // Assess
      expect(status).toMatchObject({ succeeded: 1 });
      expect(summary.droppedIterations).toBeGreaterThan(0);
      expect(summary.httpReqFailed).toBe(0);
      // Every planned iteration either ran or was dropped, as k6 counts them.
      expect(Math.abs(summary.iterations + summary.droppedIterations - rate * durationSeconds)).toBeLessThanOrEqual(1);
      expect(log).toContain('Insufficient VUs, reached 2 active VUs');
    });

    it('removes the Pod of a running Job deleted with Background propagation', async () => {
      // Prepare: a long, gentle run, deleted while its Pod runs.
      const job = k6LoadJob({ ...target, name: 'k6-doomed', rate: 1, durationSeconds: 120 });
      const namespace = twin.state.namespace;
      await twin.cluster.apply(job);
      await pollFor('the k6 Pod running', async () => {
        const pods = await twin.cluster.listPods(namespace, { 'job-name': 'k6-doomed' });
        return pods.some((pod) => (pod.status as { phase?: string } | undefined)?.phase === 'Running')
          ? true
          : undefined;
      });

      // Act
      const deleted = await twin.cluster.delete(jobRef(namespace, 'k6-doomed'), { propagationPolicy: 'Background' });

      // Assess
      expect(deleted).toBe(true);
      await pollFor('the k6 Pod gone', async () => {
        const pods = await twin.cluster.listPods(namespace, { 'job-name': 'k6-doomed' });
        return pods.length === 0 ? true : undefined;
      });
      expect(await twin.cluster.get(jobRef(namespace, 'k6-doomed'))).toBeUndefined();
    });
  });

  describe('KEDA scaling the Deployment under k6 load (demo profile, 1 replica)', () => {
    /** The guide's request shape (the k6 script's): a ~35-token prompt, max_tokens 100. */
    const SHAPE: RequestShape = { promptTokens: 35, maxTokens: 100 };
    const MAX_REPLICAS = 4;
    const QUEUE_THRESHOLD = 5;
    const UP_PERIOD_MS = 4_000;
    const DOWN_PERIOD_MS = 4_000;
    const DOWN_WINDOW_MS = 6_000;
    /** The few milliseconds between KEDA's decision time and the watch event that records it. */
    const SLACK_MS = 100;

    interface Change {
      atMs: number;
      replicas: number;
    }
    interface QueueReading {
      atMs: number;
      /** Waiting requests summed over the Pods, as KEDA read them (average per Pod x current replicas). */
      waiting: number;
    }

    let fixture: ClusterFixture;
    let twin: Twin;
    const timeline: Change[] = [];
    const readings: QueueReading[] = [];
    let hpaAtPeak: Record<string, string> | undefined;
    let loadRate = 0;
    let k6: K6Outcome;

    beforeAll(async () => {
      fixture = await startCluster({ replicas: 1 });
      twin = fixture.twin;
      const { namespace, deployment, model } = twin.state;

      // The product's ScaledObject; the generator has no input for `behavior`, so the guide's windows and periods
      // are shortened here before applying. The latency guardrail is set out of reach (60 s): its 1-minute rate
      // window would otherwise hold Pods well after the load, and this test is about the queue trigger.
      const so = scaledObject({
        name: deployment,
        namespace,
        model,
        ampWorkspaceUrl: twin.state.prometheusUrl,
        region: twin.state.region,
        minReplicaCount: 1,
        maxReplicaCount: MAX_REPLICAS,
        pollingInterval: 1,
        queueThreshold: QUEUE_THRESHOLD,
        latencyThresholdSeconds: 60,
      }) as KubeObject & { spec: { advanced: { horizontalPodAutoscalerConfig: { behavior: unknown } } } };
      so.spec.advanced.horizontalPodAutoscalerConfig.behavior = {
        scaleUp: {
          stabilizationWindowSeconds: 2,
          policies: [{ type: 'Pods', value: 1, periodSeconds: UP_PERIOD_MS / 1000 }],
          selectPolicy: 'Max',
        },
        scaleDown: {
          stabilizationWindowSeconds: DOWN_WINDOW_MS / 1000,
          policies: [{ type: 'Pods', value: 1, periodSeconds: DOWN_PERIOD_MS / 1000 }],
          selectPolicy: 'Min',
        },
      };

      // Watches give the exact moment of each change (a 250 ms poll would blur the 4 s spacing being checked).
      timeline.push({ atMs: Date.now(), replicas: twin.profile.replicas });
      const unwatchDeployment = twin.store.watch('Deployment', (event) => {
        if (event.object.metadata.name !== deployment || event.object.metadata.namespace !== namespace) return;
        const replicas = (event.object.spec as { replicas?: number } | undefined)?.replicas;
        if (replicas !== undefined && replicas !== timeline.at(-1)?.replicas)
          timeline.push({ atMs: Date.now(), replicas });
      });
      const unwatchHpa = twin.store.watch('HorizontalPodAutoscaler', (event) => {
        if (event.object.metadata.name !== deployment) return;
        const status = event.object.status as
          | { currentReplicas?: number; currentMetrics?: Array<{ external?: { current?: { averageValue?: string } } }> }
          | undefined;
        const average = status?.currentMetrics?.[SCALED_OBJECT_TRIGGERS.queueDepth]?.external?.current?.averageValue;
        if (average === undefined || status?.currentReplicas === undefined) return;
        readings.push({ atMs: Date.now(), waiting: parseQuantity(average) * status.currentReplicas });
      });

      try {
        await twin.cluster.apply(ampTriggerAuthentication({ namespace }));
        await twin.cluster.apply(so);
        await twin.cluster.apply(k6ScriptConfigMap({ namespace }));
        // 2.5 x what the one starting replica can serve: the queue grows until more Pods take their share.
        loadRate = Math.round(2.5 * measureCapacity(twin.profile, SHAPE).capacityRps);
        const load = runK6LoadJob(twin, {
          name: 'k6-keda',
          namespace,
          targetUrl: vllmServiceUrl({ name: deployment, namespace }),
          model,
          ...SHAPE,
          rate: loadRate,
          durationSeconds: 20,
        });
        // Awaited below; marked handled so a failure while waiting for the peak is not also an unhandled rejection.
        load.catch(() => undefined);
        // What `kubectl get hpa` shows while the Deployment is at its largest.
        await pollFor(
          'the Deployment at its maximum',
          () => (timeline.at(-1)?.replicas === MAX_REPLICAS ? true : undefined),
          {
            timeoutMs: 90_000,
          },
        );
        // The HPA's REPLICAS (status.currentReplicas) catches up with the Deployment at KEDA's next poll.
        hpaAtPeak = await pollFor('the HPA reporting 4 current replicas', async () => {
          const row = kubectlRow(await getTables(fixture, ['hpa', deployment]), deployment);
          return row?.['REPLICAS'] === String(MAX_REPLICAS) ? row : undefined;
        });
        k6 = await load;
        await pollFor(
          'the Deployment back at minReplicaCount',
          () => (timeline.length > 1 && timeline.at(-1)?.replicas === 1 ? true : undefined),
          { timeoutMs: 120_000 },
        );
      } finally {
        unwatchDeployment();
        unwatchHpa();
      }
    });

    afterAll(async () => {
      await fixture?.stop();
    });

    it('ran the load through the Service without failures', () => {
      // Assess
      expect(k6.status).toMatchObject({ succeeded: 1 });
      expect(k6.summary).toMatchObject({ rate: loadRate, httpReqFailed: 0 });
    });

    it('shows the HPA with its TARGETS column while the queue is high', () => {
      // Assess: the queue per Pod against 5, the p95 latency as a whole against 60 s.
      expect(hpaAtPeak?.['TARGETS']).toMatch(/^\d+(\.\d+)?[mk]?\/5 \(avg\), \d+(\.\d+)?[mk]?\/60$/);
      expect(parseQuantity(hpaAtPeak?.['TARGETS']?.split('/')[0] ?? '')).toBeGreaterThan(0);
      expect(hpaAtPeak).toMatchObject({ MINPODS: '1', MAXPODS: String(MAX_REPLICAS), REPLICAS: String(MAX_REPLICAS) });
    });

    it('rises one Pod at a time, never more than 1 within 4 s, never above 4', () => {
      // Prepare
      const peakAt = timeline.findIndex((change) => change.replicas === MAX_REPLICAS);
      const values = timeline.map((change) => change.replicas);

      // Assess
      expect(values[0]).toBe(1);
      expect(Math.max(...values)).toBe(MAX_REPLICAS);
      expect(values.slice(0, peakAt + 1)).toEqual([1, 2, 3, 4]);
      const tooFast = timeline.flatMap((earlier, i) =>
        timeline
          .slice(i + 1)
          .filter(
            (later) => later.atMs - earlier.atMs < UP_PERIOD_MS - SLACK_MS && later.replicas - earlier.replicas > 1,
          )
          .map((later) => ({ from: earlier, to: later })),
      );
      expect(tooFast).toEqual([]);
    });

    it('falls to minReplicaCount one Pod per 4 s, the first fall 6 s after the queue last asked for 4 Pods', () => {
      // Prepare: the falls after the last time the Deployment was at its largest.
      const lastPeak = timeline.findLastIndex((change) => change.replicas === MAX_REPLICAS);
      const falls = timeline.slice(lastPeak + 1);
      const firstFall = falls[0];
      // A reading asks for 4 Pods while ceil(waiting / threshold) >= 4, i.e. waiting > 3 x threshold.
      const lastAskedForMax = readings
        .filter((r) => r.atMs < (firstFall?.atMs ?? 0) && r.waiting > (MAX_REPLICAS - 1) * QUEUE_THRESHOLD)
        .at(-1);

      // Assess: one Pod at a time down to 1, spaced by the scale-down policy.
      expect(falls.map((change) => change.replicas)).toEqual([3, 2, 1]);
      const gaps = falls.slice(1).map((change, i) => change.atMs - (falls[i]?.atMs ?? 0));
      expect(gaps.filter((gap) => gap < DOWN_PERIOD_MS - SLACK_MS)).toEqual([]);
      // The scale-down stabilization window: no Pod goes while a reading of the last 6 s still asked for it.
      expect(lastAskedForMax).toBeDefined();
      const waited = (firstFall?.atMs ?? 0) - (lastAskedForMax?.atMs ?? 0);
      expect(waited).toBeGreaterThanOrEqual(DOWN_WINDOW_MS - SLACK_MS);
      // By the first fall KEDA had read an emptying queue: fewer than 3 x threshold requests waiting.
      const lastBeforeFall = readings.filter((r) => r.atMs < (firstFall?.atMs ?? 0)).at(-1);
      expect(lastBeforeFall?.waiting).toBeLessThanOrEqual((MAX_REPLICAS - 1) * QUEUE_THRESHOLD);
    });
  });

  describe('the state file written by startTwin({ stateFile }) (demo profile, 1 replica)', () => {
    let fixture: ClusterFixture;
    let stateText: string;

    beforeAll(async () => {
      fixture = await startCluster({ replicas: 1 });
      stateText = await readFile(join(fixture.scratch, 'twin-state.json'), 'utf8');
    });

    afterAll(async () => {
      await fixture?.stop();
    });

    it('names the https API server, two kubeconfigs readable only by the owner, the Service and the EKS endpoint', async () => {
      // Act
      const state = twinStateSchema.parse(JSON.parse(stateText));
      const modes = await Promise.all(
        [state.kubeconfigPath, state.readOnlyKubeconfigPath].map(async (path) => (await stat(path)).mode & 0o777),
      );
      const kubeconfig = parseYaml(await readFile(state.kubeconfigPath, 'utf8')) as {
        clusters: Array<{ cluster: { server: string } }>;
      };
      const models = await httpRequest(`${state.serviceUrl}/v1/models`);
      const eks = new EKSClient({
        region: state.region,
        endpoint: state.aws.eksEndpoint,
        credentials: TWIN_CREDENTIALS,
      });
      const described = await eks.send(new DescribeClusterCommand({ name: state.clusterName }));
      eks.destroy();

      // Assess
      expect(new URL(state.kubeApiUrl).protocol).toBe('https:');
      expect(state.kubeconfigPath).not.toBe(state.readOnlyKubeconfigPath);
      expect(modes).toEqual([0o600, 0o600]);
      expect(kubeconfig.clusters.map((c) => c.cluster.server)).toEqual([state.kubeApiUrl]);
      expect(models.status).toBe(200);
      expect((JSON.parse(models.text) as { data: Array<{ id: string }> }).data.map((m) => m.id)).toContain(state.model);
      expect(described.cluster).toMatchObject({ name: state.clusterName, status: 'ACTIVE' });
    });

    it('removes both kubeconfig files when the twin stops', async () => {
      // Prepare
      const state = twinStateSchema.parse(JSON.parse(stateText));

      // Act
      await fixture.twin.stop();

      // Assess
      for (const path of [state.kubeconfigPath, state.readOnlyKubeconfigPath]) {
        await expect(access(path)).rejects.toMatchObject({ code: 'ENOENT' });
      }
    });
  });
});
