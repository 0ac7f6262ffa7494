import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { SNSEvent } from 'aws-lambda';
import {
  lambdaContext,
  type SecretsManagerTwin,
  type SlackWebhookSink,
  startSecretsManagerTwin,
  startSlackWebhookSink,
} from '../../sim/harness/index.js';
import type { AlertMessage } from '../../shared/alerts/index.js';
import { ConfigInvalidError } from '../../shared/config/index.js';
import { slackMessageFor, SlackWebhookClient, WebhookUrlProvider } from '../../shared/slack/index.js';
import { kvCacheFiring, kvCacheResolved } from '../../shared/slack/testing/alertMessages.js';
import { SlackNotifierDeliveryFailedError, SlackNotifierEventInvalidError } from './errors.js';
import { createHandler, handler } from './handler.js';
import { CapturingLogger } from '../shared/testing.js';

const REGION = 'us-east-2';
const TOPIC = 'arn:aws:sns:us-east-2:123456789012:vllm-eks-pilot-alerts';

/** An SNS event as Lambda receives it from a subscription, carrying `message` (JSON-encoded unless a string). */
function snsEvent(message: unknown, messageId = '95df01b4-ee98-5cb9-9903-4c221d41eb5e'): SNSEvent {
  return {
    Records: [
      {
        EventVersion: '1.0',
        EventSubscriptionArn: `${TOPIC}:2bcfbf39-05c3-41de-beaa-fcfcc21c8f55`,
        EventSource: 'aws:sns',
        Sns: {
          SignatureVersion: '1',
          Timestamp: '2026-03-02T10:05:00.000Z',
          Signature: 'tcc6faL2yUC6dgZdmrwh1Y4cGa/ebXEkAi6RibDsvpi+tE/1+82j...65r==',
          SigningCertUrl:
            'https://sns.us-east-2.amazonaws.com/SimpleNotificationService-ac565b8b1a6c5d002d285f9598aa1d9b.pem',
          MessageId: messageId,
          Message: typeof message === 'string' ? message : JSON.stringify(message),
          MessageAttributes: {
            severity: { Type: 'String', Value: 'critical' },
            status: { Type: 'String', Value: 'firing' },
          },
          Type: 'Notification',
          UnsubscribeUrl: `https://sns.us-east-2.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=${TOPIC}`,
          TopicArn: TOPIC,
          Subject: 'VLLMKVCacheFull firing',
        },
      },
    ],
  };
}

const context = lambdaContext('slack-notifier', { remainingMs: 30_000 });

describe('Function: createHandler', () => {
  let secrets: SecretsManagerTwin;
  let sink: SlackWebhookSink;
  let client: SecretsManagerClient;
  let logger: CapturingLogger;
  let secretNumber = 0;
  const waits: number[] = [];

  beforeAll(async () => {
    [secrets, sink] = await Promise.all([startSecretsManagerTwin({ region: REGION }), startSlackWebhookSink()]);
    client = new SecretsManagerClient({
      region: REGION,
      endpoint: secrets.endpoint,
      credentials: { accessKeyId: 'AKIDTWINSECRETS', secretAccessKey: 'twin-secrets-not-a-secret' },
      maxAttempts: 1,
    });
  });

  afterAll(async () => {
    client.destroy();
    await Promise.all([secrets.stop(), sink.stop()]);
  });

  beforeEach(() => {
    sink.clear();
    waits.length = 0;
    logger = new CapturingLogger({ serviceName: 'slack-notifier' });
  });

  /** A notifier reading a fresh secret that holds `url`, with a cold cache; retries wait no real time. */
  function build(url: string = sink.url) {
    secretNumber += 1;
    const secretId = `vllm-eks-pilot/slack-webhook-${secretNumber}`;
    secrets.putSecret(secretId, url);
    const webhookUrl = new WebhookUrlProvider({ client, secretId, allowInsecureLocal: true });
    const slack = new SlackWebhookClient({
      webhookUrl,
      sleep: (ms) => {
        waits.push(ms);
        return Promise.resolve();
      },
      random: () => 0.5,
    });
    return { lambda: createHandler({ slack, logger }), secretId };
  }

  const linesWith = (message: string) => logger.lines.filter((line) => line.message === message);

  it('posts one alert to Slack as its Block Kit message and logs the delivery', async () => {
    // Prepare
    const { lambda } = build();

    // Act
    const result = await lambda(snsEvent(kvCacheFiring), context);

    // Assess
    expect(result).toEqual({
      delivered: [
        {
          messageId: '95df01b4-ee98-5cb9-9903-4c221d41eb5e',
          alertname: 'VLLMKVCacheFull',
          status: 'firing',
          attempts: 1,
        },
      ],
      skipped: [],
    });
    expect(sink.deliveries().map((d) => d.body)).toEqual([slackMessageFor(kvCacheFiring)]);
    expect(linesWith('alert delivered to Slack')).toEqual([
      expect.objectContaining({
        level: 'INFO',
        messageId: '95df01b4-ee98-5cb9-9903-4c221d41eb5e',
        alertname: 'VLLMKVCacheFull',
        status: 'firing',
        severity: 'critical',
        target: 'prod-mistral',
        reason: 'first',
        attempts: 1,
        function_request_id: context.awsRequestId,
      }),
    ]);
  });

  it('delivers a 429-throttled alert once, after Slack’s Retry-After', async () => {
    // Prepare
    const { lambda } = build();
    sink.failNextRequests(1, 429);

    // Act
    const result = await lambda(snsEvent(kvCacheResolved), context);

    // Assess
    expect(result.delivered).toEqual([expect.objectContaining({ status: 'resolved', attempts: 2 })]);
    expect(sink.deliveries()).toHaveLength(1);
    expect(waits).toEqual([1000]);
    expect(linesWith('alert delivered to Slack')[0]?.retries).toEqual(['HTTP 429 rate_limited, waited 1000 ms']);
  });

  it('throws a named, retryable error when Slack keeps failing, so Lambda retries and then dead-letters it', async () => {
    // Prepare
    const { lambda } = build();
    sink.failNextRequests(10, 500);

    // Act
    const error = await lambda(snsEvent(kvCacheFiring), context).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(SlackNotifierDeliveryFailedError);
    expect(error).toMatchObject({
      name: 'SlackNotifierDeliveryFailedError',
      retryable: true,
      failures: [
        {
          messageId: '95df01b4-ee98-5cb9-9903-4c221d41eb5e',
          error:
            'SlackWebhookUnavailableError: Slack webhook unavailable after 4 attempts; last problem: HTTP 500 rollup_error',
        },
      ],
    });
    expect(sink.deliveries()).toEqual([]);
    expect(linesWith('alert not delivered to Slack')).toEqual([
      expect.objectContaining({ level: 'ERROR', messageId: '95df01b4-ee98-5cb9-9903-4c221d41eb5e' }),
    ]);
    sink.clear();
  });

  it('reads the secret once for two invocations of a warm container', async () => {
    // Prepare
    const { lambda } = build();
    const before = secrets.requestCount();

    // Act
    await lambda(snsEvent(kvCacheFiring, 'm-1'), context);
    await lambda(snsEvent(kvCacheResolved, 'm-2'), context);

    // Assess
    expect(secrets.requestCount() - before).toBe(1);
    expect(sink.deliveries()).toHaveLength(2);
  });

  it('reads the secret again when Slack says the cached hook is gone, and delivers to the rotated one', async () => {
    // Prepare: the container cached a hook that has since been removed; the secret now holds the live one.
    const { lambda, secretId } = build(`${sink.url}removed`);
    await lambda(snsEvent(kvCacheFiring, 'warm-up'), context).catch(() => undefined);
    secrets.putSecret(secretId, sink.url);
    logger.lines.length = 0;

    // Act
    const result = await lambda(snsEvent(kvCacheFiring), context);

    // Assess
    expect(result.delivered).toHaveLength(1);
    expect(sink.deliveries()).toHaveLength(1);
    expect(linesWith('alert delivered to Slack')[0]).toMatchObject({ refreshedUrl: true, attempts: 2 });
  });

  it('delivers an alert whose texts are far over Slack’s limits (the sink enforces them as Slack does)', async () => {
    // Prepare
    const { lambda } = build();
    const huge: AlertMessage = {
      ...kvCacheFiring,
      summary: 's'.repeat(5_000),
      description: '<&>'.repeat(3_000),
      labels: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`l${i}`, 'v'.repeat(40)])),
    };

    // Act
    const result = await lambda(snsEvent(huge), context);

    // Assess
    expect(result.delivered).toHaveLength(1);
    expect(sink.deliveries()).toHaveLength(1);
  });

  it.each([
    {
      case: 'a message that is not JSON',
      message: 'VLLMKVCacheFull is firing',
      reason: /^not JSON \(25 characters\)$/,
    },
    {
      case: 'a message of a later version',
      message: { ...kvCacheFiring, version: 2 },
      reason: /^unsupported message version 2; this notifier reads version 1$/,
    },
    {
      case: 'a v1 message with a bad field',
      message: { ...kvCacheFiring, severity: 'page-everyone' },
      reason: /^invalid alert message: message\.severity: /,
    },
  ])('logs and skips $case without posting or throwing (a retry could not fix it)', async ({ message, reason }) => {
    // Prepare
    const { lambda } = build();

    // Act
    const result = await lambda(snsEvent(message, 'bad-1'), context);

    // Assess
    expect(result.delivered).toEqual([]);
    expect(result.skipped).toEqual([{ messageId: 'bad-1', reason: expect.stringMatching(reason) }]);
    expect(sink.deliveries()).toEqual([]);
    expect(linesWith('alert message skipped')).toEqual([
      expect.objectContaining({ level: 'ERROR', messageId: 'bad-1', reason: expect.stringMatching(reason) }),
    ]);
  });

  it('refuses an event that is not from SNS, naming what is missing', async () => {
    // Prepare
    const { lambda } = build();

    // Act
    const running = lambda({ Records: [{ body: '{}' }] } as unknown as SNSEvent, context);

    // Assess
    await expect(running).rejects.toThrow(SlackNotifierEventInvalidError);
    await expect(running).rejects.toThrow(/event\.Records\[0\]\.Sns: /);
  });

  it.each([
    { case: 'Slack keeps failing', url: () => sink.url, fail: () => sink.failNextRequests(10, 503) },
    { case: 'the hook was removed (no_service)', url: () => `${sink.url}gone`, fail: () => undefined },
    {
      case: 'nothing listens at the hook',
      url: () => 'http://127.0.0.1:9/services/T0000/B0000/nothinglistenssecret',
      fail: () => undefined,
    },
  ])('writes the webhook URL into no log line and no error when $case', async ({ url, fail }) => {
    // Prepare
    const secretUrl = url();
    const token = secretUrl.split('/').at(-1) ?? '';
    const { lambda } = build(secretUrl);
    fail();

    // Act
    const error = await lambda(snsEvent(kvCacheFiring), context).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(SlackNotifierDeliveryFailedError);
    const logged = JSON.stringify(logger.lines);
    expect(logged).toContain('alert not delivered to Slack');
    expect(logged).not.toContain(token);
    let shown = '';
    for (let e: unknown = error; e instanceof Error; e = e.cause) shown += `${e.message}\n${e.stack ?? ''}\n`;
    expect(shown).not.toContain(token);
    sink.clear();
  });
});

describe('Function: handler', () => {
  it('is importable without configuration and names the missing secret id on first use', async () => {
    // Prepare: this test's environment has no notifier configuration; silence the handler's own logger.
    if (process.env.SLACK_WEBHOOK_SECRET_ID !== undefined) return;
    const previous = process.env.POWERTOOLS_LOG_LEVEL;
    process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';

    try {
      // Act
      const running = handler(snsEvent(kvCacheFiring), context);

      // Assess
      await expect(running).rejects.toThrow(ConfigInvalidError);
      await expect(running).rejects.toThrow(/SLACK_WEBHOOK_SECRET_ID: is required/);
    } finally {
      if (previous === undefined) delete process.env.POWERTOOLS_LOG_LEVEL;
      else process.env.POWERTOOLS_LOG_LEVEL = previous;
    }
  });
});
