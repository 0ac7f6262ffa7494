import type { Clock } from '../clock/index.js';
import type { MetricsSink } from '../cloudwatch/index.js';
import type { CatalogEntry, CatalogResult, MetricsSource } from '../metrics/index.js';
import type { Target } from '../config/index.js';
import type { LoggerPort } from '../log/index.js';

/** The shape of `readCatalog` (shared/metrics/readCatalog.ts), injectable so tests can stand in for it. */
export type ReadCatalogFn = (
  source: MetricsSource,
  target: Target,
  options: { timeMs: number; rateWindow?: string; signal?: AbortSignal; catalog?: readonly CatalogEntry[] },
) => Promise<CatalogResult>;

export interface CollectorDeps {
  /** The metrics source (AMP workspace or Prometheus) that holds `target`'s series. */
  sourceFor(target: Target): MetricsSource;
  sink: MetricsSink;
  /** Default: the real `readCatalog`. */
  readCatalog?: ReadCatalogFn;
  clock: Clock;
  logger?: LoggerPort;
}

export interface CollectOptions {
  /** CloudWatch namespace, e.g. `vLLM/EKSPilot`. */
  namespace: string;
  /** PromQL window of rates and quantiles (default: readCatalog's, `2m`). */
  rateWindow?: string;
  /** Targets collected at once. Default 2. */
  concurrency?: number;
  /** Fires before the Lambda deadline: targets not yet finished are reported as failed. */
  signal?: AbortSignal;
  /** Evaluation time, epoch ms (every query and every datum timestamp). Default: `clock.now()`. */
  timeMs?: number;
  /**
   * The catalog metric names to query and publish; default every entry. Fewer names, fewer CloudWatch series (the
   * largest item of the bill, docs/metrics-collector.md) and fewer AMP query samples.
   */
  metrics?: readonly string[];
}

export const TARGET_STATUS = { ok: 'ok', partial: 'partial', failed: 'failed' } as const;
export type TargetStatus = (typeof TARGET_STATUS)[keyof typeof TARGET_STATUS];

/** A query whose value did not reach CloudWatch because something went wrong. */
export interface CollectFailure {
  queryId: string;
  /** The error message. */
  error: string;
  /** The error class name (`MetricsHttpError`, `CloudWatchBatchFailedError`, ...). */
  name: string;
}

/** A query that had nothing to publish for a reason that is not a fault (no traffic, optional series absent, NaN). */
export interface CollectSkip {
  queryId: string;
  reason: string;
}

/** What happened to one target. `reason` says why it is not `ok`. */
export interface TargetCollectResult {
  target: string;
  status: TargetStatus;
  /** Datums CloudWatch accepted. */
  published: number;
  skipped: CollectSkip[];
  failures: CollectFailure[];
  reason?: string;
}

export interface CollectResult {
  /** Evaluation time, epoch ms. */
  timeMs: number;
  namespace: string;
  targets: TargetCollectResult[];
}
