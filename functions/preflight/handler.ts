import { AmpClient } from '@aws-sdk/client-amp';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import * as z from 'zod';
import { ClientAmpControlPlane } from '../../shared/alerts/amp/index.js';
import { DynamoDbHeartbeatStore } from '../../shared/alerts/heartbeat/index.js';
import { DynamoDbHistoryStore } from '../../shared/calibration/history/index.js';
import { type Clock, systemClock } from '../../shared/clock/index.js';
import { type ClusterClient } from '../../shared/kube/index.js';
import { ClusterConnections, lazyClusterClient } from '../../shared/kube/connection/index.js';
import { HttpAlertRulesSource, HttpMetricsSource } from '../../shared/metrics/index.js';
import { nameEndpointOnNoAnswer } from '../../shared/network/index.js';
import {
  ALERTING_ENGINES,
  type AmpRuleGroupsSource,
  CHECK_STATUSES,
  type CheckStatus,
  formatPreflightReport,
  type PreflightNotification,
  preflightNotification,
  type PreflightReport,
  type PreflightTarget,
  worstStatus,
} from '../../shared/preflight/index.js';
import { runPreflight } from '../../shared/preflight/checks/index.js';
import { mapWithConcurrency } from '../../shared/util/index.js';
import { lazyLambdaEntry, withDeadline } from '../shared/lambdaEntry.js';
import { loadPreflightConfig, type PreflightConfig } from './config.js';
import { PreflightEventInvalidError, PreflightPublishError, PreflightTargetUnknownError } from './errors.js';
import { parseEvent } from '../shared/parseEvent.js';

/**
 * Either an EventBridge scheduled event (no `targets`: every target) or an on-demand `{ "targets": [...] }`.
 * Other fields (EventBridge's) pass through unchecked.
 */
const eventSchema = z.looseObject({
  targets: z
    .array(z.string({ error: 'must be a target name (a string)' }), {
      error: 'must be a list of target names',
    })
    .optional(),
});

/** Targets checked at once; each check is a handful of small requests. */
const TARGET_CONCURRENCY = 4;
/** Stop starting work this long before the Lambda deadline, to log and publish what was found. */
const DEADLINE_MARGIN_MS = 10_000;
/** Per attempt; a run takes seconds, well inside its timeout. */
const AWS_REQUEST_TIMEOUT_MS = 10_000;
/** A connection to an AWS endpoint takes well under a second; a dropped SYN (no VPC endpoint) fails after this. */
const AWS_CONNECT_TIMEOUT_MS = 3_000;
const MAX_LOGGED_PROBLEMS = 11;

/** Runs the eleven checks for one target (runPreflight against EKS, AMP and DynamoDB in AWS; anything in tests). */
export type CheckTargetFn = (target: PreflightTarget, signal: AbortSignal) => Promise<PreflightReport>;

/** Publishes the run's summary; resolves to the SNS message id. */
export type PublishFn = (notification: PreflightNotification) => Promise<string | undefined>;

export interface PreflightDeps {
  config: PreflightConfig;
  check: CheckTargetFn;
  publish: PublishFn;
  logger: Logger;
  clock?: Clock;
}

/** What one invocation returns: every report, and the SNS message it published when a check failed. */
export interface PreflightRunResult {
  status: CheckStatus;
  checkedAt: string;
  reports: PreflightReport[];
  notification: { messageId: string | undefined; subject: string } | null;
}

/** Builds the middy-wrapped handler: check the targets the event names (all by default), publish on a fail. */
export function createHandler(deps: PreflightDeps) {
  const clock = deps.clock ?? systemClock;
  const { config, logger } = deps;

  const preflightHandler = async (
    event: unknown,
    context: Context,
    { signal }: { signal: AbortSignal },
  ): Promise<PreflightRunResult> => {
    const targets = selectTargets(config.targets, event);
    const deadline = withDeadline(signal, context, DEADLINE_MARGIN_MS);
    const checkedAt = new Date(clock.now()).toISOString();
    let reports: PreflightReport[];
    try {
      reports = await mapWithConcurrency(targets, TARGET_CONCURRENCY, (target) => deps.check(target, deadline.signal));
    } finally {
      deadline.clear();
    }
    for (const report of reports) logReport(logger, report);
    const status = worstStatus(reports.map((r) => r.status));

    let notification: PreflightRunResult['notification'] = null;
    // Only a fail is news worth a message; a warn is in the logs and the returned reports.
    if (status === CHECK_STATUSES.fail) {
      const message = preflightNotification(reports, formatPreflightReport, checkedAt);
      try {
        notification = { messageId: await deps.publish(message), subject: message.subject };
      } catch (error) {
        throw new PreflightPublishError(config.topicArn, { cause: error });
      }
      logger.info('preflight summary published', { topicArn: config.topicArn, ...notification });
    }
    logger.info('preflight finished', {
      status,
      targets: reports.map((r) => `${r.target.name}: ${r.status}`),
    });
    return { status, checkedAt, reports, notification };
  };

  return middy(preflightHandler).use(injectLambdaContext(logger, { resetKeys: true }));
}

/** The targets the event asks for: all for a scheduled event or an empty list; else exactly the named ones. */
export function selectTargets(targets: readonly PreflightTarget[], event: unknown): PreflightTarget[] {
  const parsed = parseEvent(eventSchema, event ?? {}, (issues) => new PreflightEventInvalidError(issues));
  const names = parsed.targets ?? [];
  if (names.length === 0) return [...targets];
  const known = targets.map((t) => t.name);
  const unknown = names.filter((name) => !known.includes(name));
  if (unknown.length > 0) throw new PreflightTargetUnknownError(unknown, known);
  return targets.filter((t) => names.includes(t.name));
}

/** One line per target: info on pass, warn on warn, error on fail; each problem with its reason. */
function logReport(logger: Logger, report: PreflightReport): void {
  const line = {
    target: report.target.name,
    status: report.status,
    counts: report.counts,
    problems: report.results
      .filter((r) => r.status !== CHECK_STATUSES.pass)
      .slice(0, MAX_LOGGED_PROBLEMS)
      .map((r) => `${r.item}. ${r.title}: ${r.status}: ${r.reason}`),
  };
  if (report.status === CHECK_STATUSES.pass) logger.info('target ready', line);
  else if (report.status === CHECK_STATUSES.warn) logger.warn('target has warnings', line);
  else logger.error('target failed preflight', line);
}

/** Builds the real adapters from the environment: EKS, AMP over SigV4, DynamoDB and SNS through the SDK. */
export function depsFromEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  logger: Logger,
  clock: Clock = systemClock,
): PreflightDeps {
  const config = loadPreflightConfig(env);
  // Bounded waits, so that an endpoint a VPC cannot reach fails its checks in seconds, naming it, not at Lambda's
  // timeout: 3 s to connect, and the request timeout thrown (the SDK's handler only logs a warning without
  // throwOnRequestTimeout). Each client names the host that did not answer (nameEndpointOnNoAnswer).
  const requestHandler = {
    connectionTimeout: AWS_CONNECT_TIMEOUT_MS,
    requestTimeout: AWS_REQUEST_TIMEOUT_MS,
    throwOnRequestTimeout: true,
  };
  const endpoint = (url: string | undefined) => (url === undefined ? {} : { endpoint: url });
  // One workspace holds every target's series and rules, so one source of each serves them all.
  const metrics = new HttpMetricsSource({ endpoint: config.ampWorkspaceUrl, region: config.ampRegion });
  const rules = new HttpAlertRulesSource({ endpoint: config.ampWorkspaceUrl, region: config.ampRegion });
  const dynamo = nameEndpointOnNoAnswer(
    new DynamoDBClient({ region: config.region, requestHandler, ...endpoint(config.dynamoDbEndpoint) }),
    clock,
  );
  const history = new DynamoDbHistoryStore({ client: dynamo, tableName: config.historyTable });
  const sns = nameEndpointOnNoAnswer(
    new SNSClient({ region: config.region, requestHandler, ...endpoint(config.snsEndpoint) }),
    clock,
  );
  // One connection per cluster for the life of the container, made on first use: a cluster that cannot be reached
  // then fails only the checks that read it, each naming the error, while the AMP checks still run.
  const connections = new ClusterConnections({
    ...(config.eksEndpoint === undefined ? {} : { eksEndpoint: config.eksEndpoint }),
    requestHandler,
    clock,
  });
  const clusterFor = (name: string): ClusterClient => lazyClusterClient(() => connections.get(config.region, name));
  // Check 5's evidence, per engine: the evaluator's heartbeat, or AMP's rule groups namespace.
  const alerting =
    config.settings.alertingEngine === ALERTING_ENGINES.lambda
      ? config.alertStateTable === undefined
        ? {}
        : { heartbeat: new DynamoDbHeartbeatStore({ client: dynamo, tableName: config.alertStateTable }) }
      : { ampRuleGroups: ampRuleGroupsSource(config, requestHandler, clock) };
  logger.info('configuration loaded', {
    targets: config.targets.map((t) => t.name),
    ampWorkspaceUrl: config.ampWorkspaceUrl,
    topicArn: config.topicArn,
    historyTable: config.historyTable,
    settings: config.settings,
  });
  return {
    config,
    check: (target, signal) =>
      runPreflight({
        target,
        cluster: clusterFor(target.cluster),
        metrics,
        rules,
        alerting,
        history,
        settings: config.settings,
        clock,
        signal,
      }),
    publish: async (notification) => {
      const output = await sns.send(
        new PublishCommand({
          TopicArn: config.topicArn,
          Subject: notification.subject,
          Message: notification.message,
          MessageAttributes: Object.fromEntries(
            Object.entries(notification.attributes).map(([name, value]) => [
              name,
              { DataType: 'String', StringValue: value },
            ]),
          ),
        }),
      );
      return output.MessageId;
    },
    logger,
    clock,
  };
}

/** AMP's rule groups namespaces through @aws-sdk/client-amp (the AMP engine's check 5), for the stack's workspace. */
function ampRuleGroupsSource(
  config: PreflightConfig,
  requestHandler: { connectionTimeout: number; requestTimeout: number; throwOnRequestTimeout: boolean },
  clock: Clock,
): AmpRuleGroupsSource {
  const workspaceId = /\/workspaces\/(ws-[^/]+)/.exec(config.ampWorkspaceUrl)?.[1] ?? '';
  const controlPlane = new ClientAmpControlPlane({
    client: nameEndpointOnNoAnswer(
      new AmpClient({
        region: config.ampRegion,
        requestHandler,
        ...(config.ampControlPlaneEndpoint === undefined ? {} : { endpoint: config.ampControlPlaneEndpoint }),
      }),
      clock,
    ),
    workspaceId,
  });
  return {
    describeRuleGroups: async (namespace, signal) =>
      (await controlPlane.describe({ kind: 'ruleGroupsNamespace', name: namespace }, { signal }))?.data,
  };
}

/** The Lambda entry point (see lazyLambdaEntry: built on first use, configuration parsed once per container). */
export const handler = lazyLambdaEntry<unknown, PreflightRunResult>('preflight', (env, logger) =>
  createHandler(depsFromEnvironment(env, logger)),
);
