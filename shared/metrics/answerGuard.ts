/**
 * The guard every AMP answer passes before it becomes a number that is published, alerted on or used to derive a
 * threshold (KEDA's prometheus_scaler.go treats each bad answer apart): several series where one is expected, values
 * outside their metric's domain, non-finite values, too many series. NaN keeps its PromQL meaning, "no data" (an
 * idle rate window): the caller decides what no data means; +Inf and -Inf are always errors.
 */
import {
  type MetricsError,
  MetricsMissingLabelError,
  MetricsMultipleSeriesError,
  MetricsNonFiniteValueError,
  MetricsTooManySeriesError,
  MetricsValueOutOfDomainError,
} from './errors.js';
import { VALUE_DOMAIN, type ValueDomain } from './names.js';
import type { InstantSample, MetricUnit, RangeSeries } from './types.js';

/** Checks one value against its domain and returns it; NaN is returned as is (no data). */
export function guardValue(
  value: number,
  domain: ValueDomain,
  context: { query?: string; labels?: Record<string, string> } = {},
): number {
  if (Number.isNaN(value)) return value;
  const labels = context.labels ?? {};
  const options = context.query === undefined ? {} : { query: context.query };
  if (!Number.isFinite(value)) throw new MetricsNonFiniteValueError(value, labels, options);
  if (value < domain.min || value > domain.max) {
    throw new MetricsValueOutOfDomainError(value, domain.name, labels, options);
  }
  return value;
}

/** Checks every sample of an instant answer against `domain`; returns them unchanged (NaN samples included). */
export function guardSamples<T extends InstantSample>(samples: readonly T[], domain: ValueDomain, query: string): T[] {
  for (const sample of samples) guardValue(sample.value, domain, { query, labels: sample.labels });
  return [...samples];
}

/**
 * The values of a per-label answer with one series per label value (`sum by (pod) (...)`), keyed by that label:
 * each value in `domain` or a named error; a series without the label (MetricsMissingLabelError) and two series for
 * one label value (MetricsMultipleSeriesError, naming them) are errors too. NaN samples are left out (no data).
 */
export function guardByLabel(
  samples: readonly InstantSample[],
  label: string,
  domain: ValueDomain,
  query: string,
): Map<string, number> {
  const out = new Map<string, number>();
  const seen = new Set<string>();
  for (const sample of samples) {
    const key = sample.labels[label];
    if (key === undefined || key === '') throw new MetricsMissingLabelError(label, sample.labels, { query });
    if (seen.has(key)) {
      throw new MetricsMultipleSeriesError(
        samples.filter((s) => s.labels[label] === key).map((s) => s.labels),
        `one series per ${label}`,
        { query },
      );
    }
    seen.add(key);
    const value = guardValue(sample.value, domain, { query, labels: sample.labels });
    if (!Number.isNaN(value)) out.set(key, value);
  }
  return out;
}

/** Checks every point of every series of a range answer (several series expected, e.g. one per Pod); unchanged. */
export function guardSeries<T extends RangeSeries>(series: readonly T[], domain: ValueDomain, query: string): T[] {
  for (const one of series) {
    for (const point of one.points) guardValue(point.value, domain, { query, labels: one.labels });
  }
  return [...series];
}

/**
 * The one value of an answer that aggregates to one series: undefined for no data (no series, or NaN), the value
 * when it lies in `domain`; several series, ±Inf and out-of-domain values are named errors.
 */
export function guardSingleValue(
  samples: readonly InstantSample[],
  domain: ValueDomain,
  query: string,
): number | undefined {
  if (samples.length > 1) {
    throw new MetricsMultipleSeriesError(
      samples.map((sample) => sample.labels),
      'exactly one series',
      { query },
    );
  }
  const [first] = samples;
  if (first === undefined) return undefined;
  const value = guardValue(first.value, domain, { query, labels: first.labels });
  return Number.isNaN(value) ? undefined : value;
}

/**
 * The points of a range answer that aggregates to one series, NaN points dropped (no data); several series, ±Inf
 * and out-of-domain points are named errors.
 */
export function guardSinglePoints(
  series: readonly RangeSeries[],
  domain: ValueDomain,
  query: string,
): Array<{ timestampMs: number; value: number }> {
  if (series.length > 1) {
    throw new MetricsMultipleSeriesError(
      series.map((s) => s.labels),
      'exactly one series',
      { query },
    );
  }
  const [first] = series;
  if (first === undefined) return [];
  return first.points.filter(
    (point) => !Number.isNaN(guardValue(point.value, domain, { query, labels: first.labels })),
  );
}

/**
 * Whether `error` is the guard refusing an answer that came (several series, a value outside its domain, ±Inf, a
 * missing label, too many series), as opposed to a failure to ask: a check reports it as its finding.
 */
export function isRefusedAnswer(error: unknown): error is MetricsError {
  return (
    error instanceof MetricsMultipleSeriesError ||
    error instanceof MetricsNonFiniteValueError ||
    error instanceof MetricsValueOutOfDomainError ||
    error instanceof MetricsMissingLabelError ||
    error instanceof MetricsTooManySeriesError
  );
}

/** Refuses an answer with more than `cap` series (e.g. alert instances of one rule) before anything is built. */
export function guardSeriesCount(count: number, cap: number, query: string): void {
  if (count > cap) throw new MetricsTooManySeriesError(count, cap, { query });
}

/** The domain of a catalog reading from its CloudWatch unit: Percent is 0-100, every other unit >= 0. */
export function domainOfUnit(unit: MetricUnit): ValueDomain {
  return unit === 'Percent' ? VALUE_DOMAIN.percent : VALUE_DOMAIN.nonNegative;
}
