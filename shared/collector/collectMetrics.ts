import { mapWithConcurrency } from '../util/index.js';
import type { PublishResult } from '../cloudwatch/index.js';
import { CATALOG, type CatalogEntry, type CatalogResult, readCatalog } from '../metrics/index.js';
import type { Target } from '../config/index.js';
import { toDatums } from './toDatums.js';
import {
  TARGET_STATUS,
  type CollectFailure,
  type CollectOptions,
  type CollectResult,
  type CollectSkip,
  type CollectorDeps,
  type TargetCollectResult,
} from './types.js';

const DEFAULT_CONCURRENCY = 2;

/**
 * Reads the metrics catalog of every target from its metrics source and publishes the readings to CloudWatch, a few
 * targets at a time. A target that fails (its source throws, every query fails, its publish fails) is reported with
 * its reason and does not stop the others; this function itself only rejects for bad options.
 */
export async function collectMetrics(
  deps: CollectorDeps,
  targets: readonly Target[],
  options: CollectOptions,
): Promise<CollectResult> {
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new RangeError(`concurrency: ${concurrency} is not valid; accepted: an integer >= 1`);
  const timeMs = options.timeMs ?? deps.clock.now();
  const catalog = selectCatalog(options.metrics);
  const results = await mapWithConcurrency(targets, concurrency, (target) =>
    collectTarget(deps, target, { ...options, timeMs, ...(catalog === undefined ? {} : { catalog }) }),
  );
  return { timeMs, namespace: options.namespace, targets: results };
}

/** The catalog entries of `metrics` (undefined: the whole catalog). Throws RangeError naming an unknown metric. */
function selectCatalog(metrics: readonly string[] | undefined): CatalogEntry[] | undefined {
  if (metrics === undefined) return undefined;
  const unknown = metrics.filter((name) => !CATALOG.some((entry) => entry.metricName === name));
  if (unknown.length > 0)
    throw new RangeError(
      `metrics: ${unknown.join(', ')} not in the catalog; accepted: ${CATALOG.map((e) => e.metricName).join(', ')}`,
    );
  return CATALOG.filter((entry) => metrics.includes(entry.metricName));
}

async function collectTarget(
  deps: CollectorDeps,
  target: Target,
  options: CollectOptions & { timeMs: number; catalog?: readonly CatalogEntry[] },
): Promise<TargetCollectResult> {
  const { signal } = options;
  if (signal?.aborted) return failed(target, `not started: the run was aborted (${describe(signal.reason)})`);

  let catalog: CatalogResult;
  try {
    const source = deps.sourceFor(target);
    catalog = await (deps.readCatalog ?? readCatalog)(source, target, {
      timeMs: options.timeMs,
      ...(options.rateWindow === undefined ? {} : { rateWindow: options.rateWindow }),
      ...(signal === undefined ? {} : { signal }),
      ...(options.catalog === undefined ? {} : { catalog: options.catalog }),
    });
  } catch (error) {
    return failed(target, `reading its metrics failed: ${describe(error)}`);
  }

  const failures: CollectFailure[] = catalog.failures.map(({ queryId, error }) => ({
    queryId,
    error: error.message,
    name: error.name,
  }));
  const skipped: CollectSkip[] = [...catalog.skipped];
  const queryCount = new Set([
    ...catalog.readings.map((r) => r.queryId),
    ...catalog.failures.map((f) => f.queryId),
    ...catalog.skipped.map((s) => s.queryId),
  ]).size;

  if (catalog.readings.length === 0) {
    const first = catalog.failures[0];
    if (first === undefined) return { target: target.name, status: TARGET_STATUS.ok, published: 0, skipped, failures };
    return {
      ...failed(
        target,
        `no query returned a value: ${failures.length} of ${queryCount} failed (first: ${describe(first.error)})`,
      ),
      skipped,
      failures,
    };
  }

  const datums = toDatums(target, catalog.readings, catalog.timeMs);
  const queryIdOf = (index: number): string => catalog.readings[index]?.queryId ?? `datum #${index}`;
  let publish: PublishResult;
  try {
    publish = await deps.sink.publish(options.namespace, datums, signal);
  } catch (error) {
    return { ...failed(target, `publishing to CloudWatch failed: ${describe(error)}`), skipped, failures };
  }

  for (const drop of publish.dropped)
    skipped.push({ queryId: queryIdOf(drop.index), reason: `not published: ${drop.reason}` });
  for (const batch of publish.failedBatches) {
    // A batch holds many datums; a per-Pod query may have several in it. One failure entry per query is enough.
    for (const queryId of new Set(batch.datumIndexes.map(queryIdOf)))
      failures.push({ queryId, error: batch.error.message, name: batch.error.name });
  }

  const result: TargetCollectResult = {
    target: target.name,
    status: TARGET_STATUS.ok,
    published: publish.published,
    skipped,
    failures,
  };
  if (publish.published === 0) {
    const firstBatch = publish.failedBatches[0];
    const firstDrop = publish.dropped[0];
    result.status = TARGET_STATUS.failed;
    result.reason =
      firstBatch !== undefined
        ? `publishing to CloudWatch failed: ${firstBatch.error.message}`
        : `no datum could be published: ${firstDrop?.metricName ?? '?'} ${firstDrop?.reason ?? ''}`.trim();
  } else if (failures.length > 0) {
    result.status = TARGET_STATUS.partial;
    const parts: string[] = [];
    if (catalog.failures.length > 0) parts.push(`${catalog.failures.length} of ${queryCount} queries failed`);
    if (publish.failedBatches.length > 0)
      parts.push(`${publish.failedBatches.length} of ${publish.requests} PutMetricData requests failed`);
    result.reason = parts.join('; ');
  }
  deps.logger?.debug('target collected', {
    target: target.name,
    status: result.status,
    datums: datums.length,
    published: result.published,
  });
  return result;
}

function failed(target: Target, reason: string): TargetCollectResult {
  return { target: target.name, status: TARGET_STATUS.failed, published: 0, skipped: [], failures: [], reason };
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
