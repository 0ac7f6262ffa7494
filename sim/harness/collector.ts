import type { Logger } from '@aws-lambda-powertools/logger';
import { createHandler, depsFromEnvironment } from '../../functions/metrics-collector/handler.js';
import type { CollectResult } from '../../shared/collector/index.js';
import type { TwinState } from '../twin/stateFile.js';
import { functionLogger, lambdaContext, scheduledEvent } from './lambda.js';
import { twinTarget, useTwinCredentials } from './twinTarget.js';

/**
 * The metrics collector function on the twin, built exactly as Lambda builds it (`depsFromEnvironment`), from the
 * environment serverless.yml gives it, with the twin's Prometheus and CloudWatch in place of AMP's and AWS's.
 */

/** The collector's environment on the twin: its one target, the twin's "AMP" and CloudWatch. */
export function collectorEnvironment(state: TwinState, rateWindow?: string): Record<string, string> {
  return {
    TARGETS: JSON.stringify([twinTarget(state)]),
    AMP_WORKSPACE_URL: state.prometheusUrl,
    AWS_REGION: state.aws.region,
    CLOUDWATCH_ENDPOINT: state.aws.cloudwatchEndpoint,
    ...(rateWindow === undefined ? {} : { RATE_WINDOW: rateWindow }),
  };
}

/** One scheduled run of the collector (the EventBridge event of `timeMs`). */
export type CollectorRun = (timeMs?: number) => Promise<CollectResult>;

/** The collector Lambda against the twin; each call is one invocation. */
export function twinCollector(state: TwinState, options: { rateWindow?: string; logger?: Logger } = {}): CollectorRun {
  useTwinCredentials();
  const logger = options.logger ?? functionLogger('metrics-collector');
  const handler = createHandler(depsFromEnvironment(collectorEnvironment(state, options.rateWindow), logger));
  return (timeMs = Date.now()) => handler(scheduledEvent(timeMs), lambdaContext('metrics-collector'));
}
