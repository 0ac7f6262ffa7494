import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { Context } from 'aws-lambda';
import {
  type CloudWatchTwin,
  type DynamoDbTwin,
  lambdaContext,
  type SnsTwin,
  startCloudWatchTwin,
  startDynamoDbTwin,
  startSnsTwin,
} from '../../sim/harness/index.js';
import { CloudWatchMetricsSink } from '../../shared/cloudwatch/index.js';
import { DynamoDbHeartbeatStore, HEARTBEAT_METRIC } from '../../shared/alerts/heartbeat/index.js';
import type { AlertMessage } from '../../shared/alerts/index.js';
import { SnsAlertPublisher } from '../../shared/alerts/notify/index.js';
import { ALERT_STATE_TABLE, DynamoDbAlertStateStore } from '../../shared/alerts/state/index.js';
import { fixtureEvaluation, fixtureInstance } from '../../shared/alerts/testing/fixtures.js';
import { VirtualClock } from '../../shared/clock/index.js';
import { ConfigInvalidError, type Target } from '../../shared/config/index.js';
import { loadAlertEvaluatorConfig } from './config.js';
import { AlertEvaluatorAllTargetsFailedError, AlertEvaluatorEventInvalidError } from './errors.js';
import { type AlertEvaluatorDeps, createHandler, depsFromEnvironment, handler, type EvaluateFn } from './handler.js';
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
  let cloudwatch: CloudWatchTwin;
  let dynamoClient: DynamoDBClient;
  let snsClient: SNSClient;
  let cloudwatchClient: CloudWatchClient;
  let topicArn: string;
  let logger: CapturingLogger;
  let tableIndex = 0;
  const clock = new VirtualClock(Date.parse('2025-06-01T12:00:20Z'));

  beforeAll(async () => {
    const tables = Array.from({ length: 16 }, (_, i) => ({ TableName: `${TABLE}-${i}`, ...ALERT_STATE_TABLE }));
    [dynamo, sns, cloudwatch] = await Promise.all([
      startDynamoDbTwin({ tables, region: 'us-east-2' }),
      startSnsTwin({ region: 'us-east-2' }),
      startCloudWatchTwin({ region: 'us-east-2', alarmEvaluationIntervalMs: 0 }),
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
    cloudwatchClient = new CloudWatchClient({
      region: cloudwatch.region,
      endpoint: cloudwatch.endpoint,
      credentials: { accessKeyId: 'AKIDTWINCW', secretAccessKey: 'twin-cloudwatch-not-a-secret' },
      maxAttempts: 1,
    });
  });

  afterAll(async () => {
    dynamoClient.destroy();
    snsClient.destroy();
    cloudwatchClient.destroy();
    await Promise.all([dynamo.stop(), sns.stop(), cloudwatch.stop()]);
  });

  beforeEach(() => {
    sns.clear();
    cloudwatch.clear();
    logger = new CapturingLogger({ serviceName: 'alert-evaluator' });
  });

  /**
   * The handler over the twin's DynamoDB, SNS and CloudWatch, on a virtual clock: one cycle per invocation unless
   * `cadence` says otherwise; waits between cycles move the clock instead of sleeping.
   */
  function build(
    targets: string[],
    evaluate: EvaluateFn,
    options: {
      cadence?: { interval: number; period: number };
      clock?: VirtualClock;
      calibrated?: AlertEvaluatorDeps['calibrated'];
    } = {},
  ) {
    const tableName = `${TABLE}-${tableIndex}`;
    tableIndex += 1;
    const ownClock = options.clock ?? clock;
    const config = loadAlertEvaluatorConfig({
      TARGETS: JSON.stringify(targets.map(targetJson)),
      AMP_WORKSPACE_URL: 'https://aps-workspaces.us-east-2.amazonaws.com/workspaces/ws-1234/',
      AWS_REGION: 'us-east-2',
      ALERT_TOPIC_ARN: topicArn,
      ALERT_STATE_TABLE: tableName,
      STAGE: 'test',
      EVALUATION_INTERVAL_SECONDS: String(options.cadence?.interval ?? 15),
      SCHEDULE_PERIOD_SECONDS: String(options.cadence?.period ?? 15),
    });
    const heartbeats = new DynamoDbHeartbeatStore({ client: dynamoClient, tableName });
    const lambda = createHandler({
      config,
      evaluate,
      store: new DynamoDbAlertStateStore({ client: dynamoClient, tableName }),
      publisher: new SnsAlertPublisher({ client: snsClient, topicArn }),
      heartbeat: { store: heartbeats, metrics: new CloudWatchMetricsSink({ client: cloudwatchClient }) },
      ...(options.calibrated === undefined ? {} : { calibrated: options.calibrated }),
      logger,
      clock: ownClock,
      wait: (ms) => {
        ownClock.advance(ms);
        return Promise.resolve();
      },
    });
    return Object.assign(lambda, { heartbeats });
  }

  /** A Lambda context whose remaining time runs down with the virtual clock, as Lambda's does with the wall clock. */
  function virtualContext(virtual: VirtualClock, remainingMs: number, awsRequestId = 'req-1'): Context {
    const deadlineMs = virtual.now() + remainingMs;
    return { ...contextFor(awsRequestId), getRemainingTimeInMillis: () => Math.max(0, deadlineMs - virtual.now()) };
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

  it("evaluates with each target's calibrated thresholds, and with the settings' where the history cannot be read", async () => {
    // Prepare: prod's last calibration derived a queue alert of 24; staging's history read fails.
    const seen = new Map<string, number>();
    const evaluate: EvaluateFn = (target, settings, timeMs) => {
      seen.set(target.name, settings.rules.VLLMHighQueueDepth.threshold);
      return Promise.resolve({ target, timeMs, evaluatedRules: [], queries: [], firing: [], failures: [] });
    };
    const lambda = build(['prod', 'staging'], evaluate, {
      calibrated: (target) =>
        target.name === 'prod'
          ? Promise.resolve({
              execution: 'calib-1',
              finishedAt: '2025-06-01T11:00:00.000Z',
              thresholds: { VLLMHighQueueDepth: { value: 24, reason: 'r', formula: 'f' } },
            })
          : Promise.reject(new Error('ResourceNotFoundException: no such table')),
    });

    // Act
    await lambda(scheduledEvent, contextFor('req-1'));

    // Assess
    expect(Object.fromEntries(seen)).toEqual({ prod: 24, staging: 50 });
    expect(logger.lines.find((line) => String(line.message).startsWith('calibration history not read'))).toMatchObject({
      level: 'WARN',
      target: 'staging',
      error: 'ResourceNotFoundException: no such table',
    });
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

  describe('Cycles: one scheduled invocation, an interval apart', () => {
    it('runs four cycles 15 s apart from the invocation start, each recording its heartbeat in DynamoDB and CloudWatch', async () => {
      // Prepare: the production cadence (every 15 s in a one-minute schedule), the stack's 70 s timeout.
      const virtual = new VirtualClock(Date.parse('2025-06-01T12:00:02Z'));
      const seen: Array<[string, number]> = [];
      const lambda = build(['prod', 'staging'], inMemoryEvaluate(seen), {
        cadence: { interval: 15, period: 60 },
        clock: virtual,
      });

      // Act
      const summary = await lambda(scheduledEvent, virtualContext(virtual, 70_000));

      // Assess: four cycles at the scheduled time and 15, 30, 45 s after it; the firing alert was sent once.
      const scheduled = Date.parse(scheduledEvent.time);
      expect([...new Set(seen.map(([, timeMs]) => timeMs - scheduled))]).toEqual([0, 15_000, 30_000, 45_000]);
      expect(summary.cycles).toHaveLength(4);
      expect(summary).toMatchObject({ plannedCycles: 4, stoppedEarly: null, heartbeat: { recorded: 4, problems: [] } });
      expect(summary.totals).toMatchObject({ targets: 2, firing: 1, sent: 1 });
      expect(sns.messages(topicArn)).toHaveLength(1);
      // The heartbeat: the last cycle's record, and one datum of 1 per cycle in the product's namespace.
      const beat = await lambda.heartbeats.read();
      expect(beat).toEqual({
        lastCycleAtMs: virtual.now(),
        evaluationTimeMs: scheduled + 45_000,
        intervalSeconds: 15,
        evaluatorId: 'req-1',
        targets: 2,
        ok: true,
        failedTargets: [],
        partialTargets: [],
        lastOkAtMs: virtual.now(),
      });
      expect(
        cloudwatch.datums().map((d) => [d.namespace, d.metricName, d.dimensions, d.value, d.timestampMs - scheduled]),
      ).toEqual(
        [2_000, 17_000, 32_000, 47_000].map((offset) => [
          'vLLM/EKSPilot',
          HEARTBEAT_METRIC.name,
          { Stage: 'test' },
          1,
          offset,
        ]),
      );
    });

    it.each([
      // Cycles need 15 s (deadline margin) + 5 s (queries) after their slot: slot k runs while k x 15 s <= remaining - 20 s.
      { remainingMs: 48_000, cycles: 2, stopped: /^cycle 3 of 4 not started: at its slot 3 s would be left/ },
      { remainingMs: 62_000, cycles: 3, stopped: /^cycle 4 of 4 not started: at its slot 2 s would be left/ },
      { remainingMs: 65_000, cycles: 4, stopped: null },
    ])(
      'with $remainingMs ms left at the start, runs $cycles cycles and says why it stopped',
      async ({ remainingMs, cycles, stopped }) => {
        // Prepare
        const virtual = new VirtualClock(Date.parse('2025-06-01T12:00:01Z'));
        const seen: Array<[string, number]> = [];
        const lambda = build(['staging'], inMemoryEvaluate(seen), {
          cadence: { interval: 15, period: 60 },
          clock: virtual,
        });

        // Act
        const summary = await lambda(scheduledEvent, virtualContext(virtual, remainingMs));

        // Assess
        expect(seen).toHaveLength(cycles);
        expect(summary.cycles).toHaveLength(cycles);
        if (stopped === null) expect(summary.stoppedEarly).toBeNull();
        else expect(summary.stoppedEarly).toMatch(stopped);
        expect(virtual.now() - Date.parse('2025-06-01T12:00:01Z')).toBe((cycles - 1) * 15_000);
        expect(summary.heartbeat?.recorded).toBe(cycles);
      },
    );

    it('skips the slots a slow cycle overran instead of running them late', async () => {
      // Prepare: the first cycle takes 35 s (AMP slow), so the slots at 15 s and 30 s have passed when it ends.
      const virtual = new VirtualClock(Date.parse('2025-06-01T12:00:00Z'));
      const seen: Array<[string, number]> = [];
      const slowFirst: EvaluateFn = (target, settings, timeMs, signal) => {
        if (seen.length === 0) virtual.advance(35_000);
        return inMemoryEvaluate(seen)(target, settings, timeMs, signal);
      };
      const lambda = build(['staging'], slowFirst, { cadence: { interval: 15, period: 60 }, clock: virtual });

      // Act
      const summary = await lambda(scheduledEvent, virtualContext(virtual, 70_000));

      // Assess: the slot at 45 s runs; 15 and 30 do not.
      expect(seen.map(([, timeMs]) => timeMs - Date.parse(scheduledEvent.time))).toEqual([0, 45_000]);
      expect(summary.cycles).toHaveLength(2);
    });

    it('records a failed cycle in the heartbeat (ok false, the target and its reason) and a datum of 0', async () => {
      // Prepare
      const virtual = new VirtualClock(Date.parse('2025-06-01T12:00:00Z'));
      const lambda = build(['prod', 'broken'], inMemoryEvaluate(), { clock: virtual });

      // Act
      await lambda(scheduledEvent, virtualContext(virtual, 70_000));

      // Assess
      expect(await lambda.heartbeats.read()).toMatchObject({
        ok: false,
        targets: 2,
        failedTargets: [{ target: 'broken', reason: 'VLLMHighQueueDepth: Error: AMP answered HTTP 403 (test)' }],
        lastOkAtMs: null,
      });
      expect(cloudwatch.datums().map((d) => d.value)).toEqual([0]);
    });

    it('throws once every target failed in every cycle, naming how many cycles', async () => {
      // Prepare
      const virtual = new VirtualClock(Date.parse('2025-06-01T12:00:00Z'));
      const lambda = build(['broken'], inMemoryEvaluate(), { cadence: { interval: 15, period: 60 }, clock: virtual });

      // Act
      const running = lambda(scheduledEvent, virtualContext(virtual, 70_000));

      // Assess
      await expect(running).rejects.toThrow(AlertEvaluatorAllTargetsFailedError);
      await expect(running).rejects.toThrow(/^every target failed in each of the 4 cycles \(1\): broken: /);
      expect(cloudwatch.datums().map((d) => d.value)).toEqual([0, 0, 0, 0]);
    });

    it('keeps evaluating when the heartbeat cannot be recorded, and says so', async () => {
      // Prepare: CloudWatch refuses the next request (the SDK client of the test retries nothing).
      const virtual = new VirtualClock(Date.parse('2025-06-01T12:00:00Z'));
      const lambda = build(['prod'], inMemoryEvaluate(), { clock: virtual });
      cloudwatch.failNextRequests(1);

      // Act
      const summary = await lambda(scheduledEvent, virtualContext(virtual, 70_000));

      // Assess
      expect(summary.totals.sent).toBe(1);
      expect(summary.heartbeat).toEqual({
        recorded: 0,
        problems: [expect.stringMatching(/^heartbeat metric not published: /)],
      });
      expect(logger.lines.find((line) => String(line.message).startsWith('heartbeat not recorded'))).toBeDefined();
    });
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
        STAGE: 'test',
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
      await expect(running).rejects.toThrow(/STAGE: is required/);
    } finally {
      if (previous === undefined) delete process.env.POWERTOOLS_LOG_LEVEL;
      else process.env.POWERTOOLS_LOG_LEVEL = previous;
    }
  });
});
