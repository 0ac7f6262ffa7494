import { AmpClient } from '@aws-sdk/client-amp';
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import {
  type AmpAlertingControlPlane,
  type AmpInstallResult,
  type AmpRemoveOutcome,
  ClientAmpControlPlane,
  type DesiredAmpAlerting,
  desiredAmpAlerting,
  installAmpAlerting,
  removeAmpAlerting,
} from '../../shared/alerts/amp/index.js';
import { type Clock, systemClock } from '../../shared/clock/index.js';
import { formatPath } from '../../shared/config/index.js';
import { lazyLambdaEntry, withDeadline } from '../shared/lambdaEntry.js';
import { scheduledEventSchema } from '../shared/parseEvent.js';
import { type AlertInstallerConfig, loadAlertInstallerConfig } from './config.js';
import {
  type CustomResourceRequest,
  customResourceRequestSchema,
  type CustomResourceResponse,
  sendCustomResourceResponse,
} from './customResource.js';
import { AlertInstallerEventInvalidError } from './errors.js';

/** Per attempt; the SDK makes three. */
const AWS_REQUEST_TIMEOUT_MS = 10_000;
/** Kept before the Lambda deadline: time to answer CloudFormation after a wait that ran out. */
const DEADLINE_MARGIN_MS = 20_000;

export interface AlertInstallerDeps {
  config: AlertInstallerConfig;
  controlPlane: AmpAlertingControlPlane;
  logger: Logger;
  clock?: Clock;
  /** Waits between Describe calls; tests advance a virtual clock. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Answers CloudFormation (sendCustomResourceResponse). */
  respond?: (url: string, response: CustomResourceResponse) => Promise<void>;
}

/** What one invocation did: installed (or found in step), removed, or left alone, and for whom. */
export type AlertInstallerResult =
  | { trigger: 'schedule'; installed: AmpInstallResult }
  | {
      trigger: 'cloudformation';
      requestType: CustomResourceRequest['RequestType'];
      status: CustomResourceResponse['Status'];
      reason?: string;
      installed?: AmpInstallResult;
      removed?: AmpRemoveOutcome[];
    };

/**
 * Builds the middy-wrapped handler. A CloudFormation custom resource request (deploy, update, removal) installs or
 * removes the AMP engine's rules and Alertmanager definition and always answers CloudFormation; a scheduled event
 * repairs drift and throws (Lambda Errors metric) when AMP refused something.
 */
export function createHandler(deps: AlertInstallerDeps) {
  const { config, controlPlane, logger } = deps;
  const clock = deps.clock ?? systemClock;
  const respond = deps.respond ?? ((url, response) => sendCustomResourceResponse(url, response));
  // Built on first use, inside the request's try: a rule AMP would refuse is then answered to CloudFormation
  // (`osls package` builds the same data, so it fails there first).
  let built: DesiredAmpAlerting | undefined;
  const desired = (): DesiredAmpAlerting =>
    (built ??= desiredAmpAlerting({
      targets: config.targets,
      namespace: config.ruleNamespace,
      topicArn: config.topicArn,
      topicRegion: config.topicRegion,
    }));
  // The id CloudFormation keeps for the resource: a change of workspace or namespace is a replacement.
  const physicalResourceId = `${config.ampWorkspaceId}/${config.ruleNamespace}`;

  const install = (signal: AbortSignal) =>
    installAmpAlerting(controlPlane, desired(), {
      clock,
      signal,
      waitTimeoutMs: config.waitTimeoutMs,
      pollIntervalMs: config.pollIntervalMs,
      ...(deps.sleep === undefined ? {} : { sleep: deps.sleep }),
      log: (message, fields) => logger.info(message, fields),
    });

  const installerHandler = async (
    event: unknown,
    context: Context,
    { signal }: { signal: AbortSignal },
  ): Promise<AlertInstallerResult> => {
    const deadline = withDeadline(signal, context, DEADLINE_MARGIN_MS);
    try {
      if (isObject(event) && 'RequestType' in event) return await onCustomResource(event, deadline.signal);
      const scheduled = scheduledEventSchema.safeParse(event);
      if (!scheduled.success)
        throw new AlertInstallerEventInvalidError(
          scheduled.error.issues.map((issue) => `${formatPath('event', issue.path)}: ${issue.message}`),
        );
      const installed = await install(deadline.signal);
      logInstalled(installed);
      return { trigger: 'schedule', installed };
    } finally {
      deadline.clear();
    }
  };

  async function onCustomResource(event: Record<string, unknown>, signal: AbortSignal): Promise<AlertInstallerResult> {
    const parsed = customResourceRequestSchema.safeParse(event);
    if (!parsed.success) {
      const error = new AlertInstallerEventInvalidError(
        parsed.error.issues.map((issue) => `${formatPath('event', issue.path)}: ${issue.message}`),
      );
      // Answer whatever can be answered, so the stack fails now instead of waiting an hour.
      if (typeof event.ResponseURL === 'string')
        await respond(event.ResponseURL, {
          Status: 'FAILED',
          Reason: error.message,
          PhysicalResourceId:
            typeof event.PhysicalResourceId === 'string' ? event.PhysicalResourceId : physicalResourceId,
          StackId: String(event.StackId),
          RequestId: String(event.RequestId),
          LogicalResourceId: String(event.LogicalResourceId),
        });
      throw error;
    }
    const request = parsed.data;
    const answer = (status: CustomResourceResponse['Status'], reason: string | undefined, id: string) =>
      respond(request.ResponseURL, {
        Status: status,
        ...(reason === undefined ? {} : { Reason: reason }),
        PhysicalResourceId: id,
        StackId: request.StackId,
        RequestId: request.RequestId,
        LogicalResourceId: request.LogicalResourceId,
        Data: { WorkspaceId: config.ampWorkspaceId, RuleGroupsNamespace: config.ruleNamespace },
      });
    const base = { trigger: 'cloudformation' as const, requestType: request.RequestType };

    if (request.RequestType === 'Delete') {
      const id = request.PhysicalResourceId ?? physicalResourceId;
      if (id !== physicalResourceId) {
        // An old workspace or namespace (replaced by an update): this role may act on the current ones only.
        const reason = `${id} is not this stage's ${physicalResourceId}: left in place (remove it by hand if unused)`;
        logger.warn('delete: left in place', { physicalResourceId: id, reason });
        await answer('SUCCESS', reason, id);
        return { ...base, status: 'SUCCESS', reason };
      }
      let removed: AmpRemoveOutcome[];
      try {
        removed = await removeAmpAlerting(controlPlane, desired(), {
          signal,
          log: (message, fields) => logger.info(message, fields),
        });
      } catch (error) {
        return failed(error, id);
      }
      // Outside the try: an answer that cannot be delivered is thrown (CustomResourceResponseError), not answered.
      await answer('SUCCESS', undefined, id);
      return { ...base, status: 'SUCCESS', removed };
    }

    let installed: AmpInstallResult;
    try {
      installed = await install(signal);
    } catch (error) {
      return failed(error, request.PhysicalResourceId ?? physicalResourceId);
    }
    logInstalled(installed);
    await answer('SUCCESS', undefined, physicalResourceId);
    return { ...base, status: 'SUCCESS', installed };

    async function failed(error: unknown, id: string): Promise<AlertInstallerResult> {
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      logger.error(`${request.RequestType} failed`, { physicalResourceId: id, reason });
      // Answered, not thrown: a throw would make Lambda run the request again and answer twice.
      await answer('FAILED', reason, id);
      return { ...base, status: 'FAILED', reason };
    }
  }

  function logInstalled(installed: AmpInstallResult): void {
    logger.info('AMP alerting in step', {
      workspaceId: installed.workspaceId,
      resources: installed.resources.map((r) => `${r.resource}: ${r.action} (${r.reason}), ${r.waitedMs} ms`),
    });
  }

  return middy(installerHandler).use(injectLambdaContext(logger, { resetKeys: true }));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Builds the real adapter from the environment: client-amp for the workspace's region, with a request timeout. */
export function depsFromEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  logger: Logger,
): AlertInstallerDeps {
  const config = loadAlertInstallerConfig(env);
  const client = new AmpClient({
    region: config.ampRegion,
    requestHandler: { connectionTimeout: 3_000, requestTimeout: AWS_REQUEST_TIMEOUT_MS },
    ...(config.ampControlPlaneEndpoint === undefined ? {} : { endpoint: config.ampControlPlaneEndpoint }),
  });
  logger.info('configuration loaded', {
    targets: config.targets.map(({ target }) => target.name),
    ampWorkspaceId: config.ampWorkspaceId,
    ruleNamespace: config.ruleNamespace,
    topicArn: config.topicArn,
  });
  return { config, controlPlane: new ClientAmpControlPlane({ client, workspaceId: config.ampWorkspaceId }), logger };
}

/** The Lambda entry point (see lazyLambdaEntry: built on first use, configuration parsed once per container). */
export const handler = lazyLambdaEntry<unknown, AlertInstallerResult>('alert-installer', (env, logger) =>
  createHandler(depsFromEnvironment(env, logger)),
);
