import type { Logger } from '@aws-lambda-powertools/logger';
import { ALERT_EVALUATOR_DEFAULTS } from '../../functions/alert-evaluator/config.js';
import {
  type AlertEvaluatorResult,
  createHandler as createAlertEvaluator,
  depsFromEnvironment as alertEvaluatorDeps,
} from '../../functions/alert-evaluator/handler.js';
import {
  type AlertInstallerResult,
  createHandler as createAlertInstaller,
  depsFromEnvironment as alertInstallerDeps,
} from '../../functions/alert-installer/handler.js';
import {
  createHandler as createSlackNotifier,
  depsFromEnvironment as slackNotifierDeps,
} from '../../functions/slack-notifier/handler.js';
import type { SnsTwin } from '../aws/sns.js';
import { subscribeLambda } from '../aws/snsLambdaEvent.js';
import type { TwinState } from '../twin/stateFile.js';
import { TWIN_STAGE } from '../twin/operationsAlarms.js';
import { TWIN_RESOURCES } from '../twin/constants.js';
import { functionLogger, lambdaContext, scheduledEvent } from './lambda.js';
import { twinTarget, useTwinCredentials } from './twinTarget.js';

/**
 * The alerting functions on the twin, built exactly as Lambda builds them: from the environment the deployed stack
 * gives them (`depsFromEnvironment`), with the twin's endpoints in place of AWS's. Only the endpoints differ.
 */

/**
 * How often the evaluator evaluates on the twin: `intervalSeconds` between cycles, `schedulePeriodSeconds` between
 * invocations (one invocation runs period / interval cycles). The default, one cycle per one-second invocation, suits
 * the tests' one-second scheduler; `AWS_EVALUATOR_CADENCE` is the deployed stack's (four cycles per minute).
 */
export interface EvaluatorCadence {
  intervalSeconds: number;
  schedulePeriodSeconds: number;
}

export const TWIN_EVALUATOR_CADENCE: EvaluatorCadence = { intervalSeconds: 1, schedulePeriodSeconds: 1 };
export const AWS_EVALUATOR_CADENCE: EvaluatorCadence = {
  intervalSeconds: ALERT_EVALUATOR_DEFAULTS.intervalSeconds,
  schedulePeriodSeconds: ALERT_EVALUATOR_DEFAULTS.schedulePeriodSeconds,
};

/** The evaluator's Lambda timeout in serverless.yml: the twin's invocations get the same remaining time. */
export const ALERT_EVALUATOR_TIMEOUT_MS = 70_000;

/** The alert evaluator's environment on the twin: its target with `alerts` settings (the guide's when omitted). */
export function alertEvaluatorEnvironment(
  state: TwinState,
  alerts?: unknown,
  cadence: EvaluatorCadence = TWIN_EVALUATOR_CADENCE,
): Record<string, string> {
  return {
    TARGETS: JSON.stringify([{ ...twinTarget(state), ...(alerts === undefined ? {} : { alerts }) }]),
    AMP_WORKSPACE_URL: state.prometheusUrl,
    AWS_REGION: state.region,
    ALERT_TOPIC_ARN: state.aws.alertTopicArn,
    ALERT_STATE_TABLE: state.aws.alertStateTable,
    ...(state.aws.alertSilencesTable === undefined ? {} : { ALERT_SILENCES_TABLE: state.aws.alertSilencesTable }),
    // As the stack sets it: the calibrations' derived alert thresholds apply where the settings pin none.
    HISTORY_TABLE: state.aws.historyTable,
    SNS_ENDPOINT: state.aws.snsEndpoint,
    DYNAMODB_ENDPOINT: state.aws.dynamodbEndpoint,
    CLOUDWATCH_ENDPOINT: state.aws.cloudwatchEndpoint,
    STAGE: TWIN_STAGE,
    EVALUATION_INTERVAL_SECONDS: String(cadence.intervalSeconds),
    SCHEDULE_PERIOD_SECONDS: String(cadence.schedulePeriodSeconds),
  };
}

/** One scheduled run of the alert evaluator (the EventBridge event of `timeMs`): every cycle of one invocation. */
export type AlertEvaluatorRun = (timeMs?: number) => Promise<AlertEvaluatorResult>;

/**
 * The alert evaluator Lambda against the twin. Each call is one invocation with its own request id, as EventBridge
 * makes every minute; two calls at once are two concurrent invocations.
 */
export function twinAlertEvaluator(
  state: TwinState,
  options: { alerts?: unknown; logger?: Logger; cadence?: EvaluatorCadence } = {},
): AlertEvaluatorRun {
  useTwinCredentials();
  const logger = options.logger ?? functionLogger('alert-evaluator');
  const handler = createAlertEvaluator(
    alertEvaluatorDeps(alertEvaluatorEnvironment(state, options.alerts, options.cadence), logger),
  );
  return async (timeMs = Date.now()) => {
    return handler(
      scheduledEvent(timeMs),
      lambdaContext('alert-evaluator', { remainingMs: ALERT_EVALUATOR_TIMEOUT_MS }),
    );
  };
}

/**
 * Subscribes the Slack notifier Lambda to the twin's alerts topic, as the deployed stack does: it reads the webhook
 * URL from the twin's Secrets Manager and posts to the twin's Slack sink. Returns the unsubscribe function.
 */
export function subscribeSlackNotifier(
  sns: Pick<SnsTwin, 'subscribe'>,
  state: TwinState,
  options: { filterPolicy?: object; logger?: Logger } = {},
): () => void {
  useTwinCredentials();
  const logger = options.logger ?? functionLogger('slack-notifier');
  const deps = slackNotifierDeps(
    {
      SLACK_WEBHOOK_SECRET_ID: state.aws.slackWebhookSecretId,
      AWS_REGION: state.region,
      SECRETS_MANAGER_ENDPOINT: state.aws.secretsManagerEndpoint,
      // The twin's sink is plain http on 127.0.0.1; a deployed notifier accepts only https://hooks.slack.com.
      SLACK_ALLOW_INSECURE_WEBHOOK_URL: 'true',
    },
    logger,
  );
  const handler = createSlackNotifier(deps);
  return subscribeLambda(sns, state.aws.alertTopicArn, (event) => handler(event, lambdaContext('slack-notifier')), {
    ...(options.filterPolicy === undefined ? {} : { filterPolicy: options.filterPolicy }),
  });
}

/** The installer's Lambda timeout in serverless.yml (ALERT_INSTALLER_TIMEOUT_SECONDS): the twin's invocations get it too. */
export const ALERT_INSTALLER_TIMEOUT_MS = 300_000;

/**
 * The alert installer's environment on the twin (the AMP engine): the evaluator's target with `alerts` settings, the
 * twin's AMP workspace through its control-plane endpoint, the stage's namespace, the alerts topic. The twin's AMP
 * settles a change in about a second, so the installer looks every second (5 s on AWS).
 */
export function alertInstallerEnvironment(state: TwinState, alerts?: unknown): Record<string, string> {
  const { ampControlPlaneEndpoint, ampWorkspaceId } = state.aws;
  if (ampControlPlaneEndpoint === undefined || ampWorkspaceId === undefined)
    throw new Error('the twin state names no AMP control plane (a twin from before the AMP engine): start it again');
  return {
    TARGETS: JSON.stringify([{ ...twinTarget(state), ...(alerts === undefined ? {} : { alerts }) }]),
    AWS_REGION: state.region,
    AMP_WORKSPACE_ID: ampWorkspaceId,
    AMP_RULE_NAMESPACE: TWIN_RESOURCES.ampRuleNamespace,
    ALERT_TOPIC_ARN: state.aws.alertTopicArn,
    AMP_CONTROL_PLANE_ENDPOINT: ampControlPlaneEndpoint,
    AMP_POLL_INTERVAL_SECONDS: '1',
    AMP_WAIT_TIMEOUT_SECONDS: '60',
  };
}

export type { AlertInstallerResult };

/** One invocation of the alert installer on its schedule (the hourly repair: create or put, then wait for ACTIVE). */
export type AlertInstallerRun = () => Promise<AlertInstallerResult>;

/**
 * The alert-installer Lambda against the twin's AMP control plane, built from its environment as Lambda builds it:
 * @aws-sdk/client-amp with the endpoint override, nothing else differs.
 */
export function twinAlertInstaller(
  state: TwinState,
  options: { alerts?: unknown; logger?: Logger } = {},
): AlertInstallerRun {
  useTwinCredentials();
  const logger = options.logger ?? functionLogger('alert-installer');
  const handler = createAlertInstaller(alertInstallerDeps(alertInstallerEnvironment(state, options.alerts), logger));
  return () =>
    handler(scheduledEvent(Date.now()), lambdaContext('alert-installer', { remainingMs: ALERT_INSTALLER_TIMEOUT_MS }));
}
