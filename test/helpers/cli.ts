import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './imports.js';

/**
 * The `vllm-pilot` command as a user runs it: `node bin/vllm-pilot.js ...` in a child process, from the clone, in the
 * environment of a user's shell (no jest flags, no debug stack traces).
 */

/** A generous bound for a test that starts the CLI: a cold start on a busy machine takes seconds. */
export const CLI_TEST_TIMEOUT_MS = 90_000;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a user's shell: jest's NODE_OPTIONS would only add a warning to the CLI's stderr. */
export function cliEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  delete env.NODE_OPTIONS;
  delete env.VLLM_PILOT_DEBUG;
  return env;
}

/** Starts the CLI with `args`; the caller reads and ends it (`twin up` runs until it is stopped). */
export function startCli(args: readonly string[], env: NodeJS.ProcessEnv = cliEnv()) {
  return spawn(process.execPath, [join(ROOT, 'bin', 'vllm-pilot.js'), ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs the CLI to completion and collects its exit code and output. */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv = cliEnv()): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = startCli(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
