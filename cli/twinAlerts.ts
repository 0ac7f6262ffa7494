import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import {
  createHandler as createAlertEvaluator,
  depsFromEnvironment as alertEvaluatorDeps,
} from '../functions/alert-evaluator/handler.js';
import {
  createHandler as createSlackNotifier,
  depsFromEnvironment as slackNotifierDeps,
} from '../functions/slack-notifier/handler.js';
import type { AlertCycleSummary } from '../shared/alerts/runAlertCycle.js';
import type { SnsTwin } from '../sim/aws/sns.js';
import { subscribeLambda } from '../sim/aws/snsLambdaEvent.js';
import type { TwinState } from '../sim/twin/stateFile.js';
import { twinTarget, useTwinCredentials } from './twinContext.js';

/**
 * The alerting functions on the twin, built exactly as Lambda builds them: from the environment the deployed stack
 * gives them (`depsFromEnvironment`), with the twin's endpoints in place of AWS's. Only the endpoints differ.
 */

/** A Powertools logger that prints nothing, or JSON lines when `verbose`. */
export function functionLogger(serviceName: string, verbose = false): Logger {
  return new Logger({ serviceName, logLevel: verbose ? 'INFO' : 'SILENT' });
}

/** The Lambda context fields the handlers read. */
export function lambdaContext(functionName: string): Context {
  return {
    awsRequestId: randomUUID(),
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-2:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'twin',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => 60_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** The alert evaluator's environment on the twin: its target with `alerts` settings (the guide's when omitted). */
export function alertEvaluatorEnvironment(state: TwinState, alerts?: unknown): Record<string, string> {
  return {
    TARGETS: JSON.stringify([{ ...twinTarget(state), ...(alerts === undefined ? {} : { alerts }) }]),
    AMP_WORKSPACE_URL: state.prometheusUrl,
    AWS_REGION: state.region,
    ALERT_TOPIC_ARN: state.aws.alertTopicArn,
    ALERT_STATE_TABLE: state.aws.alertStateTable,
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
    const event = { 'detail-type': 'Scheduled Event', source: 'aws.events', time: new Date(timeMs).toISOString() };
    return handler(event, lambdaContext('alert-evaluator'));
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
