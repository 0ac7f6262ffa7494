import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { type Clock, systemClock } from '../../shared/clock/index.js';
import { CloudWatchMetricsSink, type MetricsSink } from '../../shared/cloudwatch/index.js';
import {
  collectMetrics,
  CollectorAllTargetsFailedError,
  type CollectResult,
  type ReadCatalogFn,
  type TargetCollectResult,
} from '../../shared/collector/index.js';
import { HttpMetricsSource, type MetricsSource } from '../../shared/metrics/index.js';
import type { Target } from '../../shared/config/index.js';
import { loadCollectorConfig, type CollectorConfig } from './config.js';
import { MetricsCollectorEventInvalidError } from './errors.js';
import { lazyLambdaEntry, withDeadline } from '../shared/lambdaEntry.js';
import { parseEvent, scheduledEventSchema } from '../shared/parseEvent.js';

/** Stop starting work this long before the Lambda deadline, so the result is still logged and returned. */
const DEADLINE_MARGIN_MS = 3_000;
const MAX_LOGGED_ITEMS = 10;

export interface MetricsCollectorDeps {
  config: CollectorConfig;
  sourceFor(target: Target): MetricsSource;
  sink: MetricsSink;
  logger: Logger;
  clock?: Clock;
  readCatalog?: ReadCatalogFn;
}

/** Builds the middy-wrapped handler around the collector use case. */
export function createHandler(deps: MetricsCollectorDeps) {
  const clock = deps.clock ?? systemClock;
  const { config, logger } = deps;

  const collectHandler = async (
    event: unknown,
    context: Context,
    { signal }: { signal: AbortSignal },
  ): Promise<CollectResult> => {
    const { time } = parseEvent(scheduledEventSchema, event, (issues) => new MetricsCollectorEventInvalidError(issues));
    // EventBridge's `time` is the scheduled minute: evaluating there puts datapoints on the minute and lets a manual
    // invoke backfill a missed one. Never later than now: Prometheus has no samples from the future.
    const timeMs = Math.min(Date.parse(time), clock.now());

    const deadline = withDeadline(signal, context, DEADLINE_MARGIN_MS);
    const result = await collectMetrics(
      {
        sourceFor: (target) => deps.sourceFor(target),
        sink: deps.sink,
        clock,
        logger,
        ...(deps.readCatalog ? { readCatalog: deps.readCatalog } : {}),
      },
      config.targets,
      {
        namespace: config.cloudWatchNamespace,
        rateWindow: config.rateWindow,
        concurrency: config.concurrency,
        ...(config.metrics === undefined ? {} : { metrics: config.metrics }),
        signal: deadline.signal,
        timeMs,
      },
    ).finally(() => deadline.clear());

    for (const target of result.targets) logTarget(logger, target);
    const failed = result.targets.filter((t) => t.status === 'failed').length;
    logger.info('collection finished', {
      targets: result.targets.length,
      failed,
      published: result.targets.reduce((sum, t) => sum + t.published, 0),
      evaluationTime: new Date(result.timeMs).toISOString(),
    });

    // Every target failed: throw, so the invocation counts in the Lambda Errors metric and Lambda's asynchronous
    // retries get another chance at a transient outage. Some failed: return normally with the failures in the result and the
    // logs; throwing would retry (and double-publish) the targets that succeeded and hide their good data.
    if (result.targets.length > 0 && failed === result.targets.length) throw new CollectorAllTargetsFailedError(result);
    return result;
  };

  return middy(collectHandler).use(injectLambdaContext(logger, { resetKeys: true }));
}

/** One line per target: info when ok, warn when partial, error when failed. */
function logTarget(logger: Logger, target: TargetCollectResult): void {
  const line = {
    target: target.target,
    status: target.status,
    published: target.published,
    skipped: target.skipped.length,
    failed: target.failures.length,
    ...(target.reason === undefined ? {} : { reason: target.reason }),
    ...(target.failures.length === 0
      ? {}
      : { failures: target.failures.slice(0, MAX_LOGGED_ITEMS).map((f) => `${f.queryId}: ${f.name}: ${f.error}`) }),
    ...(target.skipped.length === 0
      ? {}
      : { skips: target.skipped.slice(0, MAX_LOGGED_ITEMS).map((s) => `${s.queryId}: ${s.reason}`) }),
  };
  if (target.status === 'ok') logger.info('target collected', line);
  else if (target.status === 'partial') logger.warn('target collected in part', line);
  else logger.error('target failed', line);
}

/** Builds the real adapters from the environment: AMP over SigV4, CloudWatch through the SDK. */
export function depsFromEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  logger: Logger,
): MetricsCollectorDeps {
  const config = loadCollectorConfig(env);
  const client = new CloudWatchClient({
    region: config.cloudWatchRegion,
    ...(config.cloudWatchEndpoint === undefined ? {} : { endpoint: config.cloudWatchEndpoint }),
  });
  // One workspace holds every target's series, so one source serves them all.
  const source = new HttpMetricsSource({ endpoint: config.ampWorkspaceUrl, region: config.ampRegion });
  logger.info('configuration loaded', {
    targets: config.targets.map((t) => t.name),
    namespace: config.cloudWatchNamespace,
    ampWorkspaceUrl: config.ampWorkspaceUrl,
    rateWindow: config.rateWindow,
    concurrency: config.concurrency,
    metrics: config.metrics ?? 'all',
  });
  return { config, sourceFor: () => source, sink: new CloudWatchMetricsSink({ client }), logger };
}

/** The Lambda entry point (see lazyLambdaEntry: built on first use, configuration parsed once per container). */
export const handler = lazyLambdaEntry<unknown, CollectResult>('metrics-collector', (env, logger) =>
  createHandler(depsFromEnvironment(env, logger)),
);
