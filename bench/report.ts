import { formatNumber, table } from '../cli/output.js';
import { formatDurationSeconds } from '../shared/alerts/format.js';
import type { AlertBenchResult, AlertCycleCost } from './alerts.js';
import type { CatalogBenchResult } from './catalogLatency.js';
import type { EngineBenchResult } from './engineThroughput.js';

/** Everything one `npm run bench` measured, as written to JSON. */
export interface BenchResults {
  startedAt: string;
  environment: { node: string; platform: string; cpu: string; cpus: number };
  /** Sections left out with `--only` are absent. */
  engine?: EngineBenchResult[];
  catalog?: CatalogBenchResult;
  alerts?: AlertBenchResult;
  totalWallS: number;
}

/** The human-readable tables of a bench run. */
export function renderReport(results: BenchResults): string {
  const { environment: env, engine, catalog, alerts } = results;
  const sections = [
    `vllm-eks-pilot bench (${results.startedAt}): Node ${env.node} on ${env.platform}, ${env.cpus} x ${env.cpu}`,
  ];
  if (engine !== undefined) sections.push(renderEngine(engine));
  if (catalog !== undefined) sections.push(renderCatalog(catalog));
  if (alerts !== undefined) sections.push(renderAlerts(alerts));
  sections.push(`Total ${formatNumber(results.totalWallS)} s.`);
  return sections.join('\n\n');
}

function renderEngine(engine: readonly EngineBenchResult[]): string {
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
  return ['Engine model on the virtual clock (evenly spaced arrivals, run until the queue drains):', engineTable].join(
    '\n',
  );
}

function renderCatalog(catalog: CatalogBenchResult): string {
  const { singleQuery: single, fullCatalog: full } = catalog;
  const queryTable = table(
    ['Prometheus query (HttpMetricsSource)', 'runs', 'median ms', 'p95 ms', 'min ms', 'max ms'],
    [
      [`one query: ${single.queryId}`, single.runs, single.medianMs, single.p95Ms, single.minMs, single.maxMs],
      [`full catalog: ${full.entries} entries`, full.runs, full.medianMs, full.p95Ms, full.minMs, full.maxMs],
    ],
  );
  return [
    `Catalog queries against the twin's Prometheus ("${catalog.profile}", ${catalog.replicas} replicas, after ` +
      `${formatNumber(catalog.load.offeredRps)} req/s for ${formatNumber(catalog.load.durationS)} s; ` +
      `rate window ${catalog.rateWindow}):`,
    queryTable,
    `  last catalog read: ${full.readings} readings, ${full.skipped} skipped, ${full.failures} failed; ` +
      `the single query answered empty ${single.emptyAnswers} of ${single.runs} times.`,
  ].join('\n');
}

/** A figure or "not seen" (the message did not arrive in time). */
const seconds = (value: number | null): number | string => (value === null ? 'not seen' : value);
const duration = (s: number): string => (s === 0 ? 'none' : formatDurationSeconds(s));

function renderAlerts(alerts: AlertBenchResult): string {
  const settings =
    alerts.mode === 'quick'
      ? `--quick: the guide's for and rate windows divided by ${alerts.quickScale ?? ''}`
      : "the guide's for and rate windows";
  const timingTable = table(
    ['alert', 'fault', 'for', 'window', 'onset→SNS (s)', 'onset→SNS − for (s)', 'clear→resolved (s)'],
    alerts.timings.map((t) => [
      `${t.alertname} (${t.severity})`,
      t.fault,
      duration(t.forSeconds),
      t.windowSeconds === 0 ? '-' : formatDurationSeconds(t.windowSeconds),
      seconds(t.onsetToFiringS),
      seconds(t.afterForS),
      seconds(t.clearToResolvedS),
    ]),
  );
  const notes = alerts.timings.flatMap((t) => t.notes.map((note) => `  ${t.alertname}: ${note}`));
  const concurrent = alerts.timings.filter((t) => t.phase === 'concurrent').length;
  const load = alerts.latencyLoad;
  const interval = alerts.productionIntervalS;
  const lines = [
    `Alerts on the twin ("${alerts.profile}", vLLM ${alerts.vllmVersion}; ${settings}):`,
    `${concurrent} faults at once, each on its own Pod of a ${alerts.replicas.faults}-replica twin; the latency fault ` +
      `alone on one Pod of a ${alerts.replicas.latency}-replica twin, under ${load?.offeredRps ?? '-'} req/s through ` +
      `its Service (${load?.baselineS ?? '-'} s of healthy traffic before the fault). Each fault is cleared as soon as ` +
      'its firing message reached SNS.',
    timingTable,
    ...notes,
    `  The real alert-evaluator handler ran every ${formatNumber(alerts.evaluators[0]?.intervalS ?? Number.NaN)} s; ` +
      `production runs it every ${interval} s, so detection there adds up to one schedule interval (${interval} s, ` +
      `${interval / 2} s on average) to onset→SNS and to clear→resolved.`,
    '  onset→SNS − for: the time the value takes to cross its threshold (a rate window filling, slow requests ' +
      'finishing), plus the scrape, the subquery step and the wait for the next evaluation.',
    ...alerts.evaluators.map(
      (ev) =>
        `  Evaluator on the ${ev.twin} twin: ${ev.runs} runs, median ${formatNumber(ev.medianMs)} ms, p95 ` +
        `${formatNumber(ev.p95Ms)} ms, max ${formatNumber(ev.maxMs)} ms; ${ev.skippedTicks} ticks skipped (previous ` +
        `run still going); ${ev.runsWithProblems} runs with problems.`,
    ),
    alerts.otherNotifications.length === 0
      ? '  Other notifications: none.'
      : `  Other notifications (not explained by a scenario): ${alerts.otherNotifications
          .map((n) => `[${n.twin}] ${n.alertname} ${n.status} (${n.reason}) ${n.where} at ${formatNumber(n.atS)} s`)
          .join('; ')}.`,
  ];
  for (const cost of alerts.cost) lines.push('', ...renderCost(cost, alerts));
  return lines.join('\n');
}

/** A large count as people say it: 4096800 → "4.1 million". */
function count(n: number): string {
  if (n >= 1e9) return `${formatNumber(n / 1e9)} billion`;
  if (n >= 1e6) return `${formatNumber(n / 1e6)} million`;
  return formatNumber(n);
}

function renderCost(cost: AlertCycleCost, alerts: AlertBenchResult): string[] {
  const samples = (n: number | null): number | string => (n === null ? 'not reported' : n);
  const costTable = table(
    ['alert', 'queries', 'samples touched', 'peak samples'],
    [
      ...cost.rules.map((r) => [r.alertname, r.queries, samples(r.samplesTouched), samples(r.peakSamples)]),
      ['total per cycle', cost.totals.queries, samples(cost.totals.samplesTouched), ''],
    ],
  );
  const which =
    cost.settings === alerts.mode
      ? `the settings above`
      : `the guide's settings, over the ${cost.historyS} s of history the quick run left (longer windows touch more in production)`;
  const perDay = cost.totals.samplesTouched === null ? undefined : cost.totals.samplesTouched * 1440;
  return [
    `PromQL cost of one evaluation cycle with ${which} (the queries evaluateTarget sends, POSTed to the twin's ` +
      `Prometheus with stats=all; samples = data.stats.samples.totalQueryableSamples; the ${alerts.replicas.faults}-Pod twin):`,
    costTable,
    perDay === undefined
      ? '  Prometheus did not report the samples.'
      : `  At one cycle a minute: ${count(perDay)} samples a day, ${count(perDay * 30)} in 30 days ` +
        '(AMP bills query samples processed; it scales with the number of Pods and GPUs).',
  ];
}
