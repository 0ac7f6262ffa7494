import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import {
  type DynamoDbTwin,
  lambdaContext,
  type SnsTwin,
  startDynamoDbTwin,
  startSnsTwin,
} from '../../sim/harness/index.js';
import type { AlertMessage } from '../../shared/alerts/index.js';
import { SnsAlertPublisher } from '../../shared/alerts/notify/index.js';
import { ALERT_STATE_TABLE, DynamoDbAlertStateStore } from '../../shared/alerts/state/index.js';
import { fixtureEvaluation, fixtureInstance } from '../../shared/alerts/testing/fixtures.js';
import { VirtualClock } from '../../shared/clock/index.js';
import { ConfigInvalidError, type Target } from '../../shared/config/index.js';
import { loadAlertEvaluatorConfig } from './config.js';
import { AlertEvaluatorAllTargetsFailedError, AlertEvaluatorEventInvalidError } from './errors.js';
import { createHandler, depsFromEnvironment, handler, type EvaluateFn } from './handler.js';
import { CapturingLogger } from '../shared/testing.js';

const TABLE = 'vllm-eks-pilot-alert-state';
const SNS_SECRET = 'twin-sns-not-a-secret-wJalrXUtnFEMI';

/** An EventBridge scheduled event as Lambda receives it. */
const scheduledEvent = {
  version: '0',
  id: '53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa',
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time: '2025-06-01T12:00:00Z',
  region: 'us-east-2',
  resources: ['arn:aws:events:us-east-2:123456789012:rule/vllm-eks-pilot-alert-evaluator'],
  detail: {},
};

const contextFor = (awsRequestId: string) => lambdaContext('alert-evaluator', { awsRequestId });

const targetJson = (name: string) => ({
  name,
  cluster: 'prod',
  namespace: 'inference',
  deployment: 'vllm-inference-app',
  model: 'mistralai/Ministral-8B-Instruct-2410',
});

/** Evaluations without Prometheus: `prod` has one KV-cache alert firing, `staging` is quiet, `broken` throws. */
const inMemoryEvaluate =
  (seen: Array<[string, number]> = []): EvaluateFn =>
  (target: Target, _settings, timeMs) => {
    seen.push([target.name, timeMs]);
    if (target.name === 'broken') return Promise.reject(new Error('AMP answered HTTP 403 (test)'));
    const firing =
      target.name === 'prod' ? [fixtureInstance(undefined, { target: 'prod', fingerprint: 'kv-prod' })] : [];
    return Promise.resolve(fixtureEvaluation(firing, timeMs, { target }));
  };

describe('Function: createHandler', () => {
  let dynamo: DynamoDbTwin;
  let sns: SnsTwin;
  let dynamoClient: DynamoDBClient;
  let snsClient: SNSClient;
  let topicArn: string;
  let logger: CapturingLogger;
  let tableIndex = 0;
  const clock = new VirtualClock(Date.parse('2025-06-01T12:00:20Z'));

  beforeAll(async () => {
    const tables = Array.from({ length: 8 }, (_, i) => ({ TableName: `${TABLE}-${i}`, ...ALERT_STATE_TABLE }));
    [dynamo, sns] = await Promise.all([
      startDynamoDbTwin({ tables, region: 'us-east-2' }),
      startSnsTwin({ region: 'us-east-2' }),
    ]);
    topicArn = sns.createTopic('vllm-eks-pilot-alerts');
    dynamoClient = new DynamoDBClient({
      region: dynamo.region,
      endpoint: dynamo.endpoint,
      credentials: dynamo.credentials,
      maxAttempts: 1,
    });
    snsClient = new SNSClient({
      region: sns.region,
      endpoint: sns.endpoint,
      credentials: { accessKeyId: 'AKIDTWINSNS', secretAccessKey: SNS_SECRET },
      maxAttempts: 1,
    });
  });

  afterAll(async () => {
    dynamoClient.destroy();
    snsClient.destroy();
    await Promise.all([dynamo.stop(), sns.stop()]);
  });

  beforeEach(() => {
    sns.clear();
    logger = new CapturingLogger({ serviceName: 'alert-evaluator' });
  });

  function build(targets: string[], evaluate: EvaluateFn) {
    const tableName = `${TABLE}-${tableIndex}`;
    tableIndex += 1;
    const config = loadAlertEvaluatorConfig({
      TARGETS: JSON.stringify(targets.map(targetJson)),
      AMP_WORKSPACE_URL: 'https://aps-workspaces.us-east-2.amazonaws.com/workspaces/ws-1234/',
      AWS_REGION: 'us-east-2',
      ALERT_TOPIC_ARN: topicArn,
      ALERT_STATE_TABLE: tableName,
    });
    return createHandler({
      config,
      evaluate,
      store: new DynamoDbAlertStateStore({ client: dynamoClient, tableName }),
      publisher: new SnsAlertPublisher({ client: snsClient, topicArn }),
      logger,
      clock,
    });
  }

  it('notifies the firing target, keeps going past a broken one, and logs one line per target', async () => {
    // Prepare
    const lambda = build(['prod', 'broken', 'staging'], inMemoryEvaluate());

    // Act
    const summary = await lambda(scheduledEvent, contextFor('req-1'));

    // Assess: the summary
    expect(summary.evaluatorId).toBe('req-1');
    expect(summary.totals).toEqual({
      targets: 3,
      failedTargets: 1,
      firing: 1,
      sent: 1,
      failed: 0,
      skipped: 0,
      muted: 0,
    });
    expect(summary.targets.map((t) => [t.target, t.status, t.sent])).toEqual([
      ['prod', 'ok', ['VLLMKVCacheFull firing (first) kv-prod']],
      ['broken', 'failed', []],
      ['staging', 'ok', []],
    ]);
    expect(summary.targets[1]?.ruleFailures[0]).toBe('VLLMHighQueueDepth: Error: AMP answered HTTP 403 (test)');

    // Assess: SNS got the one message
    expect(sns.messages(topicArn).map((m) => (JSON.parse(m.message) as AlertMessage).target)).toEqual(['prod']);

    // Assess: the logs
    const perTarget = logger.lines.filter(
      (line) => line.message === 'target evaluated' || line.message === 'target failed',
    );
    expect(perTarget.map((line) => [line.level, line.target, line.status])).toEqual([
      ['INFO', 'prod', 'ok'],
      ['ERROR', 'broken', 'failed'],
      ['INFO', 'staging', 'ok'],
    ]);
    expect(perTarget[0]?.decisions).toEqual([
      'VLLMKVCacheFull kv-prod: first notification: firing since 2025-06-01T12:00:00.000Z',
    ]);
    expect(logger.lines.find((line) => line.message === 'alert notification sent')).toMatchObject({
      target: 'prod',
      reason: 'first',
      function_request_id: 'req-1',
    });
    expect(JSON.stringify(logger.lines)).not.toContain(SNS_SECRET);
  });

  it('sends nothing again on the next run while the alert keeps firing', async () => {
    // Prepare
    const lambda = build(['prod'], inMemoryEvaluate());
    await lambda(scheduledEvent, contextFor('req-1'));

    // Act
    const summary = await lambda({ ...scheduledEvent, time: '2025-06-01T12:01:00Z' }, contextFor('req-2'));

    // Assess
    expect(summary.totals.sent).toBe(0);
    expect(sns.messages(topicArn)).toHaveLength(1);
  });

  it('throws a named error when every target failed, after logging each', async () => {
    // Prepare
    const lambda = build(['broken'], inMemoryEvaluate());

    // Act
    const running = lambda(scheduledEvent, contextFor('req-1'));

    // Assess
    await expect(running).rejects.toThrow(AlertEvaluatorAllTargetsFailedError);
    await expect(running).rejects.toThrow(
      /^every target failed \(1\): broken: VLLMHighQueueDepth: Error: AMP answered HTTP 403/,
    );
    expect(logger.lines.filter((line) => line.message === 'target failed').map((line) => line.target)).toEqual([
      'broken',
    ]);
    expect(sns.messages(topicArn)).toEqual([]);
  });

  it('evaluates at the scheduled time, never later than now', async () => {
    // Prepare: one on-time event, one from the clock's future (a skewed or hand-written event).
    const seen: Array<[string, number]> = [];
    const lambda = build(['staging'], inMemoryEvaluate(seen));

    // Act
    await lambda(scheduledEvent, contextFor('req-1'));
    await lambda({ ...scheduledEvent, time: '2025-06-01T13:00:00Z' }, contextFor('req-2'));

    // Assess
    expect(seen).toEqual([
      ['staging', Date.parse('2025-06-01T12:00:00Z')],
      ['staging', clock.now()],
    ]);
  });

  it.each([
    {
      case: 'no time',
      event: { 'detail-type': 'Scheduled Event' },
      issue: /event\.time: must be an ISO-8601 date-time/,
    },
    { case: 'a time that is not a date', event: { ...scheduledEvent, time: 'soon' }, issue: /event\.time: must be/ },
    { case: 'no event at all', event: null, issue: /event: / },
  ])('refuses an event with $case', async ({ event, issue }) => {
    // Prepare
    const seen: Array<[string, number]> = [];
    const lambda = build(['prod'], inMemoryEvaluate(seen));

    // Act
    const running = lambda(event, contextFor('req-1'));

    // Assess
    await expect(running).rejects.toThrow(AlertEvaluatorEventInvalidError);
    await expect(running).rejects.toThrow(issue);
    expect(seen).toEqual([]);
  });
});

describe('Function: depsFromEnvironment', () => {
  it('builds the adapters from the environment and logs the configuration', () => {
    // Prepare
    const logger = new CapturingLogger({ serviceName: 'alert-evaluator' });

    // Act
    const deps = depsFromEnvironment(
      {
        TARGETS: JSON.stringify([targetJson('prod')]),
        AMP_WORKSPACE_URL: 'https://aps-workspaces.us-east-2.amazonaws.com/workspaces/ws-1234/',
        AWS_REGION: 'us-east-2',
        ALERT_TOPIC_ARN: 'arn:aws:sns:us-east-2:123456789012:vllm-eks-pilot-alerts',
        ALERT_STATE_TABLE: TABLE,
        AWS_SECRET_ACCESS_KEY: SNS_SECRET,
      },
      logger,
    );

    // Assess
    expect(deps.store).toBeInstanceOf(DynamoDbAlertStateStore);
    expect(deps.publisher).toBeInstanceOf(SnsAlertPublisher);
    expect(logger.lines).toEqual([
      expect.objectContaining({
        message: 'configuration loaded',
        targets: ['prod'],
        topicArn: 'arn:aws:sns:us-east-2:123456789012:vllm-eks-pilot-alerts',
        tableName: TABLE,
      }),
    ]);
    expect(JSON.stringify(logger.lines)).not.toContain(SNS_SECRET);
  });
});

describe('Function: handler', () => {
  it('is importable without configuration and reports every missing variable on first use', async () => {
    // Prepare: this test's environment has no evaluator configuration; silence the handler's own logger.
    if (process.env.TARGETS !== undefined || process.env.ALERT_TOPIC_ARN !== undefined) return;
    const previous = process.env.POWERTOOLS_LOG_LEVEL;
    process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';

    try {
      // Act
      const running = handler(scheduledEvent, contextFor('req-1'));

      // Assess
      await expect(running).rejects.toThrow(ConfigInvalidError);
      await expect(running).rejects.toThrow(/TARGETS: is required/);
      await expect(running).rejects.toThrow(/ALERT_TOPIC_ARN: is required/);
      await expect(running).rejects.toThrow(/ALERT_STATE_TABLE: is required/);
    } finally {
      if (previous === undefined) delete process.env.POWERTOOLS_LOG_LEVEL;
      else process.env.POWERTOOLS_LOG_LEVEL = previous;
    }
  });
});
