import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { gzipSync } from 'node:zlib';
import {
  CloudWatchClient,
  DescribeAlarmsCommand,
  PutMetricAlarmCommand,
  type PutMetricAlarmCommandInput,
  PutMetricDataCommand,
  type MetricDatum,
} from '@aws-sdk/client-cloudwatch';
import { heartbeatAlarmProperties, heartbeatDatum } from '../../shared/alerts/heartbeat/index.js';
import { VirtualClock } from '../../shared/clock/index.js';
import { CloudWatchMetricsSink } from '../../shared/cloudwatch/index.js';
import { startCloudWatchTwin, type CloudWatchTwin } from './cloudwatch.js';
import { evaluateAlarm, type TwinAlarm } from './cloudwatchAlarms.js';

const at = new Date('2025-06-01T12:00:00.250Z');

function datum(overrides: Partial<MetricDatum> = {}): MetricDatum {
  return {
    MetricName: 'QueueDepth',
    Unit: 'Count',
    Value: 3,
    Timestamp: at,
    Dimensions: [{ Name: 'Cluster', Value: 'prod' }],
    ...overrides,
  };
}

async function sendError(client: CloudWatchClient, input: { Namespace: string; MetricData: MetricDatum[] }) {
  try {
    await client.send(new PutMetricDataCommand(input));
  } catch (error) {
    const e = error as Error & { $metadata?: { httpStatusCode?: number }; Code?: string };
    return { name: e.name, code: e.Code, status: e.$metadata?.httpStatusCode, message: e.message };
  }
  throw new Error('expected PutMetricData to fail');
}

describe('Function: startCloudWatchTwin', () => {
  const clock = new VirtualClock(Date.parse('2025-06-01T12:00:05Z'));
  let twin: CloudWatchTwin;
  let client: CloudWatchClient;

  beforeAll(async () => {
    twin = await startCloudWatchTwin({ clock, region: 'eu-west-1' });
    client = new CloudWatchClient({
      region: twin.region,
      endpoint: twin.endpoint,
      credentials: { accessKeyId: 'AKIDTWIN', secretAccessKey: 'twin-secret' },
      maxAttempts: 1,
    });
  });

  afterAll(async () => {
    client.destroy();
    await twin.stop();
  });

  beforeEach(() => twin.clear());

  it('records what the real SDK sends, with the receive time, and serves it on GET /_twin/datums', async () => {
    // Act
    await client.send(new PutMetricDataCommand({ Namespace: 'vLLM/EKSPilot', MetricData: [datum()] }));
    const response = await fetch(`${twin.endpoint}/_twin/datums`);
    const served = (await response.json()) as { datums: unknown[] };

    // Assess
    const expected = {
      namespace: 'vLLM/EKSPilot',
      metricName: 'QueueDepth',
      unit: 'Count',
      value: 3,
      timestampMs: at.getTime(),
      dimensions: { Cluster: 'prod' },
      receivedAtMs: clock.now(),
    };
    expect(twin.datums()).toEqual([expected]);
    expect(served.datums).toEqual([expected]);
    expect(twin.requests()).toEqual([expect.objectContaining({ status: 200, datums: 1, gzip: false })]);
  });

  it.each([
    {
      case: 'a namespace starting with AWS/',
      input: { Namespace: 'AWS/EC2', MetricData: [datum()] },
      expected: { name: 'InvalidParameterValueException', code: 'InvalidParameterValue', status: 400 },
      message: /parameter Namespace is invalid: it must not start with "AWS\/"/,
    },
    {
      case: 'a NaN value',
      input: { Namespace: 'vLLM/EKSPilot', MetricData: [datum(), datum({ Value: NaN })] },
      expected: { name: 'InvalidParameterValueException', code: 'InvalidParameterValue', status: 400 },
      message: /parameter MetricData\.member\.2\.Value is invalid: value is NaN/,
    },
    {
      case: 'an infinite value',
      input: { Namespace: 'vLLM/EKSPilot', MetricData: [datum({ Value: Infinity })] },
      expected: { name: 'InvalidParameterValueException', code: 'InvalidParameterValue', status: 400 },
      message: /MetricData\.member\.1\.Value is invalid: value is \+Infinity/,
    },
    {
      case: '31 dimensions',
      input: {
        Namespace: 'vLLM/EKSPilot',
        MetricData: [datum({ Dimensions: Array.from({ length: 31 }, (_, i) => ({ Name: `D${i}`, Value: 'v' })) })],
      },
      expected: { name: 'InvalidParameterValueException', code: 'InvalidParameterValue', status: 400 },
      message: /MetricData\.member\.1\.Dimensions must not have a size greater than 30/,
    },
    {
      case: '1001 datums',
      input: { Namespace: 'vLLM/EKSPilot', MetricData: Array.from({ length: 1001 }, () => datum()) },
      expected: { name: 'InvalidParameterValueException', code: 'InvalidParameterValue', status: 400 },
      message: /MetricData must not have a size greater than 1000/,
    },
    {
      case: 'an unknown unit',
      input: { Namespace: 'vLLM/EKSPilot', MetricData: [datum({ Unit: 'Furlongs' as MetricDatum['Unit'] })] },
      expected: { name: 'InvalidParameterValueException', code: 'InvalidParameterValue', status: 400 },
      message: /"Furlongs" is not a CloudWatch StandardUnit/,
    },
    {
      case: 'a missing metric name',
      input: { Namespace: 'vLLM/EKSPilot', MetricData: [datum({ MetricName: undefined })] },
      expected: { name: 'MissingRequiredParameterException', code: 'MissingParameter', status: 400 },
      message: /The parameter MetricData\.member\.1\.MetricName is required/,
    },
  ])('refuses $case the way CloudWatch does, and records nothing', async ({ input, expected, message }) => {
    // Act
    const error = await sendError(client, input);

    // Assess
    expect(error).toMatchObject(expected);
    expect(error.message).toMatch(message);
    expect(twin.datums()).toEqual([]);
  });

  it.each([
    {
      case: 'a 500 as InternalServiceFault',
      status: 500,
      expected: { name: 'InternalServiceFault', code: 'InternalServiceError' },
    },
    { case: 'a 400 as Throttling', status: 400, expected: { code: 'Throttling' } },
  ])('fails the next requests on demand with $case, then recovers', async ({ status, expected }) => {
    // Prepare
    twin.failNextRequests(2, status);
    const input = { Namespace: 'vLLM/EKSPilot', MetricData: [datum()] };

    // Act
    const first = await sendError(client, input);
    const second = await sendError(client, input);
    await client.send(new PutMetricDataCommand(input));

    // Assess
    expect(first).toMatchObject({ ...expected, status });
    expect(second).toMatchObject({ ...expected, status });
    expect(twin.datums()).toHaveLength(1);
    expect(twin.requests().map((r) => r.status)).toEqual([status, status, 200]);
  });

  it('requires an Authorization header', async () => {
    // Act
    const response = await fetch(twin.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': 'GraniteServiceVersion20100801.PutMetricData',
      },
      body: JSON.stringify({ Namespace: 'vLLM/EKSPilot', MetricData: [{ MetricName: 'M', Value: 1 }] }),
    });

    // Assess
    expect(response.status).toBe(403);
    expect(response.headers.get('x-amzn-query-error')).toBe('MissingAuthenticationToken;Sender');
    expect(await response.json()).toMatchObject({
      __type: 'com.amazonaws.cloudwatch#MissingAuthenticationTokenException',
    });
    expect(twin.datums()).toEqual([]);
  });

  it('refuses a gzip body that expands beyond 1 MB', async () => {
    // Prepare: highly compressible, so small on the wire.
    const body = JSON.stringify({
      Namespace: 'vLLM/EKSPilot',
      MetricData: [{ MetricName: 'M', Value: 1, Dimensions: [{ Name: 'D', Value: 'x'.repeat(2_000_000) }] }],
    });

    // Act
    const response = await fetch(twin.endpoint, {
      method: 'POST',
      headers: {
        authorization: 'AWS4-HMAC-SHA256 Credential=AKIDTWIN/20250601/eu-west-1/monitoring/aws4_request',
        'content-type': 'application/x-amz-json-1.0',
        'content-encoding': 'gzip',
        'x-amz-target': 'GraniteServiceVersion20100801.PutMetricData',
      },
      body: gzipSync(body),
    });

    // Assess
    expect(response.status).toBe(413);
    expect(twin.datums()).toEqual([]);
  });

  it('releases its port on stop()', async () => {
    // Prepare
    const other = await startCloudWatchTwin();
    const otherClient = new CloudWatchClient({
      region: other.region,
      endpoint: other.endpoint,
      credentials: { accessKeyId: 'AKIDTWIN', secretAccessKey: 'twin-secret' },
      maxAttempts: 1,
    });
    await otherClient.send(new PutMetricDataCommand({ Namespace: 'vLLM/EKSPilot', MetricData: [datum()] }));

    // Act: the SDK's keep-alive socket is still open here; stop() must not wait for it.
    await other.stop();

    // Assess
    await expect(fetch(`${other.endpoint}/_twin/datums`)).rejects.toThrow();
    otherClient.destroy();
  });
});

describe('Alarms: PutMetricAlarm, DescribeAlarms and evaluation in the twin', () => {
  const start = Date.parse('2025-06-01T12:00:00Z');
  const clock = new VirtualClock(start);
  const published: Array<{ topicArn: string; subject: string; message: Record<string, unknown> }> = [];
  const topic = 'arn:aws:sns:us-east-2:000000000000:vllm-eks-pilot-prod-operations';
  let twin: CloudWatchTwin;
  let client: CloudWatchClient;
  let sink: CloudWatchMetricsSink;

  beforeAll(async () => {
    twin = await startCloudWatchTwin({
      clock,
      region: 'us-east-2',
      alarmEvaluationIntervalMs: 0,
      publishAlarm: (topicArn, subject, message) => {
        published.push({ topicArn, subject, message: JSON.parse(message) as Record<string, unknown> });
        return Promise.resolve();
      },
    });
    client = new CloudWatchClient({
      region: twin.region,
      endpoint: twin.endpoint,
      credentials: { accessKeyId: 'AKIDTWIN', secretAccessKey: 'twin-secret' },
      maxAttempts: 1,
    });
    sink = new CloudWatchMetricsSink({ client });
  });

  afterAll(async () => {
    client.destroy();
    await twin.stop();
  });

  /** The alarm's state and reason, as DescribeAlarms answers. */
  async function describe1(name: string) {
    const { MetricAlarms } = await client.send(new DescribeAlarmsCommand({ AlarmNames: [name] }));
    const [alarm] = MetricAlarms ?? [];
    return { state: alarm?.StateValue, reason: alarm?.StateReason };
  }

  it('turns the heartbeat alarm to ALARM once the heartbeat stops, with the reason, and publishes it to its topic', async () => {
    // Prepare: the stack's heartbeat alarm (one definition for CloudFormation and the twin) and a healthy evaluator:
    // four ok cycles a minute for three minutes, published as the evaluator publishes them.
    const name = 'vllm-eks-pilot-prod-evaluator-heartbeat';
    await client.send(
      new PutMetricAlarmCommand(
        heartbeatAlarmProperties({
          alarmName: name,
          namespace: 'vLLM/EKSPilot',
          stage: 'prod',
          topicArns: [topic],
        }) as unknown as PutMetricAlarmCommandInput,
      ),
    );
    const created = await describe1(name);
    for (let second = 0; second < 180; second += 15)
      await sink.publish('vLLM/EKSPilot', [heartbeatDatum({ ok: true, lastCycleAtMs: start + second * 1000 }, 'prod')]);

    // Act: evaluate after the three healthy minutes, then again three minutes after the heartbeat stopped.
    clock.set(start + 180_000 + 5_000);
    const healthy = await twin.evaluateAlarms();
    clock.set(start + 360_000 + 5_000);
    const stopped = await twin.evaluateAlarms();
    const after = await describe1(name);

    // Assess
    expect(created).toEqual({ state: 'INSUFFICIENT_DATA', reason: 'Unchecked: Initial alarm creation' });
    expect(healthy.map((t) => [t.from, t.to])).toEqual([['INSUFFICIENT_DATA', 'OK']]);
    expect(healthy[0]?.reason).toBe(
      'Threshold Crossed: 3 out of the last 3 datapoints [4.0 (01/06/25 12:02:00), 4.0 (01/06/25 12:01:00), 4.0 (01/06/25 12:00:00)] were not less than the threshold (1.0) (minimum 1 datapoint for ALARM -> OK transition).',
    );
    expect(stopped).toEqual([
      expect.objectContaining({
        alarmName: name,
        from: 'OK',
        to: 'ALARM',
        reason:
          'Threshold Crossed: no datapoints were received for 3 periods and 3 missing datapoints were treated as [Breaching].',
        notified: [topic],
      }),
    ]);
    expect(after).toEqual({ state: 'ALARM', reason: stopped[0]?.reason });
    expect(published.at(-1)).toMatchObject({
      topicArn: topic,
      subject: `ALARM: "${name}" in US East (Ohio)`,
      message: {
        AlarmName: name,
        NewStateValue: 'ALARM',
        OldStateValue: 'OK',
        Trigger: {
          MetricName: 'EvaluatorCycles',
          Namespace: 'vLLM/EKSPilot',
          Period: 60,
          TreatMissingData: 'breaching',
        },
      },
    });
  });

  it('refuses what CloudWatch refuses, naming the parameter', async () => {
    // Act
    const refused = await client
      .send(
        new PutMetricAlarmCommand({
          AlarmName: 'odd-period',
          Namespace: 'vLLM/EKSPilot',
          MetricName: 'EvaluatorCycles',
          Statistic: 'Sum',
          Period: 45,
          EvaluationPeriods: 3,
          Threshold: 1,
          ComparisonOperator: 'LessThanThreshold',
        }),
      )
      .then(
        () => undefined,
        (error: unknown) => error as Error & { Code?: string },
      );

    // Assess
    expect(refused).toMatchObject({ name: 'InvalidParameterValueException' });
    expect(refused?.message).toMatch(/Period is invalid: must be 10, 30 or a multiple of 60/);
  });
});

describe('Function: evaluateAlarm', () => {
  const T0 = Date.parse('2025-06-01T12:00:00Z');
  const alarm = (overrides: Partial<TwinAlarm> = {}): TwinAlarm => ({
    alarmName: 'a',
    alarmDescription: undefined,
    actionsEnabled: true,
    alarmActions: [],
    okActions: [],
    insufficientDataActions: [],
    namespace: 'N',
    metricName: 'M',
    dimensions: { Stage: 'prod' },
    statistic: 'Sum',
    unit: undefined,
    periodSeconds: 60,
    evaluationPeriods: 3,
    datapointsToAlarm: 3,
    threshold: 1,
    comparisonOperator: 'LessThanThreshold',
    treatMissingData: 'breaching',
    alarmArn: 'arn:aws:cloudwatch:us-east-2:000000000000:alarm:a',
    configurationUpdatedAtMs: T0,
    state: 'OK',
    stateReason: '',
    stateReasonData: undefined,
    stateUpdatedAtMs: T0,
    ...overrides,
  });
  /** One datum of `value` in each listed minute after T0. */
  const minutes = (values: Record<number, number>, dimensions: Record<string, string> = { Stage: 'prod' }) =>
    Object.entries(values).map(([minute, value]) => ({
      namespace: 'N',
      metricName: 'M',
      unit: 'Count',
      value,
      timestampMs: T0 + Number(minute) * 60_000 + 30_000,
      dimensions,
    }));
  const AT = T0 + 3 * 60_000 + 10_000;

  it.each([
    // Each case: the datapoints of minutes 0-2 (evaluated at 3:10) and what CloudWatch decides.
    { case: '3 of 3 breaching', alarm: {}, data: minutes({ 0: 0, 1: 0, 2: 0 }), state: 'ALARM' },
    // The current minute (3) has not ended: its datum is not evaluated yet.
    {
      case: 'a datum in the unfinished period does not count',
      alarm: {},
      data: [...minutes({ 0: 0, 1: 0, 2: 0 }), ...minutes({ 3: 4 })],
      state: 'ALARM',
    },
    { case: '2 of 3 breaching with 3 to alarm', alarm: {}, data: minutes({ 0: 0, 1: 2, 2: 0 }), state: 'OK' },
    {
      case: '2 of 3 breaching with 2 to alarm (M of N)',
      alarm: { datapointsToAlarm: 2 },
      data: minutes({ 0: 0, 1: 2, 2: 0 }),
      state: 'ALARM',
    },
    { case: 'one missing minute counted as breaching', alarm: {}, data: minutes({ 0: 0, 1: 0 }), state: 'ALARM' },
    {
      case: 'missing data not breaching',
      alarm: { treatMissingData: 'notBreaching' as const },
      data: minutes({ 0: 0 }),
      state: 'OK',
    },
    {
      case: 'every datapoint missing with the default treatment',
      alarm: { treatMissingData: 'missing' as const },
      data: [],
      state: 'INSUFFICIENT_DATA',
    },
    {
      // Another metric: the same name with one more dimension is not the alarm's metric.
      case: 'datums of another dimension set',
      alarm: { treatMissingData: 'missing' as const },
      data: minutes({ 0: 0, 1: 0, 2: 0 }, { Stage: 'prod', Extra: 'x' }),
      state: 'INSUFFICIENT_DATA',
    },
    {
      case: 'ignore keeps the state without data',
      alarm: { treatMissingData: 'ignore' as const, state: 'ALARM' as const },
      data: [],
      state: undefined,
    },
  ])('$case → $state', ({ alarm: overrides, data, state }) => {
    // Act
    const verdict = evaluateAlarm(alarm(overrides), data, AT);

    // Assess
    expect(verdict.change ? verdict.state : undefined).toBe(state);
  });
});
