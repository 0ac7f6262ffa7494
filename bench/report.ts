import { formatNumber, table } from '../cli/output.js';
import type { CatalogBenchResult } from './catalogLatency.js';
import type { EngineBenchResult } from './engineThroughput.js';

/** Everything one `npm run bench` measured, as written to JSON. */
export interface BenchResults {
  startedAt: string;
  environment: { node: string; platform: string; cpu: string; cpus: number };
  engine: EngineBenchResult[];
  catalog: CatalogBenchResult;
  totalWallS: number;
}

/** The human-readable tables of a bench run. */
export function renderReport(results: BenchResults): string {
  const { environment: env, engine, catalog } = results;
  const engineTable = table(
    ['engine run', 'requests', 'sim s', 'wall s', 'CPU s', 'req / CPU s', 'sim s / wall s', 'steps', 'heap MiB'],
    engine.map((r) => [
      `${r.profile} @ ${r.rps} req/s (${r.shape.promptTokens}/${r.shape.maxTokens} tok)`,
      r.completed,
      r.simulatedS,
      r.wallS,
      r.cpuS,
      r.requestsPerCpuS,
      r.simulatedSecondsPerWallS,
      r.steps,
      r.heapUsedMiB,
    ]),
  );
  const { singleQuery: single, fullCatalog: full } = catalog;
  const queryTable = table(
    ['Prometheus query (HttpMetricsSource)', 'runs', 'median ms', 'p95 ms', 'min ms', 'max ms'],
    [
      [`one query: ${single.queryId}`, single.runs, single.medianMs, single.p95Ms, single.minMs, single.maxMs],
      [`full catalog: ${full.entries} entries`, full.runs, full.medianMs, full.p95Ms, full.minMs, full.maxMs],
    ],
  );
  return [
    `vllm-eks-pilot bench (${results.startedAt}): Node ${env.node} on ${env.platform}, ${env.cpus} x ${env.cpu}`,
    '',
    'Engine model on the virtual clock (evenly spaced arrivals, run until the queue drains):',
    engineTable,
    '',
    `Catalog queries against the twin's Prometheus ("${catalog.profile}", ${catalog.replicas} replicas, after ` +
      `${formatNumber(catalog.load.offeredRps)} req/s for ${formatNumber(catalog.load.durationS)} s; ` +
      `rate window ${catalog.rateWindow}):`,
    queryTable,
    `  last catalog read: ${full.readings} readings, ${full.skipped} skipped, ${full.failures} failed; ` +
      `the single query answered empty ${single.emptyAnswers} of ${single.runs} times.`,
    '',
    `Total ${formatNumber(results.totalWallS)} s.`,
  ].join('\n');
}
