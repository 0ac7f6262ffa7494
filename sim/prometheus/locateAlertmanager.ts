import { dirname, isAbsolute, join } from 'node:path';
import { AlertmanagerNotFoundError } from './errors.js';
import { findOnPath, isExecutableFile, readBinaryVersion } from './locatePrometheus.js';

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
  return readBinaryVersion(bin, {
    product: 'Alertmanager',
    pattern: /alertmanager, version (\S+)/,
    notFound: (message, cause) =>
      new AlertmanagerNotFoundError(
        `${message}: ${ALERTMANAGER_INSTALL_HINT}`,
        [bin],
        cause === undefined ? {} : { cause },
      ),
  });
}
