import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { PrometheusInstallError, PrometheusNotFoundError } from './errors.js';
import {
  findOnPath,
  locatePrometheus,
  PROMETHEUS_INSTALL_HINT,
  type PrometheusInstallation,
} from './locatePrometheus.js';

export interface EnsurePrometheusOptions {
  /** May the Debian package be installed when Prometheus is missing (root + apt-get only)? */
  allowInstall: boolean;
  /** Progress and decisions, one line each. */
  log?: (message: string) => void;
  /** The environment (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** The user id (default process.getuid()); installing needs root. */
  uid?: number;
  /**
   * Whether systemd runs as init (default: /run/systemd/system exists). The Debian package's maintainer scripts
   * start prometheus.service on :9090 under systemd, which this tool must not do, so it does not install there.
   */
  systemdRunning?: boolean;
}

const APT_INSTALL = ['install', '-y', '--no-install-recommends', 'prometheus'] as const;
/** apt-get's words when its package lists are missing or stale (a fresh container has none). */
const NEEDS_UPDATE = /Unable to locate package|has no installation candidate|is not available/i;

/**
 * Returns a usable Prometheus: the one found by locatePrometheus, else (when allowed, as root, with apt-get and no
 * systemd) the Debian package installed for the occasion. Otherwise throws PrometheusNotFoundError with a one-line
 * message telling the user what to do. Never starts the system service.
 */
export async function ensurePrometheus(options: EnsurePrometheusOptions): Promise<PrometheusInstallation> {
  const log = options.log ?? (() => undefined);
  const env = options.env ?? process.env;
  let notFound: PrometheusNotFoundError;
  try {
    return await locatePrometheus({ env });
  } catch (error) {
    if (!(error instanceof PrometheusNotFoundError)) throw error;
    // An explicit PROMETHEUS_BIN that does not work is the user's choice to fix, not a reason to install.
    if (env.PROMETHEUS_BIN?.trim()) throw error;
    notFound = error;
  }

  const skip = await installBlocker(options, env);
  if (skip) {
    log(`Prometheus not found; not installing it: ${skip}`);
    throw new PrometheusNotFoundError(`Prometheus not found (${skip}): ${PROMETHEUS_INSTALL_HINT}`, notFound.searched, {
      cause: notFound,
    });
  }

  const aptGet = (await findOnPath('apt-get', env)) ?? 'apt-get';
  log(`Prometheus not found; installing the Debian package: apt-get ${APT_INSTALL.join(' ')}`);
  try {
    let result = await run(aptGet, APT_INSTALL, env);
    if (result.exitCode !== 0 && NEEDS_UPDATE.test(result.output)) {
      log('apt-get has no package lists for prometheus; running apt-get update, then installing again');
      const update = await run(aptGet, ['update'], env);
      if (update.exitCode !== 0)
        throw new PrometheusInstallError('apt-get update', update.exitCode, tail(update.output));
      result = await run(aptGet, APT_INSTALL, env);
    }
    if (result.exitCode !== 0)
      throw new PrometheusInstallError(`apt-get ${APT_INSTALL.join(' ')}`, result.exitCode, tail(result.output));
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    throw new PrometheusNotFoundError(
      `Prometheus not found and installing it failed (${reason}): ${PROMETHEUS_INSTALL_HINT}`,
      notFound.searched,
      { cause: error },
    );
  }
  const installed = await locatePrometheus({ env });
  log(`Installed Prometheus ${installed.version} at ${installed.bin}`);
  return installed;
}

/** Why an automatic install is not possible here, or undefined when it is. */
async function installBlocker(options: EnsurePrometheusOptions, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (!options.allowInstall) return 'automatic install not allowed';
  if (process.platform !== 'linux') return `automatic install needs Linux with apt-get, this is ${process.platform}`;
  const uid = options.uid ?? process.getuid?.();
  if (uid !== 0) return 'automatic install needs root';
  if (!(await findOnPath('apt-get', env))) return 'automatic install needs apt-get';
  const systemdRunning = options.systemdRunning ?? existsSync('/run/systemd/system');
  if (systemdRunning) return 'the Debian package would start a system service on :9090 under systemd';
  return undefined;
}

function run(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ exitCode: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { ...env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const append = (chunk: Buffer): void => {
      // Keep the end only: apt-get can be chatty and only the last lines explain a failure.
      output = (output + chunk.toString('utf8')).slice(-16_384);
    };
    child.stdout.on('data', append);
    child.stderr.on('data', append);
    child.once('error', reject);
    child.once('close', (exitCode) => resolve({ exitCode, output }));
  });
}

function tail(text: string, lines = 10): string {
  return text.trim().split('\n').slice(-lines).join('\n');
}
