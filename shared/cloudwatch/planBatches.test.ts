import { describe, expect, it } from '@jest/globals';
import { PUT_METRIC_DATA_LIMITS } from './limits.js';
import { planBatches, serializedDatumBytes } from './planBatches.js';
import type { Datum } from './types.js';

const at = new Date('2025-06-01T12:00:00.000Z');

function datum(overrides: Partial<Datum> = {}): Datum {
  return {
    MetricName: 'E2ELatencyP95',
    Unit: 'Seconds',
    Value: 2.5,
    Timestamp: at,
    Dimensions: [
      { Name: 'Cluster', Value: 'prod' },
      { Name: 'Model', Value: 'mistralai/Ministral-8B-Instruct-2410' },
    ],
    ...overrides,
  };
}

function requestBytes(namespace: string, datums: Datum[], indexes: number[]): number {
  const body = {
    Namespace: namespace,
    MetricData: indexes.map((index) => {
      const d = datums[index] as Datum;
      return {
        MetricName: d.MetricName,
        Dimensions: d.Dimensions,
        Timestamp: d.Timestamp.getTime() / 1000,
        Value: d.Value,
        Unit: d.Unit,
      };
    }),
  };
  return Buffer.byteLength(JSON.stringify(body));
}

function matches(reason: string | RegExp): unknown {
  return typeof reason === 'string' ? reason : expect.stringMatching(reason);
}

describe('Function: planBatches', () => {
  it.each([
    { case: '2,500 datums make 3 requests (1000, 1000, 500)', count: 2500, sizes: [1000, 1000, 500] },
    { case: 'exactly 1000 datums make one request', count: 1000, sizes: [1000] },
    { case: '1001 datums spill one into a second request', count: 1001, sizes: [1000, 1] },
    { case: 'no datums make no request', count: 0, sizes: [] },
  ])('$case', ({ count, sizes }) => {
    // Prepare
    const datums = Array.from({ length: count }, (_, i) => datum({ MetricName: `M${i}` }));

    // Act
    const plan = planBatches('vLLM/EKSPilot', datums);

    // Assess
    expect(plan.batches.map((batch) => batch.length)).toEqual(sizes);
    expect(plan.batches.flat()).toEqual(datums.map((_, i) => i));
    expect(plan.dropped).toEqual([]);
  });

  it('splits by bytes when the datums are large, keeping every request within 1 MB', () => {
    // Prepare: 5 dimensions of 1000 characters each make datums of about 5 KB: 1000 of them are about 5 MB.
    const big = Array.from({ length: 5 }, (_, i) => ({ Name: `D${i}`, Value: 'x'.repeat(1000) }));
    const datums = Array.from({ length: 1000 }, (_, i) => datum({ MetricName: `M${i}`, Dimensions: big }));

    // Act
    const plan = planBatches('vLLM/EKSPilot', datums);

    // Assess
    expect(plan.batches.length).toBeGreaterThanOrEqual(5);
    expect(plan.batches.flat()).toEqual(datums.map((_, i) => i));
    for (const batch of plan.batches) {
      expect(requestBytes('vLLM/EKSPilot', datums, batch)).toBeLessThanOrEqual(PUT_METRIC_DATA_LIMITS.maxRequestBytes);
    }
    // Greedy packing: every request but the last is nearly full.
    const first = plan.batches[0] as number[];
    expect(requestBytes('vLLM/EKSPilot', datums, first) + serializedDatumBytes(datums[0] as Datum)).toBeGreaterThan(
      PUT_METRIC_DATA_LIMITS.maxRequestBytes,
    );
  });

  it('fills a request up to the byte budget exactly, then starts the next', () => {
    // Prepare: a budget that holds exactly two of these datums.
    const ascii = datum({ MetricName: 'a'.repeat(100) });
    const limit =
      Buffer.byteLength(JSON.stringify({ Namespace: 'ns', MetricData: [] })) + 2 * (serializedDatumBytes(ascii) + 1);

    // Act
    const plan = planBatches('ns', [ascii, ascii, ascii], { maxDatumsPerRequest: 1000, maxRequestBytes: limit });

    // Assess
    expect(plan.batches).toEqual([[0, 1], [2]]);
  });

  it.each([
    { case: 'NaN', value: NaN, reason: 'value is NaN, which CloudWatch does not accept' },
    { case: '+Infinity', value: Infinity, reason: 'value is +Infinity, which CloudWatch does not accept' },
    { case: '-Infinity', value: -Infinity, reason: 'value is -Infinity, which CloudWatch does not accept' },
    { case: 'a value beyond 2^360', value: 2 ** 361, reason: /outside the range CloudWatch accepts/ },
  ])('drops a $case value with the reason and sends the rest', ({ value, reason }) => {
    // Prepare
    const datums = [
      datum({ MetricName: 'Good1' }),
      datum({ MetricName: 'Bad', Value: value }),
      datum({ MetricName: 'Good2' }),
    ];

    // Act
    const plan = planBatches('vLLM/EKSPilot', datums);

    // Assess
    expect(plan.batches).toEqual([[0, 2]]);
    expect(plan.dropped).toEqual([{ index: 1, metricName: 'Bad', reason: matches(reason) }]);
  });

  it.each([
    {
      case: 'more than 30 dimensions',
      dims: Array.from({ length: 31 }, (_, i) => ({ Name: `D${i}`, Value: 'v' })),
      reason: 'has 31 dimensions; CloudWatch accepts at most 30',
    },
    {
      case: 'an empty dimension value',
      dims: [{ Name: 'Pod', Value: '' }],
      reason: 'dimension Pod value "": must not be empty',
    },
    {
      case: 'a dimension value over 1024 characters',
      dims: [{ Name: 'Model', Value: 'm'.repeat(1025) }],
      reason: /dimension Model value .*: is 1025 characters long; at most 1024 are accepted/,
    },
    {
      case: 'a non-ASCII dimension value',
      dims: [{ Name: 'Model', Value: 'modèle' }],
      reason: /must contain only printable ASCII characters/,
    },
    {
      case: 'a duplicate dimension name',
      dims: [
        { Name: 'Pod', Value: 'a' },
        { Name: 'Pod', Value: 'b' },
      ],
      reason: 'dimension Pod appears twice',
    },
  ])('drops a datum with $case', ({ dims, reason }) => {
    // Act
    const plan = planBatches('vLLM/EKSPilot', [datum({ Dimensions: dims })]);

    // Assess
    expect(plan.batches).toEqual([]);
    expect(plan.dropped).toEqual([{ index: 0, metricName: 'E2ELatencyP95', reason: matches(reason) }]);
  });
});
