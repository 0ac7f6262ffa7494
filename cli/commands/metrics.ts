import { type Command, InvalidArgumentError } from 'commander';
import { assertDuration, type CatalogResult, readCatalog } from '../../shared/metrics/index.js';
import { readTwinState } from '../../sim/harness/twinState.js';
import { twinMetricsSource, twinTarget } from '../../sim/harness/twinTarget.js';
import { type AccountFlags, addAccountFlags, refuseMixedModes } from '../account/options.js';
import { METRICS_ACCOUNT_FLAGS, readCatalogOnAccount } from '../account/metrics.js';
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
    .addHelpText(
      'after',
      [
        '',
        'It writes to CloudWatch, so it runs only against the twin; in your account the deployed collector runs every',
        'minute, and `metrics read` shows what it would publish, with your credentials and without writing.',
        '',
        'Examples:',
        '  vllm-pilot metrics collect --state-file twin.json',
        '  aws lambda invoke --function-name vllm-eks-pilot-prod-metricsCollector --region us-east-2 out.json   # your account',
        '',
      ].join('\n'),
    )
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

  const read = metrics
    .command('read')
    .description(
      "read the catalog (Tier 1/2/3) of a vLLM deployment from Prometheus or AMP and print it (the twin's, or one in your account)",
    )
    .option('--state-file <file>', 'against the twin: the state file written by `twin up`')
    .option('--rate-window <duration>', 'PromQL window for rates and quantiles', rateWindowOption, '1m')
    .option('--json', 'print the readings as JSON');
  addAccountFlags(read, METRICS_ACCOUNT_FLAGS)
    .addHelpText('after', READ_HELP)
    .action(async (opts: AccountFlags & { stateFile?: string; rateWindow: string; json?: boolean }) => {
      const timeMs = Date.now();
      let results: CatalogResult[];
      if (refuseMixedModes(opts.stateFile, opts) === 'twin') {
        const state = await readTwinState(opts.stateFile as string);
        results = [
          await readCatalog(twinMetricsSource(state), twinTarget(state), { timeMs, rateWindow: opts.rateWindow }),
        ];
      } else {
        results = await readCatalogOnAccount(opts, { timeMs, rateWindow: opts.rateWindow });
      }
      if (opts.json) {
        const json = results.map((result) => ({
          ...result,
          failures: result.failures.map((f) => ({ queryId: f.queryId, error: f.error.message })),
        }));
        return printJson(json.length === 1 ? json[0] : json);
      }
      for (const result of results) {
        if (results.length > 1) process.stdout.write(`\n${result.target.name}\n`);
        printCatalog(result);
      }
    });
}

const READ_HELP = [
  '',
  'Against your account (the target flags or --targets), AMP is read with your AWS credentials (AWS_PROFILE, SSO,',
  'environment); only queries are sent. A model name that matches no series fails at once, listing the names AMP has',
  'in the namespace.',
  '',
  'Examples:',
  '  vllm-pilot metrics read --state-file twin.json',
  '  AWS_PROFILE=prod vllm-pilot metrics read --region us-east-2 --cluster ai-eks --namespace default \\',
  '      --deployment vllm-inference-app --model mistralai/Ministral-3-8B-Instruct-2512 \\',
  '      --amp-workspace ws-b226cc2a-a446-46a9-933a-ac50479a5568 --json',
  '',
].join('\n');

/** One target's readings as a table, then what was skipped and what failed. */
function printCatalog(result: CatalogResult): void {
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
}
