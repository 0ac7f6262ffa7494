import { describe, expect, it } from '@jest/globals';
import {
  MetricsMultipleSeriesError,
  MetricsNonFiniteValueError,
  MetricsValueOutOfDomainError,
  type InstantSample,
  type MetricsSource,
  type RangeSeries,
} from '../metrics/index.js';
import { estimateScrapeSeconds, scrapeSecondsFromSampleTimes } from './scrapeInterval.js';
import { calibrationTarget } from './stepQueries.js';
import { testInput } from './testing/steps.js';

describe('Function: scrapeSecondsFromSampleTimes', () => {
  it('reads 30 s from samples 30 s apart, repeated at every 1 s step of the range query', () => {
    // A 120 s range at a 1 s step repeats each sample's timestamp until the next one: 5 distinct times.
    const times = Array.from({ length: 121 }, (_, i) => 1_000 + 30 * Math.floor(i / 30));
    expect(scrapeSecondsFromSampleTimes([times])).toBe(30);
  });

  it('takes the median gap, so one missed scrape does not double the interval', () => {
    expect(scrapeSecondsFromSampleTimes([[0, 15, 30, 60, 75, 90]])).toBe(15);
  });

  it('reads every series: a Pod gone before the window (no samples) does not hide the others', () => {
    // The first series is a replaced Pod's, empty in the probe's window; the serving Pod's is scraped every second.
    expect(scrapeSecondsFromSampleTimes([[], [100, 101, 102, 103]])).toBe(1);
  });

  it("falls back to the guide's 30 s with fewer than two sample times", () => {
    expect(scrapeSecondsFromSampleTimes([[42, 42, 42]])).toBe(30);
    expect(scrapeSecondsFromSampleTimes([])).toBe(30);
  });
});

describe('Function: estimateScrapeSeconds', () => {
  const NOW_MS = 1_700_000_000_000;
  const target = calibrationTarget(testInput());
  /** Sample times 15 s apart up to AMP's newest, repeated at every 1 s step as the range query returns them. */
  const times = (pod: string): RangeSeries => ({
    labels: { pod },
    points: Array.from({ length: 120 }, (_, i) => ({
      timestampMs: NOW_MS - 120_000 + i * 1000,
      value: (NOW_MS - 120_000) / 1000 + 15 * Math.floor(i / 15),
    })),
  });
  const newest = (value: number, labels: Record<string, string> = {}): InstantSample => ({
    labels,
    value,
    timestampMs: NOW_MS,
  });
  const source = (latest: InstantSample[], series: RangeSeries[]): MetricsSource => ({
    instant: () => Promise.resolve(latest),
    range: () => Promise.resolve(series),
  });

  it("reads the interval from every Pod's sample times up to the newest sample", async () => {
    // Act & Assess
    await expect(
      estimateScrapeSeconds(source([newest(NOW_MS / 1000 - 3)], [times('a'), times('b')]), target, NOW_MS),
    ).resolves.toBe(15);
  });

  it('refuses two series for the newest sample (a min() gives one), naming both label sets', async () => {
    // Prepare
    const two = [newest(NOW_MS / 1000, { cluster: 'a' }), newest(NOW_MS / 1000, { cluster: 'b' })];

    // Act
    const estimated = estimateScrapeSeconds(source(two, [times('a')]), target, NOW_MS);

    // Assess
    await expect(estimated).rejects.toThrow(MetricsMultipleSeriesError);
    await expect(estimated).rejects.toThrow('{"cluster":"a"}, {"cluster":"b"}');
  });

  it.each([
    { case: 'a negative newest sample time', latest: -1, point: 0, error: MetricsValueOutOfDomainError },
    { case: 'a +Inf newest sample time', latest: Infinity, point: 0, error: MetricsNonFiniteValueError },
    {
      case: 'a negative sample time in the range',
      latest: NOW_MS / 1000,
      point: -30,
      error: MetricsValueOutOfDomainError,
    },
    {
      case: 'a -Inf sample time in the range',
      latest: NOW_MS / 1000,
      point: -Infinity,
      error: MetricsNonFiniteValueError,
    },
  ])('refuses $case with a named error, never an interval', async ({ latest, point, error }) => {
    // Prepare
    const series = times('a');
    if (point !== 0) series.points[5] = { timestampMs: NOW_MS - 115_000, value: point };

    // Act & Assess
    await expect(estimateScrapeSeconds(source([newest(latest)], [series]), target, NOW_MS)).rejects.toThrow(error);
  });
});
