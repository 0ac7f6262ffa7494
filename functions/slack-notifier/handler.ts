import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context, SNSEvent } from 'aws-lambda';
import * as z from 'zod';
import { ALERT_MESSAGE_VERSION, type AlertMessage, alertMessageSchema } from '../../shared/alerts/index.js';
import {
  SlackError,
  slackMessageFor,
  type SlackPostResult,
  SlackWebhookClient,
  WebhookUrlProvider,
} from '../../shared/slack/index.js';
import { loadSlackNotifierConfig } from './config.js';
import { SlackNotifierDeliveryFailedError, SlackNotifierEventInvalidError } from './errors.js';
import { lazyLambdaEntry, withDeadline } from '../shared/lambdaEntry.js';
import { formatPath } from '../../shared/config/index.js';
import { parseEvent } from '../shared/parseEvent.js';

/** Only what the notifier reads; SNS adds fields (signature, attributes) that pass through unchecked. */
const snsEventSchema = z.looseObject({
  Records: z
    .array(
      z.looseObject({
        Sns: z.looseObject({
          MessageId: z.string({ error: 'must be a string (SNS sets it)' }),
          Message: z.string({ error: 'must be a string (the alert message JSON)' }),
        }),
      }),
    )
    .min(1, { error: 'must hold at least one record' }),
});

/** Stop retrying this long before the Lambda deadline, so the failure is still logged and thrown by us. */
const DEADLINE_MARGIN_MS = 2_000;
const MAX_LOGGED_ISSUES = 5;

export interface SlackNotifierDeps {
  /** Posts one Slack message (retries inside); `SlackWebhookClient` in production. */
  slack: Pick<SlackWebhookClient, 'post'>;
  logger: Logger;
}

/** What one invocation did with its records. */
export interface SlackNotifierResult {
  delivered: Array<{ messageId: string; alertname: string; status: string; attempts: number }>;
  /** Records that are not a message this notifier understands: logged and dropped, since a retry cannot fix them. */
  skipped: Array<{ messageId: string; reason: string }>;
}

/** Builds the middy-wrapped SNS handler that posts each alert message to Slack. */
export function createHandler(deps: SlackNotifierDeps) {
  const { logger, slack } = deps;

  const notifyHandler = async (
    // Typed for callers; checked at run time all the same (a misrouted invoke can send anything).
    event: SNSEvent,
    context: Context,
    { signal }: { signal: AbortSignal },
  ): Promise<SlackNotifierResult> => {
    const parsed = parseEvent(snsEventSchema, event, (issues) => new SlackNotifierEventInvalidError(issues));
    const deadline = withDeadline(signal, context, DEADLINE_MARGIN_MS);
    const result: SlackNotifierResult = { delivered: [], skipped: [] };
    const failures: Array<{ messageId: string; error: string; retryable: boolean }> = [];
    let firstFailure: unknown;

    // SNS invokes Lambda with one record per event; several are handled in turn all the same.
    for (const record of parsed.Records) {
      const messageId = record.Sns.MessageId;
      const message = readAlertMessage(record.Sns.Message);
      if (!message.ok) {
        logger.error('alert message skipped', { messageId, reason: message.reason });
        result.skipped.push({ messageId, reason: message.reason });
        continue;
      }
      const alert = message.alert;
      const about = {
        messageId,
        alertname: alert.alertname,
        status: alert.status,
        severity: alert.severity,
        target: alert.target,
        fingerprint: alert.fingerprint,
        reason: alert.reason,
      };
      let posted: SlackPostResult;
      try {
        posted = await slack.post(slackMessageFor(alert), { signal: deadline.signal });
      } catch (error) {
        // Slack's errors never hold the webhook URL (shared/slack redacts it), so they can be logged whole.
        logger.error('alert not delivered to Slack', { ...about, error: error as Error });
        failures.push({
          messageId,
          error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
          retryable: error instanceof SlackError ? error.retryable : true,
        });
        firstFailure ??= error;
        continue;
      }
      logger.info('alert delivered to Slack', {
        ...about,
        attempts: posted.attempts,
        ...(posted.retries.length === 0 ? {} : { retries: posted.retries }),
        ...(posted.refreshedUrl ? { refreshedUrl: true } : {}),
      });
      result.delivered.push({ messageId, alertname: alert.alertname, status: alert.status, attempts: posted.attempts });
    }

    deadline.clear();
    // Throw so Lambda's async retries, then the DLQ, keep the alert; a swallowed failure would lose a page.
    if (failures.length > 0) throw new SlackNotifierDeliveryFailedError(failures, { cause: firstFailure });
    return result;
  };

  return middy(notifyHandler).use(injectLambdaContext(logger, { resetKeys: true }));
}

/** The alert message in an SNS record, or why it is not one this notifier can post. */
function readAlertMessage(text: string): { ok: true; alert: AlertMessage } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, reason: `not JSON (${text.length} characters)` };
  }
  const version = (json as { version?: unknown } | null)?.version;
  if (version !== ALERT_MESSAGE_VERSION)
    return {
      ok: false,
      reason: `unsupported message version ${JSON.stringify(version)}; this notifier reads version ${ALERT_MESSAGE_VERSION}`,
    };
  const parsed = alertMessageSchema.safeParse(json);
  if (!parsed.success)
    return {
      ok: false,
      reason: `invalid alert message: ${parsed.error.issues
        .slice(0, MAX_LOGGED_ISSUES)
        .map((issue) => `${formatPath('message', issue.path)}: ${issue.message}`)
        .join('; ')}`,
    };
  return { ok: true, alert: parsed.data };
}

/** Builds the real adapters from the environment: the webhook URL from Secrets Manager, cached; Slack over HTTPS. */
export function depsFromEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  logger: Logger,
): SlackNotifierDeps {
  const config = loadSlackNotifierConfig(env);
  const client = new SecretsManagerClient({
    region: config.secretsManagerRegion,
    ...(config.secretsManagerEndpoint === undefined ? {} : { endpoint: config.secretsManagerEndpoint }),
  });
  const webhookUrl = new WebhookUrlProvider({
    client,
    secretId: config.webhookSecretId,
    ttlMs: config.webhookCacheMs,
    allowInsecureLocal: config.allowInsecureWebhookUrl,
  });
  // The secret's id, never its value.
  logger.info('configuration loaded', {
    webhookSecretId: config.webhookSecretId,
    secretsManagerRegion: config.secretsManagerRegion,
    webhookCacheSeconds: config.webhookCacheMs / 1000,
    ...(config.secretsManagerEndpoint === undefined ? {} : { secretsManagerEndpoint: config.secretsManagerEndpoint }),
    ...(config.allowInsecureWebhookUrl ? { allowInsecureWebhookUrl: true } : {}),
  });
  return { slack: new SlackWebhookClient({ webhookUrl }), logger };
}

/** The Lambda entry point (see lazyLambdaEntry: built on first use, configuration parsed once per container). */
export const handler = lazyLambdaEntry<SNSEvent, SlackNotifierResult>('slack-notifier', (env, logger) =>
  createHandler(depsFromEnvironment(env, logger)),
);
