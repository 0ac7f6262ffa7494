import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { VirtualClock } from '../../shared/clock/index.js';
import { startSecretsManagerTwin, type SecretsManagerTwin } from './secretsManager.js';

const REGION = 'us-east-2';
const ACCOUNT = '123456789012';
const WEBHOOK = 'https://hooks.slack.com/services/T0000/B0000/twin-not-a-real-token';

/** What the SDK throws, reduced to what a caller can act on. */
async function failure(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    const e = error as Error & { $metadata?: { httpStatusCode?: number } };
    return { name: e.name, status: e.$metadata?.httpStatusCode, message: e.message };
  }
  throw new Error('expected the request to fail');
}

describe('Function: startSecretsManagerTwin', () => {
  const clock = new VirtualClock(Date.parse('2026-03-02T10:00:00Z'));
  const lines: string[] = [];
  let twin: SecretsManagerTwin;
  let client: SecretsManagerClient;
  let arn: string;

  beforeAll(async () => {
    twin = await startSecretsManagerTwin({
      region: REGION,
      accountId: ACCOUNT,
      clock,
      secrets: { 'vllm-eks-pilot/slack-webhook': WEBHOOK },
      log: (line) => lines.push(line),
    });
    client = new SecretsManagerClient({
      region: REGION,
      endpoint: twin.endpoint,
      credentials: { accessKeyId: 'AKIDTWINSECRETS', secretAccessKey: 'twin-secrets-not-a-secret' },
      maxAttempts: 1,
    });
    arn = twin.putSecret('vllm-eks-pilot/other', 'x');
  });

  afterAll(async () => {
    client.destroy();
    await twin.stop();
  });

  beforeEach(() => {
    lines.length = 0;
  });

  describe('GetSecretValue', () => {
    it('answers by name with the fields the SDK reads, the date as a Date', async () => {
      // Act
      const answer = await client.send(new GetSecretValueCommand({ SecretId: 'vllm-eks-pilot/slack-webhook' }));

      // Assess
      expect(answer.SecretString).toBe(WEBHOOK);
      expect(answer.Name).toBe('vllm-eks-pilot/slack-webhook');
      expect(answer.ARN).toMatch(
        new RegExp(`^arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:vllm-eks-pilot/slack-webhook-[0-9a-f]{6}$`),
      );
      expect(answer.VersionStages).toEqual(['AWSCURRENT']);
      expect(answer.VersionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(answer.CreatedDate).toEqual(new Date('2026-03-02T10:00:00Z'));
    });

    it.each([
      { case: 'the full ARN', id: () => arn },
      { case: 'the ARN without its random suffix', id: () => arn.slice(0, -7) },
    ])('finds the secret by $case', async ({ id }) => {
      // Act
      const answer = await client.send(new GetSecretValueCommand({ SecretId: id() }));

      // Assess
      expect(answer).toMatchObject({ Name: 'vllm-eks-pilot/other', ARN: arn, SecretString: 'x' });
    });

    it('answers an unknown secret with ResourceNotFoundException, as the SDK names it', async () => {
      // Act
      const result = await failure(client.send(new GetSecretValueCommand({ SecretId: 'no-such-secret' })));

      // Assess
      expect(result).toEqual({
        name: 'ResourceNotFoundException',
        status: 400,
        message: "Secrets Manager can't find the specified secret.",
      });
      expect(lines.at(-1)).toMatch(/GetSecretValue -> 400 ResourceNotFoundException/);
    });

    it('keeps the replaced value as AWSPREVIOUS when a secret is put again, under the same ARN', async () => {
      // Prepare
      const rotatedArn = twin.putSecret('rotating', 'first');

      // Act
      const again = twin.putSecret('rotating', 'second');
      const current = await client.send(new GetSecretValueCommand({ SecretId: 'rotating' }));
      const previous = await client.send(
        new GetSecretValueCommand({ SecretId: 'rotating', VersionStage: 'AWSPREVIOUS' }),
      );

      // Assess
      expect(again).toBe(rotatedArn);
      expect(current).toMatchObject({ SecretString: 'second', VersionStages: ['AWSCURRENT'] });
      expect(previous).toMatchObject({ SecretString: 'first', VersionStages: ['AWSPREVIOUS'] });
      expect(previous.VersionId).not.toBe(current.VersionId);
    });

    it('refuses an unsigned request', async () => {
      // Act
      const response = await fetch(twin.endpoint, {
        method: 'POST',
        headers: { 'x-amz-target': 'secretsmanager.GetSecretValue', 'content-type': 'application/x-amz-json-1.1' },
        body: JSON.stringify({ SecretId: 'vllm-eks-pilot/slack-webhook' }),
      });

      // Assess
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ __type: 'MissingAuthenticationTokenException' });
    });

    it('answers an operation it does not serve with UnknownOperationException', async () => {
      // Act
      const response = await fetch(twin.endpoint, {
        method: 'POST',
        headers: {
          authorization: 'AWS4-HMAC-SHA256 twin',
          'x-amz-target': 'secretsmanager.DeleteSecret',
          'content-type': 'application/x-amz-json-1.1',
        },
        body: '{}',
      });

      // Assess
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ __type: 'UnknownOperationException' });
    });
  });

  describe('Method: failNextRequests', () => {
    it.each([
      { case: '500 as InternalServiceError', status: 500, name: 'InternalServiceError', http: 500 },
      {
        case: '429 as ThrottlingException on HTTP 400, as AWS sends it',
        status: 429,
        name: 'ThrottlingException',
        http: 400,
      },
    ])(
      'fails the next requests with $case, then answers again and counts every request',
      async ({ status, name, http }) => {
        // Prepare
        const before = twin.requestCount();
        twin.failNextRequests(1, status);

        // Act
        const failed = await failure(
          client.send(new GetSecretValueCommand({ SecretId: 'vllm-eks-pilot/slack-webhook' })),
        );
        const answer = await client.send(new GetSecretValueCommand({ SecretId: 'vllm-eks-pilot/slack-webhook' }));

        // Assess
        expect(failed).toMatchObject({ name, status: http });
        expect(answer.SecretString).toBe(WEBHOOK);
        expect(twin.requestCount()).toBe(before + 2);
      },
    );

    it('lets the SDK’s own retries ride out one throttled request', async () => {
      // Prepare
      const retrying = new SecretsManagerClient({
        region: REGION,
        endpoint: twin.endpoint,
        credentials: { accessKeyId: 'AKIDTWINSECRETS', secretAccessKey: 'twin-secrets-not-a-secret' },
        maxAttempts: 2,
      });
      twin.failNextRequests(1, 429);

      // Act
      const answer = await retrying.send(new GetSecretValueCommand({ SecretId: 'vllm-eks-pilot/slack-webhook' }));
      retrying.destroy();

      // Assess
      expect(answer.SecretString).toBe(WEBHOOK);
    });

    it('refuses a status it cannot imitate', () => {
      // Act / Assess
      expect(() => twin.failNextRequests(1, 404)).toThrow(/must be 500 .* or 429/);
    });
  });
});

describe('Function: startSecretsManagerTwin > stop', () => {
  it('releases the port', async () => {
    // Prepare
    const twin = await startSecretsManagerTwin({ region: REGION });

    // Act
    await twin.stop();

    // Assess
    await expect(fetch(twin.endpoint, { method: 'POST' })).rejects.toThrow(/fetch failed/);
  });
});
