import { describe, expect, it } from '@jest/globals';
import { CATALOG, type CatalogEntry } from './catalog.js';
import { readCatalog } from './readCatalog.js';
import type { InstantQueryOptions, InstantSample, MetricsSource, RangeSeries } from './types.js';
import type { Target } from '../config/index.js';
import {
  MetricsEmptyResultError,
  MetricsHttpError,
  MetricsInvalidTargetError,
  MetricsMissingLabelError,
  MetricsMultipleSeriesError,
  MetricsNonFiniteValueError,
  PromqlInvalidArgumentError,
} from './errors.js';

const target: Target = {
  name: 'prod',
  cluster: 'c1',
  namespace: 'default',
  deployment: 'vllm-app',
  model: 'ministral',
};
const TIME_MS = 1_760_000_000_000;
const UUID = 'GPU-1c7f2a9e-5b3d-4e8f-a0c2-7d9e6b4f3a21';
const POD = 'vllm-app-7d9c8b6f5d-x2k4q';

type Answer = Array<{ labels: Record<string, string>; value: number }> | Error;

/**
 * An in-memory MetricsSource (the port, as a fake): answers each query text from a table, records the options,
 * and can hold answers back to observe concurrency and ordering.
 */
class TableSource implements MetricsSource {
  readonly calls: Array<{ query: string; options: InstantQueryOptions | undefined }> = [];
  inFlight = 0;
  maxInFlight = 0;

  constructor(
    private readonly answers: Record<string, Answer>,
    private readonly delayFor: (query: string) => number = () => 0,
  ) {}

  async instant(query: string, options?: InstantQueryOptions): Promise<InstantSample[]> {
    this.calls.push({ query, options });
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      for (let i = 0; i < this.delayFor(query); i++) await new Promise((resolve) => setImmediate(resolve));
      const answer = this.answers[query];
      if (answer === undefined) throw new Error(`no answer for ${query}`);
      if (answer instanceof Error) throw answer;
      return answer.map((sample) => ({ ...sample, timestampMs: options?.timeMs ?? 0 }));
    } finally {
      this.inFlight--;
    }
  }

  range(): Promise<RangeSeries[]> {
    return Promise.reject(new Error('range is not used by readCatalog'));
  }
}

function entry(overrides: Partial<CatalogEntry> & Pick<CatalogEntry, 'id'>): CatalogEntry {
  return {
    metricName: overrides.id.replace(/(^|_)([a-z])/g, (_m, _s, c: string) => c.toUpperCase()),
    tier: 1,
    title: overrides.id,
    unit: 'Count',
    breakdown: 'target',
    description: 'test entry',
    build: () => `q_${overrides.id}`,
    ...overrides,
  };
}

describe('Function: readCatalog', () => {
  it('maps target, Pod and GPU results to readings with their dimensions', async () => {
    // Prepare
    const catalog = [
      entry({ id: 'queue', tier: 1 }),
      entry({ id: 'kv', tier: 2, unit: 'Percent', breakdown: 'pod' }),
      entry({ id: 'util', tier: 3, unit: 'Percent', breakdown: 'gpu' }),
    ];
    const source = new TableSource({
      q_queue: [{ labels: {}, value: 7 }],
      q_kv: [
        { labels: { pod: POD }, value: 42.5 },
        { labels: { pod: 'vllm-app-7d9c8b6f5d-abcde' }, value: 10 },
      ],
      q_util: [{ labels: { UUID, pod: POD }, value: 97 }],
    });

    // Act
    const result = await readCatalog(source, target, { timeMs: TIME_MS, catalog });

    // Assess
    expect(result).toEqual({
      target,
      timeMs: TIME_MS,
      readings: [
        { queryId: 'queue', metricName: 'Queue', tier: 1, unit: 'Count', value: 7, dimensions: {} },
        { queryId: 'kv', metricName: 'Kv', tier: 2, unit: 'Percent', value: 42.5, dimensions: { pod: POD } },
        {
          queryId: 'kv',
          metricName: 'Kv',
          tier: 2,
          unit: 'Percent',
          value: 10,
          dimensions: { pod: 'vllm-app-7d9c8b6f5d-abcde' },
        },
        {
          queryId: 'util',
          metricName: 'Util',
          tier: 3,
          unit: 'Percent',
          value: 97,
          dimensions: { gpu: UUID, pod: POD },
        },
      ],
      failures: [],
      skipped: [],
    });
  });

  it('evaluates every query at the given time, with the caller signal and the rate window', async () => {
    // Prepare
    const controller = new AbortController();
    const catalog = [entry({ id: 'tokens', build: (_t, { rateWindow }) => `q_${rateWindow}` })];
    const source = new TableSource({ q_5m: [{ labels: {}, value: 1 }] });

    // Act
    await readCatalog(source, target, { timeMs: TIME_MS, rateWindow: '5m', signal: controller.signal, catalog });

    // Assess
    expect(source.calls).toEqual([{ query: 'q_5m', options: { timeMs: TIME_MS, signal: controller.signal } }]);
  });

  it('records a failing query as a failure and still reads the others', async () => {
    // Prepare
    const catalog = [entry({ id: 'a' }), entry({ id: 'b' }), entry({ id: 'c' })];
    const throttled = new MetricsHttpError({ status: 429 }, true, { query: 'q_b' });
    const source = new TableSource({
      q_a: [{ labels: {}, value: 1 }],
      q_b: throttled,
      q_c: [{ labels: {}, value: 3 }],
    });

    // Act
    const result = await readCatalog(source, target, { timeMs: TIME_MS, catalog });

    // Assess
    expect(result.readings.map((r) => r.queryId)).toEqual(['a', 'c']);
    expect(result.failures).toEqual([{ queryId: 'b', error: throttled }]);
  });

  it.each([
    {
      case: 'an empty result for a reading that needs traffic is skipped',
      overrides: { needsTraffic: true },
      answer: [],
      outcome: 'skipped',
      detail: /needs requests within the last 2m/,
    },
    {
      case: 'NaN for a reading that needs traffic is skipped',
      overrides: { needsTraffic: true },
      answer: [{ labels: {}, value: Number.NaN }],
      outcome: 'skipped',
      detail: /needs requests/,
    },
    {
      case: 'an empty result for an optional reading is skipped',
      overrides: { optional: true },
      answer: [],
      outcome: 'skipped',
      detail: /optional/,
    },
    {
      case: 'an empty result for any other reading is a failure',
      overrides: {},
      answer: [],
      outcome: 'failure',
      detail: MetricsEmptyResultError,
    },
    {
      case: 'NaN for a reading that should always have a value is a failure',
      overrides: {},
      answer: [{ labels: {}, value: Number.NaN }],
      outcome: 'failure',
      detail: MetricsNonFiniteValueError,
    },
    {
      case: '+Inf is a failure even for a reading that needs traffic',
      overrides: { needsTraffic: true },
      answer: [{ labels: {}, value: Infinity }],
      outcome: 'failure',
      detail: MetricsNonFiniteValueError,
    },
    {
      case: 'two series for a target-level reading is a failure',
      overrides: {},
      answer: [
        { labels: { pod: 'a' }, value: 1 },
        { labels: { pod: 'b' }, value: 2 },
      ],
      outcome: 'failure',
      detail: MetricsMultipleSeriesError,
    },
    {
      case: 'a per-Pod series without a pod label is a failure',
      overrides: { breakdown: 'pod' as const },
      answer: [{ labels: {}, value: 1 }],
      outcome: 'failure',
      detail: MetricsMissingLabelError,
    },
    {
      case: 'a per-GPU series without a UUID label is a failure',
      overrides: { breakdown: 'gpu' as const },
      answer: [{ labels: { gpu: '0', pod: POD }, value: 1 }],
      outcome: 'failure',
      detail: MetricsMissingLabelError,
    },
  ])('reports $case', async ({ overrides, answer, outcome, detail }) => {
    // Prepare
    const catalog = [entry({ id: 'x', ...overrides })];
    const source = new TableSource({ q_x: answer });

    // Act
    const result = await readCatalog(source, target, { timeMs: TIME_MS, catalog });

    // Assess
    expect(result.readings).toEqual([]);
    if (outcome === 'skipped') {
      expect(result.failures).toEqual([]);
      expect(result.skipped.map((s) => s.queryId)).toEqual(['x']);
      expect(result.skipped[0]?.reason).toMatch(detail as RegExp);
    } else {
      expect(result.skipped).toEqual([]);
      expect(result.failures).toHaveLength(1);
      expect(result.failures[0]?.error).toBeInstanceOf(detail);
      expect(result.failures[0]?.error).toMatchObject({ query: 'q_x' });
    }
  });

  it('keeps the finite per-Pod values of a reading that needs traffic when one Pod is idle', async () => {
    // Prepare
    const catalog = [entry({ id: 'ratio', breakdown: 'pod', needsTraffic: true })];
    const source = new TableSource({
      q_ratio: [
        { labels: { pod: 'a' }, value: Number.NaN },
        { labels: { pod: 'b' }, value: 0.5 },
      ],
    });

    // Act
    const result = await readCatalog(source, target, { timeMs: TIME_MS, catalog });

    // Assess
    expect(result.readings.map((r) => [r.dimensions, r.value])).toEqual([[{ pod: 'b' }, 0.5]]);
  });

  it('records a query that cannot be built as a failure', async () => {
    // Prepare
    const catalog = [
      entry({
        id: 'broken',
        build: () => {
          throw new PromqlInvalidArgumentError('quantile', 2, 'a number from 0 to 1');
        },
      }),
      entry({ id: 'fine' }),
    ];
    const source = new TableSource({ q_fine: [{ labels: {}, value: 1 }] });

    // Act
    const result = await readCatalog(source, target, { timeMs: TIME_MS, catalog });

    // Assess
    expect(result.failures.map((f) => [f.queryId, f.error.name])).toEqual([['broken', 'PromqlInvalidArgumentError']]);
    expect(result.readings.map((r) => r.queryId)).toEqual(['fine']);
  });

  it('runs at most `concurrency` queries at once and keeps catalog order whatever order answers arrive in', async () => {
    // Prepare: earlier entries answer later.
    const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const catalog = ids.map((id) => entry({ id }));
    const answers = Object.fromEntries(ids.map((id, i) => [`q_${id}`, [{ labels: {}, value: i }]]));
    const source = new TableSource(answers, (query) => 20 - query.charCodeAt(2) + 'a'.charCodeAt(0));

    // Act
    const result = await readCatalog(source, target, { timeMs: TIME_MS, catalog, concurrency: 3 });

    // Assess
    expect(source.maxInFlight).toBe(3);
    expect(result.readings.map((r) => r.queryId)).toEqual(ids);
  });

  it('reads the real catalog, one query per entry, each for the target', async () => {
    // Prepare: any query answers one series with every label a breakdown may need.
    const source: MetricsSource = {
      instant: () => Promise.resolve([{ labels: { pod: POD, UUID }, value: 1, timestampMs: TIME_MS }]),
      range: () => Promise.resolve([]),
    };

    // Act
    const result = await readCatalog(source, target, { timeMs: TIME_MS });

    // Assess
    expect(result.failures).toEqual([]);
    expect(new Set(result.readings.map((r) => r.queryId))).toEqual(new Set(CATALOG.map((e) => e.id)));
    const gpu = result.readings.find((r) => r.queryId === 'gpu_utilization');
    expect(gpu?.dimensions).toEqual({ gpu: UUID, pod: POD });
    const queue = result.readings.find((r) => r.queryId === 'queue_depth');
    expect(queue?.dimensions).toEqual({});
  });

  it.each([
    { case: 'a bad rate window', options: { rateWindow: 'two minutes' }, error: PromqlInvalidArgumentError },
    { case: 'an empty model', options: {}, targetOverrides: { model: '' }, error: MetricsInvalidTargetError },
  ])('throws at once for $case: configuration, not a query failure', async ({ options, targetOverrides, error }) => {
    // Prepare
    const source = new TableSource({});

    // Act
    const thrown = await readCatalog(source, { ...target, ...targetOverrides }, { timeMs: TIME_MS, ...options }).catch(
      (e: unknown) => e,
    );

    // Assess
    expect(thrown).toBeInstanceOf(error);
    expect(source.calls).toEqual([]);
  });
});
