import { Command, CommanderError } from 'commander';
import { registerAlertsCommand } from './commands/alerts.js';
import { registerCalibrateCommand } from './commands/calibrate.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerMetricsCommands } from './commands/metrics.js';
import { registerPreflightCommand } from './commands/preflight.js';
import { registerRenderCommand } from './commands/render.js';
import { registerTwinCommands } from './commands/twin.js';

/**
 * `vllm-pilot`: the command line of vllm-eks-pilot. Every command fails with a one-line reason on stderr and a
 * non-zero exit code (2 for usage errors, 1 for everything else).
 */
const program = new Command('vllm-pilot')
  .description('Control plane for vLLM on Amazon EKS: metrics, calibration, alerts and preflight checks')
  .exitOverride();

registerDemoCommand(program);
registerTwinCommands(program);
registerCalibrateCommand(program);
registerMetricsCommands(program);
registerRenderCommand(program);
registerAlertsCommand(program);
registerPreflightCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Commander already printed the message; --help and --version exit 0.
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else {
    const e = error as Error;
    process.stderr.write(`vllm-pilot: ${e.name && e.name !== 'Error' ? `${e.name}: ` : ''}${e.message}\n`);
    if (process.env.VLLM_PILOT_DEBUG) process.stderr.write(`${e.stack ?? ''}\n`);
    process.exitCode = 1;
  }
}
