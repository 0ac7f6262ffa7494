import { cpus, platform } from 'node:os';
import { formatNumber, table } from '../cli/output.js';
import { formatDurationSeconds } from '../shared/alerts/index.js';
import { type AlertBenchResult, type AlertCycleCost, DETECTION_BUDGET_S } from './alerts.js';
import type { BundleBenchResult } from './bundles.js';
import type { CatalogBenchResult } from './catalogLatency.js';
import type { CostBenchResult, PricedSetting } from './cost.js';
import { FREE_TIERS, PRICES, type Price } from './prices.js';
import type { EngineBenchResult } from './engineThroughput.js';
import type { WhatIfBenchResult } from './whatif.js';

/** The machine a benchmark ran on, as every benchmark's JSON and header report it. */
export interface BenchEnvironment {
  node: string;
  platform: string;
  cpu: string;
  cpus: number;
}

/** This machine: Node version, OS and architecture, CPU model and count. */
export function benchEnvironment(): BenchEnvironment {
  const cpu = cpus();
  return {
    node: process.version,
    platform: `${platform()} ${process.arch}`,
    cpu: cpu[0]?.model ?? 'unknown',
    cpus: cpu.length,
  };
}

/** Everything one `npm run bench` measured, as written to JSON. */
export interface BenchResults {
  startedAt: string;
  environment: BenchEnvironment;
  /** Sections left out with `--only` are absent. */
  engine?: EngineBenchResult[];
  catalog?: CatalogBenchResult;
  alerts?: AlertBenchResult;
  bundles?: BundleBenchResult;
  cost?: CostBenchResult;
  whatif?: WhatIfBenchResult;
  /** Wall seconds of each section that ran. */
  sectionWallS?: Record<string, number>;
  totalWallS: number;
}

/** The human-readable tables of a bench run. */
export function renderReport(results: BenchResults): string {
  const { environment: env, engine, catalog, alerts, bundles, cost, whatif } = results;
  const sections = [
    `vllm-eks-pilot bench (${results.startedAt}): Node ${env.node} on ${env.platform}, ${env.cpus} x ${env.cpu}`,
  ];
  if (engine !== undefined) sections.push(renderEngine(engine));
  if (catalog !== undefined) sections.push(renderCatalog(catalog));
  if (alerts !== undefined) sections.push(renderAlerts(alerts));
  if (bundles !== undefined) sections.push(renderBundles(bundles));
  if (cost !== undefined) sections.push(renderMonthlyCost(cost), renderPricedCost(cost));
  if (whatif !== undefined) sections.push(renderWhatIf(whatif));
  const bySection = Object.entries(results.sectionWallS ?? {}).map(([name, s]) => `${name} ${formatNumber(s)} s`);
  sections.push(
    `Total ${formatNumber(results.totalWallS)} s${bySection.length > 0 ? ` (${bySection.join(', ')})` : ''}.`,
  );
  return sections.join('\n\n');
}

function renderWhatIf(whatif: WhatIfBenchResult): string {
  const replays = table(
    ['candidate', 'replay wall s', 'SLO met', 'GPU-hours'],
    whatif.replays.map((r) => [r.candidate, r.wallS, `${formatNumber(r.sloAttainment * 100)} %`, r.gpuHours]),
  );
  return [
    `What-if replay of ${whatif.trace} (${formatNumber(whatif.traceSeconds / 3600)} h) on ${whatif.profile}: ` +
      `curve measured with the engine in ${formatNumber(whatif.modelS)} s, ${whatif.replays.length} replays, ` +
      `${formatNumber(whatif.totalS)} s in all:`,
    replays,
  ].join('\n');
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
  const lagged = new Map((alerts.lagged?.timings ?? []).map((t) => [t.alertname, t]));
  const budget = (t: AlertBenchResult['timings'][number]) =>
    t.withinBudget === null ? 'not seen' : t.withinBudget ? 'yes' : 'NO';
  const lag = alerts.lagged?.amp;
  const timingTable = table(
    [
      'alert',
      'fault',
      'for',
      'window',
      'onset→SNS (s)',
      'onset→SNS − for (s)',
      'condition after onset (s)',
      'detection (s)',
      `≤ ${DETECTION_BUDGET_S} s`,
      'clear→resolved (s)',
      ...(lag === undefined ? [] : ['lagged onset→SNS (s)', 'lagged detection (s)', 'lagged clear→resolved (s)']),
    ],
    alerts.timings.map((t) => {
      const l = lagged.get(t.alertname);
      return [
        `${t.alertname} (${t.severity})`,
        t.fault,
        duration(t.forSeconds),
        t.windowSeconds === 0 ? '-' : formatDurationSeconds(t.windowSeconds),
        seconds(t.onsetToFiringS),
        seconds(t.afterForS),
        seconds(t.conditionAfterOnsetS),
        seconds(t.detectionS),
        budget(t),
        seconds(t.clearToResolvedS),
        ...(lag === undefined
          ? []
          : [seconds(l?.onsetToFiringS ?? null), seconds(l?.detectionS ?? null), seconds(l?.clearToResolvedS ?? null)]),
      ];
    }),
  );
  const notes = [
    ...alerts.timings.flatMap((t) => t.notes.map((note) => `  ${t.alertname}: ${note}`)),
    ...(alerts.lagged?.timings ?? []).flatMap((t) => t.notes.map((note) => `  ${t.alertname} (lagged): ${note}`)),
  ];
  const concurrent = alerts.timings.filter((t) => t.phase === 'concurrent').length;
  const load = alerts.latencyLoad;
  const { evaluationIntervalS, schedulePeriodS } = alerts.cadence;
  const lines = [
    `Alerts on the twin, ${alerts.engine} engine ("${alerts.profile}", vLLM ${alerts.vllmVersion}; ${settings}):`,
    `${concurrent} faults at once, each on its own Pod of a ${alerts.replicas.faults}-replica twin; the latency fault ` +
      `alone on one Pod of a ${alerts.replicas.latency}-replica twin, under ${load?.offeredRps ?? '-'} req/s through ` +
      `its Service (${load?.baselineS ?? '-'} s of healthy traffic before the fault), then every Pod's metrics gone ` +
      '(the absent alert). Each fault is cleared as soon as its firing message reached SNS.',
    `First on lag-free twins (AMP's ingestion lag 0)${
      lag === undefined
        ? ''
        : `, then on twins with AMP's lag (${lag.ingestionLagSeconds} s ± ${lag.ingestionJitterSeconds} s): the lagged columns`
    }.`,
    timingTable,
    ...notes,
    `  The real alert-evaluator handler was invoked every ${schedulePeriodS} s and ran ${schedulePeriodS / evaluationIntervalS} ` +
      `cycles ${evaluationIntervalS} s apart (production: every ${alerts.productionIntervalS} s, four cycles 15 s apart), ` +
      `so a condition held for its \`for\` is seen within one interval (${evaluationIntervalS} s).`,
    '  onset→SNS − for: the time the value takes to cross its threshold (a rate window filling, slow requests ' +
      "finishing), plus the scrape, the subquery step, the wait for the next cycle, and AMP's lag in the lagged run. " +
      "condition after onset: when the rule's condition first held (its exported expression over the twin's " +
      `Prometheus, 1 s steps). detection: SNS − (condition + for), what the evaluation adds; ≤ ${DETECTION_BUDGET_S} s ` +
      "is issue 16's promise on a lag-free twin.",
    ...[...alerts.evaluators, ...(alerts.lagged?.evaluators ?? [])].map(
      (ev, i) =>
        `  Evaluator on the ${ev.twin} twin${i >= alerts.evaluators.length ? ' (lagged)' : ''}: ${ev.runs} invocations, ` +
        `${ev.cycles} cycles (${ev.stoppedEarly} invocations stopped early), median ${formatNumber(ev.medianMs)} ms, ` +
        `p95 ${formatNumber(ev.p95Ms)} ms, max ${formatNumber(ev.maxMs)} ms; ${ev.skippedTicks} ticks skipped (previous ` +
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
      : `  At four cycles a minute (every 15 s): ${count(perDay * 4)} samples a day, ${count(perDay * 4 * 30)} in 30 days ` +
        '(AMP bills query samples processed; it scales with the number of Pods and GPUs).',
  ];
}

/** Bytes as kB (1 kB = 1000 B, as npm and AWS's deployment package limits count). */
const kB = (bytes: number | null): number | string => (bytes === null ? '-' : Math.round(bytes / 100) / 10);
const ms = (value: number | null): number | string => (value === null ? '-' : Math.round(value));

function renderBundles(result: BundleBenchResult): string {
  const { options } = result;
  const { kind, reason, esbuildFromFile } = result.source;
  const source =
    kind === 'fallback'
      ? `the fallback list of functions (${reason ?? 'no serverless.yml'})`
      : `the functions${esbuildFromFile ? ' and custom.esbuild' : ''} of serverless.yml as ` +
        `${kind === 'osls print' ? '`osls print` resolves them' : `plain YAML (${reason ?? ''})`}`;
  const bundleTable = table(
    [
      'handler file',
      'functions',
      'minified kB',
      'gzip -9 kB',
      'import ms (median)',
      'min-max ms',
      'first call ms',
      'largest parts (kB)',
    ],
    result.bundles.map((b) => [
      b.file,
      b.functions.length === 1 ? (b.functions[0] ?? '') : `${b.functions.length} functions`,
      kB(b.minifiedBytes),
      kB(b.gzipBytes),
      ms(b.importMedianMs),
      b.importMinMs === null ? '-' : `${ms(b.importMinMs)}-${ms(b.importMaxMs)}`,
      b.firstCall === null ? '-' : ms(b.firstCall.medianMs),
      b.largest.map((p) => `${p.name} ${kB(p.bytes)}`).join(', '),
    ]),
  );
  const shared = result.bundles
    .filter((b) => b.functions.length > 1)
    .map((b) => `  ${b.file} serves ${b.functions.join(', ')}.`);
  const problems = result.bundles.flatMap((b) => [
    ...(b.error === undefined ? [] : [`  ${b.file}: NOT BUILT OR NOT LOADED: ${b.error}`]),
    ...(b.badExports.length === 0
      ? []
      : [`  ${b.file}: export not a function after import: ${b.badExports.join(', ')}`]),
  ]);
  const runs = result.bundles.find((b) => b.importRuns > 0)?.importRuns ?? 0;
  return [
    `Function bundles (${source}; esbuild format ${String(options.format)}, platform ${String(options.platform)}, ` +
      `target ${String(options.target)}, minify ${String(options.minify)}, ${options.outputFileExtension}` +
      `${options.external !== undefined && options.external.length > 0 ? `, external ${options.external.join(' ')}` : ''}):`,
    bundleTable,
    ...shared,
    ...problems,
    `  Import: ${runs} fresh \`node --input-type=module\` processes per bundle, each timing \`await import(bundle)\` ` +
      '(this machine, not a Lambda; it also proves the bundle loads as ESM and exports each handler).',
    `  First call: ${result.firstCallNote}`,
    ...result.bundles.flatMap((b) =>
      b.firstCall === null ? [] : [`    ${b.firstCall.function}: threw ${b.firstCall.outcome}`],
    ),
    ...(result.ignoredOptions.length === 0
      ? []
      : [`  custom.esbuild keys not applied to the bench build: ${result.ignoredOptions.join(', ')}.`]),
  ].join('\n');
}

function renderMonthlyCost(cost: CostBenchResult): string {
  const perRun = table(
    [
      'twin (1 target)',
      'history s',
      'collector queries',
      'collector samples',
      'evaluator queries',
      'evaluator samples',
      'datums published',
      'collector ms',
      'evaluator ms',
    ],
    cost.twins.map((t) => [
      `${t.pods} Pods`,
      t.historyS,
      t.collector.queries,
      t.collector.samples,
      t.evaluator.queries,
      t.evaluator.samples,
      t.collector.publishedDatums,
      Math.round(t.collector.medianRunMs),
      Math.round(t.evaluator.medianRunMs),
    ]),
  );
  const monthly = table(
    [
      'targets x Pods',
      'collector invocations',
      'evaluator invocations',
      'preflight invocations',
      'collector samples',
      'evaluator samples',
      'total samples',
      '% of free tier',
    ],
    cost.monthly.map((row) => [
      `${row.targets} x ${row.pods}`,
      row.invocations.collector,
      row.invocations.evaluator,
      Math.round(row.invocations.preflight * 100) / 100,
      count(row.querySamples.collector),
      count(row.querySamples.evaluator),
      count(row.querySamples.total),
      `${(row.freeTierFraction * 100).toPrecision(2)} %`,
    ]),
  );
  const history = cost.fullHistory
    ? `each twin held the ${cost.requiredHistoryS} s of history the longest query reads`
    : `LOWER BOUNDS: the twins held less than the ${cost.requiredHistoryS} s of history the longest query reads (--quick)`;
  return [
    `Monthly cost of the schedules, measured on "${cost.profile}" twins scraped every ${cost.scrapeIntervalS} s (the ` +
      `ServiceMonitor's interval); ${history}. Samples = Prometheus stats=all totalQueryableSamples of every query ` +
      'the real handler sent (what AMP bills as query samples processed):',
    perRun,
    ...(cost.perPod === undefined
      ? []
      : [
          `  Each extra Pod adds ${formatNumber(cost.perPod.collector)} samples to a collector run and ` +
            `${formatNumber(cost.perPod.evaluator)} to an evaluator run.`,
        ]),
    '',
    `Per month (${formatNumber(365 / 12)} days; N targets, each with the Pods of the twin measured):`,
    monthly,
    '  Invocations do not grow with targets or Pods: each schedule is one invocation a minute (43,800 a month) that ' +
      'loops over every target; preflight is one weekly invocation (cron(0 8 ? * MON *)) for all targets. The Slack ' +
      'notifier runs once per alert message, calibration on demand.',
    '  Query samples grow with targets x Pods (vLLM series per Pod, DCGM series per GPU) and with 1 / scrape interval ' +
      '(range windows hold more samples at a shorter interval); they are what scales with Pods.',
    `  AMP free tier: ${count(cost.freeTierQuerySamples)} query samples a month; the priced tables below use an ` +
      'assumed price per billion beyond it. Preflight queries (4.35 runs a month) are not measured here.',
  ].join('\n');
}

/** A Markdown table (pipes, a header rule): the priced tables go into docs/benchmarks.md as printed. */
function markdownTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  return [header, header.map(() => '---'), ...rows].map((row) => `| ${row.join(' | ')} |`).join('\n');
}

/** Dollars: cents below $100, whole dollars above; under a cent shown as such. */
function usd(value: number): string {
  if (value === 0) return '$0';
  if (value < 0.01) return '< $0.01';
  return value >= 100 ? `$${Math.round(value).toLocaleString('en-US')}` : `$${value.toFixed(2)}`;
}

/** A count for the priced tables: thousands separated, millions and billions in words, fractions kept short. */
function quantity(n: number): string {
  if (n >= 1e6) return count(n);
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : formatNumber(n);
}

const SETTING_TITLES: Record<PricedSetting['setting'], string> = {
  default: 'the defaults (collector every minute, every catalog metric)',
  fewer: 'fewer series and a longer interval',
  off: 'no CloudWatch publishing (`collector.schedule: off`; dashboards and alarms read AMP)',
};

function renderPricedCost(cost: CostBenchResult): string {
  const priceRows = (Object.entries(PRICES) as Array<[string, Price]>).map(([name, p]) => [
    name,
    `$${p.usd} per ${p.per.toLocaleString('en-US')} ${p.unit}`,
    p.status,
    p.source,
  ]);
  const sections = cost.priced.map((priced) => {
    const [first] = priced.bills;
    const header = ['item', ...priced.bills.map((b) => `${b.targets} target${b.targets === 1 ? '' : 's'}`)];
    const rows = (first?.lines ?? []).map((line, index) => [
      `${line.item} (${line.unit})`,
      ...priced.bills.map((bill) => {
        const at = bill.lines[index];
        return at === undefined ? '' : `${quantity(at.quantity)}: ${usd(at.usd)}`;
      }),
    ]);
    rows.push(['**total a month**', ...priced.bills.map((bill) => `**${usd(bill.totalUsd)}**`)]);
    const params = Object.entries(priced.params)
      .map(([k, v]) => `\`${k}: ${v === '' ? "''" : v}\``)
      .join(', ');
    const schedules = priced.functions
      .map((f) => `${f.name} ${f.enabled ? f.schedule : 'off'} (${f.memoryMb} MB)`)
      .join(', ');
    return [
      `Monthly cost with ${SETTING_TITLES[priced.setting]}${params === '' ? '' : `: ${params}`}; ` +
        `${priced.inputs.podsPerTarget} Pods per target (the twin measured); schedules and memory from serverless.yml: ${schedules}.`,
      markdownTable(header, rows),
    ].join('\n');
  });
  const perTwin = table(
    [
      'twin (1 target)',
      'CloudWatch series',
      'PutMetricData',
      'series (fewer)',
      'collector ms',
      'evaluator cycle ms',
      'preflight ms',
      'drift ms',
      'sweep ms',
      'evaluator DynamoDB r/w per cycle (1 / 2 targets)',
      'heartbeat series',
    ],
    cost.twins.map((t) => [
      `${t.pods} Pods`,
      t.collector.series,
      t.collector.putMetricDataRequests,
      t.collectorFewer.series,
      Math.round(t.collector.medianRunMs),
      Math.round(t.evaluator.medianRunMs),
      Math.round(t.preflight.medianRunMs),
      Math.round(t.driftDetector.medianRunMs),
      Math.round(t.sweep.medianRunMs),
      `${t.evaluatorAws.dynamoDbReads}/${t.evaluatorAws.dynamoDbWrites} / ${t.evaluatorAwsTwoTargets.dynamoDbReads}/${t.evaluatorAwsTwoTargets.dynamoDbWrites}`,
      t.evaluatorAws.series,
    ]),
  );
  const [small, large] = [cost.twins[0], cost.twins[cost.twins.length - 1]];
  const perPod =
    small !== undefined && large !== undefined && large.pods > small.pods
      ? (large.collector.series - small.collector.series) / (large.pods - small.pods)
      : undefined;
  return [
    `Priced (${cost.priceRegion}, prices as of ${cost.pricesAsOf}, list prices before free tiers), measured on the twin: ` +
      "series = distinct name + dimensions the REAL collector sent in its PutMetricData requests to the twin's CloudWatch:",
    perTwin,
    ...(perPod === undefined || small === undefined
      ? []
      : [
          `  CloudWatch series per target = ${formatNumber(small.collector.series - perPod * small.pods)} + ` +
            `${formatNumber(perPod)} per Pod (one GPU per Pod).`,
        ]),
    `  Lambda seconds are the handlers' wall time on this machine against the twin (a local loopback twin answers ` +
      'faster than AMP, CloudWatch and EKS over the network; AWS is likely slower per call), summed per target; the ' +
      'alert evaluator is billed 45 s of waits between its four cycles plus its last cycle.',
    `  Step Functions: ${cost.transitionsPerCalibration} transitions per calibration (the ASL path of a typical run, ` +
      'bench/cost.ts TYPICAL_CALIBRATION), 4 calibrations per target a month (assumed).',
    "  DynamoDB: one request unit per read or write request (items under 1 KB; assumed); the evaluator's split into " +
      'what a cycle does whatever the targets (its heartbeat) and what each target adds, from one and two targets; ' +
      "the other functions' requests grow with targets (an upper bound). SNS: publishes while no " +
      'alert fires (a firing alert adds one publish per notification). AMP query samples: collector and evaluator ' +
      '(preflight, drift and sweep queries not measured). AMP ingestion: none; the product only reads AMP.',
    '',
    ...sections.flatMap((section) => [section, '']),
    `Prices (${cost.priceRegion}, as of ${cost.pricesAsOf}; status: aws = on AWS's page, third-party = quoted by the ` +
      'page named, assumed = not confirmed from a source):',
    markdownTable(['price', 'USD', 'status', 'source'], priceRows),
    `Free tiers (per account, shared with everything else in it; not subtracted above): ${FREE_TIERS.map((f) => f.what).join('; ')}.`,
  ].join('\n');
}
