import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shadowDeploymentName, stepQueries, type CalibrationReport } from '../shared/calibration/index.js';
import {
  CALIBRATION_ANNOTATIONS,
  causeMessage,
  EXECUTION_LABEL,
  SHADOW_LABEL,
} from '../shared/calibration/workflow/index.js';
import { scaledObject } from '../shared/keda/index.js';
import { KINDS, servicesSelecting, type KubeObject } from '../shared/kube/index.js';
import {
  readOutcome,
  startTwin,
  startTwinCalibration,
  twinMetricsSource,
  twinTarget,
  withTwinTarget,
  type Twin,
  type WorkflowOutcome,
} from '../sim/harness/index.js';
import { DEMO_SHAPE, demoProfile, sleep } from './helpers/twin.js';

// deploy.mode shadow, the default: the calibration saturates a copy of the Deployment while the production Deployment
// serves its users untouched. The demo twin serves production traffic through its Service (the profile's `traffic`)
// on its 2 replicas; KEDA keeps them at 2.

const USERS_RPS = 6;
const LONG = 300_000;

let twin: Twin;
let reportsDir: string;

/** The production Deployment's identity: what "untouched" compares. */
interface ProductionState {
  resourceVersion: string | undefined;
  replicas: number | undefined;
  pods: string[];
  annotations: string[];
}

async function productionState(): Promise<ProductionState> {
  const deployment = await twin.cluster.get({
    ...KINDS.deployment,
    namespace: twin.state.namespace,
    name: twin.state.deployment,
  });
  if (deployment === undefined) throw new Error('the twin lost its Deployment');
  const pods = await twin.cluster.listPods(twin.state.namespace);
  return {
    resourceVersion: deployment.metadata.resourceVersion,
    replicas: (deployment.spec as { replicas?: number }).replicas,
    pods: pods
      .filter((pod) => new RegExp(`^${twin.state.deployment}-[a-z0-9]+-[a-z0-9]+$`).test(pod.metadata.name))
      .map((pod) => `${pod.metadata.name}/${pod.metadata.uid ?? ''}`)
      .sort(),
    annotations: Object.keys(deployment.metadata.annotations ?? {}).filter((key) => key.startsWith('vllm-eks-pilot/')),
  };
}

/** Objects of the shadow copy still in the cluster (any execution's). */
async function shadowLeft(): Promise<string[]> {
  const left: string[] = [];
  for (const kind of [KINDS.deployment, KINDS.service, KINDS.serviceMonitor, KINDS.job, KINDS.configMap]) {
    const objects = await twin.cluster.list({ ...kind, namespace: twin.state.namespace });
    for (const object of objects)
      if (
        object.metadata.labels?.[SHADOW_LABEL] !== undefined ||
        object.metadata.labels?.[EXECUTION_LABEL] !== undefined
      )
        left.push(`${kind.kind} ${object.metadata.name}`);
  }
  return left;
}

/** The p95 end-to-end latency of a Deployment's Pods over a window, from the twin's Prometheus (AMP). */
async function p95(deployment: string, startMs: number, endMs: number): Promise<number> {
  const target = { ...twinTarget(twin.state), deployment };
  const query = stepQueries(target, (endMs - startMs) / 1000).p95E2e;
  const [sample] = await twinMetricsSource(twin.state).instant(query, { timeMs: endMs });
  if (sample === undefined) throw new Error(`no p95 for ${deployment} at ${new Date(endMs).toISOString()}`);
  return sample.value;
}

function input(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return withTwinTarget(
    {
      // deploy.mode left out: shadow is the default.
      request: { promptTokens: DEMO_SHAPE.promptTokens, maxTokens: DEMO_SHAPE.maxTokens },
      warmup: { requests: 10 },
      // 10 req/s holds on one demo replica; 60 req/s (capacity about 35) saturates it.
      plan: { rates: [10, 60], holdSeconds: 12, restSeconds: 1, earlyStop: { enabled: false } },
      scaledObject: { apply: true },
      rollout: { timeoutSeconds: 60, pollSeconds: 1 },
      readiness: { timeoutSeconds: 120, pollSeconds: 1 },
      ingestion: { timeoutSeconds: 60, pollSeconds: 1 },
      ...extra,
    },
    twin.state,
  );
}

describe('Workflow: deploy.mode shadow calibrates a copy and leaves production untouched', () => {
  beforeAll(async () => {
    twin = await startTwin({
      profile: {
        ...(await demoProfile()),
        traffic: {
          rateRps: USERS_RPS,
          promptTokens: DEMO_SHAPE.promptTokens,
          maxTokens: DEMO_SHAPE.maxTokens,
          variationFraction: 0,
          periodSeconds: 600,
        },
      },
      allowInstallPrometheus: false,
    });
    reportsDir = await mkdtemp(join(tmpdir(), 'vllm-pilot-shadow-'));
    await twin.cluster.apply(
      scaledObject({
        name: twin.state.deployment,
        namespace: twin.state.namespace,
        model: twin.state.model,
        ampWorkspaceUrl: twin.prometheus.url,
        authentication: false,
        minReplicaCount: 2,
        maxReplicaCount: 2,
      }),
    );
    // The users' latency settles over a few scrapes before it is the baseline.
    await sleep(15_000);
  }, 120_000);

  afterAll(async () => {
    await twin?.stop();
    if (reportsDir) await rm(reportsDir, { recursive: true, force: true });
  });

  describe('a whole run', () => {
    let before: ProductionState;
    let after: ProductionState;
    let baselineWindow: { startMs: number; endMs: number };
    let outcome: WorkflowOutcome;
    let report: CalibrationReport;
    let summary: string;
    /** While the load ran: the Services selecting the copy's Pods, and the copy's Pods. */
    let during: { selecting: string[]; copyPods: string[]; production: ProductionState } | undefined;
    let scaledObjectAfter: KubeObject | undefined;
    let left: string[];

    beforeAll(async () => {
      // Prepare
      const startMs = Date.now();
      baselineWindow = { startMs: startMs - 12_000, endMs: startMs };
      before = await productionState();
      const copyName = shadowDeploymentName(twin.state.deployment);

      // Act
      const calibration = await startTwinCalibration(twin.state, {
        input: input(),
        executionName: 'calib-shadow',
        reportsDir,
        waitScale: 0.25,
        retryIntervalMs: 10,
        onEvent: (event) => {
          if (event.type !== 'StateEntered' || event.state.name !== 'WatchLoadStep' || during !== undefined) return;
          during = { selecting: [], copyPods: [], production: before };
          void (async () => {
            const copy = await twin.cluster.get({
              ...KINDS.deployment,
              namespace: twin.state.namespace,
              name: copyName,
            });
            const pods = await twin.cluster.listPods(twin.state.namespace, { [SHADOW_LABEL]: twin.state.deployment });
            during = {
              selecting:
                copy === undefined ? [] : (await servicesSelecting(twin.cluster, copy)).map((s) => s.metadata.name),
              copyPods: pods.map((p) => p.metadata.name),
              production: await productionState(),
            };
          })();
        },
      });
      try {
        outcome = await calibration.run.result;
      } finally {
        calibration.close();
      }
      const read = await readOutcome(outcome);
      report = read.report;
      summary = read.stored.summary;
      after = await productionState();
      scaledObjectAfter = await twin.cluster.get({
        apiVersion: 'keda.sh/v1alpha1',
        kind: 'ScaledObject',
        namespace: twin.state.namespace,
        name: twin.state.deployment,
      });
      await sleep(2_000);
      left = await shadowLeft();
    }, LONG);

    it('succeeds, and says it measured the shadow copy', () => {
      // Assess
      expect(outcome).toMatchObject({ status: 'succeeded' });
      expect(report.provenance).toMatchObject({
        deployment: twin.state.deployment,
        measuredOn: shadowDeploymentName(twin.state.deployment),
      });
      expect(summary).toContain(`Measured on its shadow copy ${twin.state.deployment}-shadow`);
    });

    it("loads only the copy's Pods: no production Service selects them, and their names escape the target's matcher", () => {
      // Assess
      expect(during?.selecting).toEqual([shadowDeploymentName(twin.state.deployment)]);
      expect(during?.copyPods.length).toBe(1);
      for (const pod of during?.copyPods ?? [])
        expect(pod).not.toMatch(new RegExp(`^${twin.state.deployment}-[a-z0-9]+-[a-z0-9]+$`));
    });

    it('never touches the production Deployment: same resourceVersion, same Pods, no mark, during the run and after', () => {
      // Assess
      expect(before.pods).toHaveLength(2);
      expect(during?.production).toEqual(before);
      expect(after).toEqual(before);
      expect(after.annotations).toEqual([]);
    });

    it("keeps the users' p95 at its level while the copy saturates", async () => {
      // Assess
      const saturated = report.steps.find((s) => s.verdict.saturated);
      // The summary lists every step with its verdict and any repeat: what a failure here needs to be understood.
      if (saturated === undefined) throw new Error(`no step saturated the copy:\n${summary}`);
      const window = {
        startMs: Date.parse(saturated?.windowStart ?? ''),
        endMs: Date.parse(saturated?.windowEnd ?? ''),
      };
      const users = await p95(twin.state.deployment, window.startMs, window.endMs);
      const usersBefore = await p95(twin.state.deployment, baselineWindow.startMs, baselineWindow.endMs);
      const copy = await p95(shadowDeploymentName(twin.state.deployment), window.startMs, window.endMs);
      // Within a quarter of the level before the run (the twin's 2 CPUs also run k6 at 60 req/s).
      expect(Math.abs(users - usersBefore)).toBeLessThanOrEqual(0.25 * usersBefore);
      expect(copy).toBeGreaterThan(3 * users);
    });

    it("writes the thresholds into production's ScaledObject, which KEDA keeps running (never paused)", () => {
      // Assess
      expect(report.change).toMatchObject({ applied: true });
      const annotations = scaledObjectAfter?.metadata.annotations ?? {};
      expect(Object.keys(annotations).filter((k) => k.startsWith('autoscaling.keda.sh/paused'))).toEqual([]);
    });

    it('removes the copy, its Service and ServiceMonitor, and its Jobs and ConfigMaps at the cleanup', () => {
      // Assess
      expect(left).toEqual([]);
      expect(after.annotations).not.toContain(CALIBRATION_ANNOTATIONS.execution);
    });
  });

  it(
    'stopped in its load step (StopExecution): the ended-execution cleanup removes the copy; production is as before',
    async () => {
      // Prepare
      const before = await productionState();

      // Act
      const calibration = await startTwinCalibration(twin.state, {
        input: input({ plan: { rates: [20], holdSeconds: 30, restSeconds: 1 }, scaledObject: { apply: false } }),
        executionName: 'calib-shadow-stopped',
        reportsDir,
        waitScale: 0.25,
        retryIntervalMs: 10,
        onEvent: (event) => {
          if (event.type === 'StateEntered' && event.state.name === 'WatchLoadStep') calibration.run.abort();
        },
      });
      let outcome: WorkflowOutcome;
      try {
        outcome = await calibration.run.result;
      } finally {
        calibration.close();
      }
      await sleep(2_000);

      // Assess
      expect(outcome).toMatchObject({ status: 'aborted' });
      expect(await shadowLeft()).toEqual([]);
      expect(await productionState()).toEqual(before);
    },
    LONG,
  );
});

describe('Workflow: deploy.mode shadow without a free GPU', () => {
  let before: ProductionState;
  let outcome: WorkflowOutcome;

  beforeAll(async () => {
    // Prepare: the NodePool's limit is the 2 GPUs production already runs on.
    twin = await startTwin({
      profile: { ...(await demoProfile()), karpenter: { gpuLimit: 2 } },
      allowInstallPrometheus: false,
    });
    reportsDir = await mkdtemp(join(tmpdir(), 'vllm-pilot-shadow-gpu-'));
    before = await productionState();

    // Act
    const calibration = await startTwinCalibration(twin.state, {
      input: input({ rollout: { timeoutSeconds: 8, pollSeconds: 1 }, scaledObject: { apply: false } }),
      executionName: 'calib-shadow-no-gpu',
      reportsDir,
      waitScale: 0.25,
      retryIntervalMs: 10,
    });
    try {
      outcome = await calibration.run.result;
    } finally {
      calibration.close();
    }
  }, LONG);

  afterAll(async () => {
    await twin?.stop();
    if (reportsDir) await rm(reportsDir, { recursive: true, force: true });
  });

  it('fails with CalibrationShadowNoGpuError, giving the scheduler’s reason and the ways out', () => {
    // Assess
    expect(outcome).toMatchObject({ status: 'failed', error: 'CalibrationShadowNoGpuError' });
    const cause = causeMessage(outcome.status === 'failed' ? outcome.cause : '');
    expect(cause).toMatch(
      /found no free GPU within rollout\.timeoutSeconds \(8 s\): Pod vllm-inference-app-shadow-\S+ is Pending: Unschedulable: 0\/3 nodes are available: .*Insufficient nvidia\.com\/gpu/,
    );
    expect(cause).toContain('deploy.mode "adopt"');
  });

  it('leaves nothing behind and production as it was', async () => {
    // Assess
    expect(await shadowLeft()).toEqual([]);
    expect(await productionState()).toEqual(before);
  });
});
