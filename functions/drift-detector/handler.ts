import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { DynamoDbHistoryStore } from '../../shared/calibration/history/index.js';
import { type Clock, systemClock } from '../../shared/clock/index.js';
import {
  actOnDrift,
  type CalibrationExecutions,
  checkDrift,
  type DriftAction,
  type DriftCheck,
  driftMessage,
  type DriftPorts,
  SfnCalibrationExecutions,
} from '../../shared/drift/index.js';
import { ClusterConnections, lazyClusterClient } from '../../shared/kube/connection/index.js';
import { HttpMetricsSource } from '../../shared/metrics/index.js';
import type { Target } from '../../shared/config/index.js';
import { lazyLambdaEntry } from '../shared/lambdaEntry.js';
import { parseEvent, scheduledEventSchema } from '../shared/parseEvent.js';
import { type DriftDetectorConfig, loadDriftDetectorConfig } from './config.js';
import { DriftDetectorAllTargetsFailedError, DriftDetectorEventInvalidError } from './errors.js';

/** What the handler needs: the configuration, the ports per target, where to publish, the executions (auto mode). */
export interface DriftDetectorDeps {
  config: DriftDetectorConfig;
  ports: (target: Target) => DriftPorts;
  publish: (subject: string, message: string) => Promise<void>;
  executions?: CalibrationExecutions;
  logger: Logger;
  clock?: Clock;
}

/** One target's outcome in an invocation. */
export type DriftTargetResult =
  { target: string; check: DriftCheck; action: DriftAction } | { target: string; error: string };

export interface DriftDetectorResult {
  targets: DriftTargetResult[];
}

/**
 * The scheduled drift detector: for each target whose mode is not `off`, compares it with its last calibration
 * (checkDrift), acts on the findings (actOnDrift: notify, or re-calibrate in the maintenance window) and publishes one
 * message per drifted target. A target whose check fails is logged and the others go on; the invocation fails only
 * when every target failed.
 */
export function createHandler(deps: DriftDetectorDeps) {
  const clock = deps.clock ?? systemClock;
  const { config, logger } = deps;
  const handler = async (event: unknown): Promise<DriftDetectorResult> => {
    parseEvent(scheduledEventSchema, event, (issues) => new DriftDetectorEventInvalidError(issues));
    const results: DriftTargetResult[] = [];
    for (const { target, settings } of config.targets) {
      if (settings.mode === 'off') continue;
      try {
        const now = clock.now();
        const check = await checkDrift(deps.ports(target), target, {
          windowSeconds: settings.windowSeconds,
          timeMs: now,
        });
        const action = await actOnDrift(
          check,
          { ...target, region: config.ampRegion, ampWorkspaceUrl: config.ampWorkspaceUrl },
          settings,
          deps.executions,
          now,
        );
        if (action.kind !== 'none') {
          const { subject, message } = driftMessage(check, action);
          await deps.publish(subject, message);
        }
        const line = { target: target.name, findings: check.findings, notJudged: check.notJudged, action };
        if (check.findings.length > 0) logger.warn('target drifted', line);
        else logger.info('no drift', line);
        results.push({ target: target.name, check, action });
      } catch (error) {
        const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        logger.error('drift check failed', { target: target.name, error: text });
        results.push({ target: target.name, error: text });
      }
    }
    const failures = results.flatMap((r) => ('error' in r ? [`${r.target}: ${r.error}`] : []));
    if (results.length > 0 && failures.length === results.length)
      throw new DriftDetectorAllTargetsFailedError(failures);
    return { targets: results };
  };
  return middy(handler).use(injectLambdaContext(logger, { resetKeys: true }));
}

/** Builds the real adapters from the environment: EKS, AMP over SigV4, DynamoDB, SNS and Step Functions. */
export function depsFromEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  logger: Logger,
  clock: Clock = systemClock,
): DriftDetectorDeps {
  const config = loadDriftDetectorConfig(env);
  const requestHandler = { connectionTimeout: 3_000, requestTimeout: 10_000 };
  const endpoint = (url: string | undefined) => (url === undefined ? {} : { endpoint: url });
  const source = new HttpMetricsSource({ endpoint: config.ampWorkspaceUrl, region: config.ampRegion });
  const dynamo = new DynamoDBClient({ region: config.region, requestHandler, ...endpoint(config.dynamoDbEndpoint) });
  const history = new DynamoDbHistoryStore({ client: dynamo, tableName: config.historyTable });
  const sns = new SNSClient({ region: config.region, requestHandler, ...endpoint(config.snsEndpoint) });
  const connections = new ClusterConnections({
    ...(config.eksEndpoint === undefined ? {} : { eksEndpoint: config.eksEndpoint }),
    requestHandler,
    clock,
  });
  const executions =
    config.stateMachineArn === undefined
      ? undefined
      : new SfnCalibrationExecutions(
          new SFNClient({ region: config.region, requestHandler, ...endpoint(config.stepFunctionsEndpoint) }),
          config.stateMachineArn,
        );
  logger.info('configuration loaded', {
    targets: config.targets.map((t) => `${t.target.name} (${t.settings.mode})`),
    topicArn: config.topicArn,
    stateMachineArn: config.stateMachineArn ?? null,
  });
  return {
    config,
    ports: (target) => ({
      cluster: lazyClusterClient(() => connections.get(config.region, target.cluster)),
      source,
      history,
    }),
    publish: async (subject, message) => {
      await sns.send(new PublishCommand({ TopicArn: config.topicArn, Subject: subject, Message: message }));
    },
    ...(executions === undefined ? {} : { executions }),
    logger,
    clock,
  };
}

/** The Lambda entry point (built on first use, configuration parsed once per container). */
export const handler = lazyLambdaEntry<unknown, DriftDetectorResult>('drift-detector', (env, logger) =>
  createHandler(depsFromEnvironment(env, logger)),
);
