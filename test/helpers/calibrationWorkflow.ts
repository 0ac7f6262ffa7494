import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bindSteps } from '../../functions/calibration/task.js';
import { historyTargetKey } from '../../shared/calibration/history/index.js';
import type { CalibrationReport, StepMeasurement, StrategyName } from '../../shared/calibration/index.js';
import {
  CALIBRATION_ANNOTATIONS,
  CALIBRATION_STEPS,
  EXECUTION_LABEL,
  executionNames,
  type CalibrationPorts,
} from '../../shared/calibration/workflow/index.js';
import { KEDA_PAUSED_REPLICAS_ANNOTATION, scaledObject } from '../../shared/keda/index.js';
import type { KubeObject } from '../../shared/kube/index.js';
import { HttpMetricsSource } from '../../shared/metrics/index.js';
import {
  type LocalTaskHandler,
  measureCapacity,
  startTwinCalibration,
  type Twin,
  TWIN_CLUSTER,
  TWIN_CREDENTIALS,
  TWIN_REGION,
  twinCalibrationPorts,
  type WorkflowEvent,
  type WorkflowOutcome,
} from '../../sim/harness/index.js';
import { DEMO_SHAPE, startDemoTwin } from './twin.js';

// The calibration state machine (statemachines/calibration.asl.json, the file AWS deploys) run by the local runner
// against the twin: the product's handlers talk to the twin's API server, Prometheus, DynamoDB and SNS over HTTP,
// the endpoints its state file names.
// Holds are short (4-5 s) but real: the k6 Jobs really load the simulated replicas for their whole hold. Poll Waits and
// rests run at a quarter of their length (waitScale), retry pauses are 10 ms.

const NAMESPACE = 'default';
const WAIT_SCALE = 0.25;
const LONG = 300_000;

let twin: Twin;
let topicArn: string;
let reportsDir: string;
/** The calibration's ports on the twin, as every run of this file gets them (a run may replace some). */
let twinPorts: ReturnType<typeof twinCalibrationPorts>;

/** Starts the demo twin for the file's tests and stops it after them. */
export function useCalibrationTwin(): void {
  beforeAll(async () => {
    twin = await startDemoTwin();
    topicArn = twin.state.aws.calibrationTopicArn;
    reportsDir = await mkdtemp(join(tmpdir(), 'vllm-pilot-calibration-'));
    twinPorts = twinCalibrationPorts(twin.state, {
      reportsDir,
      ports: { cluster: () => Promise.resolve(twin.cluster) },
    });
  }, 120_000);

  afterAll(async () => {
    twinPorts?.close();
    await twin?.stop();
    if (reportsDir) await rm(reportsDir, { recursive: true, force: true });
  });
}

/** The twin's target and a short plan: the demo replica saturates between 20 and 40 req/s for DEMO_SHAPE. */
function calibrationInput(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    target: {
      cluster: TWIN_CLUSTER,
      region: TWIN_REGION,
      namespace: NAMESPACE,
      deployment: twin.profile.deployment,
      model: twin.profile.model,
      ampWorkspaceUrl: twin.prometheus.url,
    },
    // adopt: these tests follow the pause, scale and restore of the target itself (shadow: calibration-shadow.test.ts).
    deploy: { mode: 'adopt' },
    testReplicas: 1,
    request: { promptTokens: DEMO_SHAPE.promptTokens, maxTokens: DEMO_SHAPE.maxTokens },
    warmup: { requests: 10 },
    plan: { rates: [10], holdSeconds: 4, restSeconds: 1 },
    rollout: { timeoutSeconds: 60, pollSeconds: 1 },
    readiness: { timeoutSeconds: 120, pollSeconds: 1 },
    ...overrides,
  };
}

/** calibrationInput with the plan's strategy set (linear ignores nothing here; adaptive ignores plan.rates). */
function pathInput(strategy: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const input = calibrationInput(overrides);
  return { ...input, plan: { ...(input.plan as Record<string, unknown>), strategy } };
}

function metricsSource(endpoint: string, maxAttempts = 3): HttpMetricsSource {
  return new HttpMetricsSource({
    endpoint,
    region: TWIN_REGION,
    credentials: () => Promise.resolve(TWIN_CREDENTIALS),
    maxAttempts,
  });
}

interface RunOptions {
  name: string;
  input: Record<string, unknown>;
  /** Ports that replace the twin's for the whole run. */
  ports?: Partial<CalibrationPorts>;
  /** Changes the state → handler table (a test's fault injection). */
  handlers?: (table: Record<string, LocalTaskHandler>, ports: CalibrationPorts) => Record<string, LocalTaskHandler>;
  onEvent?: (event: WorkflowEvent) => void;
}

async function runCalibration(options: RunOptions): Promise<{ outcome: WorkflowOutcome; events: WorkflowEvent[] }> {
  const calibration = await startTwinCalibration(twin.state, {
    input: options.input,
    executionName: options.name,
    reportsDir,
    ports: { cluster: () => Promise.resolve(twin.cluster), ...options.ports },
    waitScale: WAIT_SCALE,
    retryIntervalMs: 10,
    ...(options.handlers ? { handlers: options.handlers } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  });
  try {
    return { outcome: await calibration.run.result, events: calibration.run.events };
  } finally {
    calibration.close();
  }
}

/** The Jobs and ConfigMaps carrying the execution's label. */
async function labelled(executionName: string): Promise<{ jobs: string[]; configMaps: string[] }> {
  const labelSelector = { [EXECUTION_LABEL]: executionNames(executionName).label };
  const names = (objects: KubeObject[]) => objects.map((o) => o.metadata.name).sort();
  return {
    jobs: names(await twin.cluster.list({ apiVersion: 'batch/v1', kind: 'Job', namespace: NAMESPACE, labelSelector })),
    configMaps: names(
      await twin.cluster.list({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NAMESPACE, labelSelector }),
    ),
  };
}

async function liveDeployment(): Promise<KubeObject> {
  const deployment = await twin.cluster.get({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    namespace: NAMESPACE,
    name: twin.profile.deployment,
  });
  if (deployment === undefined) throw new Error('the twin lost its Deployment');
  return deployment;
}

const replicasOf = (deployment: KubeObject) => (deployment.spec as { replicas?: number }).replicas;
const statesEntered = (events: WorkflowEvent[]) =>
  events.flatMap((e) => (e.type === 'StateEntered' ? [e.state.name] : []));

/** A loopback port nothing listens on (a Prometheus that is down). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** The path tests (happy path, failure paths, idempotency) with plan.strategy `strategy`. */
export function describePathTests(strategy: StrategyName): void {
  describe(`path tests with plan.strategy ${strategy}`, () => {
    describe('happy path, dry run, with a ScaledObject', () => {
      const name = `calib-happy-path-${strategy}`;
      const rates = [10, 20, 40, 60];
      let outcome: WorkflowOutcome;
      let before: { replicas: number | undefined; scaledObjectSpec: unknown };
      let after: { deployment: KubeObject; scaledObject: KubeObject | undefined };
      const jobsSeen = new Set<string>();

      beforeAll(async () => {
        // Prepare: KEDA keeps the Deployment at its 2 replicas (min = max), as a production ScaledObject would.
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
        const scaled = await twin.cluster.get({
          apiVersion: 'keda.sh/v1alpha1',
          kind: 'ScaledObject',
          namespace: NAMESPACE,
          name: twin.profile.deployment,
        });
        before = { replicas: replicasOf(await liveDeployment()), scaledObjectSpec: scaled?.spec };

        // Act
        const run = await runCalibration({
          name,
          input: pathInput(strategy, { plan: { rates, holdSeconds: 5, restSeconds: 1 } }),
          onEvent: (event) => {
            if (event.type === 'StateEntered' && event.state.name === 'CheckLoadJob')
              void labelled(name).then((now) => now.jobs.forEach((job) => jobsSeen.add(job)));
          },
        });
        outcome = run.outcome;
        after = {
          deployment: await liveDeployment(),
          scaledObject: await twin.cluster.get({
            apiVersion: 'keda.sh/v1alpha1',
            kind: 'ScaledObject',
            namespace: NAMESPACE,
            name: twin.profile.deployment,
          }),
        };
      }, LONG);

      it('succeeds', () => {
        // Assess
        expect(outcome).toMatchObject({ status: 'succeeded' });
      });

      it("finds saturation within one plan step of the replica's capacity", () => {
        // Prepare
        const capacity = measureCapacity(twin.profile, DEMO_SHAPE).capacityRps * 1;
        const expectedIndex = rates.findIndex((rate) => rate >= capacity);

        // Assess
        const output = (outcome.status === 'succeeded' ? outcome.output : {}) as {
          analysis?: CalibrationReport['analysis'];
        };
        // Linear finds one of its rates; adaptive a rate of its own: either way between the plan's neighbours of it.
        const saturation = output.analysis?.saturation;
        expect(saturation?.found).toBe(true);
        const found = saturation?.found === true ? saturation.rateRps : Number.NaN;
        expect(found).toBeGreaterThanOrEqual(rates[Math.max(0, expectedIndex - 1)] as number);
        expect(found).toBeLessThanOrEqual(rates[Math.min(rates.length - 1, expectedIndex + 1)] as number);
      });

      it('writes the report and its chart, and a history record', async () => {
        // Prepare
        const output = (outcome.status === 'succeeded' ? outcome.output : {}) as {
          report?: { reportLocation: string; chartLocation: string };
        };

        // Act
        const report = JSON.parse(await readFile(output.report?.reportLocation ?? '', 'utf8')) as CalibrationReport;
        const chart = await readFile(output.report?.chartLocation ?? '', 'utf8');
        const latest = await twinPorts.ports.history.latest(
          historyTargetKey({ cluster: TWIN_CLUSTER, namespace: NAMESPACE, deployment: twin.profile.deployment }),
        );

        // Assess
        expect(report.provenance.executionName).toBe(name);
        expect(report.steps.length).toBeGreaterThanOrEqual(2);
        // Deploy read --max-num-seqs from the Deployment's vLLM container; every step records it with its batch.
        expect(report.steps.map((s) => s.maxNumSeqs)).toEqual(report.steps.map(() => twin.profile.engine.maxNumSeqs));
        expect(report.steps.every((s) => (s.amp.runningMean ?? 0) > 0)).toBe(true);
        expect(chart).toMatch(/^<svg[\s>]/);
        expect(latest?.executionName).toBe(name);
      });

      it('writes the change as git files beside the report: the ScaledObject and a kustomize patch', async () => {
        // Prepare
        const output = (outcome.status === 'succeeded' ? outcome.output : {}) as {
          report?: { gitops?: { manifest: string; patch: string; kustomization: string } | null; summary: string };
          change?: { next: Record<string, string> };
        };

        // Act
        const gitops = output.report?.gitops;
        const patch = await readFile(gitops?.patch ?? '', 'utf8');
        const kustomization = await readFile(gitops?.kustomization ?? '', 'utf8');

        // Assess
        expect(patch).toContain(`value: "${output.change?.next.queueDepthPerPod ?? '?'}"`);
        expect(kustomization).toContain('kind: ScaledObject');
        expect(await readFile(gitops?.manifest ?? '', 'utf8')).toContain('kind: ScaledObject');
        expect(output.report?.summary).toContain(`GitOps: ${gitops?.patch ?? '?'}`);
      });

      it('publishes the summary to SNS with event_type and status attributes', () => {
        // Assess
        const published = twin.sns.messages(topicArn).filter((m) => m.attributes.execution?.value === name);
        expect(published).toHaveLength(1);
        expect(published[0]?.attributes.event_type?.value).toBe('calibration');
        expect(published[0]?.attributes.status?.value).toBe('succeeded');
        expect(published[0]?.message).toContain('Calibration of default/');
      });

      it('ran one Job per step and the warmup, and leaves no Job or ConfigMap of the execution', async () => {
        // Prepare
        const names = executionNames(name);
        const steps = (outcome.status === 'succeeded' ? (outcome.output as { steps: unknown[] }).steps : []).length;

        // Act
        const left = await labelled(name);

        // Assess
        expect([...jobsSeen].sort()).toEqual(
          [names.warmupJob, ...Array.from({ length: steps }, (_, i) => names.loadJob(i))].sort(),
        );
        expect(left).toEqual({ jobs: [], configMaps: [] });
      });

      it('leaves the cluster as it found it: ScaledObject spec, replicas, no pause or calibration annotation', () => {
        // Assess
        expect(after.scaledObject?.spec).toEqual(before.scaledObjectSpec);
        expect(after.scaledObject?.metadata.annotations?.[KEDA_PAUSED_REPLICAS_ANNOTATION]).toBeUndefined();
        expect(replicasOf(after.deployment)).toBe(before.replicas);
        expect(after.deployment.metadata.annotations?.[CALIBRATION_ANNOTATIONS.execution]).toBeUndefined();
      });

      it('records the threshold change it would make without applying it', () => {
        // Assess
        const output = (outcome.status === 'succeeded' ? outcome.output : {}) as {
          change?: { applied: boolean; diff: string };
        };
        expect(output.change?.applied).toBe(false);
        expect(output.change?.diff).toContain('threshold');
      });

      afterAll(async () => {
        await twin.cluster.delete({
          apiVersion: 'keda.sh/v1alpha1',
          kind: 'ScaledObject',
          namespace: NAMESPACE,
          name: twin.profile.deployment,
        });
      });
    });

    describe('failure paths: cleanup, then Fail with the original error', () => {
      it(
        'fails with CalibrationRolloutTimeoutError when the rollout outlasts its bound',
        async () => {
          // Prepare: a third replica needs the model load time (2 s) to become Ready; the bound is 0.5 s.
          const name = `calib-rollout-timeout-${strategy}`;
          const replicasBefore = replicasOf(await liveDeployment());

          // Act
          const { outcome, events } = await runCalibration({
            name,
            input: pathInput(strategy, { testReplicas: 3, rollout: { timeoutSeconds: 0.5, pollSeconds: 1 } }),
          });

          // Assess
          expect(outcome).toMatchObject({ status: 'failed', error: 'CalibrationRolloutTimeoutError' });
          expect(statesEntered(events).slice(-4)).toEqual([
            'CleanupAfterFailure',
            'NotifyFailure?',
            'NotifyFailure',
            'Failed',
          ]);
          expect(await labelled(name)).toEqual({ jobs: [], configMaps: [] });
          expect(replicasOf(await liveDeployment())).toBe(replicasBefore);
        },
        LONG,
      );

      it(
        'fails with CalibrationJobFailedError when every request of a load step is refused',
        async () => {
          // Prepare: the load step (only) asks for a model the server does not serve: 404 for every request.
          const name = `calib-load-job-fails-${strategy}`;

          // Act
          const { outcome, events } = await runCalibration({
            name,
            input: pathInput(strategy),
            handlers: (table) => ({
              ...table,
              StartLoadStep: (event: unknown) => {
                const e = event as { input: { target: Record<string, unknown> } };
                return (table.StartLoadStep as LocalTaskHandler)({
                  ...e,
                  input: { ...e.input, target: { ...e.input.target, model: 'no-such-model' } },
                });
              },
            }),
          });

          // Assess
          expect(outcome).toMatchObject({ status: 'failed', error: 'CalibrationJobFailedError' });
          expect(outcome.status === 'failed' && outcome.cause).toMatch(/load Job default\/calib-[0-9a-f]{8}-s0 failed/);
          expect(statesEntered(events)).toContain('CleanupAfterFailure');
          expect(await labelled(name)).toEqual({ jobs: [], configMaps: [] });
        },
        LONG,
      );

      it(
        'retries MeasureStep while AMP is unavailable, then cleans up and fails with the AMP error',
        async () => {
          // Prepare: MeasureStep (only) reads from a Prometheus that is down.
          const name = `calib-amp-down-${strategy}`;
          const down = `http://127.0.0.1:${await closedPort()}`;

          // Act
          const { outcome, events } = await runCalibration({
            name,
            input: pathInput(strategy),
            handlers: (table, ports) => ({
              ...table,
              MeasureStep: bindSteps(CALIBRATION_STEPS, { ...ports, metricsSource: () => metricsSource(down, 1) })
                .measureStep,
            }),
          });

          // Assess
          expect(outcome).toMatchObject({ status: 'failed', error: 'CalibrationDependencyUnavailableError' });
          const retries = events.filter((e) => e.type === 'StateRetried' && e.state.name === 'MeasureStep');
          expect(retries).toHaveLength(3);
          expect(statesEntered(events).slice(-4)).toEqual([
            'CleanupAfterFailure',
            'NotifyFailure?',
            'NotifyFailure',
            'Failed',
          ]);
          expect(await labelled(name)).toEqual({ jobs: [], configMaps: [] });
          const failure = twin.sns.messages(topicArn).find((m) => m.attributes.execution?.value === name);
          expect(failure?.attributes.status?.value).toBe('failed');
        },
        LONG,
      );
    });

    describe('idempotency', () => {
      it(
        'runs the same execution twice without duplicate Jobs',
        async () => {
          // Prepare
          const name = `calib-same-name-${strategy}`;
          const seen: number[] = [];
          const count = (event: WorkflowEvent) => {
            if (event.type === 'StateEntered' && ['CheckWarmup', 'CheckLoadJob'].includes(event.state.name))
              void labelled(name).then((now) => seen.push(now.jobs.length));
          };

          // Act
          const first = await runCalibration({ name, input: pathInput(strategy), onEvent: count });
          const afterFirst = await labelled(name);
          const second = await runCalibration({ name, input: pathInput(strategy), onEvent: count });
          const afterSecond = await labelled(name);

          // Assess
          expect(first.outcome).toMatchObject({ status: 'succeeded' });
          expect(second.outcome).toMatchObject({ status: 'succeeded' });
          // Never more Jobs than one run's own warmup and load steps (1 + 1 with linear's one rate): the second run
          // neither found the first one's Jobs nor doubled its own.
          const stepsOf = (outcome: WorkflowOutcome) =>
            outcome.status === 'succeeded' ? (outcome.output as { steps: unknown[] }).steps.length : 0;
          expect(Math.max(...seen)).toBeLessThanOrEqual(1 + Math.max(stepsOf(first.outcome), stepsOf(second.outcome)));
          expect(afterFirst).toEqual({ jobs: [], configMaps: [] });
          expect(afterSecond).toEqual({ jobs: [], configMaps: [] });
        },
        LONG,
      );

      it(
        'StartLoadStep run again for the same step returns the Job it created instead of a second one',
        async () => {
          // Prepare
          const name = `calib-retried-step-${strategy}`;
          const handlers = bindSteps(CALIBRATION_STEPS, twinPorts.ports);
          const execution = {
            id: `arn:aws:states:${TWIN_REGION}:000000000000:execution:x:${name}`,
            name,
            startTime: new Date().toISOString(),
          };
          const warmup = { configMap: { namespace: NAMESPACE, name: executionNames(name).configMap }, job: null };
          const plan = {
            done: false,
            reason: 'test',
            index: 0,
            rateRps: 1,
            holdSeconds: 2,
            restSeconds: 0,
            holdWaitSeconds: 2,
            restWaitSeconds: 0,
          };
          const input = await handlers.validateInput({ input: pathInput(strategy), execution });
          // Deploy holds the target: StartLoadStep creates load only on a target its execution holds.
          const deployment = await handlers.deploy({ input, execution });
          const event = { input, execution, deployment, warmup, plan };

          // Act
          const first = (await handlers.startLoadStep(event)) as { job: { name: string; createdAtMs: number } };
          const second = (await handlers.startLoadStep(event)) as { job: { name: string } };
          const jobs = (await labelled(name)).jobs;
          await handlers.cleanup({ input, execution, deployment });

          // Assess
          expect(second.job.name).toBe(first.job.name);
          expect(jobs).toEqual([first.job.name]);
          expect(await labelled(name)).toEqual({ jobs: [], configMaps: [] });
        },
        LONG,
      );
    });
  });
}

/** Early step ending: a saturating step ended early, and every step held when it is off. */
export function describeEarlyEnding(): void {
  describe('early step ending', () => {
    type Output = { steps: StepMeasurement[]; report: { reportLocation: string } };
    /** The attempts the analysis uses: a step with failed evidence is repeated, and only its repeat counts. */
    const accepted = (steps: StepMeasurement[]) => steps.filter((step) => step.evidence?.ok !== false);

    it(
      'ends a saturating step early (its Job stopped) as saturated-early, with the reason in the report',
      async () => {
        // Prepare: 70 req/s on one replica of about 35 req/s: the queue grows about 35 req/s.
        const name = 'calib-early-saturated';

        // Act
        const { outcome, events } = await runCalibration({
          name,
          input: calibrationInput({
            plan: { rates: [70], holdSeconds: 20, restSeconds: 1, earlyStop: { watchSeconds: 2 } },
          }),
        });

        // Assess
        expect(outcome).toMatchObject({ status: 'succeeded' });
        const output = (outcome.status === 'succeeded' ? outcome.output : {}) as Output;
        const report = JSON.parse(await readFile(output.report.reportLocation, 'utf8')) as CalibrationReport;
        const step = accepted(report.steps)[0];
        // With the reason beside the kind, a step held in full says why in the failure.
        expect({ ...step?.ending, reason: step?.ending?.reason }).toMatchObject({
          kind: 'saturated-early',
          plannedHoldSeconds: 20,
        });
        expect(step?.ending?.heldSeconds).toBeLessThan(20);
        // Whichever sees it first: k6's live metrics (no lag) or AMP's queue (1 s scrapes here).
        expect(step?.ending?.reason).toMatch(
          step?.ending?.evidence === 'k6'
            ? /^k6: .*the replica does not keep up$/
            : /significantly above the early-ending limit/,
        );
        expect(['k6', 'amp']).toContain(step?.ending?.evidence);
        expect(step?.k6).toBeNull();
        expect(step?.verdict.reasons.join(' ')).toMatch(/the step was ended after \d+ s of its 20 s hold/);
        expect(report.analysis.saturation).toMatchObject({ found: true, rateRps: 70 });
        expect(statesEntered(events)).not.toContain('CheckLoadJob');
        expect(await labelled(name)).toEqual({ jobs: [], configMaps: [] });
      },
      LONG,
    );

    it(
      'holds every step fully when plan.earlyStop.enabled is false',
      async () => {
        // Prepare
        const name = 'calib-early-off';

        // Act
        const { outcome } = await runCalibration({
          name,
          input: calibrationInput({
            plan: { rates: [70], holdSeconds: 8, restSeconds: 1, earlyStop: { enabled: false, watchSeconds: 2 } },
          }),
        });

        // Assess
        expect(outcome).toMatchObject({ status: 'succeeded' });
        const steps = (outcome.status === 'succeeded' ? (outcome.output as Output).steps : []) ?? [];
        // A step whose AMP evidence failed (a scrape gap under CI load) is repeated once, so one rate may have two
        // attempts; every attempt is held in full, and exactly one is accepted.
        expect(steps.map((step) => step.rateRps)).toEqual(steps.map(() => 70));
        expect(accepted(steps)).toHaveLength(1);
        for (const step of steps) {
          expect(step.ending).toMatchObject({ kind: 'held', heldSeconds: 8, plannedHoldSeconds: 8 });
          expect(step.ending?.reason).toMatch(/plan\.earlyStop\.enabled false/);
          expect(step.k6).not.toBeNull();
        }
      },
      LONG,
    );
  });
}

/** ValidateInput refuses a bad input before anything changes. */
export function describeValidateInput(): void {
  describe('ValidateInput', () => {
    type Input = Record<string, Record<string, unknown>>;
    it.each([
      {
        case: 'a missing target field',
        edit: (i: Input) => ({ ...i, target: { ...i.target, model: undefined } }),
        field: /target\.model/,
      },
      {
        case: 'rates that do not increase',
        edit: (i: Input) => ({ ...i, plan: { ...i.plan, rates: [20, 10] } }),
        field: /plan\.rates\[1\]/,
      },
      {
        case: 'a negative hold',
        edit: (i: Input) => ({ ...i, plan: { ...i.plan, holdSeconds: -5 } }),
        field: /plan\.holdSeconds/,
      },
      {
        case: 'an unknown strategy',
        edit: (i: Input) => ({ ...i, plan: { ...i.plan, strategy: 'binary' } }),
        field: /plan\.strategy.*accepted: linear/,
      },
      {
        case: 'an invalid namespace',
        edit: (i: Input) => ({ ...i, target: { ...i.target, namespace: 'Not_A_Namespace' } }),
        field: /target\.namespace/,
      },
      {
        case: 'an unknown deploy mode',
        edit: (i: Input) => ({ ...i, deploy: { mode: 'copy' } }),
        field: /deploy\.mode: is not a mode; accepted: shadow, adopt, apply/,
      },
      {
        case: "adopt's allowServingTraffic given to the shadow mode",
        edit: (i: Input) => ({ ...i, deploy: { mode: 'shadow', allowServingTraffic: true } }),
        field: /deploy\.allowServingTraffic: unknown key; accepted: mode/,
      },
    ])(
      'refuses $case, naming the field, and creates nothing',
      async ({ edit, field }) => {
        // Prepare
        const name = `calib-bad-input-${Math.random().toString(36).slice(2, 8)}`;
        const input = JSON.parse(JSON.stringify(edit(calibrationInput() as Input))) as Record<string, unknown>;
        const deploymentBefore = await liveDeployment();
        const jobsBefore = await twin.cluster.list({ apiVersion: 'batch/v1', kind: 'Job', namespace: NAMESPACE });

        // Act
        const { outcome, events } = await runCalibration({ name, input });

        // Assess
        expect(outcome).toMatchObject({ status: 'failed', error: 'CalibrationInputInvalidError' });
        expect(outcome.status === 'failed' && outcome.cause).toMatch(field);
        expect(statesEntered(events)).not.toContain('Deploy');
        const deploymentAfter = await liveDeployment();
        expect(replicasOf(deploymentAfter)).toBe(replicasOf(deploymentBefore));
        expect(deploymentAfter.metadata.annotations).toEqual(deploymentBefore.metadata.annotations);
        expect(await twin.cluster.list({ apiVersion: 'batch/v1', kind: 'Job', namespace: NAMESPACE })).toHaveLength(
          jobsBefore.length,
        );
      },
      LONG,
    );
  });
}
