import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import {
  type AlertCycleResult,
  type AlertCycleSummary,
  type AlertPublisher,
  type AlertSettings,
  type AlertStateStore,
  mergeAlertCycleSummaries,
  runAlertCycle,
  summarizeAlertCycle,
  TARGET_CYCLE_STATUS,
  type TargetCycleResult,
  type TargetEvaluation,
} from '../../shared/alerts/index.js';
import {
  type AlertTarget,
  type CalibratedAlertThresholds,
  DEFAULT_ALERT_SETTINGS,
  evaluateTarget,
  failedEvaluation,
  withCalibratedThresholds,
} from '../../shared/alerts/rules/index.js';
import { DynamoDbHistoryStore, lastCalibratedAlertThresholds } from '../../shared/calibration/history/index.js';
import { SnsAlertPublisher } from '../../shared/alerts/notify/index.js';
import {
  activeSilence,
  DynamoDbSilenceStore,
  silenceTargetKey,
  type Silence,
  type SilenceStore,
} from '../../shared/alerts/silences/index.js';
import { DynamoDbAlertStateStore } from '../../shared/alerts/state/index.js';
import {
  DynamoDbHeartbeatStore,
  heartbeatDatum,
  heartbeatOf,
  type HeartbeatStore,
} from '../../shared/alerts/heartbeat/index.js';
import { CloudWatchMetricsSink, type MetricsSink } from '../../shared/cloudwatch/index.js';
import { type Clock, systemClock } from '../../shared/clock/index.js';
import { HttpMetricsSource, type MetricsSource } from '../../shared/metrics/index.js';
import type { Target } from '../../shared/config/index.js';
import { mapWithConcurrency } from '../../shared/util/index.js';
import { loadAlertEvaluatorConfig, type AlertEvaluatorConfig } from './config.js';
import { AlertEvaluatorAllTargetsFailedError, AlertEvaluatorEventInvalidError } from './errors.js';
import { lazyLambdaEntry, withDeadline } from '../shared/lambdaEntry.js';
import { parseEvent, scheduledEventSchema } from '../shared/parseEvent.js';

const MAX_LOGGED_ITEMS = 10;
/** Per attempt; with the SDK's 3 attempts a call still ends far inside DEFAULT_CLAIM_TTL_MS. */
const AWS_REQUEST_TIMEOUT_MS = 10_000;

/** Stop starting queries this long before the Lambda deadline, so the cycle still records and publishes. */
export const DEADLINE_MARGIN_MS = 15_000;
/**
 * A later cycle starts only with this much time for its queries before the deadline guard: less, and its queries
 * would be cut off and its targets reported failed for want of time, not for a fault of AMP.
 */
export const MIN_CYCLE_QUERY_MS = 5_000;

/**
 * Evaluates one target's rules at `timeMs` (evaluateTarget against AMP in AWS; anything in tests); `signal` aborts
 * at the invocation's deadline guard.
 */
export type EvaluateFn = (
  target: Target,
  settings: AlertSettings,
  timeMs: number,
  signal: AbortSignal,
) => Promise<TargetEvaluation>;

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts (tests pass one that moves a virtual clock). */
export type WaitFn = (ms: number, signal: AbortSignal) => Promise<void>;

export interface AlertEvaluatorDeps {
  config: AlertEvaluatorConfig;
  evaluate: EvaluateFn;
  store: AlertStateStore;
  publisher: AlertPublisher;
  /** Where silences are kept (a calibration's while it holds a target, people's); none: nothing is muted. */
  silences?: SilenceStore;
  /** Where every cycle records its heartbeat (DynamoDB record, CloudWatch datum); none: no heartbeat. */
  heartbeat?: { store: HeartbeatStore; metrics: MetricsSink };
  /**
   * The alert thresholds the target's last calibration derived (the calibration history), read once per invocation;
   * none: only the settings' and the guide's thresholds.
   */
  calibrated?: (target: Target) => Promise<CalibratedAlertThresholds | undefined>;
  logger: Logger;
  clock?: Clock;
  wait?: WaitFn;
}

/** How the heartbeats of an invocation went: one per cycle, each to DynamoDB and CloudWatch. */
export interface HeartbeatReport {
  /** Cycles whose heartbeat both stores took (a `stale` record, overtaken by a later cycle, counts as taken). */
  recorded: number;
  /** What failed, one line each (the heartbeat alarm and preflight will then see a gap). */
  problems: string[];
}

/** What one invocation returns: its cycles merged (mergeAlertCycleSummaries), each cycle, and why it stopped early. */
export interface AlertEvaluatorResult extends AlertCycleSummary {
  cycles: AlertCycleSummary[];
  /** Cycles the schedule planned for this invocation: schedule period / interval. */
  plannedCycles: number;
  /** Why fewer cycles than planned ran (the remaining time, a slot missed behind a slow cycle); null when all ran. */
  stoppedEarly: string | null;
  heartbeat: HeartbeatReport | null;
}

/**
 * Builds the middy-wrapped handler. One scheduled invocation runs `cyclesPerInvocation` cycles, one per interval from
 * its start (four 15 s apart in a one-minute schedule): evaluate every target, run the notification cycle, record the
 * heartbeat. A later cycle starts only while the Lambda's remaining time holds it; a slot already passed (behind a
 * slow cycle) is skipped, not run late.
 */
export function createHandler(deps: AlertEvaluatorDeps) {
  const clock = deps.clock ?? systemClock;
  const wait = deps.wait ?? waitFor;
  const { config, logger } = deps;
  const intervalMs = config.intervalSeconds * 1000;
  const planned = config.cyclesPerInvocation;

  /** One cycle at `timeMs`: evaluate every target, run the notification cycle; its result and summary. */
  const runCycle = async (
    targets: readonly AlertTarget[],
    timeMs: number,
    context: Context,
    signal: AbortSignal,
  ): Promise<{ result: AlertCycleResult; summary: AlertCycleSummary }> => {
    const settingsByTarget = new Map(targets.map(({ target, settings }) => [target.name, settings]));
    const evaluations = await mapWithConcurrency(targets, config.concurrency, async ({ target, settings }) => {
      try {
        return await untilAborted(deps.evaluate(target, settings, timeMs, signal), signal);
      } catch (error) {
        // A broken target (a bad response, an exception) fails its rules; its alerts keep their state.
        return failedEvaluation(target, settings, timeMs, error);
      }
    });
    const silenced = await activeSilences(deps, targets, clock.now());
    const result = await runAlertCycle({
      evaluations,
      silenceFor: (name) => silenced.get(name) ?? null,
      settingsFor: (name) => settingsByTarget.get(name) ?? DEFAULT_ALERT_SETTINGS,
      store: deps.store,
      publisher: deps.publisher,
      clock,
      evaluatorId: context.awsRequestId,
      log: logger,
      concurrency: config.concurrency,
    });
    for (const target of result.targets) logTarget(logger, target);
    return { result, summary: summarizeAlertCycle(result) };
  };

  const evaluatorHandler = async (
    event: unknown,
    context: Context,
    { signal }: { signal: AbortSignal },
  ): Promise<AlertEvaluatorResult> => {
    const { time } = parseEvent(scheduledEventSchema, event, (issues) => new AlertEvaluatorEventInvalidError(issues));
    // Slots are aligned to the invocation's start; each cycle evaluates at the scheduled time plus its slot, never
    // later than now: Prometheus has no samples from the future.
    const startMs = clock.now();
    const scheduledMs = Math.min(Date.parse(time), startMs);

    // A hanging AMP fails its targets at the deadline guard (named), leaving time to record and publish the rest.
    const deadline = withDeadline(signal, context, DEADLINE_MARGIN_MS);
    // Once per invocation: a calibration finishing now is used from the next minute on.
    const targets = await calibratedTargets(deps, config.targets);
    const cycles: AlertCycleSummary[] = [];
    const heartbeat: HeartbeatReport | null = deps.heartbeat === undefined ? null : { recorded: 0, problems: [] };
    let stoppedEarly: string | null = null;
    try {
      let slot = 0;
      while (slot < planned) {
        if (slot > 0) {
          const waitMs = Math.max(0, startMs + slot * intervalMs - clock.now());
          const queryBudgetMs = remainingMs(context) - waitMs - DEADLINE_MARGIN_MS;
          if (queryBudgetMs < MIN_CYCLE_QUERY_MS) {
            stoppedEarly =
              `cycle ${slot + 1} of ${planned} not started: at its slot ${Math.max(0, Math.round(queryBudgetMs / 1000))} s ` +
              `would be left for its queries before the deadline guard (at least ${MIN_CYCLE_QUERY_MS / 1000} s needed)`;
            break;
          }
          try {
            await wait(waitMs, deadline.signal);
          } catch (error) {
            stoppedEarly = `cycle ${slot + 1} of ${planned} not started: ${(error as Error).message}`;
            break;
          }
        }
        const timeMs = Math.min(scheduledMs + slot * intervalMs, clock.now());
        const { result, summary } = await runCycle(targets, timeMs, context, deadline.signal);
        cycles.push(summary);
        if (deps.heartbeat !== undefined && heartbeat !== null)
          await recordHeartbeat(deps.heartbeat, result, timeMs, heartbeat);
        logger.info('alert evaluation cycle finished', {
          cycle: slot + 1,
          of: planned,
          evaluationTime: new Date(timeMs).toISOString(),
          ...summary.totals,
        });
        // The next slot that has not begun yet: one a slow cycle overran is skipped, not run late.
        const next = Math.max(slot + 1, Math.ceil((clock.now() - startMs) / intervalMs));
        if (next > slot + 1 && next < planned)
          logger.warn('alert evaluation slots skipped behind a slow cycle', { skipped: next - slot - 1 });
        if (next >= planned && next > slot + 1)
          stoppedEarly = `cycle ${slot + 1} of ${planned} overran the remaining slots (it ended ${Math.round((clock.now() - startMs) / 1000)} s after the start)`;
        slot = next;
      }
    } finally {
      deadline.clear();
    }

    const merged = mergeAlertCycleSummaries(cycles);
    const summary: AlertEvaluatorResult = { ...merged, cycles, plannedCycles: planned, stoppedEarly, heartbeat };
    logger.info('alert evaluation finished', {
      evaluationTime: new Date(scheduledMs).toISOString(),
      cycles: cycles.length,
      plannedCycles: planned,
      ...(stoppedEarly === null ? {} : { stoppedEarly }),
      ...(heartbeat === null ? {} : { heartbeatsRecorded: heartbeat.recorded }),
      ...merged.totals,
    });

    // Every target failed in every cycle: throw, so the invocation counts in the Lambda Errors metric and Lambda's
    // asynchronous retries get another chance. Some failed: return normally; the state makes the next cycle retry
    // exactly what did not go out, and the heartbeat says which targets failed.
    const everyTargetFailed = (cycle: AlertCycleSummary) =>
      cycle.totals.targets > 0 && cycle.totals.failedTargets === cycle.totals.targets;
    if (cycles.every(everyTargetFailed)) throw new AlertEvaluatorAllTargetsFailedError(summary, cycles.length);
    return summary;
  };

  /** Records a cycle's heartbeat in DynamoDB and CloudWatch; a failure is logged and reported, never thrown. */
  async function recordHeartbeat(
    ports: NonNullable<AlertEvaluatorDeps['heartbeat']>,
    result: AlertCycleResult,
    evaluationTimeMs: number,
    report: HeartbeatReport,
  ): Promise<void> {
    const beat = heartbeatOf(result, {
      evaluationTimeMs,
      atMs: clock.now(),
      intervalSeconds: config.intervalSeconds,
    });
    const [record, metric] = await Promise.allSettled([
      ports.store.record(beat),
      ports.metrics.publish(config.cloudWatchNamespace, [heartbeatDatum(beat, config.stage)]),
    ]);
    const problems: string[] = [];
    if (record.status === 'rejected') problems.push(`heartbeat record not written: ${describe(record.reason)}`);
    if (metric.status === 'rejected') problems.push(`heartbeat metric not published: ${describe(metric.reason)}`);
    else if (metric.value.published !== 1) {
      const why = [
        ...metric.value.failedBatches.map((b) => describe(b.error)),
        ...metric.value.dropped.map((d) => d.reason),
      ];
      problems.push(`heartbeat metric not published: ${why.join('; ') || 'CloudWatch took no datum'}`);
    }
    if (problems.length === 0) report.recorded += 1;
    else {
      report.problems.push(...problems);
      logger.warn('heartbeat not recorded: the heartbeat alarm and preflight check 5 will see a gap', {
        problems,
        ok: beat.ok,
      });
    }
  }

  return middy(evaluatorHandler).use(injectLambdaContext(logger, { resetKeys: true }));
}

/** The Lambda's remaining time; unbounded where the context has no deadline (a hand-built context). */
function remainingMs(context: Context): number {
  return typeof context.getRemainingTimeInMillis === 'function'
    ? context.getRemainingTimeInMillis()
    : Number.POSITIVE_INFINITY;
}

/** setTimeout as a promise that the signal cuts short (the wait between two cycles). */
function waitFor(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** `work`, or the signal's reason as soon as it aborts (an evaluation that ignores its signal cannot hold the cycle). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Each target with the alert thresholds its last calibration derived in place of the guide's defaults (a threshold
 * its settings give wins). A history that cannot be read changes nothing (logged): the settings' thresholds still
 * alert.
 */
async function calibratedTargets(deps: AlertEvaluatorDeps, targets: readonly AlertTarget[]): Promise<AlertTarget[]> {
  const read = deps.calibrated;
  if (read === undefined) return [...targets];
  return mapWithConcurrency(targets, deps.config.concurrency, async (entry) => {
    try {
      const { settings, outcomes } = withCalibratedThresholds(entry.settings, await read(entry.target));
      if (outcomes.length > 0)
        deps.logger.debug('calibrated alert thresholds', {
          target: entry.target.name,
          thresholds: outcomes.map((o) => `${o.alertname}: ${o.used ? 'used' : 'not used'}, ${o.why}`),
        });
      return { ...entry, settings };
    } catch (error) {
      deps.logger.warn("calibration history not read: the alert settings' thresholds apply", {
        target: entry.target.name,
        error: (error as Error).message,
      });
      return entry;
    }
  });
}

/**
 * The silence muting each target now, by target name. A table that cannot be read mutes nothing (logged): a page
 * during a test is better than an incident nobody hears about.
 */
async function activeSilences(
  deps: AlertEvaluatorDeps,
  targets: readonly AlertTarget[],
  nowMs: number,
): Promise<Map<string, Silence>> {
  const silenced = new Map<string, Silence>();
  const store = deps.silences;
  if (store === undefined) return silenced;
  await mapWithConcurrency(targets, deps.config.concurrency, async ({ target }) => {
    try {
      const silence = activeSilence(await store.list(silenceTargetKey(target)), nowMs);
      if (silence !== null) silenced.set(target.name, silence);
    } catch (error) {
      deps.logger.warn('silences not read: nothing is muted for the target', {
        target: target.name,
        error: (error as Error).message,
      });
    }
  });
  return silenced;
}

/** One line per target: info when ok, warn when partial, error when failed; the decisions with their reasons. */
function logTarget(logger: Logger, target: TargetCycleResult): void {
  const line = {
    target: target.target,
    status: target.status,
    firing: target.firing,
    sent: target.sent.length,
    failed: target.failed.length,
    skipped: target.skipped.length,
    ...(target.muted.length === 0 ? {} : { muted: target.muted.length, silence: target.muted[0]?.silence }),
    decisions: target.decisions.slice(0, MAX_LOGGED_ITEMS).map((d) => `${d.alertname} ${d.fingerprint}: ${d.text}`),
    ...(target.ruleFailures.length === 0
      ? {}
      : { ruleFailures: target.ruleFailures.slice(0, MAX_LOGGED_ITEMS).map((f) => `${f.alertname}: ${f.error}`) }),
    ...(target.problems.length === 0 ? {} : { problems: target.problems.slice(0, MAX_LOGGED_ITEMS) }),
  };
  if (target.status === TARGET_CYCLE_STATUS.ok) logger.info('target evaluated', line);
  else if (target.status === TARGET_CYCLE_STATUS.partial) logger.warn('target evaluated in part', line);
  else logger.error('target failed', line);
}

/** Builds the real adapters from the environment: AMP over SigV4, SNS and DynamoDB through the SDK. */
export function depsFromEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  logger: Logger,
): AlertEvaluatorDeps {
  const config = loadAlertEvaluatorConfig(env);
  // One workspace holds every target's series, so one source serves them all.
  const source = new HttpMetricsSource({ endpoint: config.ampWorkspaceUrl, region: config.ampRegion });
  // Bounded requests: a publish must end well inside the 60 s claim, or a second evaluator could send it again.
  const requestHandler = { connectionTimeout: 3_000, requestTimeout: AWS_REQUEST_TIMEOUT_MS };
  const sns = new SNSClient({
    region: config.region,
    requestHandler,
    ...(config.snsEndpoint === undefined ? {} : { endpoint: config.snsEndpoint }),
  });
  const dynamo = new DynamoDBClient({
    region: config.region,
    requestHandler,
    ...(config.dynamoDbEndpoint === undefined ? {} : { endpoint: config.dynamoDbEndpoint }),
  });
  const cloudWatch = new CloudWatchClient({
    region: config.region,
    requestHandler,
    ...(config.cloudWatchEndpoint === undefined ? {} : { endpoint: config.cloudWatchEndpoint }),
  });
  const history =
    config.historyTableName === undefined
      ? undefined
      : new DynamoDbHistoryStore({ client: dynamo, tableName: config.historyTableName });
  logger.info('configuration loaded', {
    targets: config.targets.map(({ target }) => target.name),
    ampWorkspaceUrl: config.ampWorkspaceUrl,
    topicArn: config.topicArn,
    tableName: config.tableName,
    concurrency: config.concurrency,
    intervalSeconds: config.intervalSeconds,
    cyclesPerInvocation: config.cyclesPerInvocation,
    heartbeat: { namespace: config.cloudWatchNamespace, stage: config.stage },
  });
  return {
    config,
    evaluate: (target, settings, timeMs, signal) =>
      evaluateTarget(target, settings, { source: withSignal(source, signal) }, timeMs),
    store: new DynamoDbAlertStateStore({ client: dynamo, tableName: config.tableName }),
    ...(config.silencesTableName === undefined
      ? {}
      : { silences: new DynamoDbSilenceStore({ client: dynamo, tableName: config.silencesTableName }) }),
    publisher: new SnsAlertPublisher({ client: sns, topicArn: config.topicArn }),
    heartbeat: {
      store: new DynamoDbHeartbeatStore({ client: dynamo, tableName: config.tableName }),
      metrics: new CloudWatchMetricsSink({ client: cloudWatch, concurrency: 1 }),
    },
    ...(history === undefined
      ? {}
      : { calibrated: (target: Target) => lastCalibratedAlertThresholds(history, target) }),
    logger,
  };
}

/** `source` with every query aborted by `signal` (as well as by any signal the caller passes). */
export function withSignal(source: MetricsSource, signal: AbortSignal): MetricsSource {
  const both = (own: AbortSignal | undefined): AbortSignal =>
    own === undefined ? signal : AbortSignal.any([own, signal]);
  return {
    instant: (query, options) => source.instant(query, { ...options, signal: both(options?.signal) }),
    range: (query, options) => source.range(query, { ...options, signal: both(options.signal) }),
  };
}

/** The Lambda entry point (see lazyLambdaEntry: built on first use, configuration parsed once per container). */
export const handler = lazyLambdaEntry<unknown, AlertEvaluatorResult>('alert-evaluator', (env, logger) =>
  createHandler(depsFromEnvironment(env, logger)),
);
