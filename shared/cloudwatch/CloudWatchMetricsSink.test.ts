import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { type CloudWatchTwin, startCloudWatchTwin } from '../../sim/harness/index.js';
import { CloudWatchMetricsSink } from './CloudWatchMetricsSink.js';
import { CloudWatchBatchFailedError, CloudWatchNamespaceInvalidError } from './errors.js';
import type { Datum } from './types.js';

const at = new Date('2025-06-01T12:00:00.000Z');

function datum(i: number, overrides: Partial<Datum> = {}): Datum {
  return {
    MetricName: `Metric${i}`,
    Unit: 'Count',
    Value: i,
    Timestamp: at,
    Dimensions: [
      { Name: 'Cluster', Value: 'prod' },
      { Name: 'Pod', Value: `vllm-${i}` },
    ],
    ...overrides,
  };
}

describe('Class: CloudWatchMetricsSink', () => {
  let twin: CloudWatchTwin;
  let client: CloudWatchClient;

  beforeAll(async () => {
    twin = await startCloudWatchTwin();
    // maxAttempts 1: a failing batch fails at once instead of being retried with back-off.
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

  describe('Method: publish', () => {
    it('delivers datums with their dimensions, unit, value and timestamp', async () => {
      // Prepare
      const sink = new CloudWatchMetricsSink({ client });
      const datums: Datum[] = [
        {
          MetricName: 'E2ELatencyP95',
          Unit: 'Seconds',
          Value: 2.375,
          Timestamp: at,
          Dimensions: [
            { Name: 'Cluster', Value: 'prod' },
            { Name: 'Model', Value: 'mistralai/Ministral-8B-Instruct-2410' },
          ],
        },
        {
          MetricName: 'KVCacheUsage',
          Unit: 'Percent',
          Value: 41,
          Timestamp: at,
          Dimensions: [{ Name: 'GPU', Value: 'GPU-1a2b' }],
        },
      ];

      // Act
      const result = await sink.publish('vLLM/EKSPilot', datums);

      // Assess
      expect(result).toEqual({ published: 2, requests: 1, failedBatches: [], dropped: [] });
      expect(twin.datums()).toEqual([
        expect.objectContaining({
          namespace: 'vLLM/EKSPilot',
          metricName: 'E2ELatencyP95',
          unit: 'Seconds',
          value: 2.375,
          timestampMs: at.getTime(),
          dimensions: { Cluster: 'prod', Model: 'mistralai/Ministral-8B-Instruct-2410' },
        }),
        expect.objectContaining({
          metricName: 'KVCacheUsage',
          unit: 'Percent',
          value: 41,
          dimensions: { GPU: 'GPU-1a2b' },
        }),
      ]);
    });

    it('sends 2,500 datums in 3 requests, gzip-compressed, and all of them land', async () => {
      // Prepare
      const sink = new CloudWatchMetricsSink({ client });
      const datums = Array.from({ length: 2500 }, (_, i) => datum(i));

      // Act
      const result = await sink.publish('vLLM/EKSPilot', datums);

      // Assess
      expect(result.published).toBe(2500);
      expect(result.failedBatches).toEqual([]);
      const requests = twin.requests();
      expect(requests.map((r) => r.datums).sort((a, b) => b - a)).toEqual([1000, 1000, 500]);
      expect(requests.every((r) => r.status === 200 && r.gzip)).toBe(true);
      expect(requests.every((r) => r.wireBytes < r.bodyBytes)).toBe(true);
      expect(new Set(twin.datums().map((d) => d.metricName)).size).toBe(2500);
    });

    it('splits an oversized payload by bytes so that CloudWatch accepts every request', async () => {
      // Prepare: about 5 MB of dimension text in 1000 datums.
      const sink = new CloudWatchMetricsSink({ client, concurrency: 2 });
      const big = Array.from({ length: 5 }, (_, i) => ({ Name: `D${i}`, Value: `${i}`.repeat(1000) }));
      const datums = Array.from({ length: 1000 }, (_, i) => datum(i, { Dimensions: big }));

      // Act
      const result = await sink.publish('vLLM/EKSPilot', datums);

      // Assess
      expect(result.published).toBe(1000);
      expect(result.failedBatches).toEqual([]);
      expect(result.requests).toBeGreaterThanOrEqual(5);
      expect(twin.requests().every((r) => r.status === 200 && r.bodyBytes <= 1_000_000)).toBe(true);
      expect(twin.datums()).toHaveLength(1000);
    });

    it('reports a failing batch and still lands the other batches', async () => {
      // Prepare: one request at a time, so the injected failure hits the first batch.
      const sink = new CloudWatchMetricsSink({ client, concurrency: 1 });
      const datums = Array.from({ length: 2500 }, (_, i) => datum(i));
      twin.failNextRequests(1);

      // Act
      const result = await sink.publish('vLLM/EKSPilot', datums);

      // Assess
      expect(result.published).toBe(1500);
      expect(result.requests).toBe(3);
      expect(result.failedBatches).toHaveLength(1);
      const failed = result.failedBatches[0]!;
      expect(failed.size).toBe(1000);
      expect(failed.datumIndexes).toEqual(datums.slice(0, 1000).map((_, i) => i));
      expect(failed.error).toBeInstanceOf(CloudWatchBatchFailedError);
      expect(failed.error).toMatchObject({ awsErrorName: 'InternalServiceFault', httpStatus: 500, retryable: true });
      expect(failed.error.message).toMatch(
        /^PutMetricData batch 1 of 3 \(1000 datums, namespace vLLM\/EKSPilot\) failed: InternalServiceFault \(HTTP 500\)/,
      );
      expect(twin.datums().map((d) => d.metricName)).toEqual(datums.slice(1000).map((d) => d.MetricName));
    });

    it('drops non-finite values with the reason and publishes the rest', async () => {
      // Prepare
      const sink = new CloudWatchMetricsSink({ client });
      const datums = [datum(0), datum(1, { Value: NaN }), datum(2, { Value: -Infinity }), datum(3)];

      // Act
      const result = await sink.publish('vLLM/EKSPilot', datums);

      // Assess
      expect(result.published).toBe(2);
      expect(result.dropped).toEqual([
        { index: 1, metricName: 'Metric1', reason: 'value is NaN, which CloudWatch does not accept' },
        { index: 2, metricName: 'Metric2', reason: 'value is -Infinity, which CloudWatch does not accept' },
      ]);
      expect(twin.datums().map((d) => d.metricName)).toEqual(['Metric0', 'Metric3']);
    });

    it.each([
      { case: 'a reserved AWS/ namespace', namespace: 'AWS/EC2', problem: /must not start with "AWS\/"/ },
      { case: 'an empty namespace', namespace: '', problem: /must not be empty/ },
      { case: 'a namespace over 255 characters', namespace: 'n'.repeat(256), problem: /at most 255/ },
    ])('refuses $case before sending anything', async ({ namespace, problem }) => {
      // Prepare
      const sink = new CloudWatchMetricsSink({ client });

      // Act
      const publishing = sink.publish(namespace, [datum(0)]);

      // Assess
      await expect(publishing).rejects.toThrow(CloudWatchNamespaceInvalidError);
      await expect(publishing).rejects.toThrow(problem);
      expect(twin.requests()).toEqual([]);
    });

    it('does not send the remaining batches once the signal has fired', async () => {
      // Prepare
      const sink = new CloudWatchMetricsSink({ client, concurrency: 1 });
      const controller = new AbortController();
      controller.abort(new Error('Lambda deadline'));

      // Act
      const result = await sink.publish('vLLM/EKSPilot', [datum(0), datum(1)], controller.signal);

      // Assess
      expect(result.published).toBe(0);
      expect(result.failedBatches.map((b) => b.error.name)).toEqual(['CloudWatchPublishAbortedError']);
      expect(twin.requests()).toEqual([]);
    });
  });
});
