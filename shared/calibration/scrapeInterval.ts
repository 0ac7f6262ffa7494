/**
 * The scrape interval of the target's series, as AMP shows it (AMP does not expose the scrape configuration): the
 * probe window divided by the samples one series has in it. Counted up to AMP's newest sample, not up to now: with
 * an ingestion lag, the last seconds before now hold no sample yet, and a probe ending now would see too few samples
 * and take the interval for longer than it is.
 */
import type { Target } from '../config/index.js';
import type { MetricsSource } from '../metrics/index.js';
import { READINESS_RULES } from './rules.js';
import { latestSampleQuery, scrapeSamplesQuery } from './stepQueries.js';

export async function estimateScrapeSeconds(source: MetricsSource, target: Target, nowMs: number): Promise<number> {
  const latest = (await source.instant(latestSampleQuery(target), { timeMs: nowMs }))[0]?.value;
  const atMs = latest === undefined || !Number.isFinite(latest) ? nowMs : Math.min(nowMs, Math.round(latest * 1000));
  const probe = await source.instant(scrapeSamplesQuery(target, READINESS_RULES.scrapeProbeSeconds), { timeMs: atMs });
  const scrapes = probe[0]?.value ?? 0;
  return scrapes >= 2 ? READINESS_RULES.scrapeProbeSeconds / scrapes : READINESS_RULES.defaultScrapeIntervalSeconds;
}
