import { performance } from 'node:perf_hooks';
import {
  AWS_EVALUATOR_CADENCE,
  alertEvaluatorEnvironment,
  functionLogger,
  lambdaContext,
  type Profile,
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
import { COLLECTOR_DEFAULTS } from '../functions/metrics-collector/config.js';
import { resolutionFor } from '../shared/alerts/index.js';
import { ALERT_RULES, evaluateTarget } from '../shared/alerts/rules/index.js';
import { VLLM_SCRAPE } from '../shared/kube/manifests/index.js';
import { HttpMetricsSource } from '../shared/metrics/index.js';
import { quantile } from '../shared/util/index.js';
import { parseQueryStats } from './alerts.js';
import { BenchError } from './errors.js';

/**
 * The cost part of `npm run bench`: what the scheduled functions cost per month, measured on the twin. The REAL
 * collector and alert-evaluator handlers run against the twin's Prometheus; every query they send is recorded as
 * sent, then replayed with `stats=all`, and Prometheus's `totalQueryableSamples` (the number AMP bills as Query
 * Samples Processed, per its docs) is summed. Twins with different Pod counts show what scales with Pods. No price
 * is printed: the AMP price per billion samples was not captured; the figures are compared with the free tier.
 */

/** Days in an average month (365 / 12): what "per month" means in every figure here. */
export const DAYS_PER_MONTH = 365 / 12;
/** A one-minute schedule fires this often in a month: 60 × 24 × 365 / 12 = 43,800. */
export const MINUTE_RUNS_PER_MONTH = 60 * 24 * DAYS_PER_MONTH;
/** A weekly schedule (`cron(0 8 ? * MON *)`) fires 365 / 12 / 7 ≈ 4.35 times a month. */
export const WEEKLY_RUNS_PER_MONTH = DAYS_PER_MONTH / 7;
/** AMP's free tier: 200 billion query samples processed a month (AMP pricing page, stored amp-notes.md). */
export const AMP_FREE_TIER_QUERY_SAMPLES = 200e9;
/** Target counts of the monthly table (docs/deploy.md: "for N targets"). */
export const TARGET_COUNTS = [1, 5, 20] as const;

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
 * rule with the guide's defaults its `for` + one subquery step (the held-for check's `offset` reads the step before
 * the `for` window; shared/alerts/heldFor.ts) + its rate window. With less history a query touches fewer samples
 * than it will in production.
 */
export function requiredHistorySeconds(collectorRateWindow: string = COLLECTOR_DEFAULTS.rateWindow): number {
  const rules = ALERT_RULES.map(({ defaults: { forSeconds, windowSeconds } }) =>
    forSeconds === 0 ? windowSeconds : forSeconds + resolutionFor(forSeconds) + windowSeconds,
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

/** What one twin (one target with `pods` Pods) costs per scheduled run. */
export interface TwinCost {
  pods: number;
  historyS: number;
  collector: FunctionRunCost & { publishedDatums: number };
  evaluator: FunctionRunCost;
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

export interface CostBenchResult {
  profile: string;
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

export interface CostBenchOptions {
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

/** The real collector handler against the twin, configured as the stack configures it (defaults: 2m window). */
async function measureCollector(state: TwinState, runs: number): Promise<TwinCost['collector']> {
  const env = {
    TARGETS: JSON.stringify([twinTarget(state)]),
    AMP_WORKSPACE_URL: state.prometheusUrl,
    AWS_REGION: state.aws.region,
    CLOUDWATCH_ENDPOINT: state.aws.cloudwatchEndpoint,
  };
  let publishedDatums = 0;
  const cost = await measureFunction(state, runs, async ({ source }) => {
    // Only the source differs from the Lambda's own deps: it records what it sends.
    const handler = createCollector({
      ...collectorDeps(env, functionLogger('metrics-collector')),
      sourceFor: () => source,
    });
    const result = await handler(scheduledEvent(Date.now()), lambdaContext('metrics-collector'));
    const failed = result.targets.filter((t) => t.status !== 'ok');
    if (failed.length > 0)
      throw new BenchError(
        `the collector did not collect: ${failed.map((t) => `${t.target} ${t.status} ${t.reason ?? ''}`).join('; ')}`,
      );
    publishedDatums = result.targets.reduce((sum, t) => sum + t.published, 0);
  });
  return { ...cost, publishedDatums };
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
  const podCounts = [...(options.pods ?? [1, 4])].sort((a, b) => a - b);
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
      log(`cost [${pods} Pods] measuring the collector and the evaluator (${runs} runs each)`);
      const historyS = Math.round((Date.now() - startedAtMs) / 1000);
      costs.push({
        pods,
        historyS,
        collector: await measureCollector(twin.state, runs),
        evaluator: await measureEvaluator(twin.state, runs),
      });
    }
    const [smallest] = costs;
    const largest = costs[costs.length - 1];
    const perPod =
      smallest !== undefined && largest !== undefined && largest.pods > smallest.pods
        ? samplesPerPod(smallest, largest)
        : undefined;
    return {
      profile: profile.name,
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
