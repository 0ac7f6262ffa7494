import { describe, expect, it } from '@jest/globals';
import { ConfigInvalidError } from '../../shared/config/index.js';
import { loadAlertInstallerConfig } from './config.js';

const minimal = {
  TARGETS: JSON.stringify([
    { name: 'prod', cluster: 'ai-eks', namespace: 'default', deployment: 'vllm', model: 'mistralai/Ministral-8B' },
  ]),
  AWS_REGION: 'us-east-2',
  AMP_WORKSPACE_ID: 'ws-b226cc2a-a446-46a9-933a-ac50479a5568',
  AMP_RULE_NAMESPACE: 'vllm-eks-pilot-prod',
  ALERT_TOPIC_ARN: 'arn:aws:sns:us-west-2:123456789012:vllm-eks-pilot-prod-alerts',
};

function issuesOf(env: Record<string, string | undefined>): string[] {
  try {
    loadAlertInstallerConfig(env);
  } catch (error) {
    if (error instanceof ConfigInvalidError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  throw new Error('expected loadAlertInstallerConfig to throw');
}

describe('Function: loadAlertInstallerConfig', () => {
  it("applies the defaults: AMP in the Lambda's region, the topic's region from its ARN, 240 s and 5 s", () => {
    // Act
    const config = loadAlertInstallerConfig({ ...minimal, AMP_CONTROL_PLANE_ENDPOINT: '' });

    // Assess
    expect(config).toMatchObject({
      ampWorkspaceId: minimal.AMP_WORKSPACE_ID,
      ampRegion: 'us-east-2',
      ruleNamespace: 'vllm-eks-pilot-prod',
      topicArn: minimal.ALERT_TOPIC_ARN,
      topicRegion: 'us-west-2',
      waitTimeoutMs: 240_000,
      pollIntervalMs: 5_000,
    });
    expect(config.ampControlPlaneEndpoint).toBeUndefined();
    expect(config.targets.map(({ target }) => target.name)).toEqual(['prod']);
  });

  it('takes the endpoint override of the twin, and the wait settings', () => {
    // Act
    const config = loadAlertInstallerConfig({
      ...minimal,
      AMP_CONTROL_PLANE_ENDPOINT: 'http://127.0.0.1:4510',
      AMP_WAIT_TIMEOUT_SECONDS: '30',
      AMP_POLL_INTERVAL_SECONDS: '1',
    });

    // Assess
    expect(config).toMatchObject({
      ampControlPlaneEndpoint: 'http://127.0.0.1:4510',
      waitTimeoutMs: 30_000,
      pollIntervalMs: 1_000,
    });
  });

  it.each([
    { name: 'a missing workspace id', change: { AMP_WORKSPACE_ID: undefined }, issue: 'AMP_WORKSPACE_ID: is required' },
    { name: 'a workspace name', change: { AMP_WORKSPACE_ID: 'my-workspace' }, issue: 'AMP_WORKSPACE_ID: must be' },
    { name: 'a namespace with a slash', change: { AMP_RULE_NAMESPACE: 'a/b' }, issue: 'AMP_RULE_NAMESPACE: must be' },
    {
      name: 'a queue ARN for the topic',
      change: { ALERT_TOPIC_ARN: 'arn:aws:sqs:x' },
      issue: 'ALERT_TOPIC_ARN: must be',
    },
    {
      name: 'a bad endpoint',
      change: { AMP_CONTROL_PLANE_ENDPOINT: 'aps' },
      issue: 'AMP_CONTROL_PLANE_ENDPOINT: must be',
    },
    {
      name: 'a wait of 20 min',
      change: { AMP_WAIT_TIMEOUT_SECONDS: '1200' },
      issue: 'AMP_WAIT_TIMEOUT_SECONDS: must be',
    },
    { name: 'a bad target', change: { TARGETS: '[{"name":"a"}]' }, issue: 'TARGETS: targets[0].cluster' },
  ])('refuses $name, naming the variable', ({ change, issue }) => {
    expect(issuesOf({ ...minimal, ...change }).some((line) => line.startsWith(issue))).toBe(true);
  });
});
