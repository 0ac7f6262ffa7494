import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import {
  type AlertCycleSummary,
  type AlertPublisher,
  type AlertSettings,
  type AlertStateStore,
  runAlertCycle,
  summarizeAlertCycle,
  TARGET_CYCLE_STATUS,
  type TargetCycleResult,
  type TargetEvaluation,
} from '../../shared/alerts/index.js';
import { DEFAULT_ALERT_SETTINGS, evaluateTarget, failedEvaluation } from '../../shared/alerts/rules/index.js';
import { SnsAlertPublisher } from '../../shared/alerts/notify/index.js';
import {
  activeSilence,
  DynamoDbSilenceStore,
  silenceTargetKey,
  type Silence,
  type SilenceStore,
} from '../../shared/alerts/silences/index.js';
import { DynamoDbAlertStateStore } from '../../shared/alerts/state/index.js';
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
const DEADLINE_MARGIN_MS = 15_000;

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

export interface AlertEvaluatorDeps {
  config: AlertEvaluatorConfig;
  evaluate: EvaluateFn;
  store: AlertStateStore;
  publisher: AlertPublisher;
  /** Where silences are kept (a calibration's while it holds a target, people's); none: nothing is muted. */
  silences?: SilenceStore;
  logger: Logger;
  clock?: Clock;
}

/** Builds the middy-wrapped handler: evaluate every target, run the notification cycle, log and return a summary. */
export function createHandler(deps: AlertEvaluatorDeps) {
  const clock = deps.clock ?? systemClock;
  const { config, logger } = deps;
  const settingsByTarget = new Map(config.targets.map(({ target, settings }) => [target.name, settings]));

  const evaluatorHandler = async (
    event: unknown,
    context: Context,
    { signal }: { signal: AbortSignal },
  ): Promise<AlertCycleSummary> => {
    const { time } = parseEvent(scheduledEventSchema, event, (issues) => new AlertEvaluatorEventInvalidError(issues));
    // The scheduled minute, never later than now: Prometheus has no samples from the future.
    const timeMs = Math.min(Date.parse(time), clock.now());

    // A hanging AMP fails its targets at the deadline guard (named), leaving time to record and publish the rest.
    const deadline = withDeadline(signal, context, DEADLINE_MARGIN_MS);
    const evaluations = await mapWithConcurrency(config.targets, config.concurrency, async ({ target, settings }) => {
      try {
        return await untilAborted(deps.evaluate(target, settings, timeMs, deadline.signal), deadline.signal);
      } catch (error) {
        // A broken target (a bad response, an exception) fails its rules; its alerts keep their state.
        return failedEvaluation(target, settings, timeMs, error);
      }
    }).finally(() => deadline.clear());

    const silenced = await activeSilences(deps, config.targets, clock.now());
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
    const summary = summarizeAlertCycle(result);
    logger.info('alert evaluation finished', { evaluationTime: new Date(timeMs).toISOString(), ...summary.totals });

    // Every target failed: throw, so the invocation counts in the Lambda Errors metric and Lambda's asynchronous
    // retries get another chance. Some failed: return normally; the state makes the next run retry exactly what did
    // not go out.
    if (summary.totals.targets > 0 && summary.totals.failedTargets === summary.totals.targets)
      throw new AlertEvaluatorAllTargetsFailedError(summary);
    return summary;
  };

  return middy(evaluatorHandler).use(injectLambdaContext(logger, { resetKeys: true }));
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
 * The silence muting each target now, by target name. A table that cannot be read mutes nothing (logged): a page
 * during a test is better than an incident nobody hears about.
 */
async function activeSilences(
  deps: AlertEvaluatorDeps,
  targets: AlertEvaluatorConfig['targets'],
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
  logger.info('configuration loaded', {
    targets: config.targets.map(({ target }) => target.name),
    ampWorkspaceUrl: config.ampWorkspaceUrl,
    topicArn: config.topicArn,
    tableName: config.tableName,
    concurrency: config.concurrency,
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
export const handler = lazyLambdaEntry<unknown, AlertCycleSummary>('alert-evaluator', (env, logger) =>
  createHandler(depsFromEnvironment(env, logger)),
);
