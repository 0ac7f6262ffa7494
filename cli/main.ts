import { Command, CommanderError } from 'commander';
import { registerAlertsCommand } from './commands/alerts.js';
import { registerCalibrateCommand } from './commands/calibrate.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerDriftCommand } from './commands/drift.js';
import { registerMetricsCommands } from './commands/metrics.js';
import { registerPreflightCommand } from './commands/preflight.js';
import { registerRenderCommand } from './commands/render.js';
import { registerTwinCommands } from './commands/twin.js';
import { registerWhatIfCommand } from './commands/whatif.js';

/**
 * `vllm-pilot`: the command line of vllm-eks-pilot. Every command fails with one line on stderr that names the flag,
 * field or file the user wrote, and a non-zero exit code (2 for usage errors, 1 for everything else).
 */
const program = new Command('vllm-pilot')
  .description('Control plane for vLLM on Amazon EKS: metrics, calibration, alerts and preflight checks')
  // Commander's own messages are printed below with everything else, so each error is printed once, on one line.
  // Set before the commands are registered: subcommands copy it.
  .configureOutput({ outputError: () => undefined })
  // A command's flags are its own after its name (calibrate's, which its subcommands share, need this).
  .enablePositionalOptions()
  .exitOverride();

registerDemoCommand(program);
registerTwinCommands(program);
registerCalibrateCommand(program);
registerMetricsCommands(program);
registerRenderCommand(program);
registerAlertsCommand(program);
registerPreflightCommand(program);
registerDriftCommand(program);
registerWhatIfCommand(program);

/** Codes of commander's "errors" that are help or version output: already printed, nothing to add. */
const HELP_CODES: ReadonlySet<string> = new Set(['commander.help', 'commander.helpDisplayed', 'commander.version']);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Usage errors: commander's (unknown option, missing argument, a parser's refusal) and an InvalidArgumentError
    // thrown by an action (`render --set =x`), which commander never prints.
    if (!HELP_CODES.has(error.code))
      process.stderr.write(`vllm-pilot: ${oneLine(error.message.replace(/^error: /, ''))}\n`);
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else {
    const e = error as Error;
    const name = e.name && e.name !== 'Error' ? `${e.name}: ` : '';
    process.stderr.write(`vllm-pilot: ${name}${oneLine(e.message)}\n`);
    if (process.env.VLLM_PILOT_DEBUG) process.stderr.write(`${e.stack ?? ''}\n`);
    process.exitCode = 1;
  }
}

/** A message as one line: anything after a blank line (a parser's code frame) dropped, other line breaks joined. */
function oneLine(message: string): string {
  const [head = ''] = message.split(/\n[ \t]*\n/);
  return head.replace(/\s*\n\s*/g, ' ').trim();
}
