import { performance } from 'node:perf_hooks';
import {
  type Profile,
  runConstantArrivalLoad,
  startTwin,
  twinMetricsSource,
  twinTarget,
} from '../sim/harness/index.js';
import { CATALOG, readCatalog } from '../shared/metrics/index.js';
import { quantile } from '../shared/util/index.js';
import { BenchError } from './errors.js';

export interface CatalogBenchOptions {
  profile: Profile;
  /** Light load offered before measuring, so rates and quantiles have values. */
  warmupRps: number;
  warmupS: number;
  /** Repetitions of the single query and of the full catalog read. */
  queryRuns: number;
  catalogRuns: number;
  rateWindow: string;
  log: (line: string) => void;
}

/** Median and p95 of a series of timings, in milliseconds. */
export interface LatencyFigures {
  runs: number;
  medianMs: number;
  p95Ms: number;
  minMs: number;
  maxMs: number;
}

export interface CatalogBenchResult {
  profile: string;
  replicas: number;
  rateWindow: string;
  load: { offeredRps: number; durationS: number; completed: number; failed: number };
  /** One representative query (the catalog's e2e p95) through HttpMetricsSource.instant. */
  singleQuery: LatencyFigures & { queryId: string; query: string; emptyAnswers: number };
  /** The whole catalog through readCatalog (entries run four at a time). */
  fullCatalog: LatencyFigures & { entries: number; readings: number; skipped: number; failures: number };
}

const REPRESENTATIVE_QUERY = 'e2e_latency_p95';

/** Timing figures of `samplesMs`, with quantiles by linear interpolation (shared/util/stats.ts). */
export function latencyFigures(samplesMs: readonly number[]): LatencyFigures {
  return {
    runs: samplesMs.length,
    medianMs: quantile(samplesMs, 0.5),
    p95Ms: quantile(samplesMs, 0.95),
    minMs: Math.min(...samplesMs),
    maxMs: Math.max(...samplesMs),
  };
}

/**
 * Starts a twin (real Prometheus), offers light load, then times PromQL through the product's AMP client
 * (HttpMetricsSource, SigV4-signed as for AMP): one query many times, then the whole catalog. Stops the twin always.
 */
export async function benchCatalog(options: CatalogBenchOptions): Promise<CatalogBenchResult> {
  const { profile, log } = options;
  const entry = CATALOG.find((e) => e.id === REPRESENTATIVE_QUERY);
  if (entry === undefined) throw new BenchError(`the catalog has no entry "${REPRESENTATIVE_QUERY}"`);
  log(`starting the "${profile.name}" twin (${profile.replicas} replicas, real Prometheus)`);
  const twin = await startTwin({ profile, log: (line) => log(`  ${line}`) });
  try {
    const { state } = twin;
    log(`offering ${options.warmupRps} req/s for ${options.warmupS} s`);
    const load = await runConstantArrivalLoad({
      urls: state.replicas.map((r) => r.url),
      model: state.model,
      rps: options.warmupRps,
      durationS: options.warmupS,
      promptTokens: 35,
      maxTokens: 32,
    });
    // One more scrape, so the last requests are in Prometheus too.
    await new Promise((done) => setTimeout(done, profile.prometheus.scrapeIntervalSeconds * 1000 + 500));

    const source = twinMetricsSource(state);
    const target = twinTarget(state);
    const query = entry.build(target, { rateWindow: options.rateWindow });

    log(`timing "${REPRESENTATIVE_QUERY}" ${options.queryRuns} times`);
    const singleMs: number[] = [];
    let emptyAnswers = 0;
    for (let i = 0; i < options.queryRuns; i++) {
      const startedAt = performance.now();
      const samples = await source.instant(query, { timeMs: Date.now() });
      singleMs.push(performance.now() - startedAt);
      if (samples.length === 0) emptyAnswers += 1;
    }

    log(`timing the full catalog (${CATALOG.length} entries) ${options.catalogRuns} times`);
    const catalogMs: number[] = [];
    let last = { readings: 0, skipped: 0, failures: 0 };
    for (let i = 0; i < options.catalogRuns; i++) {
      const startedAt = performance.now();
      const result = await readCatalog(source, target, { timeMs: Date.now(), rateWindow: options.rateWindow });
      catalogMs.push(performance.now() - startedAt);
      last = { readings: result.readings.length, skipped: result.skipped.length, failures: result.failures.length };
    }

    return {
      profile: profile.name,
      replicas: state.replicas.length,
      rateWindow: options.rateWindow,
      load: {
        offeredRps: load.offeredRps,
        durationS: load.durationS,
        completed: load.completed,
        failed: load.failed,
      },
      singleQuery: { ...latencyFigures(singleMs), queryId: REPRESENTATIVE_QUERY, query, emptyAnswers },
      fullCatalog: { ...latencyFigures(catalogMs), entries: CATALOG.length, ...last },
    };
  } finally {
    log('stopping the twin');
    await twin.stop();
  }
}
