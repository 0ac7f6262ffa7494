import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { type SecretsManagerTwin, startSecretsManagerTwin } from '../../sim/harness/index.js';
import { VirtualClock } from '../clock/index.js';
import { SlackWebhookSecretReadError, SlackWebhookUrlInvalidError } from './errors.js';
import { webhookUrlFromSecret, WebhookUrlProvider } from './webhookSecret.js';

const REGION = 'us-east-2';
const SLACK_URL = 'https://hooks.slack.com/services/T0000/B0000/abcdefghijklmnopqrstuvwx';

describe('Class: WebhookUrlProvider', () => {
  let twin: SecretsManagerTwin;
  let client: SecretsManagerClient;

  beforeAll(async () => {
    twin = await startSecretsManagerTwin({ region: REGION });
    client = new SecretsManagerClient({
      region: REGION,
      endpoint: twin.endpoint,
      credentials: { accessKeyId: 'AKIDTWINSECRETS', secretAccessKey: 'twin-secrets-not-a-secret' },
      maxAttempts: 1,
    });
  });

  afterAll(async () => {
    client.destroy();
    await twin.stop();
  });

  describe('Method: get', () => {
    it.each([
      { case: 'the URL itself', secret: SLACK_URL },
      { case: 'JSON with webhookUrl', secret: JSON.stringify({ webhookUrl: SLACK_URL, channel: '#alerts' }) },
      { case: 'the URL with a trailing newline', secret: `${SLACK_URL}\n` },
    ])('reads the URL from a secret holding $case', async ({ secret }) => {
      // Prepare
      twin.putSecret('get-forms', secret);
      const provider = new WebhookUrlProvider({ client, secretId: 'get-forms' });

      // Act / Assess
      await expect(provider.get()).resolves.toBe(SLACK_URL);
    });

    it('reads the secret once per TTL, then again', async () => {
      // Prepare
      const clock = new VirtualClock(0);
      twin.putSecret('cached', SLACK_URL);
      const provider = new WebhookUrlProvider({ client, secretId: 'cached', clock, ttlMs: 300_000 });
      const before = twin.requestCount();

      // Act
      await provider.get();
      clock.advance(299_999);
      await provider.get();
      const withinTtl = twin.requestCount() - before;
      clock.advance(1);
      await provider.get();

      // Assess
      expect(withinTtl).toBe(1);
      expect(twin.requestCount() - before).toBe(2);
    });

    it('shares one read among callers that arrive together', async () => {
      // Prepare
      twin.putSecret('together', SLACK_URL);
      const provider = new WebhookUrlProvider({ client, secretId: 'together' });
      const before = twin.requestCount();

      // Act
      const urls = await Promise.all([provider.get(), provider.get(), provider.get()]);

      // Assess
      expect(urls).toEqual([SLACK_URL, SLACK_URL, SLACK_URL]);
      expect(twin.requestCount() - before).toBe(1);
    });

    it('caches no failure: after Secrets Manager fails, the next call reads again', async () => {
      // Prepare
      twin.putSecret('flaky', SLACK_URL);
      const provider = new WebhookUrlProvider({ client, secretId: 'flaky' });
      twin.failNextRequests(1, 500);

      // Act
      const error = await provider.get().catch((e: unknown) => e);
      const url = await provider.get();

      // Assess
      expect(error).toBeInstanceOf(SlackWebhookSecretReadError);
      expect(error).toMatchObject({ retryable: true, secretId: 'flaky' });
      expect((error as Error).message).toMatch(/InternalServiceError/);
      expect(url).toBe(SLACK_URL);
    });

    it('names a missing secret and says retrying will not help', async () => {
      // Prepare
      const provider = new WebhookUrlProvider({ client, secretId: 'no-such-secret' });

      // Act
      const error = await provider.get().catch((e: unknown) => e);

      // Assess
      expect(error).toBeInstanceOf(SlackWebhookSecretReadError);
      expect(error).toMatchObject({ retryable: false });
      expect((error as Error).message).toBe(
        "could not read the Slack webhook secret no-such-secret: ResourceNotFoundException: Secrets Manager can't find the specified secret.",
      );
      expect(((error as Error).cause as Error).name).toBe('ResourceNotFoundException');
    });

    it.each([
      { case: 'refuses', allowInsecureLocal: false, accepted: false },
      { case: 'accepts with allowInsecureLocal', allowInsecureLocal: true, accepted: true },
    ])('$case a local http URL (the twin’s sink)', async ({ allowInsecureLocal, accepted }) => {
      // Prepare
      const local = 'http://127.0.0.1:4567/services/T0000/B0000/localsecrettoken';
      twin.putSecret('local', local);
      const provider = new WebhookUrlProvider({ client, secretId: 'local', allowInsecureLocal });

      // Act
      const result = await provider.get().catch((e: unknown) => e);

      // Assess
      if (accepted) expect(result).toBe(local);
      else {
        expect(result).toBeInstanceOf(SlackWebhookUrlInvalidError);
        expect((result as Error).message).not.toContain('localsecrettoken');
      }
    });
  });

  describe('Method: refresh', () => {
    it('reads the rotated secret at once, whatever the cache holds', async () => {
      // Prepare
      const rotated = 'https://hooks.slack.com/services/T0000/B0001/rotatedrotatedrotated';
      twin.putSecret('rotating', SLACK_URL);
      const provider = new WebhookUrlProvider({ client, secretId: 'rotating' });
      await provider.get();
      twin.putSecret('rotating', rotated);

      // Act
      const cached = await provider.get();
      const fresh = await provider.refresh();
      const after = await provider.get();

      // Assess
      expect(cached).toBe(SLACK_URL);
      expect(fresh).toBe(rotated);
      expect(after).toBe(rotated);
    });
  });
});

describe('Function: webhookUrlFromSecret', () => {
  it.each([
    { case: 'not a URL', secret: 'secrettokenvalue', problem: /it is not a URL \(16 characters\)/ },
    { case: 'JSON that does not parse', secret: '{"webhookUrl": "secrettokenvalue"', problem: /not valid JSON/ },
    {
      case: 'JSON without webhookUrl',
      secret: '{"url": "secrettokenvalue"}',
      problem: /no string "webhookUrl" \(keys: url\)/,
    },
    {
      case: 'a plain http Slack URL',
      secret: 'http://hooks.slack.com/services/T0/B0/secrettokenvalue',
      problem: /http:\/\/hooks\.slack\.com\/services\/\*\*\* is not https:\/\/hooks\.slack\.com\/services\//,
    },
    {
      case: 'another host',
      secret: 'https://evil.example.com/services/T0/B0/secrettokenvalue',
      problem: /https:\/\/evil\.example\.com\/services\/\*\*\* is not/,
    },
    {
      case: 'a Slack URL that is not a webhook',
      secret: 'https://hooks.slack.com/workflows/T0/A0/secrettokenvalue',
      problem: /is not https:\/\/hooks\.slack\.com\/services\//,
    },
  ])('refuses $case, naming the problem but not the value', ({ secret, problem }) => {
    // Act
    const error = (() => {
      try {
        webhookUrlFromSecret(secret, { source: 'secret slack-webhook' });
      } catch (e) {
        return e as Error;
      }
      throw new Error('expected a refusal');
    })();

    // Assess
    expect(error).toBeInstanceOf(SlackWebhookUrlInvalidError);
    expect(error.message).toMatch(/^secret slack-webhook holds no usable Slack webhook URL: /);
    expect(error.message).toMatch(problem);
    expect(error.message).not.toContain('secrettokenvalue');
  });
});
