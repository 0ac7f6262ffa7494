import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  calibrateOnTwin,
  measureCapacity,
  type PreflightRun,
  type RecordedMessage,
  runConstantArrivalLoad,
  type Twin,
  twinAlertEvaluator,
  twinPreflight,
} from '../sim/harness/index.js';
import type { PreflightSummary } from '../shared/preflight/index.js';
import { scaledObject } from '../shared/keda/index.js';
import type { KubeObject, ObjectRef } from '../shared/kube/index.js';
import {
  CHECK_IDS,
  type CheckId,
  type CheckResult,
  type CheckStatus,
  type PreflightReport,
} from '../shared/preflight/index.js';
import { startScheduler, type Scheduler } from './helpers/alerts.js';
import { runCli, type CliResult } from './helpers/cli.js';
import { pollFor } from './helpers/poll.js';
import { DEMO_SHAPE, startDemoTwin } from './helpers/twin.js';

// The eleven production double-checks (the monitoring guide, section 7) on a fully prepared twin: the twin brings the
// dashboards, the alert rules, the DCGM exporter, the ServiceMonitor and the warmup automation; the test adds what a
// platform team does next (the ScaledObject, a calibration, one scale-out and scale-in under load). Then each row
// breaks one thing, and exactly the matching check must turn, with its reason; the row restores what it broke.
// The alert evaluator runs on its twin cadence (a cycle a second) throughout, as its schedule does on AWS: check 5
// passes on its heartbeat, and stopping it is one of the rows.
// Preflight runs as the preflight Lambda (functions/preflight, built from its environment) against the twin's
// endpoints; its SNS messages are watched through a subscription to the twin's preflight topic.

const PREPARE_MS = 600_000;
const ROW_MS = 300_000;
/** A change is judged once the report settles; this is a guard against hanging, not a speed requirement. */
const SETTLE_MS = 120_000;
/** KEDA shortened as in the demo, so the scale cycle takes a minute. */
const BEHAVIOR = {
  scaleUp: { stabilizationWindowSeconds: 0, pods: 1, periodSeconds: 5 },
  scaleDown: { stabilizationWindowSeconds: 10, pods: 1, periodSeconds: 5 },
} as const;
const MAX_REPLICAS = 4;
const DO_NOT_DISRUPT = 'karpenter.sh/do-not-disrupt';
const ALL_CHECKS = Object.values(CHECK_IDS);

let twin: Twin;
let dir: string;
let stateFile: string;
let preflight: PreflightRun;
const delivered: RecordedMessage[] = [];
let unsubscribe: (() => void) | undefined;
/** The alert evaluator's schedule: its heartbeat is check 5's evidence. */
let evaluator: Scheduler | undefined;

/** One invocation of the preflight Lambda, with the SNS messages its subscriber received for it. */
interface PreflightRunSeen {
  report: PreflightReport;
  messages: RecordedMessage[];
}

async function runPreflight(): Promise<PreflightRunSeen> {
  const before = delivered.length;
  const result = await preflight();
  await twin.sns.flush();
  const [report] = result.reports;
  if (report === undefined || result.reports.length !== 1) throw new Error('expected exactly one report');
  return { report, messages: delivered.slice(before) };
}

/** status by check id, e.g. `{ 'dcgm-exporter': 'fail', ... }`. */
function statuses(report: PreflightReport): Record<CheckId, CheckStatus> {
  return Object.fromEntries(report.results.map((r) => [r.id, r.status])) as Record<CheckId, CheckStatus>;
}

function expected(turned: Partial<Record<CheckId, CheckStatus>> = {}): Record<CheckId, CheckStatus> {
  return Object.fromEntries(ALL_CHECKS.map((id) => [id, turned[id] ?? 'pass'])) as Record<CheckId, CheckStatus>;
}

function resultOf(report: PreflightReport, id: CheckId): CheckResult {
  const result = report.results.find((r) => r.id === id);
  if (result === undefined) throw new Error(`no result for ${id}`);
  return result;
}

/**
 * Runs preflight until every check has the status wanted (the world takes a few seconds to follow a change: a
 * rollout, a scrape that stops), and returns that run; after SETTLE_MS, the last run, so the assertion shows the
 * difference.
 */
async function preflightUntil(want: Record<CheckId, CheckStatus>): Promise<PreflightRunSeen> {
  let last: PreflightRunSeen | undefined;
  const wanted = JSON.stringify(want);
  try {
    return await pollFor(
      `preflight ${wanted}`,
      async () => {
        last = await runPreflight();
        return JSON.stringify(statuses(last.report)) === wanted ? last : undefined;
      },
      { timeoutMs: SETTLE_MS, intervalMs: 1_000 },
    );
  } catch (error) {
    if (last !== undefined) return last;
    throw error;
  }
}

function deploymentRef(): ObjectRef {
  return { apiVersion: 'apps/v1', kind: 'Deployment', namespace: twin.state.namespace, name: twin.state.deployment };
}

/** Waits until the Deployment's rollout is done: the new template everywhere, every replica Ready. */
async function waitForRollout(): Promise<void> {
  await pollFor(
    'the rollout to finish',
    async () => {
      const d = await twin.cluster.get(deploymentRef());
      const spec = d?.spec as { replicas?: number } | undefined;
      const status = (d?.status ?? {}) as Record<string, number | undefined>;
      const want = spec?.replicas ?? 1;
      const done =
        (status.observedGeneration ?? 0) >= (d?.metadata.generation ?? 1) &&
        status.updatedReplicas === want &&
        status.readyReplicas === want &&
        status.replicas === want;
      return done ? true : undefined;
    },
    { timeoutMs: SETTLE_MS },
  );
}

/** The live object without what the server sets, to create it again as it was. */
function asApplied(object: KubeObject): KubeObject {
  const { resourceVersion, uid, creationTimestamp, generation, managedFields, ...metadata } = object.metadata as Record<
    string,
    unknown
  >;
  void [resourceVersion, uid, creationTimestamp, generation, managedFields];
  const { status, ...rest } = object as KubeObject & { status?: unknown };
  void status;
  return { ...rest, metadata: metadata as KubeObject['metadata'] };
}

/** Deletes an object and returns how to create it again. */
async function remove(ref: ObjectRef): Promise<() => Promise<void>> {
  const live = await twin.cluster.get(ref);
  if (live === undefined) throw new Error(`${ref.kind} ${ref.namespace ?? ''}/${ref.name} does not exist`);
  await twin.cluster.delete(ref);
  return async () => {
    await twin.cluster.apply(asApplied(live));
  };
}

/** Replaces the vLLM container's args through `change`; returns how to put the old ones back (rollouts awaited). */
async function changeArgs(change: (args: string[]) => string[]): Promise<() => Promise<void>> {
  let original: string[] = [];
  const setArgs = async (next: (args: string[]) => string[]) => {
    await twin.cluster.updateWithRetry(deploymentRef(), (deployment) => {
      const containers = (deployment.spec as { template: { spec: { containers: Array<{ args?: string[] }> } } })
        .template.spec.containers;
      const container = containers[0];
      if (container === undefined) throw new Error('the Deployment has no container');
      container.args = next(container.args ?? []);
    });
    await waitForRollout();
  };
  await setArgs((args) => {
    original = [...args];
    return change(args);
  });
  return () => setArgs(() => original);
}

/** Sets or removes (`null`) a Pod template annotation; returns how to put the old value back. */
async function setTemplateAnnotation(name: string, value: string | null): Promise<() => Promise<void>> {
  const live = await twin.cluster.get(deploymentRef());
  const before =
    (live?.spec as { template?: { metadata?: { annotations?: Record<string, string> } } } | undefined)?.template
      ?.metadata?.annotations?.[name] ?? null;
  const patch = (v: string | null) =>
    twin.cluster.patchMerge(deploymentRef(), { spec: { template: { metadata: { annotations: { [name]: v } } } } });
  await patch(value);
  await waitForRollout();
  return async () => {
    await patch(before);
    await waitForRollout();
  };
}

/** `--flag value` replaced (or added) in an argument list. */
function withFlag(args: string[], flag: string, value: string): string[] {
  const index = args.indexOf(flag);
  if (index === -1) return [...args, flag, value];
  return args.map((arg, i) => (i === index + 1 ? value : arg));
}

/** An argument list without `--flag value` (or `--flag=value`). */
function withoutFlag(args: string[], flag: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === flag) i += 1;
    else if (!arg.startsWith(`${flag}=`)) out.push(arg);
  }
  return out;
}

/** `vllm-pilot preflight --state-file ...` in a child process, as a user runs it. */
function cli(args: readonly string[]): Promise<CliResult> {
  return runCli(['preflight', '--state-file', stateFile, ...args]);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vllm-pilot-preflight-'));
  stateFile = join(dir, 'twin.json');
  twin = await startDemoTwin({}, stateFile);
  const { state } = twin;

  // The guide's ScaledObject, as the demo applies it before calibrating.
  await twin.cluster.apply(
    scaledObject({
      name: state.deployment,
      namespace: state.namespace,
      model: state.model,
      ampWorkspaceUrl: state.prometheusUrl,
      authentication: false,
      pollingInterval: 1,
      maxReplicaCount: MAX_REPLICAS,
      behavior: BEHAVIOR,
    }),
  );

  // A load test of the live spec: a short calibration through the state machine, its record in the history table.
  await calibrateOnTwin(state, {
    input: {
      plan: { rates: [10, 40], holdSeconds: 5, restSeconds: 1 },
      warmup: { requests: 10 },
      request: { promptTokens: DEMO_SHAPE.promptTokens, maxTokens: DEMO_SHAPE.maxTokens },
      scaledObject: { apply: true },
    },
    executionName: 'calib-preflight-setup',
    reportsDir: join(dir, 'calibration'),
  });

  // One scale-out and scale-in: load above what the replicas serve, then nothing, until KEDA is back at one.
  const deployment = () => twin.store.get('Deployment', state.namespace, state.deployment);
  const replicas = () => (deployment()?.spec as { replicas?: number } | undefined)?.replicas ?? 0;
  let peak = replicas();
  const load = runConstantArrivalLoad({
    urls: [state.serviceUrl],
    model: state.model,
    rps: Math.round(measureCapacity(twin.profile, DEMO_SHAPE).capacityRps * 2.8),
    durationS: 20,
    ...DEMO_SHAPE,
    gracefulStopMs: 5_000,
  });
  const watch = setInterval(() => (peak = Math.max(peak, replicas())), 250);
  try {
    await load;
    await pollFor('KEDA to scale back in', () => (replicas() <= 1 ? true : undefined), { timeoutMs: 120_000 });
  } finally {
    clearInterval(watch);
  }
  if (peak <= 1) throw new Error(`KEDA never scaled out (peak ${peak} replicas)`);
  await waitForRollout();

  evaluator = startScheduler(twinAlertEvaluator(state));
  await evaluator.waitForRuns(1);
  preflight = twinPreflight(state);
  unsubscribe = twin.sns.subscribe(state.aws.preflightTopicArn, (message) => {
    delivered.push(message);
  });
}, PREPARE_MS);

afterAll(async () => {
  await evaluator?.stop();
  unsubscribe?.();
  await twin?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('Preflight on the twin', () => {
  it(
    'passes all eleven checks on the fully prepared deployment and publishes nothing',
    async () => {
      // Act
      const { report, messages } = await preflightUntil(expected());

      // Assess
      expect(statuses(report)).toEqual(expected());
      expect(report.results.map((r) => r.item)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      expect(report.status).toBe('pass');
      expect(messages).toEqual([]);
    },
    ROW_MS,
  );

  it(
    'exits 0 from `vllm-pilot preflight` when nothing fails, printing one line per check',
    async () => {
      // Act
      const table = await cli([]);
      const json = await cli(['--json']);

      // Assess
      expect(table.code).toBe(0);
      for (const id of ALL_CHECKS)
        expect(table.stdout).toContain(resultOf(JSON.parse(json.stdout) as PreflightReport, id).title);
      expect(json.code).toBe(0);
      expect((JSON.parse(json.stdout) as PreflightReport).counts).toEqual({ pass: 11, warn: 0, fail: 0 });
    },
    ROW_MS,
  );

  it(
    'refuses an unknown --target with exit 2, naming the known one',
    async () => {
      // Act
      const result = await cli(['--target', 'no-such-target']);

      // Assess
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`"twin-${twin.state.profile}"`);
    },
    ROW_MS,
  );

  interface Row {
    case: string;
    check: CheckId;
    status: 'warn' | 'fail';
    reason: RegExp;
    /** Breaks one thing and waits until the change took effect; returns how to restore it. */
    breakIt: () => Promise<() => Promise<void>>;
    /** Also run the CLI and expect this exit code. */
    cliExit?: number;
  }

  const rows: Row[] = [
    {
      case: 'the ServiceMonitor deleted',
      check: CHECK_IDS.serviceMonitorScraping,
      status: 'fail',
      reason: /^no ServiceMonitor .* selects Service vllm-inference-\w+/,
      breakIt: () =>
        remove({
          apiVersion: 'monitoring.coreos.com/v1',
          kind: 'ServiceMonitor',
          namespace: twin.state.namespace,
          name: twin.state.deployment,
        }),
    },
    {
      case: 'the DCGM exporter DaemonSet deleted',
      check: CHECK_IDS.dcgmExporter,
      status: 'fail',
      reason: /^no DCGM exporter DaemonSet in any namespace/,
      breakIt: () =>
        remove({ apiVersion: 'apps/v1', kind: 'DaemonSet', namespace: 'gpu-operator', name: 'nvidia-dcgm-exporter' }),
    },
    {
      case: 'the Karpenter do-not-disrupt annotation removed from the Pod template',
      check: CHECK_IDS.karpenterDoNotDisrupt,
      status: 'warn',
      reason: /^the Pod template has no karpenter\.sh\/do-not-disrupt annotation: Karpenter consolidation may evict/,
      breakIt: () => setTemplateAnnotation(DO_NOT_DISRUPT, null),
    },
    {
      case: 'the ScaledObject deleted',
      check: CHECK_IDS.kedaScaledObject,
      status: 'fail',
      reason: /^no ScaledObject in namespace default targets Deployment vllm-inference-app .*: nothing scales/,
      breakIt: () =>
        remove({
          apiVersion: 'keda.sh/v1alpha1',
          kind: 'ScaledObject',
          namespace: twin.state.namespace,
          name: twin.state.deployment,
        }),
    },
    {
      case: '--gpu-memory-utilization 0.95',
      check: CHECK_IDS.gpuMemorySettings,
      status: 'warn',
      reason: /--gpu-memory-utilization 0\.95 is above 0\.9 \(OOM risk/,
      breakIt: () => changeArgs((args) => withFlag(args, '--gpu-memory-utilization', '0.95')),
    },
    {
      // Watching the watcher (issue 16): no heartbeat younger than two evaluation intervals, no pass.
      case: 'the alert evaluator stopped',
      check: CHECK_IDS.alertRules,
      status: 'fail',
      reason:
        /^the alert evaluator has stopped: its last cycle at \S+, \d+ s ago \(more than 2 evaluation intervals, 2 s\)$/,
      breakIt: async () => {
        await evaluator?.stop();
        return async () => {
          evaluator = startScheduler(twinAlertEvaluator(twin.state));
          await evaluator.waitForRuns(1);
        };
      },
    },
    {
      case: '--max-model-len dropped',
      check: CHECK_IDS.gpuMemorySettings,
      status: 'fail',
      reason: /^--max-model-len is not set: vLLM reserves KV cache/,
      breakIt: () => changeArgs((args) => withoutFlag(args, '--max-model-len')),
      cliExit: 1,
    },
  ];

  it.each(rows)(
    '$case: turns $check to $status with its reason, and no other check',
    async ({ check, status, reason, breakIt, cliExit }) => {
      // Prepare
      await preflightUntil(expected());
      const restore = await breakIt();
      try {
        // Act
        const { report, messages } = await preflightUntil(expected({ [check]: status }));

        // Assess: exactly the matching check turned, with its reason and a fix
        expect(statuses(report)).toEqual(expected({ [check]: status }));
        const result = resultOf(report, check);
        expect(result.reason).toMatch(reason);
        expect(result.fix).toEqual(expect.any(String));

        // Assess: one SNS message on a fail, naming the check; none on a warn
        if (status === 'fail') {
          expect(messages).toHaveLength(1);
          const [message] = messages;
          expect(message?.attributes.kind?.value).toBe('preflight');
          expect(message?.attributes.status?.value).toBe('fail');
          expect(message?.attributes.target?.value).toBe(report.target.name);
          expect(message?.attributes.cluster?.value).toBe(twin.state.clusterName);
          const body = JSON.parse(message?.message ?? '{}') as PreflightSummary;
          expect(body.targets[0]?.problems.map((p) => [p.id, p.status, p.reason])).toEqual([
            [check, status, result.reason],
          ]);
        } else expect(messages).toEqual([]);

        if (cliExit !== undefined) {
          const run = await cli([]);
          expect(run.code).toBe(cliExit);
          expect(run.stdout).toContain(result.title);
        }
      } finally {
        await restore();
      }
      // Assess: restoring it brings back a clean report
      const after = await preflightUntil(expected());
      expect(statuses(after.report)).toEqual(expected());
    },
    ROW_MS,
  );
});
