import { execFile } from 'node:child_process';
import { dirname, isAbsolute, join } from 'node:path';
import { promisify } from 'node:util';
import { AlertmanagerNotFoundError } from './errors.js';
import { findOnPath, isExecutableFile } from './locatePrometheus.js';

const execFileAsync = promisify(execFile);

/** A usable Alertmanager: the server binary, amtool when it sits next to it or on PATH, and the version. */
export interface AlertmanagerInstallation {
  bin: string;
  amtool?: string;
  /** e.g. `0.25.0` */
  version: string;
}

/** What the user should do when no Alertmanager is found: one line. */
export const ALERTMANAGER_INSTALL_HINT =
  'install it with `sudo apt-get install -y prometheus-alertmanager`, or set ALERTMANAGER_BIN=/path/to/alertmanager';

/** Debian names the binary `prometheus-alertmanager`; the upstream release calls it `alertmanager`. */
const BINARY_NAMES = ['prometheus-alertmanager', 'alertmanager'] as const;

/**
 * Finds Alertmanager: `ALERTMANAGER_BIN` when set (a bad value is an error, as with PROMETHEUS_BIN), else
 * `prometheus-alertmanager` or `alertmanager` on PATH; resolves to undefined when there is none. Runs `--version` to
 * check the binary works.
 */
export async function locateAlertmanager(
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<AlertmanagerInstallation | undefined> {
  const env = options.env ?? process.env;
  const fromEnv = env.ALERTMANAGER_BIN?.trim();
  let bin: string | undefined;
  if (fromEnv) {
    if (!isAbsolute(fromEnv) || !(await isExecutableFile(fromEnv)))
      throw new AlertmanagerNotFoundError(
        `ALERTMANAGER_BIN=${fromEnv} is not an executable file given by absolute path: point it at an Alertmanager binary, or unset it to use \`prometheus-alertmanager\` from PATH`,
        [fromEnv],
      );
    bin = fromEnv;
  } else {
    for (const name of BINARY_NAMES) {
      bin = await findOnPath(name, env);
      if (bin) break;
    }
    if (!bin) return undefined;
  }
  const version = await readVersion(bin);
  const sibling = join(dirname(bin), 'amtool');
  const amtool = (await isExecutableFile(sibling)) ? sibling : await findOnPath('amtool', env);
  return { bin, version, ...(amtool ? { amtool } : {}) };
}

async function readVersion(bin: string): Promise<string> {
  let output: string;
  try {
    const { stdout, stderr } = await execFileAsync(bin, ['--version'], { timeout: 15_000, encoding: 'utf8' });
    output = `${stdout}\n${stderr}`;
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new AlertmanagerNotFoundError(
      `${bin} is not a working Alertmanager (\`${bin} --version\` failed: ${reason}): ${ALERTMANAGER_INSTALL_HINT}`,
      [bin],
      { cause: error },
    );
  }
  const match = /alertmanager, version (\S+)/.exec(output);
  if (!match?.[1])
    throw new AlertmanagerNotFoundError(
      `${bin} does not report an Alertmanager version (is it Alertmanager?): ${ALERTMANAGER_INSTALL_HINT}`,
      [bin],
    );
  return match[1];
}
