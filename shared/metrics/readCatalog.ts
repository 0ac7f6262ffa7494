/**
 * Runs the catalog for one target and turns the answers into readings. One bad query never sinks the others: its
 * error becomes a `failures` entry; an expected absence (no traffic, an optional series) becomes a `skipped` entry.
 */
import { mapWithConcurrency } from '../util/index.js';
import { domainOfUnit, guardValue } from './answerGuard.js';
import { CATALOG, type CatalogEntry } from './catalog.js';
import { DCGM_LABELS, assertDuration, assertTarget } from './promql.js';
import type { CatalogReading, CatalogResult, InstantSample, MetricsSource } from './types.js';
import type { Target } from '../config/index.js';
import {
  MetricsEmptyResultError,
  MetricsInvalidOptionError,
  MetricsMissingLabelError,
  MetricsMultipleSeriesError,
  MetricsNonFiniteValueError,
} from './errors.js';

export interface ReadCatalogOptions {
  /** Evaluation time of every query, epoch ms (the caller's clock; also `CatalogResult.timeMs`). */
  timeMs: number;
  /** Window of rates and quantiles. Default `2m`: at least four samples at the guide's 30 s scrape interval. */
  rateWindow?: string;
  /** Cancels the queries not yet answered (they end up as failures). */
  signal?: AbortSignal;
  catalog?: readonly CatalogEntry[];
  /** Queries in flight at once. Default 4: enough to finish quickly without bursting into AMP's query limits. */
  concurrency?: number;
}

type Outcome =
  | { kind: 'readings'; readings: CatalogReading[] }
  | { kind: 'failure'; error: Error }
  | { kind: 'skipped'; reason: string };

/** Reads every catalog entry for `target` at `timeMs`, a few queries at a time. Never rejects for a query's error. */
export async function readCatalog(
  source: MetricsSource,
  target: Target,
  options: ReadCatalogOptions,
): Promise<CatalogResult> {
  const { timeMs, rateWindow = '2m', signal, catalog = CATALOG, concurrency = 4 } = options;
  if (!Number.isFinite(timeMs)) {
    throw new MetricsInvalidOptionError('timeMs', `got ${String(timeMs)}`, 'epoch milliseconds (a finite number)');
  }
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new MetricsInvalidOptionError('concurrency', `got ${String(concurrency)}`, 'an integer >= 1');
  }
  assertDuration(rateWindow);
  // A bad target is a configuration error for the caller to fix, not a per-query failure.
  assertTarget(target);

  const outcomes = await mapWithConcurrency(catalog, concurrency, (entry) =>
    readEntry(source, target, entry, { timeMs, rateWindow, signal }),
  );

  // Results keep catalog order, whatever order the answers came in, so two runs compare line by line.
  const result: CatalogResult = { target, timeMs, readings: [], failures: [], skipped: [] };
  catalog.forEach((entry, index) => {
    const outcome = outcomes[index];
    if (outcome === undefined) return;
    if (outcome.kind === 'readings') result.readings.push(...outcome.readings);
    else if (outcome.kind === 'failure') result.failures.push({ queryId: entry.id, error: outcome.error });
    else result.skipped.push({ queryId: entry.id, reason: outcome.reason });
  });
  return result;
}

async function readEntry(
  source: MetricsSource,
  target: Target,
  entry: CatalogEntry,
  context: { timeMs: number; rateWindow: string; signal: AbortSignal | undefined },
): Promise<Outcome> {
  let query: string | undefined;
  try {
    query = entry.build(target, { rateWindow: context.rateWindow });
    const samples = await source.instant(query, {
      timeMs: context.timeMs,
      ...(context.signal === undefined ? {} : { signal: context.signal }),
    });
    return toOutcome(entry, samples, query, context.rateWindow);
  } catch (error) {
    return { kind: 'failure', error: error instanceof Error ? error : new Error(String(error)) };
  }
}

function toOutcome(entry: CatalogEntry, samples: InstantSample[], query: string, rateWindow: string): Outcome {
  // A needsTraffic query already drops NaN in PromQL; a stray NaN from another catalog is read the same way.
  const usable = entry.needsTraffic === true ? samples.filter((s) => !Number.isNaN(s.value)) : samples;
  if (usable.length === 0) {
    if (entry.needsTraffic === true) {
      return {
        kind: 'skipped',
        reason: `no value: ${entry.title} needs requests within the last ${rateWindow} (empty or NaN while idle)`,
      };
    }
    if (entry.optional === true) {
      return { kind: 'skipped', reason: `no series: ${entry.title} is optional and its source series is absent` };
    }
    throw new MetricsEmptyResultError({ query });
  }

  const readings: CatalogReading[] = [];
  const seen = new Set<string>();
  for (const sample of usable) {
    // NaN outside a needsTraffic entry is a fault; ±Inf and values outside the unit's domain always are.
    if (Number.isNaN(sample.value)) throw new MetricsNonFiniteValueError(sample.value, sample.labels, { query });
    guardValue(sample.value, domainOfUnit(entry.unit), { query, labels: sample.labels });
    const dimensions = dimensionsOf(entry, sample.labels, query);
    const key = JSON.stringify(dimensions);
    if (seen.has(key)) {
      throw new MetricsMultipleSeriesError(
        usable.map((s) => s.labels),
        entry.breakdown === 'target' ? 'one series for the target' : `one series per ${entry.breakdown}`,
        { query },
      );
    }
    seen.add(key);
    readings.push({
      queryId: entry.id,
      metricName: entry.metricName,
      tier: entry.tier,
      unit: entry.unit,
      value: sample.value,
      dimensions,
    });
  }
  return { kind: 'readings', readings };
}

/** Target readings have no extra dimension; Pod readings carry `pod`; GPU readings `gpu` (UUID) and `pod` if known. */
function dimensionsOf(entry: CatalogEntry, labels: Record<string, string>, query: string): Record<string, string> {
  switch (entry.breakdown) {
    case 'target':
      return {};
    case 'pod': {
      const pod = labels.pod;
      if (pod === undefined || pod === '') throw new MetricsMissingLabelError('pod', labels, { query });
      return { pod };
    }
    case 'gpu': {
      const uuid = labels[DCGM_LABELS.uuid];
      if (uuid === undefined || uuid === '') throw new MetricsMissingLabelError(DCGM_LABELS.uuid, labels, { query });
      const pod = labels[DCGM_LABELS.pod];
      return pod === undefined || pod === '' ? { gpu: uuid } : { gpu: uuid, pod };
    }
  }
}
