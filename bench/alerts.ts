import { performance } from 'node:perf_hooks';
import * as z from 'zod';
import {
  AWS_EVALUATOR_CADENCE,
  type AlertEvaluatorRun,
  type EvaluatorCadence,
  type FaultRequest,
  type LoadSummary,
  type Profile,
  type RecordedMessage,
  runConstantArrivalLoad,
  startTwin,
  type Twin,
  twinAlertEvaluator,
  twinMetricsSource,
  type TwinState,
  twinTarget,
} from '../sim/harness/index.js';
import {
  ALERT_NAMES,
  alertMessageSchema,
  type AlertName,
  type AlertStatus,
  formatDurationSeconds,
  type NotifyReason,
  type Severity,
} from '../shared/alerts/index.js';
import {
  ALERT_RULES,
  type AlertSettingsInput,
  defaultKeepFiringFor,
  evaluateTarget,
  parseAlertSettings,
  ruleByName,
} from '../shared/alerts/rules/index.js';
import { parse as parseYaml } from 'yaml';
import { ampRuleGroupsNamespaceData } from '../shared/alerts/export/index.js';
import { quantile } from '../shared/util/index.js';
import { BenchError } from './errors.js';

/**
 * The alerting part of `npm run bench`: on the twin, each of the guide's alerts is tripped by its fault, and the REAL
 * alert-evaluator handler, invoked on its production cadence (one invocation per schedule period, four cycles an
 * evaluation interval apart), reports it to the twin's SNS topic. Measured: fault onset → first firing message, and
 * fault cleared → resolved message, on a lag-free twin and on one with AMP's ingestion lag; then the PromQL cost of one
 * evaluation cycle as Prometheus reports it (`stats=all`: samples touched). Nothing is asserted; the figures say
 * whether detection is within `for` + DETECTION_BUDGET_S (issue 16).
 */

/** How `--quick` shrinks the guide's `for` durations and rate windows. */
export const QUICK_SCALE = 10;
/** The schedule the deployed evaluator runs on (EventBridge, every minute), and its interval between cycles. */
export const PRODUCTION_INTERVAL_S = AWS_EVALUATOR_CADENCE.schedulePeriodSeconds;
export const PRODUCTION_EVALUATION_INTERVAL_S = AWS_EVALUATOR_CADENCE.intervalSeconds;
/** Issue 16's promise on a lag-free twin: a firing message at most `for` + this many seconds after the onset. */
export const DETECTION_BUDGET_S = 20;
/**
 * AMP's ingestion lag in the lagged run: AWS says samples may arrive up to about a minute late (DESIGN.md); the bench
 * assumes 30 s ± 15 s in guide mode, divided by QUICK_SCALE in quick mode.
 */
export const LAGGED_AMP = { ingestionLagSeconds: 30, ingestionJitterSeconds: 15 } as const;
/** Requests/s of the light load sent through the latency twin's Service (1 per Pod with its 2 Pods). */
export const LATENCY_LOAD_RPS = 2;

/** `Omit` applied to each member of a union (FaultRequest is one per kind). */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Which alert instance a fault produces, and so which labels of a message name the faulted Pod. */
type InstanceKey = 'pod' | 'gpu' | 'model' | 'target';

/** One alert and the fault that trips it. */
export interface AlertScenario {
  alertname: AlertName;
  /** The Pod fault without its Pod (the bench picks one Pod per fault; the world faults take none). */
  fault: DistributiveOmit<Exclude<FaultRequest, { kind: 'amp-outage' | 'pod-replace' | 'pod-crash' }>, 'pod'>;
  instance: InstanceKey;
  /**
   * `concurrent` faults run at the same time on different Pods: none of them moves another alert's value. The
   * latency fault runs `alone` on a twin of its own: it needs load through the Service, which would reach the other
   * faulted Pods (and their flood of requests would sit in its latency window). The absent-series fault runs `alone`
   * after it on that twin, on every Pod at once (the target's series must all be gone).
   */
  phase: 'concurrent' | 'alone';
  /** The fault goes to every Pod of the twin (default: one). */
  everyPod?: boolean;
}

/**
 * The five scenarios, in the guide's order. Parameters are the twin's defaults except the slowdown: the demo's
 * healthy p95 is ~0.5 s, and the default SLO is 5 s, so steps 20x slower (~10 s per request) cross it.
 */
export const ALERT_SCENARIOS: readonly AlertScenario[] = [
  {
    alertname: 'VLLMHighQueueDepth',
    fault: { kind: 'queue-flood', waiting: 80 },
    instance: 'pod',
    phase: 'concurrent',
  },
  { alertname: 'VLLMHighLatency', fault: { kind: 'slow-decoding', factor: 20 }, instance: 'model', phase: 'alone' },
  {
    alertname: 'VLLMGPUMemoryCritical',
    fault: { kind: 'framebuffer-pressure', fraction: 0.97 },
    instance: 'gpu',
    phase: 'concurrent',
  },
  {
    alertname: 'VLLMKVCacheFull',
    fault: { kind: 'kv-cache-pressure', fraction: 0.97 },
    instance: 'pod',
    phase: 'concurrent',
  },
  {
    alertname: 'VLLMPreemptionSpike',
    fault: { kind: 'preemption-storm', rate: 12 },
    instance: 'pod',
    phase: 'concurrent',
  },
  // Above 80 % and below 95 %: the early warning, not inhibited by VLLMKVCacheFull.
  {
    alertname: 'VLLMKVCacheHigh',
    fault: { kind: 'kv-cache-pressure', fraction: 0.88 },
    instance: 'pod',
    phase: 'concurrent',
  },
  // Every Pod's /metrics answers 503 until the alert fired: the target's vLLM series are gone.
  {
    alertname: 'VLLMMetricsAbsent',
    fault: { kind: 'scrape-gap', seconds: 600 },
    instance: 'target',
    phase: 'alone',
    everyPod: true,
  },
];

/**
 * `guide`: the monitoring guide's `for` and windows (and the product's keep-firing time); `quick`: each divided by
 * QUICK_SCALE.
 */
export type AlertBenchMode = 'guide' | 'quick';

/** The `for`, rate window and keep-firing time (seconds) one rule runs with in the bench. */
export interface RuleTiming {
  forSeconds: number;
  windowSeconds: number;
  keepFiringForSeconds: number;
}

/**
 * The alert settings of a bench run (the input shape of shared/alerts/settings.ts) and the timings they give each
 * rule. `quick` divides each `for`, rate window and keep-firing time by QUICK_SCALE (rounded, `for` >= 1 s when the
 * guide has one, windows >= 10 s so a rate has samples at a 1 s scrape); thresholds stay the guide's.
 */
export function benchAlertSettings(mode: AlertBenchMode): {
  input: AlertSettingsInput;
  timings: Record<AlertName, RuleTiming>;
} {
  const rules: NonNullable<AlertSettingsInput['rules']> = {};
  const timings = {} as Record<AlertName, RuleTiming>;
  for (const rule of ALERT_RULES) {
    const { forSeconds, windowSeconds } = rule.defaults;
    const keepFiringForSeconds = defaultKeepFiringFor(rule);
    const timing =
      mode === 'guide'
        ? { forSeconds, windowSeconds, keepFiringForSeconds }
        : {
            forSeconds: forSeconds === 0 ? 0 : Math.max(1, Math.round(forSeconds / QUICK_SCALE)),
            windowSeconds: windowSeconds === 0 ? 0 : Math.max(10, Math.round(windowSeconds / QUICK_SCALE)),
            keepFiringForSeconds: Math.round(keepFiringForSeconds / QUICK_SCALE),
          };
    timings[rule.name] = timing;
    rules[rule.name] = {
      for: formatDurationSeconds(timing.forSeconds),
      ...(timing.windowSeconds > 0 ? { window: formatDurationSeconds(timing.windowSeconds) } : {}),
      keepFiringFor: formatDurationSeconds(timing.keepFiringForSeconds),
    };
  }
  return { input: { rules }, timings };
}

/** One alert notification as the bench's subscriber received it. */
export interface BenchNotification {
  messageId: string;
  receivedAtMs: number;
  alertname: AlertName;
  severity: Severity;
  status: AlertStatus;
  reason: NotifyReason;
  fingerprint: string;
  labels: Record<string, string>;
}

/** A message of the alerts topic as a BenchNotification, or undefined when it is not a v1 alert message. */
export function toBenchNotification(
  recorded: Pick<RecordedMessage, 'messageId' | 'message' | 'receivedAtMs'>,
): BenchNotification | undefined {
  let body: unknown;
  try {
    body = JSON.parse(recorded.message);
  } catch {
    return undefined;
  }
  const parsed = alertMessageSchema.safeParse(body);
  if (!parsed.success) return undefined;
  const { alertname, severity, status, reason, fingerprint, labels } = parsed.data;
  return {
    messageId: recorded.messageId,
    receivedAtMs: recorded.receivedAtMs,
    alertname,
    severity,
    status,
    reason,
    fingerprint,
    labels,
  };
}

/** What `findNotification` looks for. */
export interface NotificationQuery {
  alertname: AlertName;
  status: AlertStatus;
  /** Every one of these labels must have this value. */
  labels: Record<string, string>;
  /** Only messages received at or after this time (epoch ms). */
  afterMs: number;
}

/** The earliest notification that matches `query`, or undefined. */
export function findNotification(
  notifications: readonly BenchNotification[],
  query: NotificationQuery,
): BenchNotification | undefined {
  let found: BenchNotification | undefined;
  for (const n of notifications) {
    if (n.alertname !== query.alertname || n.status !== query.status || n.receivedAtMs < query.afterMs) continue;
    if (!Object.entries(query.labels).every(([name, value]) => n.labels[name] === value)) continue;
    if (found === undefined || n.receivedAtMs < found.receivedAtMs) found = n;
  }
  return found;
}

/** Fingerprints whose latest notification says firing: alerts a later resolved message must still close. */
export function openFingerprints(notifications: readonly BenchNotification[]): string[] {
  const latest = new Map<string, BenchNotification>();
  for (const n of notifications) {
    const seen = latest.get(n.fingerprint);
    if (seen === undefined || n.receivedAtMs >= seen.receivedAtMs) latest.set(n.fingerprint, n);
  }
  return [...latest.values()]
    .filter((n) => n.status === 'firing')
    .map((n) => n.fingerprint)
    .sort();
}

/** The part of a Prometheus `/api/v1/query` answer with `stats=all` that the bench reads. */
const queryStatsAnswer = z.object({
  status: z.literal('success'),
  data: z.object({
    stats: z
      .object({
        samples: z
          .object({ totalQueryableSamples: z.number().optional(), peakSamples: z.number().optional() })
          .optional(),
      })
      .optional(),
  }),
});

/** Samples Prometheus reports one query touched; `undefined` where the server does not report them. */
export interface QuerySamples {
  totalQueryableSamples: number | undefined;
  peakSamples: number | undefined;
}

/** Reads `data.stats.samples` of a `stats=all` answer; throws BenchError for an answer that is not a success. */
export function parseQueryStats(body: unknown): QuerySamples {
  const parsed = queryStatsAnswer.safeParse(body);
  if (!parsed.success) {
    const error = (body as { error?: unknown } | null)?.error;
    throw new BenchError(
      `Prometheus answered the query without success${typeof error === 'string' ? `: ${error}` : ''}`,
      { cause: parsed.error },
    );
  }
  const samples = parsed.data.data.stats?.samples;
  return { totalQueryableSamples: samples?.totalQueryableSamples, peakSamples: samples?.peakSamples };
}

/** One alert's figures. Times in seconds; null where the message did not arrive before the bench gave up. */
export interface AlertTiming {
  alertname: AlertName;
  severity: Severity;
  /** The fault and its parameters ("queue-flood waiting=80"). */
  fault: string;
  pod: string;
  phase: AlertScenario['phase'];
  forSeconds: number;
  windowSeconds: number;
  onsetToFiringS: number | null;
  /** onsetToFiringS − forSeconds: how long the value took to cross, plus scrape, subquery step and schedule. */
  afterForS: number | null;
  /**
   * When the rule's condition first held (the exported rule's expression over the twin's Prometheus, 1 s steps),
   * seconds after the onset: a rate window filling or slow requests finishing take this long before `for` starts.
   */
  conditionAfterOnsetS: number | null;
  /** Firing message − (condition onset + `for`): what the evaluation cadence, scrape and AMP's lag add. */
  detectionS: number | null;
  /** detectionS <= DETECTION_BUDGET_S (null when no message arrived or the condition onset is unknown). */
  withinBudget: boolean | null;
  /** The fault is cleared as soon as the firing message arrived. */
  clearToResolvedS: number | null;
  notes: string[];
}

/** The PromQL of one rule, as the evaluator sends it, and what Prometheus says it cost. */
export interface AlertQueryCost {
  alertname: AlertName;
  queries: number;
  samplesTouched: number | null;
  peakSamples: number | null;
}

/** The cost of one evaluation cycle (one target) with one set of settings. */
export interface AlertCycleCost {
  settings: AlertBenchMode;
  /** How much history the twin's Prometheus held: a window longer than this touches fewer samples than it will. */
  historyS: number;
  rules: AlertQueryCost[];
  totals: { queries: number; samplesTouched: number | null };
}

/** The evaluator's schedule on one twin during the bench. */
export interface EvaluatorScheduleStats {
  /** Which twin: `faults` (the concurrent faults) or `latency`. */
  twin: BenchTwinRole;
  /** Seconds between invocations (the schedule period) and between the cycles of one invocation. */
  intervalS: number;
  evaluationIntervalS: number;
  runs: number;
  /** Evaluation cycles the invocations ran, and the invocations that stopped early (the remaining time). */
  cycles: number;
  stoppedEarly: number;
  /** Ticks that found the previous run still going (EventBridge would have started a second invocation). */
  skippedTicks: number;
  /** Runs that threw or reported a failed target, a failed rule or a failed send. */
  runsWithProblems: number;
  medianMs: number;
  p95Ms: number;
  maxMs: number;
}

/**
 * The bench's two twins, run side by side: `faults` has one Pod per concurrent fault; `latency` serves the light
 * load through its Service while one of its Pods decodes slowly, with no other fault anywhere near it.
 */
export type BenchTwinRole = 'faults' | 'latency';

/** The same scenarios on a twin with AMP's ingestion lag, beside the lag-free figures. */
export interface LaggedAlertRun {
  amp: { ingestionLagSeconds: number; ingestionJitterSeconds: number };
  timings: AlertTiming[];
  evaluators: EvaluatorScheduleStats[];
}

export interface AlertBenchResult {
  /** Which engine evaluated: the alert-evaluator Lambda (the AMP engine's figures come from its own run). */
  engine: 'lambda';
  profile: string;
  vllmVersion: string;
  /** Replicas of each twin. */
  replicas: Record<BenchTwinRole, number>;
  mode: AlertBenchMode;
  quickScale: number | undefined;
  productionIntervalS: number;
  /** The cadence the evaluator ran with: cycles `evaluationIntervalS` apart, invocations `schedulePeriodS` apart. */
  cadence: { evaluationIntervalS: number; schedulePeriodS: number };
  /** On a lag-free twin (AMP's ingestion lag 0). */
  timings: AlertTiming[];
  /** The same on a twin with AMP's lag (LAGGED_AMP), or undefined when the lagged run was not made. */
  lagged: LaggedAlertRun | undefined;
  /** Measured on the `faults` twin: the run's settings; in quick mode also the guide's. */
  cost: AlertCycleCost[];
  evaluators: EvaluatorScheduleStats[];
  latencyLoad: { offeredRps: number; baselineS: number; completed: number; failed: number } | undefined;
  /** Messages that no scenario explains (another alert tripped by a fault, a repeat): for the reader to judge. */
  otherNotifications: Array<{
    twin: BenchTwinRole;
    atS: number;
    alertname: AlertName;
    status: AlertStatus;
    reason: NotifyReason;
    where: string;
  }>;
  wallS: number;
}

export interface AlertBenchOptions {
  /** The profile of both twins (their replica counts and AMP lag are the bench's). */
  profile: Profile;
  mode: AlertBenchMode;
  /**
   * Seconds between two evaluation cycles; an invocation runs four of them (the production schedule is four 15 s
   * cycles a minute). Default: 15 in guide mode, 15 / QUICK_SCALE (rounded up) in quick mode.
   */
  evalIntervalS?: number;
  /** Also run the scenarios on a twin with AMP's lag (LAGGED_AMP). Default true. */
  lagged?: boolean;
  log: (line: string) => void;
}

/** Cycles one invocation runs, as in production (rate(1 minute), every 15 s). */
const CYCLES_PER_INVOCATION = AWS_EVALUATOR_CADENCE.schedulePeriodSeconds / AWS_EVALUATOR_CADENCE.intervalSeconds;

/** The cadence of a bench run: `intervalS` between cycles, four cycles per invocation. */
export function benchCadence(mode: AlertBenchMode, intervalS?: number): EvaluatorCadence {
  const interval =
    intervalS ??
    (mode === 'guide'
      ? AWS_EVALUATOR_CADENCE.intervalSeconds
      : Math.ceil(AWS_EVALUATOR_CADENCE.intervalSeconds / QUICK_SCALE));
  return { intervalSeconds: interval, schedulePeriodSeconds: interval * CYCLES_PER_INVOCATION };
}

/** Replicas of each twin: one Pod per concurrent fault; two behind the Service for the faults run alone. */
export const ALERT_BENCH_REPLICAS: Readonly<Record<BenchTwinRole, number>> = {
  faults: ALERT_SCENARIOS.filter((s) => s.phase === 'concurrent').length,
  latency: 2,
};
/** Slack the bench gives an alert beyond its `for`, window and schedule before it notes the message as missing. */
const GRACE_S = 120;
/** Most healthy traffic the latency window holds before the fault (a full 5 m window would add 5 min to the run). */
const MAX_BASELINE_S = 60;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const tenths = (seconds: number) => Math.round(seconds * 10) / 10;

/**
 * Invokes the evaluator every `cadence.schedulePeriodSeconds` at fixed times, as EventBridge does; each invocation runs
 * its cycles itself. Never two invocations of its own at once (a tick that finds one running is counted as skipped).
 */
function startSchedule(
  role: BenchTwinRole,
  run: AlertEvaluatorRun,
  cadence: EvaluatorCadence,
  log: (line: string) => void,
): { stop(): Promise<EvaluatorScheduleStats> } {
  const intervalS = cadence.schedulePeriodSeconds;
  const durationsMs: number[] = [];
  let skippedTicks = 0;
  let runsWithProblems = 0;
  let cycles = 0;
  let stoppedEarly = 0;
  let inFlight: Promise<void> | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let tick = 0;
  const startMs = Date.now();
  const problem = (text: string) => {
    runsWithProblems += 1;
    if (runsWithProblems <= 5) log(`evaluator run with a problem: ${text}`);
  };
  const fire = () => {
    if (stopped) return;
    if (inFlight !== undefined) skippedTicks += 1;
    else {
      const began = performance.now();
      inFlight = run()
        .then(
          (summary) => {
            durationsMs.push(performance.now() - began);
            cycles += summary.cycles.length;
            if (summary.stoppedEarly !== null) stoppedEarly += 1;
            const issues = summary.targets.flatMap((t) => [...t.problems, ...t.ruleFailures, ...t.failed]);
            if (summary.totals.failedTargets > 0 || issues.length > 0) problem(issues.join('; ') || 'failed target');
          },
          (error: unknown) => problem(error instanceof Error ? `${error.name}: ${error.message}` : String(error)),
        )
        .finally(() => {
          inFlight = undefined;
        });
    }
    tick += 1;
    timer = setTimeout(fire, Math.max(0, startMs + tick * intervalS * 1000 - Date.now()));
  };
  fire();
  return {
    async stop(): Promise<EvaluatorScheduleStats> {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
      return {
        twin: role,
        intervalS,
        evaluationIntervalS: cadence.intervalSeconds,
        runs: durationsMs.length,
        cycles,
        stoppedEarly,
        skippedTicks,
        runsWithProblems,
        medianMs: quantile(durationsMs, 0.5),
        p95Ms: quantile(durationsMs, 0.95),
        maxMs: durationsMs.length > 0 ? Math.max(...durationsMs) : Number.NaN,
      };
    },
  };
}

/** One twin of the bench with its subscriber and its evaluator schedule. */
interface BenchTwin {
  role: BenchTwinRole;
  twin: Twin;
  startedAtMs: number;
  notifications: BenchNotification[];
  /** Messages a scenario accounted for (the rest are "other notifications"). */
  explained: Set<string>;
  timings: Record<AlertName, RuleTiming>;
  /** The alert settings the evaluator runs with (the bench's `for` and windows). */
  settingsInput: AlertSettingsInput;
  /** The schedule period: a message can wait this long for the invocation that sends it. */
  evalIntervalS: number;
  log: (line: string) => void;
  /** Stops the schedule and the subscription (once), returning the schedule's figures. */
  finish(): Promise<EvaluatorScheduleStats>;
}

/** Starts one twin, warms its engines, subscribes to its alerts topic and starts the evaluator schedule. */
async function startBenchTwin(
  role: BenchTwinRole,
  profile: Profile,
  settings: { input: AlertSettingsInput; timings: Record<AlertName, RuleTiming> },
  cadence: EvaluatorCadence,
  parentLog: (line: string) => void,
): Promise<BenchTwin> {
  const log = (line: string) => parentLog(`[${role}] ${line}`);
  log(`starting the "${profile.name}" twin (${profile.replicas} replicas)`);
  const twin = await startTwin({ profile, log: (line) => log(`  ${line}`) });
  try {
    await warmUp(twin);
  } catch (error) {
    await twin.stop();
    throw error;
  }
  const notifications: BenchNotification[] = [];
  const unsubscribe = twin.sns.subscribe(twin.state.aws.alertTopicArn, (message) => {
    const notification = toBenchNotification(message);
    if (notification === undefined) log('a message on the alerts topic is not a v1 alert message');
    else notifications.push(notification);
  });
  const schedule = startSchedule(
    role,
    twinAlertEvaluator(twin.state, { alerts: settings.input, cadence }),
    cadence,
    log,
  );
  let finished: Promise<EvaluatorScheduleStats> | undefined;
  return {
    role,
    twin,
    startedAtMs: Date.now(),
    notifications,
    explained: new Set(),
    timings: settings.timings,
    settingsInput: settings.input,
    evalIntervalS: cadence.schedulePeriodSeconds,
    log,
    finish: () => {
      finished ??= (async () => {
        const stats = await schedule.stop();
        twin.faults.clear();
        await twin.sns.flush();
        unsubscribe();
        return stats;
      })();
      return finished;
    },
  };
}

async function waitForNotification(
  run: BenchTwin,
  query: NotificationQuery,
  deadlineMs: number,
): Promise<BenchNotification | undefined> {
  for (;;) {
    const found = findNotification(run.notifications, query);
    if (found !== undefined) return found;
    if (Date.now() > deadlineMs) return undefined;
    await sleep(200);
  }
}

function describeFault(fault: AlertScenario['fault']): string {
  const params = Object.entries(fault)
    .filter(([key]) => key !== 'kind')
    .map(([key, value]) => `${key}=${String(value)}`);
  return [fault.kind, ...params].join(' ');
}

/** The labels that name the faulted Pod in a message of the scenario's alert. */
function instanceLabels(state: TwinState, scenario: AlertScenario, pod: string): Record<string, string> {
  if (scenario.instance === 'pod') return { pod };
  if (scenario.instance === 'model') return { namespace: state.namespace };
  if (scenario.instance === 'target') return { namespace: state.namespace };
  const replica = state.replicas.find((r) => r.name === pod);
  if (replica === undefined) throw new BenchError(`pod ${pod} is not in the twin's state`);
  return { UUID: replica.gpuUuid };
}

/**
 * When the scenario's condition first held for its instance, between the onset and the firing message: the exported
 * rule's expression (the condition without `for`, as AMP's ruler evaluates it) over the twin's Prometheus at 1 s steps.
 */
async function conditionOnset(
  run: BenchTwin,
  scenario: AlertScenario,
  labels: Record<string, string>,
  onsetMs: number,
  firingMs: number,
): Promise<number | undefined> {
  const state = run.twin.state;
  const data = ampRuleGroupsNamespaceData({
    targets: [{ target: twinTarget(state), settings: parseAlertSettings(run.settingsInput) }],
  });
  const groups = (parseYaml(data) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> }).groups;
  const expr = groups.flatMap((g) => g.rules).find((r) => r.alert === scenario.alertname)?.expr;
  if (expr === undefined) throw new BenchError(`no exported rule ${scenario.alertname}`);
  const series = await twinMetricsSource(state).range(expr, {
    startMs: Math.floor(onsetMs / 1000) * 1000,
    endMs: Math.ceil(firingMs / 1000) * 1000,
    stepSeconds: 1,
  });
  const mine = series.filter((s) => Object.entries(labels).every(([name, value]) => s.labels[name] === value));
  const first = mine.flatMap((s) => s.points.map((p) => p.timestampMs)).sort((a, b) => a - b)[0];
  if (first === undefined) throw new BenchError(`the condition of ${scenario.alertname} never held before it fired`);
  return first;
}

/** Injects the scenario's fault on `pod`, waits for firing, clears the fault, waits for resolved. */
async function runScenario(run: BenchTwin, scenario: AlertScenario, pod: string): Promise<AlertTiming> {
  const { twin, log, evalIntervalS } = run;
  const { forSeconds, windowSeconds, keepFiringForSeconds } = run.timings[scenario.alertname];
  const labels = instanceLabels(twin.state, scenario, pod);
  const name = scenario.alertname;
  const timing: AlertTiming = {
    alertname: name,
    severity: ruleByName(name).severity,
    fault: describeFault(scenario.fault),
    pod,
    phase: scenario.phase,
    forSeconds,
    windowSeconds,
    onsetToFiringS: null,
    afterForS: null,
    conditionAfterOnsetS: null,
    detectionS: null,
    withinBudget: null,
    clearToResolvedS: null,
    notes: [],
  };
  const pods = scenario.everyPod === true ? twin.state.replicas.map((r) => r.name) : [pod];
  const [fault] = pods.map((p) => twin.faults.inject({ ...scenario.fault, pod: p }));
  if (fault === undefined) throw new BenchError(`no Pod to inject ${timing.fault} into`);
  log(`${name}: injected ${timing.fault} on ${pods.length === 1 ? `pod ${pod}` : `all ${pods.length} pods`}`);
  const firingDeadline = fault.onsetMs + (forSeconds + windowSeconds + 3 * evalIntervalS + GRACE_S) * 1000;
  const firing = await waitForNotification(
    run,
    { alertname: name, status: 'firing', labels, afterMs: fault.onsetMs },
    firingDeadline,
  );
  const clearedAtMs = Date.now();
  for (const p of pods) twin.faults.clear(p);
  if (firing === undefined) {
    timing.notes.push(`no firing message within ${Math.round((firingDeadline - fault.onsetMs) / 1000)} s`);
    log(`${name}: no firing message; fault cleared`);
    return timing;
  }
  run.explained.add(firing.messageId);
  timing.onsetToFiringS = tenths((firing.receivedAtMs - fault.onsetMs) / 1000);
  timing.afterForS = tenths(timing.onsetToFiringS - forSeconds);
  const conditionAtMs = await conditionOnset(run, scenario, labels, fault.onsetMs, firing.receivedAtMs).catch(
    (error: unknown) => {
      timing.notes.push(`condition onset unknown: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    },
  );
  if (conditionAtMs !== undefined) {
    timing.conditionAfterOnsetS = tenths((conditionAtMs - fault.onsetMs) / 1000);
    timing.detectionS = tenths((firing.receivedAtMs - conditionAtMs) / 1000 - forSeconds);
    timing.withinBudget = timing.detectionS <= DETECTION_BUDGET_S;
  }
  if (firing.reason !== 'first') timing.notes.push(`first firing message had reason ${firing.reason}`);
  log(`${name}: firing after ${timing.onsetToFiringS} s; fault cleared`);

  const resolvedDeadline = clearedAtMs + (windowSeconds + keepFiringForSeconds + 3 * evalIntervalS + GRACE_S) * 1000;
  const resolved = await waitForNotification(
    run,
    { alertname: name, status: 'resolved', labels, afterMs: firing.receivedAtMs },
    resolvedDeadline,
  );
  if (resolved === undefined) {
    timing.notes.push(`no resolved message within ${Math.round((resolvedDeadline - clearedAtMs) / 1000)} s`);
    log(`${name}: no resolved message`);
    return timing;
  }
  run.explained.add(resolved.messageId);
  timing.clearToResolvedS = tenths((resolved.receivedAtMs - clearedAtMs) / 1000);
  log(`${name}: resolved ${timing.clearToResolvedS} s after the fault was cleared`);
  return timing;
}

/** The concurrent faults, one per Pod of the `faults` twin, all at once. */
async function runConcurrentFaults(run: BenchTwin): Promise<AlertTiming[]> {
  const pods = run.twin.state.replicas.map((r) => r.name).sort();
  const scenarios = ALERT_SCENARIOS.filter((s) => s.phase === 'concurrent');
  run.log(`${scenarios.length} faults at once, one per Pod`);
  try {
    return await Promise.all(scenarios.map((scenario, i) => runScenario(run, scenario, pods[i] as string)));
  } finally {
    await run.finish();
  }
}

/**
 * The latency fault on one Pod of the `latency` twin, under a light load through its Service that starts
 * `baselineS` before the fault (healthy requests in the window) and lasts until the alert resolved: without
 * traffic the rule has no value, which would resolve it for the wrong reason.
 */
async function runLatencyFault(
  run: BenchTwin,
  baselineS: number,
): Promise<{ timings: AlertTiming[]; load: AlertBenchResult['latencyLoad'] }> {
  const { state } = run.twin;
  const pod = state.replicas.map((r) => r.name).sort()[0] as string;
  const scenarios = ALERT_SCENARIOS.filter((s) => s.phase === 'alone');
  run.log(`${LATENCY_LOAD_RPS} req/s through the Service; ${baselineS} s of healthy traffic before the fault`);
  const stopLoad = new AbortController();
  const load = runConstantArrivalLoad({
    urls: [state.serviceUrl],
    model: state.model,
    rps: LATENCY_LOAD_RPS,
    durationS: 3600,
    promptTokens: 35,
    maxTokens: 32,
    signal: stopLoad.signal,
  });
  const timings: AlertTiming[] = [];
  let summary: LoadSummary;
  try {
    await sleep(baselineS * 1000);
    for (const scenario of scenarios) timings.push(await runScenario(run, scenario, pod));
  } finally {
    stopLoad.abort();
    summary = await load;
    await run.finish();
  }
  return {
    timings,
    load: { offeredRps: summary.offeredRps, baselineS, completed: summary.completed, failed: summary.failed },
  };
}

/** POSTs `query` to the twin's Prometheus with `stats=all` at `timeMs`. */
async function querySamples(prometheusUrl: string, query: string, timeMs: number): Promise<QuerySamples> {
  const url = new URL('api/v1/query', prometheusUrl.endsWith('/') ? prometheusUrl : `${prometheusUrl}/`);
  const body = new URLSearchParams({ query, time: String(timeMs / 1000), stats: 'all' });
  const response = await fetch(url, { method: 'POST', body });
  return parseQueryStats(await response.json());
}

/** The queries one evaluation cycle sends with `input` (from evaluateTarget itself), and their cost. */
async function measureCycleCost(
  state: TwinState,
  mode: AlertBenchMode,
  input: AlertSettingsInput,
  historyS: number,
): Promise<AlertCycleCost> {
  const timeMs = Date.now();
  const evaluation = await evaluateTarget(
    twinTarget(state),
    parseAlertSettings(input),
    { source: twinMetricsSource(state) },
    timeMs,
  );
  const rules: AlertQueryCost[] = [];
  for (const alertname of ALERT_NAMES) {
    const queries = evaluation.queries.filter((q) => q.alertname === alertname);
    let samplesTouched: number | null = 0;
    let peakSamples: number | null = 0;
    for (const { query } of queries) {
      const stats = await querySamples(state.prometheusUrl, query, timeMs);
      samplesTouched =
        stats.totalQueryableSamples === undefined ? null : (samplesTouched ?? 0) + stats.totalQueryableSamples;
      peakSamples = stats.peakSamples === undefined ? null : Math.max(peakSamples ?? 0, stats.peakSamples);
    }
    rules.push({ alertname, queries: queries.length, samplesTouched, peakSamples });
  }
  const reported = rules.every((r) => r.samplesTouched !== null);
  return {
    settings: mode,
    historyS,
    rules,
    totals: {
      queries: rules.reduce((sum, r) => sum + r.queries, 0),
      samplesTouched: reported ? rules.reduce((sum, r) => sum + (r.samplesTouched ?? 0), 0) : null,
    },
  };
}

/** Sends each replica its warm-up requests, so the first measured requests see a warm engine. */
async function warmUp(twin: Twin): Promise<void> {
  const { state, profile } = twin;
  const rps = 10;
  await runConstantArrivalLoad({
    urls: state.replicas.map((r) => r.url),
    model: state.model,
    rps,
    durationS: Math.max(1, Math.ceil((profile.startup.warmupRequests * state.replicas.length) / rps)),
    promptTokens: 35,
    maxTokens: 32,
  });
}

/** Messages of one twin that no scenario explains. */
function otherNotificationsOf(run: BenchTwin, originMs: number): AlertBenchResult['otherNotifications'] {
  return run.notifications
    .filter((n) => !run.explained.has(n.messageId))
    .map((n) => ({
      twin: run.role,
      atS: tenths((n.receivedAtMs - originMs) / 1000),
      alertname: n.alertname,
      status: n.status,
      reason: n.reason,
      where: n.labels.pod ?? n.labels.UUID ?? n.labels.model_name ?? n.fingerprint,
    }));
}

/** What one run of the scenarios (two twins side by side) measured. */
interface VariantOutcome {
  timings: AlertTiming[];
  evaluators: EvaluatorScheduleStats[];
  latencyLoad: AlertBenchResult['latencyLoad'];
  otherNotifications: AlertBenchResult['otherNotifications'];
  cost: AlertCycleCost[];
}

/**
 * Starts two twins side by side with `amp`'s ingestion lag: the `faults` twin gets its faults at once on different
 * Pods; the `latency` twin gets the slow-decoding fault alone, under a light load through its Service, then loses every
 * Pod's metrics. Each runs the real evaluator on `cadence`. With `measureCost`, then measures the cost of one
 * evaluation cycle on the `faults` twin. Stops both twins always.
 */
async function runVariant(
  options: AlertBenchOptions,
  amp: Profile['amp'],
  cadence: EvaluatorCadence,
  measureCost: boolean,
  log: (line: string) => void,
): Promise<VariantOutcome> {
  const { mode } = options;
  const settings = benchAlertSettings(mode);
  const originMs = Date.now();
  const latencyScenario = ALERT_SCENARIOS.find((s) => s.phase === 'alone');
  const baselineS = Math.min(
    Math.max(latencyScenario ? settings.timings[latencyScenario.alertname].windowSeconds : 0, 10),
    MAX_BASELINE_S,
  );
  const roles = ['faults', 'latency'] as const;
  const started = await Promise.allSettled(
    roles.map((role) =>
      startBenchTwin(role, { ...options.profile, replicas: ALERT_BENCH_REPLICAS[role], amp }, settings, cadence, log),
    ),
  );
  const runs = started.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
  try {
    const failed = started.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const [faults, latency] = runs as [BenchTwin, BenchTwin];
    const [concurrentTimings, latencyOutcome] = await Promise.all([
      runConcurrentFaults(faults),
      runLatencyFault(latency, baselineS),
    ]);
    const evaluators = await Promise.all(runs.map((run) => run.finish()));

    const cost: AlertCycleCost[] = [];
    if (measureCost) {
      log('alerts: [faults] measuring the PromQL cost of one evaluation cycle (stats=all)');
      const historyS = Math.round((Date.now() - faults.startedAtMs) / 1000);
      cost.push(await measureCycleCost(faults.twin.state, mode, settings.input, historyS));
      if (mode === 'quick')
        cost.push(await measureCycleCost(faults.twin.state, 'guide', benchAlertSettings('guide').input, historyS));
    }
    const order = (name: AlertName) => ALERT_NAMES.indexOf(name);
    return {
      timings: [...concurrentTimings, ...latencyOutcome.timings].sort(
        (a, b) => order(a.alertname) - order(b.alertname),
      ),
      evaluators,
      latencyLoad: latencyOutcome.load,
      otherNotifications: runs.flatMap((run) => otherNotificationsOf(run, originMs)),
      cost,
    };
  } finally {
    log('alerts: stopping the twins');
    await Promise.all(
      runs.map(async (run) => {
        // A failed schedule must not keep the twin (and its Prometheus) running.
        await run.finish().catch(() => undefined);
        await run.twin.stop();
      }),
    );
  }
}

/**
 * The alerts bench of the Lambda engine: the scenarios on lag-free twins (AMP's ingestion lag 0: what the evaluator
 * itself adds to `for`), then, unless `lagged` is false, on twins with AMP's lag (LAGGED_AMP), one after the other so
 * the two runs do not share the CPU.
 */
export async function benchAlerts(options: AlertBenchOptions): Promise<AlertBenchResult> {
  const { mode, log } = options;
  const cadence = benchCadence(mode, options.evalIntervalS);
  const wallStart = performance.now();
  const scale = mode === 'quick' ? QUICK_SCALE : 1;
  const lagged = {
    ingestionLagSeconds: LAGGED_AMP.ingestionLagSeconds / scale,
    ingestionJitterSeconds: LAGGED_AMP.ingestionJitterSeconds / scale,
  };
  log(
    `alerts: ${mode === 'quick' ? `quick: for and windows / ${QUICK_SCALE}` : "the guide's for and windows"}, ` +
      `evaluator invoked every ${cadence.schedulePeriodSeconds} s, ${CYCLES_PER_INVOCATION} cycles ` +
      `${cadence.intervalSeconds} s apart; lag-free, then with AMP's lag ${lagged.ingestionLagSeconds} s ± ` +
      `${lagged.ingestionJitterSeconds} s; this takes about ${mode === 'quick' ? 5 : 24} min`,
  );
  const lagFree = await runVariant(
    options,
    { ingestionLagSeconds: 0, ingestionJitterSeconds: 0 },
    cadence,
    true,
    (line) => log(`[lag-free] ${line}`),
  );
  const laggedRun =
    options.lagged === false
      ? undefined
      : await runVariant(options, lagged, cadence, false, (line) => log(`[lagged] ${line}`));
  return {
    engine: 'lambda',
    profile: options.profile.name,
    vllmVersion: options.profile.vllmVersion,
    replicas: { ...ALERT_BENCH_REPLICAS },
    mode,
    quickScale: mode === 'quick' ? QUICK_SCALE : undefined,
    productionIntervalS: PRODUCTION_INTERVAL_S,
    cadence: { evaluationIntervalS: cadence.intervalSeconds, schedulePeriodS: cadence.schedulePeriodSeconds },
    timings: lagFree.timings,
    lagged:
      laggedRun === undefined
        ? undefined
        : { amp: lagged, timings: laggedRun.timings, evaluators: laggedRun.evaluators },
    cost: lagFree.cost,
    evaluators: lagFree.evaluators,
    latencyLoad: lagFree.latencyLoad,
    otherNotifications: lagFree.otherNotifications,
    wallS: (performance.now() - wallStart) / 1000,
  };
}
