/**
 * The scrape interval of the target's series, as AMP shows it (AMP does not expose the scrape configuration): the
 * median gap between the distinct sample times of the target's series over the last two minutes AMP holds. Counted
 * up to AMP's newest sample, not up to now: with an ingestion lag the last seconds before now hold no sample yet. (A count of
 * samples in a window is biased: a 60 s window holds 3 samples 30 s apart when both ends fall on one.) Both answers
 * pass the shared AMP answer guard: sample times are Unix seconds, the newest one a single series.
 */
import type { Target } from '../config/index.js';
import type { MetricsSource } from '../metrics/index.js';
import { guardSeries, guardSingleValue, VALUE_DOMAIN, vllmSelector, VLLM } from '../metrics/index.js';
import { READINESS_RULES } from './rules.js';
import { latestSampleQuery } from './stepQueries.js';

/** How far back the sample times are read. */
const PROBE_SECONDS = 120;

/** The scrape interval in seconds; several series for the newest sample, a negative time or ±Inf is a named error. */
export async function estimateScrapeSeconds(source: MetricsSource, target: Target, nowMs: number): Promise<number> {
  const latestQuery = latestSampleQuery(target);
  const latest = guardSingleValue(
    await source.instant(latestQuery, { timeMs: nowMs }),
    VALUE_DOMAIN.timestamp,
    latestQuery,
  );
  const endMs = latest === undefined ? nowMs : Math.min(nowMs, Math.round(latest * 1000));
  const timesQuery = `timestamp(${vllmSelector(target, VLLM.numRequestsRunning)})`;
  const series = guardSeries(
    await source.range(timesQuery, { startMs: endMs - PROBE_SECONDS * 1000, endMs, stepSeconds: 1 }),
    VALUE_DOMAIN.timestamp,
    timesQuery,
  );
  // Every series counts: one of them may be a Pod gone before the probe's window (no points) or replaced within it.
  return scrapeSecondsFromSampleTimes(series.map((one) => one.points.map((p) => p.value)));
}

/**
 * The median gap between the distinct sample times of each series (seconds), over all series; the guide's 30 s when
 * no series has two.
 */
export function scrapeSecondsFromSampleTimes(seriesSampleTimesSeconds: readonly (readonly number[])[]): number {
  const gaps = seriesSampleTimesSeconds.flatMap((sampleTimes) => {
    const times = [...new Set(sampleTimes.filter((t) => Number.isFinite(t)))].sort((a, b) => a - b);
    return times.slice(1).map((t, i) => t - (times[i] as number));
  });
  if (gaps.length === 0) return READINESS_RULES.defaultScrapeIntervalSeconds;
  const sorted = gaps.sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}
