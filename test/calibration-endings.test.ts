import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CALIBRATION_ANNOTATIONS,
  EXECUTION_LABEL,
  executionNames,
  type EndedExecutionCleanup,
} from '../shared/calibration/workflow/index.js';
import { KEDA_PAUSED_REPLICAS_ANNOTATION, pauseScaledObject, scaledObject } from '../shared/keda/index.js';
import type { KubeObject } from '../shared/kube/index.js';
import {
  startTwinCalibration,
  sweepTwinLeases,
  type Twin,
  TWIN_CLUSTER,
  TWIN_REGION,
  type WorkflowOutcome,
} from '../sim/harness/index.js';
import { DEMO_SHAPE, startDemoTwin } from './helpers/twin.js';

// Step Functions runs no Catch when an execution is stopped or times out. These tests stop the calibration on the
// twin in each of its working states and check that the ended-execution rule (the local runner delivers the same
// status-change event as EventBridge) leaves the cluster as the run found it; and that the lease sweep releases a
// target whose execution ended without any cleanup.

const NAMESPACE = 'default';
const LONG = 300_000;
let twin: Twin;
let reportsDir: string;

/** What a calibration may change on its target, read from the cluster. */
interface TargetState {
  replicas: number | undefined;
  deploymentAnnotations: Record<string, string>;
  scaledObjectSpec: unknown;
  scaledObjectAnnotations: Record<string, string>;
}

async function targetState(): Promise<TargetState> {
  const deployment = await twin.cluster.get({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    namespace: NAMESPACE,
    name: twin.profile.deployment,
  });
  const scaled = await twin.cluster.get({
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'ScaledObject',
    namespace: NAMESPACE,
    name: twin.profile.deployment,
  });
  // The last-calibration record is left on purpose (the next calibration reads it), so it is not compared.
  const { [CALIBRATION_ANNOTATIONS.lastCalibration]: _last, ...annotations } = deployment?.metadata.annotations ?? {};
  return {
    replicas: (deployment?.spec as { replicas?: number } | undefined)?.replicas,
    deploymentAnnotations: annotations,
    scaledObjectSpec: scaled?.spec,
    scaledObjectAnnotations: scaled?.metadata.annotations ?? {},
  };
}

async function labelled(executionName: string): Promise<string[]> {
  const labelSelector = { [EXECUTION_LABEL]: executionNames(executionName).label };
  const names = (objects: KubeObject[]) => objects.map((o) => `${o.kind}/${o.metadata.name}`);
  return [
    ...names(await twin.cluster.list({ apiVersion: 'batch/v1', kind: 'Job', namespace: NAMESPACE, labelSelector })),
    ...names(await twin.cluster.list({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NAMESPACE, labelSelector })),
  ];
}

function input(): Record<string, unknown> {
  return {
    target: {
      cluster: TWIN_CLUSTER,
      region: TWIN_REGION,
      namespace: NAMESPACE,
      deployment: twin.profile.deployment,
      model: twin.profile.model,
      ampWorkspaceUrl: twin.prometheus.url,
    },
    // adopt: the mode that pauses KEDA and scales the target, whose every change an ending must undo.
    deploy: { mode: 'adopt' },
    testReplicas: 1,
    request: { promptTokens: DEMO_SHAPE.promptTokens, maxTokens: DEMO_SHAPE.maxTokens },
    warmup: { requests: 10 },
    plan: { rates: [10, 40], holdSeconds: 4, restSeconds: 1 },
    rollout: { timeoutSeconds: 60, pollSeconds: 1 },
    readiness: { timeoutSeconds: 120, pollSeconds: 1 },
  };
}

describe('Workflow: every ending of a calibration leaves the cluster as it was', () => {
  beforeAll(async () => {
    twin = await startDemoTwin();
    reportsDir = await mkdtemp(join(tmpdir(), 'vllm-pilot-endings-'));
    // KEDA keeps the Deployment at 2 replicas, as a production ScaledObject would; the calibration pauses it at 1.
    await twin.cluster.apply(
      scaledObject({
        name: twin.profile.deployment,
        namespace: NAMESPACE,
        model: twin.profile.model,
        ampWorkspaceUrl: twin.prometheus.url,
        authentication: false,
        minReplicaCount: 2,
        maxReplicaCount: 2,
      }),
    );
  }, 120_000);

  afterAll(async () => {
    await twin?.stop();
    if (reportsDir) await rm(reportsDir, { recursive: true, force: true });
  });

  /** Runs a calibration and stops it (StopExecution) when it enters `stateName`; what the target looked like then. */
  async function stopIn(
    stateName: string,
    name: string,
  ): Promise<{ outcome: WorkflowOutcome; held: TargetState | undefined }> {
    let held: TargetState | undefined;
    const calibration = await startTwinCalibration(twin.state, {
      input: input(),
      executionName: name,
      reportsDir,
      waitScale: 0.25,
      retryIntervalMs: 10,
      onEvent: (event) => {
        if (event.type !== 'StateEntered' || event.state.name !== stateName) return;
        // The console's StopExecution, while the state runs.
        void targetState().then((state) => {
          held = state;
          calibration.run.abort();
        });
      },
    });
    try {
      return { outcome: await calibration.run.result, held };
    } finally {
      calibration.close();
    }
  }

  /** Long enough for a task that was running at the stop to finish (the demo's tasks take well under a second). */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1_500));

  describe('stopped in every state that holds the target', () => {
    /** The states a whole run enters from Deploy to Cleanup, in order (Deploy marks the target, Cleanup frees it). */
    let holding: string[] = [];

    beforeAll(async () => {
      const entered: string[] = [];
      const calibration = await startTwinCalibration(twin.state, {
        input: input(),
        executionName: 'calib-reference-run',
        reportsDir,
        waitScale: 0.25,
        retryIntervalMs: 10,
        onEvent: (event) => {
          if (event.type === 'StateEntered' && !entered.includes(event.state.name)) entered.push(event.state.name);
        },
      });
      try {
        await calibration.run.result;
      } finally {
        calibration.close();
      }
      holding = entered.slice(entered.indexOf('Deploy'), entered.indexOf('Cleanup'));
    }, LONG);

    it('a whole run enters the states of each kind of work: rollout, warmup, readiness, load, measurement, report', () => {
      // Assess
      expect(holding).toEqual(
        expect.arrayContaining(['Deploy', 'CheckRollout', 'CheckWarmup', 'ReadinessGate', 'StartLoadStep']),
      );
      expect(holding).toEqual(expect.arrayContaining(['WatchLoadStep', 'AwaitStepData', 'MeasureStep', 'StoreReport']));
    });

    it(
      'each stop ends ABORTED with the target held, and leaves replicas, KEDA and annotations as before, no Job or ConfigMap',
      async () => {
        // Prepare
        const wrong: Array<{ state: string; problem: string }> = [];
        const unreached: string[] = [];
        let attempt = 0;

        // Act
        for (const stateName of holding) {
          const name = `calib-stopped-in-${stateName.toLowerCase().replace(/[^a-z0-9]/g, '')}-${attempt++}`;
          const before = await targetState();
          const { outcome, held } = await stopIn(stateName, name);
          // A task still running when the execution stopped may finish after the cleanup (Step Functions lets it):
          // a late Deploy re-marks the target, which the next sweep releases ("within one sweep").
          await settle();
          await sweepTwinLeases(twin.state);
          const after = await targetState();
          const left = await labelled(name);
          if (JSON.stringify(after) !== JSON.stringify(before))
            wrong.push({ state: stateName, problem: `target ${JSON.stringify(after)} ≠ ${JSON.stringify(before)}` });
          if (left.length > 0) wrong.push({ state: stateName, problem: `left ${left.join(', ')}` });
          // A wait entered only when a poll found nothing yet (AMP's data, a Job) may not be entered this time: the run
          // then succeeded through its own Cleanup, which the two checks above judged.
          if (held === undefined && outcome.status === 'succeeded') {
            unreached.push(stateName);
            continue;
          }
          const cleanup = (outcome.afterEnd as { result?: EndedExecutionCleanup } | undefined)?.result;
          if (outcome.status !== 'aborted') wrong.push({ state: stateName, problem: `ended ${outcome.status}` });
          // Stopped in Deploy, the run ends after Deploy: the target is held from its end, not at its start.
          if (stateName !== 'Deploy' && held?.deploymentAnnotations[CALIBRATION_ANNOTATIONS.lease] === undefined)
            wrong.push({ state: stateName, problem: 'the target was not held when stopped' });
          if (cleanup === undefined || !('cleanup' in cleanup))
            wrong.push({ state: stateName, problem: `no cleanup: ${JSON.stringify(outcome.afterEnd)}` });
        }

        // Assess
        expect(wrong).toEqual([]);
        expect(unreached.filter((state) => !/^Wait|\?$/.test(state))).toEqual([]);
        expect(unreached.length).toBeLessThan(holding.length / 4);
      },
      20 * LONG,
    );

    it(
      'a stop while the target is held finds it paused at one replica with the lease of that execution',
      async () => {
        // Act
        const { held } = await stopIn('WatchLoadStep', 'calib-stopped-held');

        // Assess
        expect(held?.scaledObjectAnnotations[KEDA_PAUSED_REPLICAS_ANNOTATION]).toBe('1');
        expect(held?.replicas).toBe(1);
        expect(held?.deploymentAnnotations[CALIBRATION_ANNOTATIONS.lease]).toContain('calib-stopped-held');
      },
      LONG,
    );
  });

  describe('timed out', () => {
    const name = 'calib-timed-out';
    let before: TargetState;
    let outcome: WorkflowOutcome;

    beforeAll(async () => {
      // Prepare: a timeout that ends the execution in its warmup or first load step.
      before = await targetState();
      const calibration = await startTwinCalibration(twin.state, {
        input: input(),
        executionName: name,
        reportsDir,
        waitScale: 0.25,
        retryIntervalMs: 10,
        timeoutSeconds: 12,
      });

      // Act
      try {
        outcome = await calibration.run.result;
      } finally {
        calibration.close();
      }
    }, LONG);

    it('ended TIMED_OUT, and the ended-execution cleanup ran', () => {
      // Assess
      expect(outcome).toMatchObject({ status: 'timedOut', error: 'States.Timeout' });
      const after = outcome.afterEnd as { result: EndedExecutionCleanup } | undefined;
      expect(after?.result).toMatchObject({ execution: name, status: 'TIMED_OUT' });
      expect(after?.result).toHaveProperty('cleanup');
    });

    it(
      'leaves the target as before within one sweep, and a second calibration can start right after',
      async () => {
        // Act
        await settle();
        await sweepTwinLeases(twin.state);
        const after = await targetState();
        const next = await startTwinCalibration(twin.state, {
          input: input(),
          executionName: `${name}-next`,
          reportsDir,
          waitScale: 0.25,
          retryIntervalMs: 10,
          onEvent: (event) => {
            // Deploy passed (the target was not busy): that is all this test needs.
            if (event.type === 'StateEntered' && event.state.name === 'CheckRollout') next.run.abort();
          },
        });
        let nextOutcome: WorkflowOutcome;
        try {
          nextOutcome = await next.run.result;
        } finally {
          next.close();
        }

        // Assess
        expect(after).toEqual(before);
        expect(await labelled(name)).toEqual([]);
        expect(nextOutcome).toMatchObject({ status: 'aborted' });
        expect(await targetState()).toEqual(before);
      },
      LONG,
    );
  });

  describe('the lease sweep', () => {
    /** What Deploy leaves on the target, as if the execution had ended and no event had reached the cleanup. */
    async function holdAsDeployWould(executionArn: string, expires: string): Promise<void> {
      const execution = executionArn.split(':').pop() as string;
      const replicas = (await targetState()).replicas;
      await twin.cluster.patchMerge(
        { apiVersion: 'apps/v1', kind: 'Deployment', namespace: NAMESPACE, name: twin.profile.deployment },
        {
          metadata: {
            annotations: {
              [CALIBRATION_ANNOTATIONS.execution]: executionNames(execution).label,
              [CALIBRATION_ANNOTATIONS.replicasBefore]: String(replicas),
              [CALIBRATION_ANNOTATIONS.lease]: JSON.stringify({
                execution,
                executionArn,
                scaledObject: twin.profile.deployment,
                expires,
                backgroundRps: 0,
              }),
            },
          },
        },
      );
      await pauseScaledObject(twin.cluster, { namespace: NAMESPACE, name: twin.profile.deployment }, 1);
      await twin.cluster.scale({ namespace: NAMESPACE, name: twin.profile.deployment }, 1);
    }

    it(
      'releases a target whose execution Step Functions does not know once its lease expired, and not before',
      async () => {
        // Prepare
        const before = await targetState();
        const arn = `arn:aws:states:${TWIN_REGION}:000000000000:execution:vllm-pilot-calibration:calib-laptop-run`;
        await holdAsDeployWould(arn, new Date(Date.now() + 3_600_000).toISOString());

        // Act
        const early = await sweepTwinLeases(twin.state);
        await twin.cluster.patchMerge(
          { apiVersion: 'apps/v1', kind: 'Deployment', namespace: NAMESPACE, name: twin.profile.deployment },
          {
            metadata: {
              annotations: {
                [CALIBRATION_ANNOTATIONS.lease]: JSON.stringify({
                  execution: 'calib-laptop-run',
                  executionArn: arn,
                  scaledObject: twin.profile.deployment,
                  expires: new Date(Date.now() - 1_000).toISOString(),
                  backgroundRps: 0,
                }),
              },
            },
          },
        );
        const late = await sweepTwinLeases(twin.state);

        // Assess
        expect(early).toEqual([expect.objectContaining({ action: 'kept', execution: 'calib-laptop-run' })]);
        expect(early[0]?.reason).toMatch(/unknown to Step Functions and the lease runs until/);
        expect(late).toEqual([expect.objectContaining({ action: 'released', execution: 'calib-laptop-run' })]);
        expect(await targetState()).toEqual(before);
      },
      LONG,
    );

    it('leaves a target alone when nothing holds it, and a second sweep finds nothing to do', async () => {
      // Act
      const first = await sweepTwinLeases(twin.state);
      const second = await sweepTwinLeases(twin.state);

      // Assess
      expect(first).toEqual([expect.objectContaining({ action: 'none', reason: 'not calibrating' })]);
      expect(second).toEqual(first);
    });
  });
});
