import { type Command, InvalidArgumentError } from 'commander';
import { assertDuration, readCatalog } from '../../shared/metrics/index.js';
import { readTwinState } from '../../sim/harness/twinState.js';
import { twinMetricsSource, twinTarget } from '../../sim/harness/twinTarget.js';
import { harness } from '../harness.js';
import { table } from '../output.js';
import { printJson } from '../options.js';

/**
 * Commander parser for --rate-window: checked under the flag's name (the collector would otherwise refuse it as
 * RATE_WINDOW, an environment variable the user never set).
 */
function rateWindowOption(value: string): string {
  try {
    return assertDuration(value, '--rate-window');
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

export function registerMetricsCommands(program: Command): void {
  const metrics = program.command('metrics').description('the Tier 1/2/3 metrics of the monitoring guide');

  metrics
    .command('collect')
    .description('run the scheduled metrics collector Lambda once against the twin (AMP -> CloudWatch)')
    .requiredOption('--state-file <file>', 'the state file written by `twin up`')
    .option('--rate-window <duration>', 'PromQL window for rates and quantiles', rateWindowOption, '1m')
    .option('--verbose', "also print the Lambda's own JSON log lines")
    .option('--json', 'print the collector result as JSON')
    .action(async (opts: { stateFile: string; rateWindow: string; verbose?: boolean; json?: boolean }) => {
      const { functionLogger, twinCollector } = await harness();
      const state = await readTwinState(opts.stateFile);
      // The same handler the Lambda runs, configured the way serverless.yml configures it, but with the twin's URLs.
      const collect = twinCollector(state, {
        rateWindow: opts.rateWindow,
        logger: functionLogger('metrics-collector', opts.verbose),
      });
      const result = await collect();
      if (opts.json) return printJson(result);
      process.stdout.write(
        table(
          ['target', 'status', 'published', 'skipped', 'failed', 'reason'],
          result.targets.map((t) => [
            t.target,
            t.status,
            t.published,
            t.skipped.length,
            t.failures.length,
            t.reason ?? '',
          ]),
        ) +
          `\nDatums went to the twin's CloudWatch (${state.aws.cloudwatchEndpoint}), namespace ${result.namespace}.\n`,
      );
    });

  metrics
    .command('read')
    .description("read the catalog (Tier 1/2/3) for the twin's deployment from Prometheus and print it")
    .requiredOption('--state-file <file>', 'the state file written by `twin up`')
    .option('--rate-window <duration>', 'PromQL window for rates and quantiles', rateWindowOption, '1m')
    .option('--json', 'print the readings as JSON')
    .action(async (opts: { stateFile: string; rateWindow: string; json?: boolean }) => {
      const state = await readTwinState(opts.stateFile);
      const result = await readCatalog(twinMetricsSource(state), twinTarget(state), {
        timeMs: Date.now(),
        rateWindow: opts.rateWindow,
      });
      if (opts.json)
        return printJson({
          ...result,
          failures: result.failures.map((f) => ({ queryId: f.queryId, error: f.error.message })),
        });
      process.stdout.write(
        table(
          ['tier', 'metric', 'where', 'value', 'unit'],
          result.readings.map((r) => [
            r.tier,
            r.metricName,
            Object.values(r.dimensions).join(' ') || 'all',
            r.value,
            r.unit,
          ]),
        ) + '\n',
      );
      for (const s of result.skipped) process.stdout.write(`skipped ${s.queryId}: ${s.reason}\n`);
      for (const f of result.failures) process.stdout.write(`FAILED ${f.queryId}: ${f.error.message}\n`);
    });
}
