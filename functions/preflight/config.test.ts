import { describe, expect, it } from '@jest/globals';
import { ConfigInvalidError } from '../../shared/config/index.js';
import { DEFAULT_PREFLIGHT_SETTINGS } from '../../shared/preflight/index.js';
import { loadPreflightConfig } from './config.js';

const target = {
  name: 'prod-ministral',
  cluster: 'prod',
  namespace: 'llm',
  deployment: 'ministral',
  model: 'mistralai/Ministral-8B-Instruct-2410',
};

/** The environment serverless.yml gives the function. */
const validEnv: Record<string, string> = {
  TARGETS: JSON.stringify([
    target,
    { ...target, name: 'staging', service: 'ministral-svc', scaledObject: 'ministral' },
  ]),
  AMP_WORKSPACE_URL: 'https://aps-workspaces.us-east-2.amazonaws.com/workspaces/ws-1234/',
  AWS_REGION: 'us-east-2',
  PREFLIGHT_TOPIC_ARN: 'arn:aws:sns:us-east-2:123456789012:vllm-eks-pilot-preflight',
  HISTORY_TABLE: 'vllm-eks-pilot-calibration-history',
  ALERTING_ENGINE: 'lambda',
  ALERT_STATE_TABLE: 'vllm-eks-pilot-alert-state',
};

function issuesOf(env: Record<string, string | undefined>): string[] {
  try {
    loadPreflightConfig(env);
  } catch (error) {
    if (error instanceof ConfigInvalidError) return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
    throw error;
  }
  throw new Error('the configuration was accepted');
}

describe('Function: loadPreflightConfig', () => {
  it('reads the targets with their optional Service and ScaledObject, the defaults, and the alerting engine', () => {
    // Act
    const config = loadPreflightConfig(validEnv);

    // Assess
    expect(config.targets).toEqual([
      target,
      { ...target, name: 'staging', service: 'ministral-svc', scaledObject: 'ministral' },
    ]);
    expect(config.ampRegion).toBe('us-east-2');
    expect(config.topicArn).toBe(validEnv.PREFLIGHT_TOPIC_ARN);
    expect(config.historyTable).toBe('vllm-eks-pilot-calibration-history');
    expect(config.settings).toEqual({ ...DEFAULT_PREFLIGHT_SETTINGS, alertingEngine: 'lambda' });
    expect(config.alertStateTable).toBe('vllm-eks-pilot-alert-state');
    expect(config.eksEndpoint).toBeUndefined();
  });

  it('takes PREFLIGHT_SETTINGS over the defaults, the endpoints for the twin, and an empty variable as unset', () => {
    // Act
    const config = loadPreflightConfig({
      ...validEnv,
      ALERTING_ENGINE: 'amp',
      AMP_RULE_NAMESPACE: 'vllm-eks-pilot-prod',
      AMP_CONTROL_PLANE_ENDPOINT: 'http://127.0.0.1:4568',
      TARGETS: JSON.stringify([{ ...target, alerts: { rules: { VLLMHighLatency: { threshold: 2.5 } } } }]),
      PREFLIGHT_SETTINGS: JSON.stringify({ freshnessSeconds: 10, scaleCycleStepSeconds: 1 }),
      AMP_REGION: 'eu-west-1',
      EKS_ENDPOINT: 'http://127.0.0.1:4566',
      SNS_ENDPOINT: 'http://127.0.0.1:4567',
      DYNAMODB_ENDPOINT: '',
    });

    // Assess
    expect(config.settings).toMatchObject({
      freshnessSeconds: 10,
      scaleCycleStepSeconds: 1,
      warmupRequests: 100,
      alertingEngine: 'amp',
      ampRuleNamespace: 'vllm-eks-pilot-prod',
    });
    expect(config.ampControlPlaneEndpoint).toBe('http://127.0.0.1:4568');
    // A target's alert settings: check 5 compares AMP's rules with the ones they generate.
    expect(config.targets[0]?.alerts?.rules.VLLMHighLatency.threshold).toBe(2.5);
    expect(config.ampRegion).toBe('eu-west-1');
    expect(config.eksEndpoint).toBe('http://127.0.0.1:4566');
    expect(config.snsEndpoint).toBe('http://127.0.0.1:4567');
    expect(config.dynamoDbEndpoint).toBeUndefined();
  });

  it.each([
    { case: 'no topic', env: { PREFLIGHT_TOPIC_ARN: undefined }, issue: /^PREFLIGHT_TOPIC_ARN: is required/ },
    { case: 'a topic name, not an ARN', env: { PREFLIGHT_TOPIC_ARN: 'preflight' }, issue: /must be an SNS topic ARN/ },
    { case: 'no history table', env: { HISTORY_TABLE: undefined }, issue: /^HISTORY_TABLE: is required/ },
    {
      case: 'no alerting engine',
      env: { ALERTING_ENGINE: undefined },
      issue: /^ALERTING_ENGINE: is required: who evaluates the alert rules, one of lambda, amp/,
    },
    { case: 'an unknown engine', env: { ALERTING_ENGINE: 'true' }, issue: /^ALERTING_ENGINE: .*lambda, amp/ },
    {
      case: 'the Lambda engine without the alert state table (its heartbeat)',
      env: { ALERT_STATE_TABLE: undefined },
      issue: /^ALERT_STATE_TABLE: is required with ALERTING_ENGINE=lambda/,
    },
    {
      case: 'the AMP engine without its rule groups namespace',
      env: { ALERTING_ENGINE: 'amp' },
      issue: /^AMP_RULE_NAMESPACE: is required with ALERTING_ENGINE=amp/,
    },
    {
      case: "a bad threshold in a target's alert settings",
      env: { TARGETS: JSON.stringify([{ ...target, alerts: { rules: { VLLMKVCacheFull: { threshold: 95 } } } }]) },
      issue: /^TARGETS: targets\[0\]\.alerts\.rules\.VLLMKVCacheFull\.threshold: 95 is not valid/,
    },
    {
      case: 'a typo in a target',
      env: { TARGETS: JSON.stringify([{ ...target, namspace: 'llm' }]) },
      issue: /^TARGETS: targets\[0\]/,
    },
    {
      case: 'a Service name with capitals',
      env: { TARGETS: JSON.stringify([{ ...target, service: 'Vllm' }]) },
      issue: /^TARGETS: targets\[0\]\.service: is not a Service name/,
    },
    {
      case: 'two targets with one name',
      env: { TARGETS: JSON.stringify([target, target]) },
      issue: /^TARGETS: targets\[1\]\.name: duplicate name/,
    },
    {
      case: 'settings that are not JSON',
      env: { PREFLIGHT_SETTINGS: '{fresh' },
      issue: /^PREFLIGHT_SETTINGS: is not valid JSON/,
    },
    {
      case: 'a negative freshness',
      env: { PREFLIGHT_SETTINGS: '{"freshnessSeconds":-1}' },
      issue: /^PREFLIGHT_SETTINGS\.freshnessSeconds: must be > 0/,
    },
    {
      case: 'an unknown setting',
      env: { PREFLIGHT_SETTINGS: '{"freshness":10}' },
      issue: /^PREFLIGHT_SETTINGS: unknown key\(s\) freshness/,
    },
  ])('refuses $case, naming the variable and what is accepted', ({ env, issue }) => {
    // Act
    const issues = issuesOf({ ...validEnv, ...env });

    // Assess
    expect(issues).toEqual([expect.stringMatching(issue)]);
  });

  it('lists every bad variable at once, settings included', () => {
    // Act
    const issues = issuesOf({ ...validEnv, HISTORY_TABLE: undefined, PREFLIGHT_SETTINGS: '{"warmupRequests":1.5}' });

    // Assess
    expect(issues).toEqual([
      expect.stringMatching(/^HISTORY_TABLE: /),
      expect.stringMatching(/^PREFLIGHT_SETTINGS\.warmupRequests: must be an integer/),
    ]);
  });
});
