import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  AWS_EVALUATOR_CADENCE,
  alertEvaluatorEnvironment,
  functionLogger,
  driftDetectorEnvironment,
  lambdaContext,
  preflightEnvironment,
  type Profile,
  sweepTwinLeases,
  runConstantArrivalLoad,
  startTwin,
  type Twin,
  TWIN_CREDENTIALS,
  type TwinState,
  twinTarget,
  useTwinCredentials,
} from '../sim/harness/index.js';
import {
  createHandler as createAlertEvaluator,
  depsFromEnvironment as alertEvaluatorDeps,
} from '../functions/alert-evaluator/handler.js';
import {
  createHandler as createCollector,
  depsFromEnvironment as collectorDeps,
} from '../functions/metrics-collector/handler.js';
import {
  createHandler as createPreflight,
  depsFromEnvironment as preflightDeps,
} from '../functions/preflight/handler.js';
import {
  createHandler as createDriftDetector,
  depsFromEnvironment as driftDetectorDeps,
} from '../functions/drift-detector/handler.js';
import { type BillInputs, DAYS_PER_MONTH, type FunctionRun, monthlyBill, type MonthlyBill } from './bill.js';
import { calibrationTransitions, type CalibrationPath } from './transitions.js';
import { dynamoDbUnits, type RequestCounter, startRequestCounter } from './requestCounter.js';
import { readStackFunctions, type ScheduledFunction, type StackFunction } from './stackFunctions.js';
import { PRICE_REGION, PRICES_AS_OF } from './prices.js';
import { COLLECTOR_DEFAULTS } from '../functions/metrics-collector/config.js';
import { alertConditionLookbackSeconds } from '../shared/alerts/index.js';
import { ALERT_RULES, defaultKeepFiringFor, evaluateTarget } from '../shared/alerts/rules/index.js';
import { VLLM_SCRAPE } from '../shared/kube/manifests/index.js';
import { HttpMetricsSource } from '../shared/metrics/index.js';
import { quantile } from '../shared/util/index.js';
import { parseQueryStats } from './alerts.js';
import { BenchError } from './errors.js';

/**
 * The cost part of `npm run bench`: what the control plane costs per month, measured on the twin and priced with
 * bench/prices.ts. The REAL collector and alert-evaluator handlers run against the twin's Prometheus; every query they
 * send is recorded as sent, then replayed with `stats=all`, and Prometheus's `totalQueryableSamples` (the number AMP
 * bills as Query Samples Processed, per its docs) is summed. The collector's PutMetricData requests to the twin's
 * CloudWatch give the series it publishes (the largest item of the bill); pass-through counters in front of the twin's
 * DynamoDB and SNS give every scheduled function's requests. Twins with different Pod counts show what scales with
 * Pods. The schedules and memory come from serverless.yml (bench/stackFunctions.ts), the arithmetic is bench/bill.ts.
 */

export { DAYS_PER_MONTH };
/** A one-minute schedule fires this often in a month: 60 × 24 × 365 / 12 = 43,800. */
export const MINUTE_RUNS_PER_MONTH = 60 * 24 * DAYS_PER_MONTH;
/** A weekly schedule (`cron(0 8 ? * MON *)`) fires 365 / 12 / 7 ≈ 4.35 times a month. */
export const WEEKLY_RUNS_PER_MONTH = DAYS_PER_MONTH / 7;
/** AMP's free tier: 200 billion query samples processed a month (AMP pricing page, stored amp-notes.md). */
export const AMP_FREE_TIER_QUERY_SAMPLES = 200e9;
/** Target counts of the monthly tables. */
export const TARGET_COUNTS = [1, 20, 200] as const;
/** Pods per target the priced tables assume: the larger twin's (measured, not extrapolated). */
export const PODS_PER_TARGET = 2;
/**
 * The cheaper collector settings the bench prices too (docs/metrics-collector.md): four target-level metrics (one
 * series each per target, whatever its Pods) every 5 minutes; and no CloudWatch publishing at all.
 */
export const CHEAPER_SETTINGS = {
  fewer: {
    'collector.schedule': 'rate(5 minutes)',
    'collector.metrics': 'E2ELatencyP95,TimeToFirstTokenP95,QueueDepth,CompletedRequestsPerSecond',
  },
  off: { 'collector.schedule': 'off', 'collector.metrics': '' },
} as const;
/** Calibrations a month per target the Step Functions line assumes (a weekly re-calibration, drift or a new image). */
export const CALIBRATIONS_PER_TARGET_PER_MONTH = 4;
/**
 * The path of a typical calibration on EKS with the input's defaults (shared/calibration/input.ts), assumed: the
 * model loads in about 3 min (rollout polled every 10 s), 100 warmup requests at about 2.5 s (polled every 10 s), a
 * minute to readiness (5 s polls), the guide's linear plan saturating at its sixth step (50-60 req/s), each step held
 * 60 s and watched every 5 s, and AMP's ingestion lag (about a minute) waited out in 3 s polls.
 */
export const TYPICAL_CALIBRATION: CalibrationPath = {
  rolloutPolls: 18,
  warmupPolls: 25,
  readinessPolls: 12,
  loadSteps: 6,
  watchPollsPerStep: 12,
  stepDataPollsPerStep: 20,
};

/** One query a handler sent to the metrics source: the API path and the form parameters, as sent. */
export interface RecordedQuery {
  /** `api/v1/query` or `api/v1/query_range`. */
  path: string;
  params: Record<string, string>;
}

/**
 * A fetch that passes every request through unchanged and records the Prometheus queries among them (the
 * HttpMetricsSource POSTs form bodies). Non-query requests pass through unrecorded.
 */
export function recordingFetch(inner: typeof globalThis.fetch = globalThis.fetch): {
  fetch: typeof globalThis.fetch;
  queries: RecordedQuery[];
} {
  const queries: RecordedQuery[] = [];
  const recording: typeof globalThis.fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const path = /api\/v1\/query(_range)?$/.exec(url.pathname)?.[0];
    if (path !== undefined && typeof init?.body === 'string')
      queries.push({ path, params: Object.fromEntries(new URLSearchParams(init.body)) });
    return inner(input, init);
  };
  return { fetch: recording, queries };
}

/** Samples Prometheus reports for a batch of replayed queries. */
export interface ReplayedCost {
  queries: number;
  samples: number;
  /** The most samples one query touched. */
  largestQuery: number;
}

/**
 * Sends each recorded query again to `prometheusUrl` with `stats=all` (same path, same parameters, so the same
 * evaluation time), and sums `data.stats.samples.totalQueryableSamples`. Throws BenchError when the server does not
 * report samples (it is not a Prometheus 2.35+ or AMP).
 */
export async function replayWithStats(
  prometheusUrl: string,
  queries: readonly RecordedQuery[],
  fetchFn: typeof globalThis.fetch = globalThis.fetch,
): Promise<ReplayedCost> {
  const base = prometheusUrl.endsWith('/') ? prometheusUrl : `${prometheusUrl}/`;
  let samples = 0;
  let largestQuery = 0;
  for (const { path, params } of queries) {
    const response = await fetchFn(new URL(path, base), {
      method: 'POST',
      body: new URLSearchParams({ ...params, stats: 'all' }),
    });
    const stats = parseQueryStats(await response.json());
    if (stats.totalQueryableSamples === undefined)
      throw new BenchError(`Prometheus did not report totalQueryableSamples for ${params.query ?? path}`);
    samples += stats.totalQueryableSamples;
    largestQuery = Math.max(largestQuery, stats.totalQueryableSamples);
  }
  return { queries: queries.length, samples, largestQuery };
}

/** Seconds of a PromQL duration made of whole units (`2m`, `90s`, `1m30s`). */
export function durationSeconds(duration: string): number {
  const units: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400, w: 604_800, y: 31_536_000 };
  const parts = [...duration.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== duration)
    throw new BenchError(`${JSON.stringify(duration)} is not a PromQL duration; accepted: e.g. 30s, 2m, 1m30s`);
  return parts.reduce((sum, p) => sum + Number(p[1]) * (units[p[2] as string] ?? 0), 0);
}

/**
 * How much history the scheduled queries read at most, in seconds: the collector's rate window, and for each alert
 * rule with its default settings the evaluator's look-back (its keep-firing time and its `for`, each with a subquery
 * step; shared/alerts/heldFor.ts) + its rate window. With less history a query touches fewer samples than it will in
 * production.
 */
export function requiredHistorySeconds(collectorRateWindow: string = COLLECTOR_DEFAULTS.rateWindow): number {
  const rules = ALERT_RULES.map(
    (rule) =>
      alertConditionLookbackSeconds(rule.defaults.forSeconds, defaultKeepFiringFor(rule)) + rule.defaults.windowSeconds,
  );
  return Math.max(durationSeconds(collectorRateWindow), ...rules);
}

/** One scheduled function's figures on one twin. */
export interface FunctionRunCost {
  queries: number;
  /** Query samples of one run (one target). */
  samples: number;
  largestQuery: number;
  /** Wall time of the handler on this machine against the twin (not Lambda's billed duration). */
  medianRunMs: number;
  runs: number;
}

/** What one collector run published to CloudWatch (the twin's record of its PutMetricData requests). */
export interface PublishCost {
  publishedDatums: number;
  /** Distinct metric series (namespace + name + dimensions) of one run: what CloudWatch bills a month each. */
  series: number;
  putMetricDataRequests: number;
}

/** Requests a run made to the other AWS services (counted by a pass-through proxy), and its wall time. */
export interface AwsRunCost {
  dynamoDbReads: number;
  dynamoDbWrites: number;
  snsPublishes: number;
  putMetricDataRequests: number;
  /** Series other than the collector's (the evaluator's heartbeat). */
  series: number;
  medianRunMs: number;
}

/** What one twin (one target with `pods` Pods) costs per scheduled run. */
export interface TwinCost {
  pods: number;
  historyS: number;
  collector: FunctionRunCost & PublishCost;
  /** The collector with CHEAPER_SETTINGS.fewer's metrics. */
  collectorFewer: FunctionRunCost & PublishCost;
  evaluator: FunctionRunCost;
  /** One evaluation cycle's DynamoDB, SNS and heartbeat requests with one target, and with two (what a target adds). */
  evaluatorAws: AwsRunCost;
  evaluatorAwsTwoTargets: AwsRunCost;
  preflight: AwsRunCost;
  driftDetector: AwsRunCost;
  sweep: AwsRunCost;
}

/** One row of the monthly table: N targets, each with `pods` Pods. */
export interface MonthlyRow {
  targets: number;
  pods: number;
  invocations: { collector: number; evaluator: number; preflight: number };
  querySamples: { collector: number; evaluator: number; total: number };
  /** total / AMP_FREE_TIER_QUERY_SAMPLES. */
  freeTierFraction: number;
}

/** Evaluation cycles per scheduled evaluator invocation in production (four, 15 s apart, per one-minute run). */
export const EVALUATOR_CYCLES_PER_RUN =
  AWS_EVALUATOR_CADENCE.schedulePeriodSeconds / AWS_EVALUATOR_CADENCE.intervalSeconds;

/**
 * The monthly figures for `targets` targets shaped like `cost`. Each scheduled function is ONE invocation per run
 * whatever the number of targets (the handlers loop over TARGETS), so invocations do not grow with N; every target's
 * queries are scoped to its own series, so query samples grow N-fold.
 */
export function monthlyRow(cost: Pick<TwinCost, 'pods' | 'collector' | 'evaluator'>, targets: number): MonthlyRow {
  const collector = cost.collector.samples * targets * MINUTE_RUNS_PER_MONTH;
  // The evaluator runs EVALUATOR_CYCLES_PER_RUN cycles per invocation (every 15 s); `cost.evaluator` is one cycle's.
  const evaluator = cost.evaluator.samples * targets * MINUTE_RUNS_PER_MONTH * EVALUATOR_CYCLES_PER_RUN;
  return {
    targets,
    pods: cost.pods,
    invocations: {
      collector: MINUTE_RUNS_PER_MONTH,
      evaluator: MINUTE_RUNS_PER_MONTH,
      preflight: WEEKLY_RUNS_PER_MONTH,
    },
    querySamples: { collector, evaluator, total: collector + evaluator },
    freeTierFraction: (collector + evaluator) / AMP_FREE_TIER_QUERY_SAMPLES,
  };
}

/** Samples one more Pod adds to one run of each function: the slope between two twins. */
export function samplesPerPod(
  small: Pick<TwinCost, 'pods' | 'collector' | 'evaluator'>,
  large: Pick<TwinCost, 'pods' | 'collector' | 'evaluator'>,
): { collector: number; evaluator: number } {
  const extra = large.pods - small.pods;
  if (extra <= 0) throw new BenchError(`the larger twin has ${large.pods} Pods, not more than ${small.pods}`);
  return {
    collector: (large.collector.samples - small.collector.samples) / extra,
    evaluator: (large.evaluator.samples - small.evaluator.samples) / extra,
  };
}

/** The priced tables: one per collector setting, each for TARGET_COUNTS targets of PODS_PER_TARGET Pods. */
export interface PricedSetting {
  setting: 'default' | 'fewer' | 'off';
  params: Record<string, string>;
  functions: StackFunction[];
  inputs: BillInputs;
  bills: MonthlyBill[];
}

export interface CostBenchResult {
  profile: string;
  pricesAsOf: string;
  priceRegion: string;
  transitionsPerCalibration: number;
  priced: PricedSetting[];
  scrapeIntervalS: number;
  /** History the queries need for their full cost, and whether the twins had it when measured. */
  requiredHistoryS: number;
  fullHistory: boolean;
  twins: TwinCost[];
  perPod: { collector: number; evaluator: number } | undefined;
  monthly: MonthlyRow[];
  freeTierQuerySamples: number;
  wallS: number;
}

/** What one scheduled function does per run for one target, from the twin's figures (bench/bill.ts prices it). */
export function functionRun(fn: StackFunction, cost: TwinCost, collector: TwinCost['collector']): FunctionRun {
  const deployed = { name: fn.name, schedule: fn.schedule, enabled: fn.enabled, memoryMb: fn.memoryMb };
  const nothing = {
    dynamoDbReads: 0,
    dynamoDbWrites: 0,
    snsPublishes: 0,
    querySamples: 0,
    fixedPutMetricData: 0,
    fixedDynamoDbReads: 0,
    fixedDynamoDbWrites: 0,
  };
  // What a second target adds to an evaluation cycle, and what a cycle does whatever the targets.
  const one = cost.evaluatorAws;
  const two = cost.evaluatorAwsTwoTargets;
  const perTarget = (of: (r: AwsRunCost) => number) => Math.max(0, of(two) - of(one));
  const fixed = (of: (r: AwsRunCost) => number) => Math.max(0, of(one) - perTarget(of));
  const cycles = EVALUATOR_CYCLES_PER_RUN;
  const aws = (measured: AwsRunCost) => ({
    ...deployed,
    ...nothing,
    fixedSeconds: 0,
    secondsPerTarget: measured.medianRunMs / 1000,
    putMetricData: measured.putMetricDataRequests,
    dynamoDbReads: measured.dynamoDbReads,
    dynamoDbWrites: measured.dynamoDbWrites,
    snsPublishes: measured.snsPublishes,
  });
  const byName: Record<ScheduledFunction, () => FunctionRun> = {
    metricsCollector: () => ({
      ...deployed,
      ...nothing,
      fixedSeconds: 0,
      secondsPerTarget: collector.medianRunMs / 1000,
      putMetricData: collector.putMetricDataRequests,
      querySamples: collector.samples,
    }),
    // Deployed, one invocation runs EVALUATOR_CYCLES_PER_RUN cycles 15 s apart: it is billed for the waits between
    // them (45 s) plus its last cycle; each cycle sends the heartbeat (one PutMetricData, whatever the targets).
    alertEvaluator: () => ({
      ...deployed,
      fixedSeconds: AWS_EVALUATOR_CADENCE.schedulePeriodSeconds - AWS_EVALUATOR_CADENCE.intervalSeconds,
      secondsPerTarget: cost.evaluator.medianRunMs / 1000,
      putMetricData: perTarget((r) => r.putMetricDataRequests) * cycles,
      fixedPutMetricData: fixed((r) => r.putMetricDataRequests) * cycles,
      dynamoDbReads: perTarget((r) => r.dynamoDbReads) * cycles,
      fixedDynamoDbReads: fixed((r) => r.dynamoDbReads) * cycles,
      dynamoDbWrites: perTarget((r) => r.dynamoDbWrites) * cycles,
      fixedDynamoDbWrites: fixed((r) => r.dynamoDbWrites) * cycles,
      snsPublishes: one.snsPublishes * cycles,
      querySamples: cost.evaluator.samples * cycles,
    }),
    preflight: () => aws(cost.preflight),
    driftDetector: () => aws(cost.driftDetector),
    calibrationSweepLeases: () => aws(cost.sweep),
  };
  return byName[fn.name]();
}

/** The bill inputs of the stack with `params` (over serverless.yml's defaults) from a twin's figures. */
export function billInputs(
  functions: readonly StackFunction[],
  cost: TwinCost,
  transitionsPerCalibration: number,
  fewer: boolean,
): BillInputs {
  const collector = fewer ? cost.collectorFewer : cost.collector;
  return {
    podsPerTarget: cost.pods,
    functions: functions.map((fn) => functionRun(fn, cost, collector)),
    seriesPerTarget: collector.series,
    fixedSeries: cost.evaluatorAws.series,
    transitionsPerCalibration,
    calibrationsPerTargetPerMonth: CALIBRATIONS_PER_TARGET_PER_MONTH,
  };
}

/** The three priced tables (default, fewer, off) from the twin of PODS_PER_TARGET Pods. */
async function priceSettings(root: string, costs: readonly TwinCost[]): Promise<PricedSetting[]> {
  const cost = costs.find((c) => c.pods === PODS_PER_TARGET) ?? costs[costs.length - 1];
  if (cost === undefined) throw new BenchError('no twin was measured');
  const definition = JSON.parse(await readFile(join(root, 'statemachines', 'calibration.asl.json'), 'utf8')) as {
    States: Record<string, unknown>;
  };
  const transitions = calibrationTransitions(definition, TYPICAL_CALIBRATION);
  const settings = [
    { setting: 'default' as const, params: {} },
    { setting: 'fewer' as const, params: { ...CHEAPER_SETTINGS.fewer } },
    { setting: 'off' as const, params: { ...CHEAPER_SETTINGS.off } },
  ];
  const priced: PricedSetting[] = [];
  for (const { setting, params } of settings) {
    const functions = await readStackFunctions(root, params);
    const inputs = billInputs(functions, cost, transitions, setting === 'fewer');
    priced.push({ setting, params, functions, inputs, bills: TARGET_COUNTS.map((n) => monthlyBill(inputs, n)) });
  }
  return priced;
}

export interface CostBenchOptions {
  /** The repository root: serverless.yml and the ASL are read from it. */
  root: string;
  /** The twins' profile: its replicas are replaced by `pods`, its scrape interval by the ServiceMonitor's. */
  profile: Profile;
  /** Pods of each twin (one twin per entry, run side by side). Default [1, 4]. */
  pods?: readonly number[];
  /** Measure once the first queries answer instead of waiting for the full history (figures are lower bounds). */
  quick?: boolean;
  /** Handler runs per function (the first is measured for samples; all for the wall time). Default 3. */
  runs?: number;
  log: (line: string) => void;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A metrics source on the twin's Prometheus whose queries are recorded (the handlers' own client, own options). */
function recordingSource(state: TwinState): { source: HttpMetricsSource; queries: RecordedQuery[] } {
  const { fetch, queries } = recordingFetch();
  const source = new HttpMetricsSource({
    endpoint: state.prometheusUrl,
    region: state.region,
    credentials: () => Promise.resolve(TWIN_CREDENTIALS),
    fetch,
  });
  return { source, queries };
}

/** The scheduled EventBridge event of `timeMs`. */
const scheduledEvent = (timeMs: number) => ({
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  time: new Date(timeMs).toISOString(),
});

/** Runs `run` `runs` times; the queries of the first run are replayed for their samples. */
async function measureFunction(
  state: TwinState,
  runs: number,
  run: (recorder: { source: HttpMetricsSource }) => Promise<void>,
): Promise<FunctionRunCost> {
  const durations: number[] = [];
  let first: RecordedQuery[] | undefined;
  for (let i = 0; i < runs; i += 1) {
    const recorder = recordingSource(state);
    const began = performance.now();
    await run(recorder);
    durations.push(performance.now() - began);
    first ??= recorder.queries;
  }
  const replayed = await replayWithStats(state.prometheusUrl, first ?? []);
  return { ...replayed, medianRunMs: quantile(durations, 0.5), runs };
}

/** Distinct series (namespace + name + dimensions) among recorded datums. */
export function distinctSeries(
  datums: ReadonlyArray<{ namespace: string; metricName: string; dimensions: Record<string, string> }>,
): number {
  const key = (d: (typeof datums)[number]) =>
    JSON.stringify([d.namespace, d.metricName, Object.entries(d.dimensions).sort(([a], [b]) => a.localeCompare(b))]);
  return new Set(datums.map(key)).size;
}

/**
 * The real collector handler against the twin, configured as the stack configures it (defaults: 2m window, every
 * catalog metric; `metrics`: COLLECTOR_METRICS). What its first run sent to the twin's CloudWatch is counted.
 */
async function measureCollector(twin: Twin, runs: number, metrics?: string): Promise<FunctionRunCost & PublishCost> {
  const { state } = twin;
  const env = {
    TARGETS: JSON.stringify([twinTarget(state)]),
    AMP_WORKSPACE_URL: state.prometheusUrl,
    AWS_REGION: state.aws.region,
    CLOUDWATCH_ENDPOINT: state.aws.cloudwatchEndpoint,
    ...(metrics === undefined ? {} : { COLLECTOR_METRICS: metrics }),
  };
  let publish: PublishCost | undefined;
  const cost = await measureFunction(state, runs, async ({ source }) => {
    // Only the source differs from the Lambda's own deps: it records what it sends.
    const handler = createCollector({
      ...collectorDeps(env, functionLogger('metrics-collector')),
      sourceFor: () => source,
    });
    twin.cloudwatch.clear();
    const result = await handler(scheduledEvent(Date.now()), lambdaContext('metrics-collector'));
    const failed = result.targets.filter((t) => t.status !== 'ok');
    if (failed.length > 0)
      throw new BenchError(
        `the collector did not collect: ${failed.map((t) => `${t.target} ${t.status} ${t.reason ?? ''}`).join('; ')}`,
      );
    const datums = twin.cloudwatch.datums();
    publish ??= {
      publishedDatums: result.targets.reduce((sum, t) => sum + t.published, 0),
      series: distinctSeries(datums),
      putMetricDataRequests: twin.cloudwatch.requests().length,
    };
  });
  if (publish === undefined) throw new BenchError('the collector never ran');
  return { ...cost, ...publish };
}

/** Pass-through counters in front of the twin's DynamoDB and SNS, and environments pointed at them. */
async function countingEndpoints(state: TwinState): Promise<{
  dynamodb: RequestCounter;
  sns: RequestCounter;
  stop: () => Promise<void>;
}> {
  const dynamodb = await startRequestCounter(state.aws.dynamodbEndpoint);
  const sns = await startRequestCounter(state.aws.snsEndpoint);
  return { dynamodb, sns, stop: async () => void (await Promise.all([dynamodb.stop(), sns.stop()])) };
}

/**
 * Runs `run` `runs` times against the counted endpoints; the first run's DynamoDB, SNS and PutMetricData requests
 * (and the series it published) are its cost, the median of all runs its wall time.
 */
async function measureAws(
  twin: Twin,
  runs: number,
  run: (endpoints: { DYNAMODB_ENDPOINT: string; SNS_ENDPOINT: string }) => Promise<void>,
): Promise<AwsRunCost> {
  const counters = await countingEndpoints(twin.state);
  try {
    const durations: number[] = [];
    let first: Omit<AwsRunCost, 'medianRunMs'> | undefined;
    for (let i = 0; i < runs; i += 1) {
      counters.dynamodb.reset();
      counters.sns.reset();
      twin.cloudwatch.clear();
      const began = performance.now();
      await run({ DYNAMODB_ENDPOINT: counters.dynamodb.endpoint, SNS_ENDPOINT: counters.sns.endpoint });
      durations.push(performance.now() - began);
      const units = dynamoDbUnits(counters.dynamodb.counts());
      const sns = counters.sns.counts();
      first ??= {
        dynamoDbReads: units.reads,
        dynamoDbWrites: units.writes,
        snsPublishes: (sns.Publish ?? 0) + (sns.PublishBatch ?? 0),
        putMetricDataRequests: twin.cloudwatch.requests().length,
        series: distinctSeries(twin.cloudwatch.datums()),
      };
    }
    if (first === undefined) throw new BenchError('no run was measured');
    return { ...first, medianRunMs: quantile(durations, 0.5) };
  } finally {
    await counters.stop();
  }
}

/** The real alert-evaluator handler against the twin with the guide's rule settings. */
async function measureEvaluator(state: TwinState, runs: number): Promise<FunctionRunCost> {
  return measureFunction(state, runs, async ({ source }) => {
    const deps = alertEvaluatorDeps(alertEvaluatorEnvironment(state), functionLogger('alert-evaluator'));
    // Only the source differs from the Lambda's own deps (functions/alert-evaluator/handler.ts builds the same call).
    const handler = createAlertEvaluator({
      ...deps,
      evaluate: (target, settings, timeMs) => evaluateTarget(target, settings, { source }, timeMs),
    });
    const summary = await handler(scheduledEvent(Date.now()), lambdaContext('alert-evaluator'));
    if (summary.totals.failedTargets > 0) throw new BenchError('the alert evaluator failed its target');
  });
}

/**
 * One evaluation cycle of the real evaluator (the twin's cadence: one cycle per invocation): its AWS requests. With
 * `targets` 2 the twin's target is listed twice under two names, so the difference is what one target adds.
 */
function measureEvaluatorAws(twin: Twin, runs: number, targets: 1 | 2 = 1): Promise<AwsRunCost> {
  return measureAws(twin, runs, async (endpoints) => {
    const base = alertEvaluatorEnvironment(twin.state);
    const [target] = JSON.parse(base.TARGETS ?? '[]') as Array<{ name: string }>;
    const listed = targets === 1 || target === undefined ? [target] : [target, { ...target, name: `${target.name}-2` }];
    const env = { ...base, ...endpoints, TARGETS: JSON.stringify(listed) };
    const handler = createAlertEvaluator(alertEvaluatorDeps(env, functionLogger('alert-evaluator')));
    const summary = await handler(scheduledEvent(Date.now()), lambdaContext('alert-evaluator'));
    if (summary.totals.failedTargets > 0) throw new BenchError('the alert evaluator failed its target');
  });
}

/** The real preflight handler, weekly run (every check, one target). A check may fail on the twin: it still ran. */
function measurePreflight(twin: Twin, runs: number): Promise<AwsRunCost> {
  return measureAws(twin, runs, async (endpoints) => {
    const env = { ...preflightEnvironment(twin.state), ...endpoints };
    const handler = createPreflight(preflightDeps(env, functionLogger('preflight')));
    await handler({ targets: [] }, lambdaContext('preflight'));
  });
}

/** The real drift-detector handler on its hourly run (the twin's target has no calibration: the check is short). */
function measureDriftDetector(twin: Twin, runs: number): Promise<AwsRunCost> {
  return measureAws(twin, runs, async (endpoints) => {
    const env = { ...driftDetectorEnvironment(twin.state), ...endpoints };
    const handler = createDriftDetector(driftDetectorDeps(env, functionLogger('drift-detector')));
    await handler(scheduledEvent(Date.now()), lambdaContext('drift-detector'));
  });
}

/** The lease sweep's use case (the stack's calibrationSweepLeases) on the twin's target. */
function measureSweep(twin: Twin, runs: number): Promise<AwsRunCost> {
  return measureAws(twin, runs, async () => {
    await sweepTwinLeases(twin.state);
  });
}

/** Starts a twin of `pods` Pods scraped at `scrapeIntervalS`, under a light load through its Service. */
async function startCostTwin(
  profile: Profile,
  pods: number,
  scrapeIntervalS: number,
  log: (line: string) => void,
): Promise<{ twin: Twin; startedAtMs: number; stopLoad: () => Promise<void> }> {
  log(`starting a "${profile.name}" twin with ${pods} Pods, scraped every ${scrapeIntervalS} s`);
  const twin = await startTwin({
    profile: { ...profile, replicas: pods, prometheus: { scrapeIntervalSeconds: scrapeIntervalS } },
    // A 30 s scrape needs up to one more interval before every target is seen.
    readyTimeoutMs: (profile.startup.modelLoadSeconds + 60 + 2 * scrapeIntervalS) * 1000,
  });
  const abort = new AbortController();
  // One request a second per Pod: histograms and counters move, as in production; cost hardly depends on traffic.
  const load = runConstantArrivalLoad({
    urls: [twin.state.serviceUrl],
    model: twin.state.model,
    rps: pods,
    durationS: 3600,
    promptTokens: 35,
    maxTokens: 32,
    signal: abort.signal,
  });
  return {
    twin,
    startedAtMs: Date.now(),
    stopLoad: async () => {
      abort.abort();
      await load.catch(() => undefined);
    },
  };
}

/**
 * Starts one twin per Pod count side by side, waits until their Prometheus holds the history the queries read (or
 * not, with `quick`), then measures the real collector and evaluator on each. Stops every twin always.
 */
export async function benchCost(options: CostBenchOptions): Promise<CostBenchResult> {
  const { profile, log } = options;
  const podCounts = [...(options.pods ?? [1, PODS_PER_TARGET])].sort((a, b) => a - b);
  const runs = options.runs ?? 3;
  const scrapeIntervalS = durationSeconds(VLLM_SCRAPE.interval);
  const requiredHistoryS = requiredHistorySeconds();
  const wallStart = performance.now();
  useTwinCredentials();
  const waitS = options.quick ? 2 * scrapeIntervalS : requiredHistoryS + 2 * scrapeIntervalS;
  log(
    `cost: twins of ${podCounts.join(' and ')} Pods; the queries read up to ${requiredHistoryS} s of history; ` +
      `waiting ${waitS} s after start-up${options.quick ? ' (--quick: figures are lower bounds)' : ''}`,
  );
  const started = await Promise.allSettled(
    podCounts.map((pods) =>
      startCostTwin(profile, pods, scrapeIntervalS, (line) => log(`cost [${pods} Pods] ${line}`)),
    ),
  );
  const twins = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  try {
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const latestStart = Math.max(...twins.map((t) => t.startedAtMs));
    await sleep(Math.max(0, latestStart + waitS * 1000 - Date.now()));
    const costs: TwinCost[] = [];
    for (const { twin, startedAtMs } of twins) {
      const pods = twin.state.replicas.length;
      log(`cost [${pods} Pods] measuring the scheduled functions (${runs} runs each)`);
      const historyS = Math.round((Date.now() - startedAtMs) / 1000);
      costs.push({
        pods,
        historyS,
        collector: await measureCollector(twin, runs),
        collectorFewer: await measureCollector(twin, runs, CHEAPER_SETTINGS.fewer['collector.metrics']),
        evaluator: await measureEvaluator(twin.state, runs),
        evaluatorAws: await measureEvaluatorAws(twin, runs),
        evaluatorAwsTwoTargets: await measureEvaluatorAws(twin, runs, 2),
        preflight: await measurePreflight(twin, 1),
        driftDetector: await measureDriftDetector(twin, runs),
        sweep: await measureSweep(twin, runs),
      });
    }
    const priced = await priceSettings(options.root, costs);
    const [smallest] = costs;
    const largest = costs[costs.length - 1];
    const perPod =
      smallest !== undefined && largest !== undefined && largest.pods > smallest.pods
        ? samplesPerPod(smallest, largest)
        : undefined;
    return {
      profile: profile.name,
      pricesAsOf: PRICES_AS_OF,
      priceRegion: PRICE_REGION,
      transitionsPerCalibration: priced[0]?.inputs.transitionsPerCalibration ?? 0,
      priced,
      scrapeIntervalS,
      requiredHistoryS,
      fullHistory: costs.every((c) => c.historyS >= requiredHistoryS),
      twins: costs,
      perPod,
      monthly: costs.flatMap((cost) => TARGET_COUNTS.map((n) => monthlyRow(cost, n))),
      freeTierQuerySamples: AMP_FREE_TIER_QUERY_SAMPLES,
      wallS: (performance.now() - wallStart) / 1000,
    };
  } finally {
    log('cost: stopping the twins');
    await Promise.all(
      twins.map(async ({ twin, stopLoad }) => {
        await stopLoad();
        await twin.stop();
      }),
    );
  }
}
