import type { Logger } from '@aws-lambda-powertools/logger';
import {
  createHandler as createAlertEvaluator,
  depsFromEnvironment as alertEvaluatorDeps,
} from '../../functions/alert-evaluator/handler.js';
import {
  createHandler as createSlackNotifier,
  depsFromEnvironment as slackNotifierDeps,
} from '../../functions/slack-notifier/handler.js';
import type { AlertCycleSummary } from '../../shared/alerts/index.js';
import type { SnsTwin } from '../aws/sns.js';
import { subscribeLambda } from '../aws/snsLambdaEvent.js';
import type { TwinState } from '../twin/stateFile.js';
import { functionLogger, lambdaContext, scheduledEvent } from './lambda.js';
import { twinTarget, useTwinCredentials } from './twinTarget.js';

/**
 * The alerting functions on the twin, built exactly as Lambda builds them: from the environment the deployed stack
 * gives them (`depsFromEnvironment`), with the twin's endpoints in place of AWS's. Only the endpoints differ.
 */

/** The alert evaluator's environment on the twin: its target with `alerts` settings (the guide's when omitted). */
export function alertEvaluatorEnvironment(state: TwinState, alerts?: unknown): Record<string, string> {
  return {
    TARGETS: JSON.stringify([{ ...twinTarget(state), ...(alerts === undefined ? {} : { alerts }) }]),
    AMP_WORKSPACE_URL: state.prometheusUrl,
    AWS_REGION: state.region,
    ALERT_TOPIC_ARN: state.aws.alertTopicArn,
    ALERT_STATE_TABLE: state.aws.alertStateTable,
    ...(state.aws.alertSilencesTable === undefined ? {} : { ALERT_SILENCES_TABLE: state.aws.alertSilencesTable }),
    SNS_ENDPOINT: state.aws.snsEndpoint,
    DYNAMODB_ENDPOINT: state.aws.dynamodbEndpoint,
  };
}

/** One scheduled run of the alert evaluator (the EventBridge event of `timeMs`). */
export type AlertEvaluatorRun = (timeMs?: number) => Promise<AlertCycleSummary>;

/**
 * The alert evaluator Lambda against the twin. Each call is one invocation with its own request id, as EventBridge
 * makes every minute; two calls at once are two concurrent invocations.
 */
export function twinAlertEvaluator(
  state: TwinState,
  options: { alerts?: unknown; logger?: Logger } = {},
): AlertEvaluatorRun {
  useTwinCredentials();
  const logger = options.logger ?? functionLogger('alert-evaluator');
  const handler = createAlertEvaluator(alertEvaluatorDeps(alertEvaluatorEnvironment(state, options.alerts), logger));
  return async (timeMs = Date.now()) => {
    return handler(scheduledEvent(timeMs), lambdaContext('alert-evaluator'));
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
