import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { gzipSync } from 'node:zlib';
import { CloudWatchClient, PutMetricDataCommand, type MetricDatum } from '@aws-sdk/client-cloudwatch';
import { VirtualClock } from '../../shared/clock/index.js';
import { startCloudWatchTwin, type CloudWatchTwin } from './cloudwatch.js';

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
