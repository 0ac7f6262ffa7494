import { Option, type Command } from 'commander';
import { PreflightFunctionError } from '../../functions/preflight/errors.js';
import {
  ALERTING_ENGINES,
  type AlertingEngine,
  CHECK_STATUSES,
  formatPreflightReport,
  type PreflightReport,
  worstStatus,
} from '../../shared/preflight/index.js';
import { readTwinState } from '../../sim/harness/twinState.js';
import { type AccountFlags, addAccountFlags, refuseMixedModes } from '../account/options.js';
import { PREFLIGHT_ACCOUNT_FLAGS, preflightOnAccount } from '../account/preflight.js';
import { harness } from '../harness.js';
import { printJson } from '../options.js';

/** Exit codes of `vllm-pilot preflight`: 1 means a check failed, 2 a bad option (as commander's usage errors). */
export const PREFLIGHT_EXIT_CODES = { pass: 0, fail: 1, usage: 2 } as const;

interface PreflightCommandOptions extends AccountFlags {
  stateFile?: string;
  target?: string;
  json?: boolean;
  verbose?: boolean;
  settings?: string;
  alertingEngine?: AlertingEngine;
  ampRuleNamespace?: string;
}

const HELP = [
  '',
  'The eleven production double-check points of the monitoring guide (section 7), each pass, warn or fail with the',
  'reason and the fix.',
  '',
  "Against the twin (--state-file): runs the preflight Lambda (functions/preflight) with the twin's EKS, AMP and",
  "DynamoDB; when a check fails it publishes one summary to the twin's preflight topic.",
  '',
  'Against your account (the target flags or --targets): the same checks with your AWS credentials (AWS_PROFILE, SSO,',
  'environment) and EKS access (DescribeCluster and a token; or --kubeconfig/--context). Only reads: nothing is',
  'written to the cluster or to AWS, nothing is published. Before a stack is deployed, checks 5, 8 and 10 have no',
  'history or heartbeat to read; give --history-table and --alert-state-table of a deployed stack to include them.',
  '',
  'Exit status: 0 when nothing fails (warnings allowed), 1 when a check fails (or the account cannot be read), 2 on a',
  'bad option.',
  '',
  'Examples:',
  '  vllm-pilot preflight --state-file twin.json',
  '  vllm-pilot preflight --state-file twin.json --json | jq \'.results[] | select(.status != "pass")\'',
  '  AWS_PROFILE=prod vllm-pilot preflight --region us-east-2 --cluster ai-eks --namespace default \\',
  '      --deployment vllm-inference-app --model mistralai/Ministral-3-8B-Instruct-2512 \\',
  '      --amp-workspace ws-b226cc2a-a446-46a9-933a-ac50479a5568',
  '  vllm-pilot preflight --region us-east-2 --targets targets.yaml --amp-workspace ws-... \\',
  '      --history-table vllm-eks-pilot-prod-CalibrationHistoryTable-1A2B3C --alert-state-table vllm-eks-pilot-prod-AlertState-4D5E',
  '',
].join('\n');

/** `vllm-pilot preflight`: runs the eleven checks on the twin's deployment or a target in an account. */
export function registerPreflightCommand(program: Command): void {
  const command = program
    .command('preflight')
    .description(
      "check that a vLLM deployment is ready for traffic (the guide's eleven double-checks), on the twin or in your account",
    )
    .option('--state-file <file>', 'against the twin: the state file written by `twin up`')
    .option('--target <name>', 'the target to check (default: every target; the twin has one, twin-<profile>)')
    .option('--json', 'print the report as JSON')
    .option('--verbose', "print the function's JSON log lines (the twin)");
  addAccountFlags(command, PREFLIGHT_ACCOUNT_FLAGS)
    .option(
      '--settings <file>',
      "against an account: the stack's preflightSettings (YAML/JSON; default: AWS's defaults)",
    )
    .addOption(
      new Option(
        '--alerting-engine <engine>',
        "against an account: the stack's alerting.engine (check 5's evidence)",
      ).choices(Object.values(ALERTING_ENGINES)),
    )
    .option(
      '--amp-rule-namespace <name>',
      'against an account, AMP engine: the rule groups namespace (<service>-<stage>)',
    )
    .addHelpText('after', HELP)
    .action(async (opts: PreflightCommandOptions) => {
      const reports =
        refuseMixedModes(opts.stateFile, opts) === 'twin'
          ? await preflightOnTwin({ ...opts, stateFile: opts.stateFile as string })
          : await preflightOnAccountSelected(opts);
      if (reports === undefined) return;
      if (opts.json) printJson(reports.length === 1 ? reports[0] : reports);
      else process.stdout.write(`${reports.map((report) => formatPreflightReport(report)).join('\n\n')}\n`);
      const status = worstStatus(reports.map((report) => report.status));
      process.exitCode = status === CHECK_STATUSES.fail ? PREFLIGHT_EXIT_CODES.fail : PREFLIGHT_EXIT_CODES.pass;
    });
}

/** The preflight Lambda on the twin; undefined (exit 2 set) when --target names no target of it. */
async function preflightOnTwin(
  opts: PreflightCommandOptions & { stateFile: string },
): Promise<PreflightReport[] | undefined> {
  const { functionLogger, twinPreflight } = await harness();
  const state = await readTwinState(opts.stateFile);
  const run = twinPreflight(state, { logger: functionLogger('preflight', opts.verbose ?? false) });
  try {
    return (await run(opts.target === undefined ? [] : [opts.target])).reports;
  } catch (error) {
    // An unknown --target is a usage error: say which names exist.
    if (error instanceof PreflightFunctionError && !error.retryable) {
      process.stderr.write(`vllm-pilot: --target: ${error.message}\n`);
      process.exitCode = PREFLIGHT_EXIT_CODES.usage;
      return undefined;
    }
    throw error;
  }
}

/** Every target of the account flags, or the one --target names. */
function preflightOnAccountSelected(opts: PreflightCommandOptions): Promise<PreflightReport[]> {
  return preflightOnAccount(opts, {
    ...(opts.target === undefined ? {} : { target: opts.target }),
    ...(opts.settings === undefined ? {} : { settings: opts.settings }),
    ...(opts.alertingEngine === undefined ? {} : { alertingEngine: opts.alertingEngine }),
    ...(opts.ampRuleNamespace === undefined ? {} : { ampRuleNamespace: opts.ampRuleNamespace }),
  });
}
