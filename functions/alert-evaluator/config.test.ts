import { describe, expect, it } from '@jest/globals';
import { DEFAULT_ALERT_SETTINGS } from '../../shared/alerts/rules/index.js';
import { ConfigInvalidError } from '../../shared/config/index.js';
import { loadAlertEvaluatorConfig } from './config.js';

const target = {
  name: 'prod-ministral',
  cluster: 'prod',
  namespace: 'inference',
  deployment: 'vllm-inference-app',
  model: 'mistralai/Ministral-8B-Instruct-2410',
};

const minimal = {
  TARGETS: JSON.stringify([target]),
  AMP_WORKSPACE_URL: 'https://aps-workspaces.us-east-2.amazonaws.com/workspaces/ws-1234/',
  AWS_REGION: 'us-east-2',
  ALERT_TOPIC_ARN: 'arn:aws:sns:us-east-2:123456789012:vllm-eks-pilot-alerts',
  ALERT_STATE_TABLE: 'vllm-eks-pilot-alert-state',
  STAGE: 'prod',
};

function issuesOf(env: Record<string, string | undefined>): string[] {
  try {
    loadAlertEvaluatorConfig(env);
  } catch (error) {
    if (error instanceof ConfigInvalidError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  throw new Error('expected loadAlertEvaluatorConfig to throw');
}

describe('Function: loadAlertEvaluatorConfig', () => {
  it("applies the defaults: the guide's alert settings, AMP in the Lambda's region, four cycles a minute", () => {
    // Act
    const config = loadAlertEvaluatorConfig({ ...minimal, SNS_ENDPOINT: '', OTHER: 'ignored' });

    // Assess
    expect(config).toEqual({
      targets: [{ target, settings: DEFAULT_ALERT_SETTINGS }],
      ampWorkspaceUrl: minimal.AMP_WORKSPACE_URL,
      ampRegion: 'us-east-2',
      region: 'us-east-2',
      topicArn: minimal.ALERT_TOPIC_ARN,
      tableName: minimal.ALERT_STATE_TABLE,
      concurrency: 4,
      intervalSeconds: 15,
      schedulePeriodSeconds: 60,
      cyclesPerInvocation: 4,
      cloudWatchNamespace: 'vLLM/EKSPilot',
      stage: 'prod',
    });
  });

  it("takes a target's own alert settings and every optional variable", () => {
    // Act
    const config = loadAlertEvaluatorConfig({
      ...minimal,
      TARGETS: JSON.stringify([
        { ...target, alerts: { repeatInterval: '10s', rules: { VLLMHighLatency: { threshold: 2.5 } } } },
        { ...target, name: 'staging' },
      ]),
      AMP_REGION: 'eu-west-1',
      SNS_ENDPOINT: 'http://127.0.0.1:4575',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:4569',
      EVALUATOR_CONCURRENCY: '8',
      EVALUATION_INTERVAL_SECONDS: '1',
      SCHEDULE_PERIOD_SECONDS: '1',
      CLOUDWATCH_NAMESPACE: 'Custom/Pilot',
      CLOUDWATCH_ENDPOINT: 'http://127.0.0.1:4580',
    });

    // Assess
    expect(config).toMatchObject({
      ampRegion: 'eu-west-1',
      region: 'us-east-2',
      snsEndpoint: 'http://127.0.0.1:4575',
      dynamoDbEndpoint: 'http://127.0.0.1:4569',
      concurrency: 8,
      intervalSeconds: 1,
      cyclesPerInvocation: 1,
      cloudWatchNamespace: 'Custom/Pilot',
      cloudWatchEndpoint: 'http://127.0.0.1:4580',
    });
    expect(config.targets.map(({ target: t, settings }) => [t.name, settings.repeatIntervalSeconds])).toEqual([
      ['prod-ministral', 10],
      ['staging', DEFAULT_ALERT_SETTINGS.repeatIntervalSeconds],
    ]);
    expect(config.targets[0]?.settings.rules.VLLMHighLatency.threshold).toBe(2.5);
  });

  it('lists every bad variable at once, by name', () => {
    // Prepare
    const env = {
      TARGETS: JSON.stringify([
        { ...target, namespace: 'Bad_NS', alerts: { rules: { VLLMKVCacheFull: { threshold: 95 } } } },
      ]),
      AMP_WORKSPACE_URL: 'not a url',
      AWS_REGION: 'us-east-2',
      ALERT_TOPIC_ARN: 'vllm-eks-pilot-alerts',
      EVALUATOR_CONCURRENCY: '0',
      STAGE: 'prod',
    };

    // Act
    const issues = issuesOf(env);

    // Assess
    expect(issues).toEqual([
      expect.stringMatching(/^AMP_WORKSPACE_URL: must be an http\(s\) URL/),
      expect.stringMatching(/^ALERT_TOPIC_ARN: must be an SNS topic ARN/),
      expect.stringMatching(/^ALERT_STATE_TABLE: is required/),
      expect.stringMatching(/^EVALUATOR_CONCURRENCY: must be an integer from 1 to 16/),
      expect.stringMatching(/^TARGETS: targets\[0\]\.namespace: "Bad_NS" is not valid/),
      expect.stringMatching(
        /^TARGETS: targets\[0\]\.alerts\.rules\.VLLMKVCacheFull\.threshold: 95 is not valid; accepted: a 0-1 fraction/,
      ),
    ]);
  });

  it.each([
    { case: 'TARGETS missing', env: { ...minimal, TARGETS: undefined }, expected: /^TARGETS: is required/ },
    {
      case: 'an unknown key in a target',
      env: { ...minimal, TARGETS: JSON.stringify([{ ...target, namspace: 'x' }]) },
      expected: /^TARGETS: targets\[0\]/,
    },
    {
      case: 'ALERT_STATE_TABLE too short',
      env: { ...minimal, ALERT_STATE_TABLE: 'ab' },
      expected: /^ALERT_STATE_TABLE: must be a DynamoDB table name/,
    },
    {
      case: 'an SQS ARN as the topic',
      env: { ...minimal, ALERT_TOPIC_ARN: 'arn:aws:sqs:us-east-2:123456789012:alerts' },
      expected: /^ALERT_TOPIC_ARN: must be an SNS topic ARN/,
    },
    {
      case: 'an ftp SNS_ENDPOINT',
      env: { ...minimal, SNS_ENDPOINT: 'ftp://x' },
      expected: /^SNS_ENDPOINT: must be an http\(s\) URL/,
    },
    {
      case: 'no STAGE (the heartbeat metric needs it)',
      env: { ...minimal, STAGE: undefined },
      expected: /^STAGE: is required/,
    },
    {
      case: 'an interval of 0',
      env: { ...minimal, EVALUATION_INTERVAL_SECONDS: '0' },
      expected: /^EVALUATION_INTERVAL_SECONDS: must be a whole number of seconds from 1 to 300/,
    },
    {
      // Cycles sit at whole intervals from the start: 60 s with 25 s leaves a 10 s gap before the next invocation.
      case: 'a schedule period that is not a whole number of intervals',
      env: { ...minimal, EVALUATION_INTERVAL_SECONDS: '25' },
      expected: /^SCHEDULE_PERIOD_SECONDS: 60 is not a multiple of EVALUATION_INTERVAL_SECONDS 25/,
    },
    {
      case: 'a namespace starting with AWS/',
      env: { ...minimal, CLOUDWATCH_NAMESPACE: 'AWS/Lambda' },
      expected: /^CLOUDWATCH_NAMESPACE: must not start with "AWS\/"/,
    },
    {
      case: 'a bad AWS_REGION',
      env: { ...minimal, AWS_REGION: 'Ohio' },
      expected: /^AWS_REGION: must be an AWS region/,
    },
  ])('refuses $case', ({ env, expected }) => {
    // Act
    const issues = issuesOf(env);

    // Assess
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(expected);
  });
});
