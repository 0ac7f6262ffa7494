import { describe, expect, it } from '@jest/globals';
import {
  MetricsMultipleSeriesError,
  MetricsNonFiniteValueError,
  MetricsValueOutOfDomainError,
  type InstantSample,
  type MetricsSource,
  type RangeSeries,
} from '../../metrics/index.js';
import { calibrationTarget, latestSampleQuery, stepQueries } from '../stepQueries.js';
import { T0_MS, testInput } from '../testing/steps.js';
import { ampSamplesSoFar, lifetimeSoFar } from './watchLoadStep.js';

const input = testInput();
const target = calibrationTarget(input);
const HOLD_SECONDS = 60;
const NOW_MS = T0_MS + 40_000;
const queries = stepQueries(target, HOLD_SECONDS);
const soFar = stepQueries(target, (NOW_MS - T0_MS) / 1000);

const one = (value: number, labels: Record<string, string> = {}): InstantSample => ({
  labels,
  value,
  timestampMs: NOW_MS,
});
/** One series with a point every 10 s from the load's start. */
const series = (values: number[], labels: Record<string, string> = {}): RangeSeries => ({
  labels,
  points: values.map((value, i) => ({ timestampMs: T0_MS + i * 10_000, value })),
});

/** A MetricsSource answering the watch's queries; unknown queries (the scrape interval's) get no series. */
function source(answers: { instant?: Record<string, InstantSample[]>; range?: Record<string, RangeSeries[]> }) {
  return {
    instant: (query: string) => Promise.resolve(answers.instant?.[query] ?? []),
    range: (query: string) => Promise.resolve(answers.range?.[query] ?? []),
  } satisfies MetricsSource;
}

describe('Function: lifetimeSoFar', () => {
  it('reads the one mean lifetime AMP holds, and null when no request finished (no series, NaN)', async () => {
    // Act & Assess
    const query = soFar.meanLifetime;
    await expect(lifetimeSoFar(source({ instant: { [query]: [one(2.4)] } }), input, 40, NOW_MS)).resolves.toBe(2.4);
    await expect(lifetimeSoFar(source({}), input, 40, NOW_MS)).resolves.toBeNull();
    await expect(
      lifetimeSoFar(source({ instant: { [query]: [one(Number.NaN)] } }), input, 40, NOW_MS),
    ).resolves.toBeNull();
  });

  it('refuses two series with a named error naming both label sets, never taking the first', async () => {
    // Prepare
    const two = [one(2.4, { cluster: 'a' }), one(9.9, { cluster: 'b' })];

    // Act
    const read = lifetimeSoFar(source({ instant: { [soFar.meanLifetime]: two } }), input, 40, NOW_MS);

    // Assess
    await expect(read).rejects.toThrow(MetricsMultipleSeriesError);
    await expect(read).rejects.toThrow('got 2 series: {"cluster":"a"}, {"cluster":"b"}');
  });

  it('reads a difference below 0 (the TTFT mean also counts requests still decoding) as 0, not as refused', async () => {
    await expect(
      lifetimeSoFar(source({ instant: { [soFar.meanLifetime]: [one(-0.5)] } }), input, 40, NOW_MS),
    ).resolves.toBe(0);
  });

  it.each([
    { case: '+Inf', value: Infinity },
    { case: '-Inf', value: -Infinity },
  ])('refuses $case with a named error', async ({ value }) => {
    await expect(
      lifetimeSoFar(source({ instant: { [soFar.meanLifetime]: [one(value)] } }), input, 40, NOW_MS),
    ).rejects.toThrow(MetricsNonFiniteValueError);
  });
});

describe('Function: ampSamplesSoFar', () => {
  const healthy = () => ({
    instant: { [latestSampleQuery(target)]: [one(NOW_MS / 1000 - 2)], [soFar.preemptions]: [one(3)] },
    range: {
      [queries.queue]: [series([0, 1, Number.NaN, 4])],
      [queries.kvCacheLast]: [series([0.2, 0.4, 0.6, 0.8])],
    },
  });

  it('gives the queue and KV-cache samples (NaN left out) and the preemptions as AMP holds them', async () => {
    // Act
    const read = await ampSamplesSoFar(source(healthy()), input, HOLD_SECONDS, T0_MS, NOW_MS);

    // Assess
    expect(read.samples).toEqual([
      { tMs: T0_MS, queue: 0 },
      { tMs: T0_MS + 10_000, queue: 1 },
      { tMs: T0_MS + 30_000, queue: 4 },
    ]);
    expect(read.kvCache.samples.map((s) => s.usage)).toEqual([0.2, 0.4, 0.6, 0.8]);
    expect(read.kvCache.preemptions).toBe(3);
  });

  it('reads no preemption series as none, and a NaN one as NaN (earlyStop.ts then refuses a stable ending)', async () => {
    // Prepare
    const none = healthy();
    none.instant[soFar.preemptions] = [];
    const nan = healthy();
    nan.instant[soFar.preemptions] = [one(Number.NaN)];

    // Act & Assess
    expect((await ampSamplesSoFar(source(none), input, HOLD_SECONDS, T0_MS, NOW_MS)).kvCache.preemptions).toBe(0);
    expect((await ampSamplesSoFar(source(nan), input, HOLD_SECONDS, T0_MS, NOW_MS)).kvCache.preemptions).toBeNaN();
  });

  it('refuses two queue series (the sum gives one) with a named error naming both, never the first', async () => {
    // Prepare
    const answers = healthy();
    answers.range[queries.queue] = [series([0, 1], { cluster: 'a' }), series([9, 9], { cluster: 'b' })];

    // Act
    const read = ampSamplesSoFar(source(answers), input, HOLD_SECONDS, T0_MS, NOW_MS);

    // Assess
    await expect(read).rejects.toThrow(MetricsMultipleSeriesError);
    await expect(read).rejects.toThrow('got 2 series: {"cluster":"a"}, {"cluster":"b"}');
  });

  it.each([
    {
      case: 'a negative queue sample',
      change: (a: ReturnType<typeof healthy>) => (a.range[queries.queue] = [series([0, -2])]),
      error: MetricsValueOutOfDomainError,
    },
    {
      case: 'a KV-cache usage above 1',
      change: (a: ReturnType<typeof healthy>) => (a.range[queries.kvCacheLast] = [series([0.5, 1.3])]),
      error: MetricsValueOutOfDomainError,
    },
    {
      case: 'negative preemptions',
      change: (a: ReturnType<typeof healthy>) => (a.instant[soFar.preemptions] = [one(-1)]),
      error: MetricsValueOutOfDomainError,
    },
    {
      case: '+Inf preemptions',
      change: (a: ReturnType<typeof healthy>) => (a.instant[soFar.preemptions] = [one(Infinity)]),
      error: MetricsNonFiniteValueError,
    },
    {
      case: 'two preemption series',
      change: (a: ReturnType<typeof healthy>) =>
        (a.instant[soFar.preemptions] = [one(1, { cluster: 'a' }), one(2, { cluster: 'b' })]),
      error: MetricsMultipleSeriesError,
    },
  ])('refuses $case with a named error', async ({ change, error }) => {
    // Prepare
    const answers = healthy();
    change(answers);

    // Act & Assess
    await expect(ampSamplesSoFar(source(answers), input, HOLD_SECONDS, T0_MS, NOW_MS)).rejects.toThrow(error);
  });
});
