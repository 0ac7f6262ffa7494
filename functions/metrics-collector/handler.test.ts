import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { type CloudWatchTwin, lambdaContext, startCloudWatchTwin } from '../../sim/harness/index.js';
import { VirtualClock } from '../../shared/clock/index.js';
import { CloudWatchMetricsSink } from '../../shared/cloudwatch/index.js';
import { CollectorAllTargetsFailedError } from '../../shared/collector/index.js';
import { ConfigInvalidError } from '../../shared/config/index.js';
import { CATALOG, DCGM_LABELS, MetricsHttpError, type MetricsSource } from '../../shared/metrics/index.js';
import { loadCollectorConfig } from './config.js';
import { MetricsCollectorEventInvalidError } from './errors.js';
import { createHandler, handler } from './handler.js';
import { CapturingLogger } from '../shared/testing.js';

const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYTWINSECRET';

/** An EventBridge scheduled event as Lambda receives it. */
const scheduledEvent = {
  version: '0',
  id: '53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa',
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time: '2025-06-01T12:00:00Z',
  region: 'us-east-2',
  resources: ['arn:aws:events:us-east-2:123456789012:rule/vllm-eks-pilot-metrics-collector'],
  detail: {},
};

const context = lambdaContext('metrics-collector');

const healthySource: MetricsSource = {
  instant: (_query, options) =>
    Promise.resolve([
      {
        labels: { pod: 'vllm-inference-app-7d9c8b6f5d-x2k4q', [DCGM_LABELS.uuid]: 'GPU-6f1c' },
        value: 1,
        timestampMs: options?.timeMs ?? 0,
      },
    ]),
  range: () => Promise.resolve([]),
};

const forbiddenSource: MetricsSource = {
  instant: () =>
    Promise.reject(
      new MetricsHttpError({ status: 403, errorText: 'User is not authorized to perform aps:QueryMetrics' }, false),
    ),
  range: () => Promise.resolve([]),
};

function environment(targets: string[], endpoint: string) {
  return {
    TARGETS: JSON.stringify(
      targets.map((name) => ({
        name,
        cluster: 'prod',
        namespace: 'inference',
        deployment: 'vllm-inference-app',
        model: 'mistralai/Ministral-8B-Instruct-2410',
      })),
    ),
    AMP_WORKSPACE_URL: 'https://aps-workspaces.us-east-2.amazonaws.com/workspaces/ws-1234/',
    AWS_REGION: 'us-east-2',
    CLOUDWATCH_ENDPOINT: endpoint,
  };
}

describe('Function: createHandler', () => {
  let twin: CloudWatchTwin;
  let client: CloudWatchClient;
  let logger: CapturingLogger;
  const clock = new VirtualClock(Date.parse('2025-06-01T12:00:20Z'));

  beforeAll(async () => {
    twin = await startCloudWatchTwin();
    client = new CloudWatchClient({
      region: twin.region,
      endpoint: twin.endpoint,
      credentials: { accessKeyId: 'AKIDTWINEXAMPLE', secretAccessKey: SECRET },
      maxAttempts: 1,
    });
  });

  afterAll(async () => {
    client.destroy();
    await twin.stop();
  });

  beforeEach(() => {
    twin.clear();
    logger = new CapturingLogger({ serviceName: 'metrics-collector' });
  });

  function build(targets: string[], sources: Record<string, MetricsSource>) {
    return createHandler({
      config: loadCollectorConfig(environment(targets, twin.endpoint)),
      sourceFor: (target) => sources[target.name] ?? forbiddenSource,
      sink: new CloudWatchMetricsSink({ client }),
      logger,
      clock,
    });
  }

  it('publishes the healthy target, returns the result naming the failed one, and logs one line per target', async () => {
    // Prepare
    const lambda = build(['prod', 'staging'], { prod: healthySource, staging: forbiddenSource });

    // Act
    const result = await lambda(scheduledEvent, context);

    // Assess: the result
    expect(result.timeMs).toBe(Date.parse('2025-06-01T12:00:00Z'));
    expect(result.targets.map((t) => [t.target, t.status, t.published])).toEqual([
      ['prod', 'ok', CATALOG.length],
      ['staging', 'failed', 0],
    ]);
    expect(result.targets[1]?.reason).toMatch(
      /^no query returned a value: .*MetricsHttpError: Prometheus query failed with HTTP 403/,
    );

    // Assess: CloudWatch got the healthy target's datums, stamped with the scheduled time
    const datums = twin.datums();
    expect(datums).toHaveLength(CATALOG.length);
    expect(datums.every((d) => d.timestampMs === result.timeMs && d.namespace === 'vLLM/EKSPilot')).toBe(true);

    // Assess: the logs
    const perTarget = logger.lines.filter((line) => typeof line.target === 'string');
    expect(perTarget.map((line) => [line.level, line.message, line.target, line.status])).toEqual([
      ['INFO', 'target collected', 'prod', 'ok'],
      ['ERROR', 'target failed', 'staging', 'failed'],
    ]);
    expect(perTarget[1]).toMatchObject({ published: 0, failed: CATALOG.length, reason: result.targets[1]?.reason });
    expect(perTarget[0]).toMatchObject({
      function_request_id: context.awsRequestId,
      function_name: context.functionName,
    });
    expect(JSON.stringify(logger.lines)).not.toContain(SECRET);
  });

  it('throws a named error when every target failed, after logging each', async () => {
    // Prepare
    const lambda = build(['prod', 'staging'], {});

    // Act
    const running = lambda(scheduledEvent, context);

    // Assess
    await expect(running).rejects.toThrow(CollectorAllTargetsFailedError);
    await expect(running).rejects.toThrow(/^every target failed \(2\): prod: no query returned a value/);
    expect(logger.lines.filter((line) => line.message === 'target failed').map((line) => line.target)).toEqual([
      'prod',
      'staging',
    ]);
    expect(twin.datums()).toEqual([]);
  });

  it('evaluates at the scheduled time, never later than now', async () => {
    // Prepare: a scheduled time in the future of the clock (a skewed or hand-written event).
    const lambda = build(['prod'], { prod: healthySource });

    // Act
    const result = await lambda({ ...scheduledEvent, time: '2025-06-01T13:00:00Z' }, context);

    // Assess
    expect(result.timeMs).toBe(clock.now());
    expect(twin.datums().every((d) => d.timestampMs === clock.now())).toBe(true);
  });

  it.each([
    {
      case: 'no time',
      event: { 'detail-type': 'Scheduled Event' },
      issue: /event\.time: must be an ISO-8601 date-time/,
    },
    {
      case: 'a time that is not a date',
      event: { ...scheduledEvent, time: 'yesterday' },
      issue: /event\.time: must be an ISO-8601 date-time/,
    },
    { case: 'no event at all', event: null, issue: /event: / },
  ])('refuses an event with $case', async ({ event, issue }) => {
    // Prepare
    const lambda = build(['prod'], { prod: healthySource });

    // Act
    const running = lambda(event, context);

    // Assess
    await expect(running).rejects.toThrow(MetricsCollectorEventInvalidError);
    await expect(running).rejects.toThrow(issue);
    expect(twin.requests()).toEqual([]);
  });
});

describe('Function: handler', () => {
  it('is importable without configuration and reports every missing variable on first use', async () => {
    // Prepare: this test's environment has no collector configuration; silence the handler's own logger.
    if (process.env.TARGETS !== undefined || process.env.AMP_WORKSPACE_URL !== undefined) return;
    const previous = process.env.POWERTOOLS_LOG_LEVEL;
    process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';

    try {
      // Act
      const running = handler(scheduledEvent, context);

      // Assess
      await expect(running).rejects.toThrow(ConfigInvalidError);
      await expect(running).rejects.toThrow(/TARGETS: is required/);
      await expect(running).rejects.toThrow(/AMP_WORKSPACE_URL: is required/);
    } finally {
      if (previous === undefined) delete process.env.POWERTOOLS_LOG_LEVEL;
      else process.env.POWERTOOLS_LOG_LEVEL = previous;
    }
  });
});
