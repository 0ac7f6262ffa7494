import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { promisify } from 'node:util';
import { PrometheusNotFoundError } from './errors.js';

const execFileAsync = promisify(execFile);

/** A usable Prometheus: the server binary, promtool when it sits next to it or on PATH, and the version. */
export interface PrometheusInstallation {
  bin: string;
  promtool?: string;
  /** e.g. `2.42.0+ds` */
  version: string;
}

export interface LocatePrometheusOptions {
  /** The environment to read PATH and PROMETHEUS_BIN from (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

/** What the user should do when no Prometheus is found: one line. */
export const PROMETHEUS_INSTALL_HINT =
  'install it with `sudo apt-get install -y prometheus`, or set PROMETHEUS_BIN=/path/to/prometheus';

/**
 * Finds Prometheus: `PROMETHEUS_BIN` when set (an explicit choice wins and is not second-guessed: a bad value is an
 * error, not a silent fallback), else `prometheus` on PATH. Runs `--version` to check the binary works.
 */
export async function locatePrometheus(options: LocatePrometheusOptions = {}): Promise<PrometheusInstallation> {
  const env = options.env ?? process.env;
  const fromEnv = env.PROMETHEUS_BIN?.trim();
  let bin: string;
  if (fromEnv) {
    if (!isAbsolute(fromEnv) || !(await isExecutableFile(fromEnv)))
      throw new PrometheusNotFoundError(
        `PROMETHEUS_BIN=${fromEnv} is not an executable file given by absolute path: point it at a Prometheus binary, or unset it to use \`prometheus\` from PATH`,
        [fromEnv],
      );
    bin = fromEnv;
  } else {
    const found = await findOnPath('prometheus', env);
    if (!found)
      throw new PrometheusNotFoundError(
        `Prometheus not found (no \`prometheus\` on PATH, PROMETHEUS_BIN not set): ${PROMETHEUS_INSTALL_HINT}`,
        pathDirectories(env),
      );
    bin = found;
  }

  const version = await readVersion(bin);
  const sibling = join(dirname(bin), 'promtool');
  const promtool = (await isExecutableFile(sibling)) ? sibling : await findOnPath('promtool', env);
  return { bin, version, ...(promtool ? { promtool } : {}) };
}

/** The first executable `name` in the PATH directories of `env`, or undefined. */
export async function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  for (const directory of pathDirectories(env)) {
    const candidate = join(directory, name);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

function pathDirectories(env: NodeJS.ProcessEnv): string[] {
  return (env.PATH ?? '').split(delimiter).filter((directory) => directory !== '' && isAbsolute(directory));
}

/** Is `path` a regular file this user may execute? */
export async function isExecutableFile(path: string): Promise<boolean> {
  try {
    if (!(await stat(path)).isFile()) return false;
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function readVersion(bin: string): Promise<string> {
  return readBinaryVersion(bin, {
    product: 'Prometheus',
    pattern: /prometheus, version (\S+)/,
    notFound: (message, cause) =>
      new PrometheusNotFoundError(
        `${message}: ${PROMETHEUS_INSTALL_HINT}`,
        [bin],
        cause === undefined ? {} : { cause },
      ),
  });
}

/**
 * Runs `bin --version` and returns the version `pattern` captures (Prometheus and Alertmanager print
 * `<name>, version X`); a binary that fails or prints no version is `notFound`, with the reason.
 */
export async function readBinaryVersion(
  bin: string,
  what: { product: string; pattern: RegExp; notFound: (message: string, cause?: unknown) => Error },
): Promise<string> {
  let output: string;
  try {
    const { stdout, stderr } = await execFileAsync(bin, ['--version'], { timeout: 15_000, encoding: 'utf8' });
    output = `${stdout}\n${stderr}`;
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw what.notFound(`${bin} is not a working ${what.product} (\`${bin} --version\` failed: ${reason})`, error);
  }
  const match = what.pattern.exec(output);
  if (!match?.[1])
    throw what.notFound(`${bin} does not report ${articled(what.product)} version (is it ${what.product}?)`);
  return match[1];
}

/** "a Prometheus", "an Alertmanager". */
function articled(product: string): string {
  return `${/^[AEIOU]/.test(product) ? 'an' : 'a'} ${product}`;
}
