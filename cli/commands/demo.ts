import type { Command } from 'commander';
import { CATALOG } from '../../shared/metrics/catalog.js';
import { readCatalog } from '../../shared/metrics/readCatalog.js';
import type { CatalogResult } from '../../shared/metrics/types.js';
import { runConstantArrivalLoad } from '../../sim/load/constantArrival.js';
import { loadProfile } from '../../sim/twin/loadProfile.js';
import { measureCapacity } from '../../sim/vllm/capacity.js';
import { startTwin, type Twin } from '../../sim/twin/twin.js';
import { formatNumber, table } from '../output.js';
import { positiveNumber } from '../options.js';
import { twinMetricsSource, twinTarget } from '../twinContext.js';

/** The demo's request shape: short completions keep the load cheap for a laptop. */
const DEMO_SHAPE = { promptTokens: 35, maxTokens: 32 } as const;
/** Load stages as fractions of the twin's total capacity: idle-ish, busy, at the knee, overloaded. */
const STAGES = [0.25, 0.6, 0.95, 1.3] as const;

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('start the twin, offer a rising load, and show the Tier 1/2/3 metrics read from Prometheus live')
    .option('--profile <name|file>', 'twin profile', 'demo')
    .option('--duration <seconds>', 'how long the load runs', positiveNumber, 60)
    .option('--no-install', 'never install Prometheus, even as root with apt-get')
    .action(async (opts: { profile: string; duration: number; install: boolean }) => {
      const profile = await loadProfile(opts.profile);
      const out = process.stdout;
      out.write(`Starting the twin "${profile.name}" (${profile.replicas} vLLM replicas, real Prometheus)...\n`);
      const twin = await startTwin({
        profile,
        allowInstallPrometheus: opts.install,
        log: (line) => out.write(`  ${line}\n`),
      });
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        await runDemo(twin, opts.duration, stop.signal);
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        out.write('Stopping the twin...\n');
        await twin.stop();
        out.write(
          'Stopped. Next: `vllm-pilot twin up --profile demo --state-file .twin/state.json` keeps it running.\n',
        );
      }
    });
}

async function runDemo(twin: Twin, durationS: number, signal: AbortSignal): Promise<void> {
  const { state } = twin;
  const source = twinMetricsSource(state);
  const target = twinTarget(state);
  // Stages are set from the profile's measured capacity (virtual clock, about a second), so any profile shows the knee.
  const perReplica = measureCapacity(twin.profile, DEMO_SHAPE).capacityRps;
  const totalCapacity = Math.round(perReplica * state.replicas.length);
  const stageS = durationS / STAGES.length;
  let offered = 0;
  let stage = 0;

  // The load: constant-arrival-rate stages, one after the other, over every replica.
  const load = (async () => {
    for (const fraction of STAGES) {
      if (signal.aborted) return;
      offered = Math.round(totalCapacity * fraction);
      stage += 1;
      await runConstantArrivalLoad({
        urls: [state.serviceUrl],
        model: state.model,
        rps: offered,
        durationS: stageS,
        ...DEMO_SHAPE,
        gracefulStopMs: 2_000,
        signal,
      });
    }
  })();

  // The live view: the catalog read from Prometheus every few seconds, exactly as the collector reads AMP.
  const startMs = Date.now();
  let lines = 0;
  const refresh = async () => {
    const result = await readCatalog(source, target, { timeMs: Date.now(), rateWindow: '10s' });
    const header =
      `t=${Math.round((Date.now() - startMs) / 1000)}s  stage ${stage}/${STAGES.length}: offering ${offered} req/s ` +
      `(the ${state.replicas.length} replicas sustain about ${totalCapacity} req/s)`;
    const text = `${header}\n${render(result)}\n`;
    if (process.stdout.isTTY && lines > 0) process.stdout.write(`\x1b[${lines}A\x1b[J`);
    process.stdout.write(text);
    lines = text.split('\n').length - 1;
  };
  const timer = setInterval(() => void refresh().catch(() => undefined), 5_000);
  try {
    await load;
    await refresh();
  } finally {
    clearInterval(timer);
  }
  process.stdout.write(
    `\nWhat to look at: below about ${totalCapacity} req/s the queue stays near 0 and p95 latency is flat; above it ` +
      'completions stop following the offered rate, the queue grows and latency climbs: the saturation point ' +
      "the AWS guide's load test looks for, and what scale-out thresholds must stay below.\n",
  );
}

/** One row per reading, in catalog order; Pods and GPUs shown by a short suffix. */
function render(result: CatalogResult): string {
  const order = new Map(CATALOG.map((e, i) => [e.id, i]));
  const rows = [...result.readings]
    .sort((a, b) => (order.get(a.queryId) ?? 0) - (order.get(b.queryId) ?? 0))
    .map((r) => {
      const entry = CATALOG.find((e) => e.id === r.queryId);
      const where = r.dimensions.gpu
        ? `gpu ${r.dimensions.gpu.slice(4, 12)}`
        : r.dimensions.pod
          ? `pod …${r.dimensions.pod.slice(-5)}`
          : 'all';
      return [`T${r.tier}`, entry?.title ?? r.metricName, where, formatNumber(r.value), r.unit];
    });
  const waiting = result.skipped.length
    ? `\n(${result.skipped.length} readings wait for traffic or are not enabled)`
    : '';
  return table(['tier', 'metric', 'where', 'value', 'unit'], rows) + waiting;
}
