import { describe, expect, it } from '@jest/globals';
import { ConfigInvalidError } from '../../shared/config/index.js';
import { loadSlackNotifierConfig } from './config.js';

describe('Function: loadSlackNotifierConfig', () => {
  it('applies the defaults: Secrets Manager in the Lambda’s region, a 5-minute cache, Slack URLs only', () => {
    // Act
    const config = loadSlackNotifierConfig({
      SLACK_WEBHOOK_SECRET_ID: 'vllm-eks-pilot/slack-webhook',
      AWS_REGION: 'us-east-2',
    });

    // Assess
    expect(config).toEqual({
      webhookSecretId: 'vllm-eks-pilot/slack-webhook',
      secretsManagerRegion: 'us-east-2',
      webhookCacheMs: 300_000,
      allowInsecureWebhookUrl: false,
    });
  });

  it('reads every override, for the twin or a VPC endpoint', () => {
    // Act
    const config = loadSlackNotifierConfig({
      SLACK_WEBHOOK_SECRET_ID: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:slack-AbCdEf',
      AWS_REGION: 'us-east-2',
      SECRETS_MANAGER_REGION: 'eu-west-1',
      SECRETS_MANAGER_ENDPOINT: 'http://127.0.0.1:4566',
      SLACK_WEBHOOK_CACHE_SECONDS: '10',
      SLACK_ALLOW_INSECURE_WEBHOOK_URL: 'true',
      CLOUDWATCH_NAMESPACE: '',
    });

    // Assess
    expect(config).toEqual({
      webhookSecretId: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:slack-AbCdEf',
      secretsManagerRegion: 'eu-west-1',
      secretsManagerEndpoint: 'http://127.0.0.1:4566',
      webhookCacheMs: 10_000,
      allowInsecureWebhookUrl: true,
    });
  });

  it.each([
    { case: 'nothing set', env: {}, issues: [/^SLACK_WEBHOOK_SECRET_ID: is required/, /^AWS_REGION: is required/] },
    {
      case: 'an empty secret id (treated as unset)',
      env: { SLACK_WEBHOOK_SECRET_ID: '', AWS_REGION: 'us-east-2' },
      issues: [/^SLACK_WEBHOOK_SECRET_ID: is required/],
    },
    {
      case: 'bad values',
      env: {
        SLACK_WEBHOOK_SECRET_ID: 's',
        AWS_REGION: 'Ohio',
        SECRETS_MANAGER_ENDPOINT: 'ftp://x',
        SLACK_WEBHOOK_CACHE_SECONDS: '-5',
        SLACK_ALLOW_INSECURE_WEBHOOK_URL: 'yes',
      },
      issues: [
        /^AWS_REGION: must be an AWS region/,
        /^SECRETS_MANAGER_ENDPOINT: must be an http\(s\) URL/,
        /^SLACK_WEBHOOK_CACHE_SECONDS: must be an integer from 0 to 86400/,
        /^SLACK_ALLOW_INSECURE_WEBHOOK_URL: must be true or false/,
      ],
    },
  ])('names every bad variable at once: $case', ({ env, issues }) => {
    // Act
    const error = (() => {
      try {
        loadSlackNotifierConfig(env);
      } catch (e) {
        return e as ConfigInvalidError;
      }
      throw new Error('expected a refusal');
    })();

    // Assess
    expect(error).toBeInstanceOf(ConfigInvalidError);
    const lines = error.issues.map((issue) => `${issue.path}: ${issue.message}`);
    expect(lines).toHaveLength(issues.length);
    for (const [index, pattern] of issues.entries()) expect(lines[index]).toMatch(pattern);
  });
});
