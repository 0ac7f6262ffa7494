import type { Command } from 'commander';
import { DEFAULT_DRIFT_WINDOW_SECONDS, formatDriftCheck } from '../../shared/drift/index.js';
import { readTwinState } from '../../sim/harness/twinState.js';
import { harness } from '../harness.js';
import { positiveInteger, printJson } from '../options.js';

/** Exit codes of `vllm-pilot drift`: 1 means the target drifted, 2 a bad option (as commander's usage errors). */
export const DRIFT_EXIT_CODES = { none: 0, drifted: 1, usage: 2 } as const;

const HELP = [
  '',
  "Compares the target with its last calibration: the Deployment's Pod template (image, vLLM args, GPU count,",
  'memory flags) against the calibration record, and the live queue and p95 latency read from AMP over the window',
  'against the capacity and latencies the calibration measured. Reads only: nothing is written or started.',
  '',
  'Exit status: 0 when no drift was found, 1 when the target drifted, 2 on a bad option.',
  '',
  'Examples:',
  '  vllm-pilot drift --state-file twin.json',
  '  vllm-pilot drift --state-file twin.json --window 300 --json',
  '  # your account: the deployed drift detector does the same for every target (its stage settings say whether it',
  '  # notifies or re-calibrates)',
  '  aws lambda invoke --function-name vllm-eks-pilot-prod-driftDetector --region us-east-2 out.json && jq . out.json',
  '',
].join('\n');

/** `vllm-pilot drift`: has the twin's target drifted from its last calibration? */
export function registerDriftCommand(program: Command): void {
  program
    .command('drift')
    .description("compare the twin's target with its last calibration (Pod template, live capacity and latency)")
    .requiredOption('--state-file <file>', 'the state file written by `twin up`')
    .option('--window <seconds>', 'the live window read from AMP', positiveInteger, DEFAULT_DRIFT_WINDOW_SECONDS)
    .option('--json', 'print the check as JSON')
    .addHelpText('after', HELP)
    .action(async (opts: { stateFile: string; window: number; json?: boolean }) => {
      const { checkTwinDrift } = await harness();
      const state = await readTwinState(opts.stateFile);
      const check = await checkTwinDrift(state, { windowSeconds: opts.window });
      if (opts.json) printJson(check);
      else process.stdout.write(formatDriftCheck(check));
      process.exitCode = check.findings.length > 0 ? DRIFT_EXIT_CODES.drifted : DRIFT_EXIT_CODES.none;
    });
}
