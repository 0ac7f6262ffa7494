import type { Target } from '../config/index.js';
/** One sample of an instant vector. */
export interface InstantSample {
  labels: Record<string, string>;
  value: number;
  /** Evaluation timestamp in epoch milliseconds. */
  timestampMs: number;
}

/** One series of a range query. */
export interface RangeSeries {
  labels: Record<string, string>;
  points: Array<{ timestampMs: number; value: number }>;
}

export interface InstantQueryOptions {
  /** Evaluation time in epoch ms; the server's "now" when omitted. */
  timeMs?: number;
  /** Cancels the request (and its retries). */
  signal?: AbortSignal;
}

export interface RangeQueryOptions {
  startMs: number;
  endMs: number;
  stepSeconds: number;
  signal?: AbortSignal;
}

/**
 * The MetricsSource port: PromQL instant and range queries against a Prometheus-compatible HTTP API
 * (Amazon Managed Prometheus in AWS, the twin's real Prometheus locally).
 */
export interface MetricsSource {
  instant(query: string, options?: InstantQueryOptions): Promise<InstantSample[]>;
  range(query: string, options: RangeQueryOptions): Promise<RangeSeries[]>;
}

/** CloudWatch units the catalog uses (a subset of the PutMetricData StandardUnit values). */
export type MetricUnit =
  'Seconds' | 'Milliseconds' | 'Count' | 'Count/Second' | 'Percent' | 'Megabytes' | 'Bytes' | 'None';

/** How a catalog query's result is broken down: one value for the target, one per Pod, or one per GPU. */
export type Breakdown = 'target' | 'pod' | 'gpu';

/** One value read from the catalog for a target, ready to become a CloudWatch datum. */
export interface CatalogReading {
  /** Catalog entry id, e.g. `e2e_latency_p95`. */
  queryId: string;
  /** The CloudWatch metric name, e.g. `E2ELatencyP95`. */
  metricName: string;
  tier: 1 | 2 | 3;
  unit: MetricUnit;
  value: number;
  /** Extra dimensions for per-Pod / per-GPU readings (`pod`, `gpu` = the GPU's UUID), empty for target-level. */
  dimensions: Record<string, string>;
}

/** The outcome of running the catalog for one target: what was read and which queries failed (and why). */
export interface CatalogResult {
  target: Target;
  timeMs: number;
  readings: CatalogReading[];
  failures: Array<{ queryId: string; error: Error }>;
  /** Queries with no value for a reason that is not a fault (no traffic yet, an optional DCGM field not enabled). */
  skipped: Array<{ queryId: string; reason: string }>;
}

/** One alerting rule as a Prometheus-compatible rules API reports it (AMP: GET .../api/v1/rules). */
export interface RegisteredAlertRule {
  group: string;
  name: string;
  /** `inactive` / `pending` / `firing`, when the API says. */
  state?: string;
}

/** The rules port: what alerting rules AMP (or the twin's Prometheus) has loaded. */
export interface AlertRulesSource {
  alertingRules(options?: { signal?: AbortSignal }): Promise<RegisteredAlertRule[]>;
}
