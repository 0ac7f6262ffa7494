import type { Command } from 'commander';
import { PreflightFunctionError } from '../../functions/preflight/errors.js';
import { CHECK_STATUSES, formatPreflightReport } from '../../shared/preflight/index.js';
import { readTwinState } from '../../sim/harness/twinState.js';
import { harness } from '../harness.js';
import { printJson } from '../options.js';

/** Exit codes of `vllm-pilot preflight`: 1 means a check failed, 2 a bad option (as commander's usage errors). */
export const PREFLIGHT_EXIT_CODES = { pass: 0, fail: 1, usage: 2 } as const;

interface PreflightCommandOptions {
  stateFile: string;
  target?: string;
  json?: boolean;
  verbose?: boolean;
}

const HELP = [
  '',
  'The eleven production double-check points of the monitoring guide (section 7), each pass, warn or fail with the',
  'reason and the fix. Runs the preflight Lambda (functions/preflight) against the twin: EKS, AMP and DynamoDB',
  "through the twin's endpoints; when a check fails it publishes one summary to the twin's preflight topic.",
  '',
  'Exit status: 0 when nothing fails (warnings allowed), 1 when a check fails, 2 on a bad option.',
  '',
  'Examples:',
  '  vllm-pilot preflight --state-file twin.json',
  '  vllm-pilot preflight --state-file twin.json --json | jq \'.results[] | select(.status != "pass")\'',
  '',
].join('\n');

/** `vllm-pilot preflight`: runs the eleven checks on the twin's deployment and prints the table (or JSON). */
export function registerPreflightCommand(program: Command): void {
  program
    .command('preflight')
    .description("check that the twin's vLLM deployment is ready for traffic (the guide's eleven double-checks)")
    .requiredOption('--state-file <file>', 'the state file written by `twin up`')
    .option('--target <name>', 'the target to check (default: every target; the twin has one, twin-<profile>)')
    .option('--json', 'print the report as JSON')
    .option('--verbose', "print the function's JSON log lines")
    .addHelpText('after', HELP)
    .action(async (opts: PreflightCommandOptions) => {
      const { functionLogger, twinPreflight } = await harness();
      const state = await readTwinState(opts.stateFile);
      const run = twinPreflight(state, { logger: functionLogger('preflight', opts.verbose ?? false) });
      let result;
      try {
        result = await run(opts.target === undefined ? [] : [opts.target]);
      } catch (error) {
        // An unknown --target is a usage error: say which names exist.
        if (error instanceof PreflightFunctionError && !error.retryable) {
          process.stderr.write(`vllm-pilot: --target: ${error.message}\n`);
          process.exitCode = PREFLIGHT_EXIT_CODES.usage;
          return;
        }
        throw error;
      }
      if (opts.json) printJson(result.reports.length === 1 ? result.reports[0] : result.reports);
      else process.stdout.write(`${result.reports.map((report) => formatPreflightReport(report)).join('\n\n')}\n`);
      process.exitCode = result.status === CHECK_STATUSES.fail ? PREFLIGHT_EXIT_CODES.fail : PREFLIGHT_EXIT_CODES.pass;
    });
}
