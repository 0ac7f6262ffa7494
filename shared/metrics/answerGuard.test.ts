import { describe, expect, it } from '@jest/globals';
import {
  domainOfUnit,
  guardByLabel,
  guardSamples,
  guardSeries,
  guardSeriesCount,
  guardSinglePoints,
  guardSingleValue,
  guardValue,
  isRefusedAnswer,
} from './answerGuard.js';
import {
  MetricsHttpError,
  MetricsMissingLabelError,
  MetricsMultipleSeriesError,
  MetricsNonFiniteValueError,
  MetricsTooManySeriesError,
  MetricsValueOutOfDomainError,
} from './errors.js';
import { DCGM, VALUE_DOMAIN, VLLM, domainOfMetric } from './names.js';

const QUERY = 'sum(vllm:num_requests_waiting{namespace="llm"})';
const sample = (value: number, labels: Record<string, string> = {}) => ({ labels, value, timestampMs: 1_000 });

describe('Function: guardValue', () => {
  it.each([
    { case: 'a count of 0', value: 0, domain: VALUE_DOMAIN.nonNegative },
    { case: 'a latency of 2.5 s', value: 2.5, domain: VALUE_DOMAIN.nonNegative },
    { case: 'a full KV cache (1.0)', value: 1, domain: VALUE_DOMAIN.fraction },
    { case: 'a GPU at 100 %', value: 100, domain: VALUE_DOMAIN.percent },
  ])('accepts $case', ({ value, domain }) => {
    // Act & Assess
    expect(guardValue(value, domain, { query: QUERY })).toBe(value);
  });

  it('passes NaN through: PromQL says "no data", the caller decides what that means', () => {
    // Act & Assess
    expect(guardValue(Number.NaN, VALUE_DOMAIN.nonNegative)).toBeNaN();
  });

  it.each([
    { case: 'a negative queue (-5)', value: -5, domain: VALUE_DOMAIN.nonNegative, error: MetricsValueOutOfDomainError },
    {
      case: 'a KV-cache fraction of 1.7',
      value: 1.7,
      domain: VALUE_DOMAIN.fraction,
      error: MetricsValueOutOfDomainError,
    },
    { case: 'a GPU at 250 %', value: 250, domain: VALUE_DOMAIN.percent, error: MetricsValueOutOfDomainError },
    { case: '+Inf', value: Infinity, domain: VALUE_DOMAIN.nonNegative, error: MetricsNonFiniteValueError },
    { case: '-Inf', value: -Infinity, domain: VALUE_DOMAIN.nonNegative, error: MetricsNonFiniteValueError },
  ])('refuses $case with a named one-line error carrying the query', ({ value, domain, error }) => {
    // Act
    const thrown = (() => {
      try {
        return guardValue(value, domain, { query: QUERY, labels: { pod: 'vllm-0' } });
      } catch (e) {
        return e;
      }
    })();

    // Assess
    expect(thrown).toBeInstanceOf(error);
    expect(thrown).toMatchObject({ query: QUERY, retryable: false });
    expect((thrown as Error).message).toContain('vllm-0');
    expect((thrown as Error).message).not.toContain('\n');
  });
});

describe('Function: guardSingleValue', () => {
  it('returns the one value in its domain', () => {
    // Act & Assess
    expect(guardSingleValue([sample(3)], VALUE_DOMAIN.nonNegative, QUERY)).toBe(3);
  });

  it.each([
    { case: 'no series', samples: [] },
    { case: 'NaN (an idle rate window)', samples: [sample(Number.NaN)] },
  ])('reads $case as no data (undefined)', ({ samples }) => {
    // Act & Assess
    expect(guardSingleValue(samples, VALUE_DOMAIN.nonNegative, QUERY)).toBeUndefined();
  });

  it('names a few of several series and how many more there are, never taking the first silently', () => {
    // Prepare
    const samples = Array.from({ length: 7 }, (_, i) => sample(i, { pod: `vllm-${i}` }));

    // Act
    const thrown = (() => {
      try {
        return guardSingleValue(samples, VALUE_DOMAIN.nonNegative, QUERY);
      } catch (e) {
        return e as MetricsMultipleSeriesError;
      }
    })() as MetricsMultipleSeriesError;

    // Assess
    expect(thrown).toBeInstanceOf(MetricsMultipleSeriesError);
    expect(thrown.count).toBe(7);
    expect(thrown.series).toEqual([{ pod: 'vllm-0' }, { pod: 'vllm-1' }, { pod: 'vllm-2' }]);
    expect(thrown.message).toBe(
      'expected exactly one series, got 7 series: {"pod":"vllm-0"}, {"pod":"vllm-1"}, {"pod":"vllm-2"}, and 4 more',
    );
  });
});

describe('Function: guardSamples', () => {
  it('keeps every sample of a per-Pod answer when all are in the domain (NaN included)', () => {
    // Prepare
    const samples = [sample(0.4, { pod: 'a' }), sample(Number.NaN, { pod: 'b' })];

    // Act & Assess
    expect(guardSamples(samples, VALUE_DOMAIN.fraction, QUERY)).toEqual(samples);
  });

  it('refuses the whole answer when one sample is outside the domain', () => {
    // Act & Assess
    expect(() =>
      guardSamples([sample(0.4, { pod: 'a' }), sample(1.2, { pod: 'b' })], VALUE_DOMAIN.fraction, QUERY),
    ).toThrow(MetricsValueOutOfDomainError);
  });
});

describe('Function: guardByLabel', () => {
  it('keys a per-Pod answer by its pod label, leaving NaN out (no data)', () => {
    // Prepare
    const samples = [sample(3, { pod: 'a' }), sample(0, { pod: 'b' }), sample(Number.NaN, { pod: 'c' })];

    // Act & Assess
    expect(guardByLabel(samples, 'pod', VALUE_DOMAIN.nonNegative, QUERY)).toEqual(
      new Map([
        ['a', 3],
        ['b', 0],
      ]),
    );
  });

  it('refuses two series for one Pod, naming both label sets', () => {
    // Prepare
    const samples = [
      sample(3, { pod: 'a', instance: '10.0.0.1:8000' }),
      sample(1, { pod: 'b' }),
      sample(4, { pod: 'a', instance: '10.0.0.2:8000' }),
    ];

    // Act & Assess
    expect(() => guardByLabel(samples, 'pod', VALUE_DOMAIN.nonNegative, QUERY)).toThrow(
      new MetricsMultipleSeriesError(
        [
          { pod: 'a', instance: '10.0.0.1:8000' },
          { pod: 'a', instance: '10.0.0.2:8000' },
        ],
        'one series per pod',
        { query: QUERY },
      ),
    );
  });

  it.each([
    { case: 'a series without the label', samples: [sample(1, {})], error: MetricsMissingLabelError },
    { case: 'a negative count', samples: [sample(-2, { pod: 'a' })], error: MetricsValueOutOfDomainError },
    { case: '+Inf', samples: [sample(Infinity, { pod: 'a' })], error: MetricsNonFiniteValueError },
  ])('refuses $case', ({ samples, error }) => {
    // Act & Assess
    expect(() => guardByLabel(samples, 'pod', VALUE_DOMAIN.nonNegative, QUERY)).toThrow(error);
  });
});

describe('Function: guardSeries', () => {
  it('keeps every series of a per-Pod range answer when every point is in the domain (NaN included)', () => {
    // Prepare
    const series = [
      { labels: { pod: 'a' }, points: [{ timestampMs: 1, value: 2 }] },
      { labels: { pod: 'b' }, points: [{ timestampMs: 1, value: Number.NaN }] },
    ];

    // Act & Assess
    expect(guardSeries(series, VALUE_DOMAIN.nonNegative, QUERY)).toEqual(series);
  });

  it("refuses the whole answer when one point is outside the domain, naming its series' labels", () => {
    // Prepare
    const series = [
      { labels: { pod: 'a' }, points: [{ timestampMs: 1, value: 2 }] },
      { labels: { pod: 'b' }, points: [{ timestampMs: 1, value: -1 }] },
    ];

    // Act & Assess
    expect(() => guardSeries(series, VALUE_DOMAIN.nonNegative, QUERY)).toThrow(/-1 for \{"pod":"b"\}/);
  });
});

describe('Function: isRefusedAnswer', () => {
  it("tells the guard's refusals from failures to ask", () => {
    // Act & Assess
    expect(isRefusedAnswer(new MetricsMultipleSeriesError([{}, {}], 'exactly one series'))).toBe(true);
    expect(isRefusedAnswer(new MetricsValueOutOfDomainError(-1, VALUE_DOMAIN.nonNegative.name, {}))).toBe(true);
    expect(isRefusedAnswer(new MetricsHttpError({ status: 503 }, true))).toBe(false);
    expect(isRefusedAnswer(new Error('boom'))).toBe(false);
  });
});

describe('Function: guardSinglePoints', () => {
  it('drops NaN points (no data) and keeps the rest', () => {
    // Prepare
    const series = [
      {
        labels: {},
        points: [
          { timestampMs: 1, value: 2 },
          { timestampMs: 2, value: Number.NaN },
        ],
      },
    ];

    // Act & Assess
    expect(guardSinglePoints(series, VALUE_DOMAIN.nonNegative, QUERY)).toEqual([{ timestampMs: 1, value: 2 }]);
  });

  it('refuses two series and a negative point', () => {
    // Prepare
    const one = { labels: { cluster: 'a' }, points: [{ timestampMs: 1, value: 2 }] };
    const negative = { labels: {}, points: [{ timestampMs: 1, value: -1 }] };

    // Act & Assess
    expect(() => guardSinglePoints([one, one], VALUE_DOMAIN.nonNegative, QUERY)).toThrow(MetricsMultipleSeriesError);
    expect(() => guardSinglePoints([negative], VALUE_DOMAIN.nonNegative, QUERY)).toThrow(MetricsValueOutOfDomainError);
  });
});

describe('Function: guardSeriesCount', () => {
  it('accepts the cap and refuses one more, naming count and cap', () => {
    // Act & Assess
    expect(() => guardSeriesCount(200, 200, QUERY)).not.toThrow();
    expect(() => guardSeriesCount(500_000, 200, QUERY)).toThrow(
      new MetricsTooManySeriesError(500_000, 200, { query: QUERY }),
    );
  });
});

describe('Domains: one source of truth beside the metric names', () => {
  it.each([
    { case: 'KV-cache usage (current name)', ref: { renamed: 'kvCacheUsage' as const }, domain: VALUE_DOMAIN.fraction },
    { case: 'KV-cache usage (legacy name)', ref: 'vllm:gpu_cache_usage_perc', domain: VALUE_DOMAIN.fraction },
    { case: 'DCGM GPU utilisation', ref: DCGM.gpuUtil, domain: VALUE_DOMAIN.percent },
    { case: 'the waiting queue', ref: VLLM.numRequestsWaiting, domain: VALUE_DOMAIN.nonNegative },
    { case: 'e2e latency', ref: VLLM.e2eRequestLatency, domain: VALUE_DOMAIN.nonNegative },
  ])('domainOfMetric: $case', ({ ref, domain }) => {
    // Act & Assess
    expect(domainOfMetric(ref)).toBe(domain);
  });

  it('domainOfUnit: Percent is 0-100, the other catalog units >= 0', () => {
    // Act & Assess
    expect(domainOfUnit('Percent')).toBe(VALUE_DOMAIN.percent);
    expect(domainOfUnit('Seconds')).toBe(VALUE_DOMAIN.nonNegative);
    expect(domainOfUnit('Count/Second')).toBe(VALUE_DOMAIN.nonNegative);
  });
});
