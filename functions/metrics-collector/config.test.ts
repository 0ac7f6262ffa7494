import { describe, expect, it } from '@jest/globals';
import { ConfigInvalidError } from '../../shared/config/index.js';
import { loadCollectorConfig } from './config.js';

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
};

function issuesOf(env: Record<string, string | undefined>): string[] {
  try {
    loadCollectorConfig(env);
  } catch (error) {
    if (error instanceof ConfigInvalidError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  throw new Error('expected loadCollectorConfig to throw');
}

describe('Function: loadCollectorConfig', () => {
  it('applies the defaults, and AMP_REGION follows AWS_REGION', () => {
    // Act
    const config = loadCollectorConfig({ ...minimal, CLOUDWATCH_ENDPOINT: '', OTHER: 'ignored' });

    // Assess
    expect(config).toEqual({
      targets: [target],
      ampWorkspaceUrl: minimal.AMP_WORKSPACE_URL,
      ampRegion: 'us-east-2',
      cloudWatchRegion: 'us-east-2',
      cloudWatchNamespace: 'vLLM/EKSPilot',
      rateWindow: '2m',
      concurrency: 2,
    });
  });

  it('takes every optional variable when set', () => {
    // Act
    const config = loadCollectorConfig({
      ...minimal,
      AMP_REGION: 'eu-west-1',
      CLOUDWATCH_NAMESPACE: 'Team/vLLM',
      CLOUDWATCH_ENDPOINT: 'http://127.0.0.1:4566',
      RATE_WINDOW: '1m30s',
      COLLECTOR_CONCURRENCY: '4',
    });

    // Assess
    expect(config).toMatchObject({
      ampRegion: 'eu-west-1',
      cloudWatchRegion: 'us-east-2',
      cloudWatchNamespace: 'Team/vLLM',
      cloudWatchEndpoint: 'http://127.0.0.1:4566',
      rateWindow: '1m30s',
      concurrency: 4,
    });
  });

  it('publishes only the metrics COLLECTOR_METRICS lists, in catalog order; an empty list means all', () => {
    // Act
    const some = loadCollectorConfig({ ...minimal, COLLECTOR_METRICS: ' KVCacheUsage, QueueDepth,E2ELatencyP95' });
    const all = loadCollectorConfig({ ...minimal, COLLECTOR_METRICS: '' });

    // Assess
    expect(some.metrics).toEqual(['E2ELatencyP95', 'QueueDepth', 'KVCacheUsage']);
    expect(all.metrics).toBeUndefined();
  });

  it('lists every bad variable at once, by name', () => {
    // Prepare
    const env = {
      TARGETS: JSON.stringify([{ ...target, namespace: 'Bad_NS' }]),
      AMP_WORKSPACE_URL: 'not a url',
      CLOUDWATCH_NAMESPACE: 'AWS/Custom',
      RATE_WINDOW: '2 minutes',
      COLLECTOR_CONCURRENCY: '0',
    };

    // Act
    const issues = issuesOf(env);

    // Assess
    expect(issues).toEqual([
      expect.stringMatching(/^AMP_WORKSPACE_URL: must be an http\(s\) URL/),
      expect.stringMatching(/^AWS_REGION: is required/),
      expect.stringMatching(/^CLOUDWATCH_NAMESPACE: must not start with "AWS\/"/),
      expect.stringMatching(/^RATE_WINDOW: must be a PromQL duration/),
      expect.stringMatching(/^COLLECTOR_CONCURRENCY: must be an integer from 1 to 16/),
      expect.stringMatching(/^TARGETS: targets\[0\]\.namespace: "Bad_NS" is not valid; accepted: a DNS-1123 label/),
    ]);
  });

  it.each([
    { case: 'TARGETS missing', env: { ...minimal, TARGETS: undefined }, expected: /^TARGETS: is required/ },
    {
      case: 'TARGETS not JSON',
      env: { ...minimal, TARGETS: 'prod' },
      expected: /^TARGETS: targets: is not valid JSON/,
    },
    {
      case: 'AMP_WORKSPACE_URL empty',
      env: { ...minimal, AMP_WORKSPACE_URL: '' },
      expected: /^AMP_WORKSPACE_URL: is required/,
    },
    {
      case: 'a zero RATE_WINDOW',
      env: { ...minimal, RATE_WINDOW: '0m' },
      expected: /^RATE_WINDOW: must be longer than zero/,
    },
    {
      case: 'an ftp CLOUDWATCH_ENDPOINT',
      env: { ...minimal, CLOUDWATCH_ENDPOINT: 'ftp://x' },
      expected: /^CLOUDWATCH_ENDPOINT: must be an http\(s\) URL/,
    },
    {
      case: 'a bad AMP_REGION',
      env: { ...minimal, AMP_REGION: 'Ohio' },
      expected: /^AMP_REGION: must be an AWS region/,
    },
    {
      case: 'a COLLECTOR_METRICS name the catalog does not have (a Prometheus name)',
      env: { ...minimal, COLLECTOR_METRICS: 'QueueDepth,vllm:num_requests_waiting' },
      expected:
        /^COLLECTOR_METRICS: "vllm:num_requests_waiting" is not a metric the collector publishes; accepted: .*E2ELatencyP50, /,
    },
    {
      case: 'a COLLECTOR_METRICS name listed twice',
      env: { ...minimal, COLLECTOR_METRICS: 'QueueDepth, QueueDepth' },
      expected: /^COLLECTOR_METRICS: QueueDepth is listed twice/,
    },
  ])('refuses $case', ({ env, expected }) => {
    // Act
    const issues = issuesOf(env);

    // Assess
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(expected);
  });
});
