import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { PrometheusInstallError, PrometheusNotFoundError } from './errors.js';
import { ALERTMANAGER_INSTALL_HINT, type AlertmanagerInstallation, locateAlertmanager } from './locateAlertmanager.js';
import {
  findOnPath,
  locatePrometheus,
  PROMETHEUS_INSTALL_HINT,
  type PrometheusInstallation,
} from './locatePrometheus.js';

export interface EnsurePrometheusOptions {
  /** May the Debian packages be installed when Prometheus or Alertmanager is missing (root + apt-get only)? */
  allowInstall: boolean;
  /** Progress and decisions, one line each. */
  log?: (message: string) => void;
  /** The environment (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** The user id (default process.getuid()); installing needs root. */
  uid?: number;
  /**
   * Whether systemd runs as init (default: /run/systemd/system exists). The Debian packages' maintainer scripts
   * start prometheus.service on :9090 (and prometheus-alertmanager.service on :9093) under systemd, which this tool
   * must not do, so it does not install there.
   */
  systemdRunning?: boolean;
}

/** Prometheus, and the Alertmanager that stands in for AMP's alert manager when there is one. */
export interface TwinPrometheusInstallation extends PrometheusInstallation {
  /** undefined when Alertmanager is missing and could not be installed: the twin then runs without one. */
  alertmanager: AlertmanagerInstallation | undefined;
}

const APT_INSTALL = ['install', '-y', '--no-install-recommends'] as const;
/** apt-get's words when its package lists are missing or stale (a fresh container has none). */
const NEEDS_UPDATE = /Unable to locate package|has no installation candidate|is not available/i;

/**
 * Returns a usable Prometheus (and Alertmanager): the ones found by locatePrometheus and locateAlertmanager, else
 * (when allowed, as root, with apt-get and no systemd) Debian's `prometheus` and `prometheus-alertmanager` packages
 * installed for the occasion. Without Prometheus it throws PrometheusNotFoundError with a one-line message telling the
 * user what to do; without Alertmanager it says so in the log and returns `alertmanager: undefined` (only the twin's
 * AMP alert manager needs it). Never starts a system service.
 */
export async function ensurePrometheus(options: EnsurePrometheusOptions): Promise<TwinPrometheusInstallation> {
  const log = options.log ?? (() => undefined);
  const env = options.env ?? process.env;
  let prometheus: PrometheusInstallation | undefined;
  let notFound: PrometheusNotFoundError | undefined;
  try {
    prometheus = await locatePrometheus({ env });
  } catch (error) {
    if (!(error instanceof PrometheusNotFoundError)) throw error;
    // An explicit PROMETHEUS_BIN that does not work is the user's choice to fix, not a reason to install.
    if (env.PROMETHEUS_BIN?.trim()) throw error;
    notFound = error;
  }
  // An explicit ALERTMANAGER_BIN that does not work throws here, for the same reason.
  const alertmanager = await locateAlertmanager({ env });
  if (prometheus && alertmanager) return { ...prometheus, alertmanager };

  const packages = [...(prometheus ? [] : ['prometheus']), ...(alertmanager ? [] : ['prometheus-alertmanager'])];
  const missing = packages.join(' and ');
  const skip = await installBlocker(options, env);
  if (skip) {
    log(`${missing} not found; not installing: ${skip}`);
    if (!prometheus)
      throw new PrometheusNotFoundError(
        `Prometheus not found (${skip}): ${PROMETHEUS_INSTALL_HINT}`,
        notFound?.searched ?? [],
        { cause: notFound },
      );
    log(
      `the twin runs without Alertmanager: AMP alert manager definitions fail until you ${ALERTMANAGER_INSTALL_HINT}`,
    );
    return { ...prometheus, alertmanager: undefined };
  }

  const aptGet = (await findOnPath('apt-get', env)) ?? 'apt-get';
  const install = [...APT_INSTALL, ...packages];
  log(`${missing} not found; installing the Debian packages: apt-get ${install.join(' ')}`);
  try {
    let result = await run(aptGet, install, env);
    if (result.exitCode !== 0 && NEEDS_UPDATE.test(result.output)) {
      log(`apt-get has no package lists for ${missing}; running apt-get update, then installing again`);
      const update = await run(aptGet, ['update'], env);
      if (update.exitCode !== 0)
        throw new PrometheusInstallError('apt-get update', update.exitCode, tail(update.output));
      result = await run(aptGet, install, env);
    }
    if (result.exitCode !== 0)
      throw new PrometheusInstallError(`apt-get ${install.join(' ')}`, result.exitCode, tail(result.output));
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    if (!prometheus)
      throw new PrometheusNotFoundError(
        `Prometheus not found and installing it failed (${reason}): ${PROMETHEUS_INSTALL_HINT}`,
        notFound?.searched ?? [],
        { cause: error },
      );
    log(`installing prometheus-alertmanager failed (${reason}): the twin runs without Alertmanager`);
    return { ...prometheus, alertmanager: undefined };
  }
  const installed = prometheus ?? (await locatePrometheus({ env }));
  if (!prometheus) log(`Installed Prometheus ${installed.version} at ${installed.bin}`);
  const installedAlertmanager = alertmanager ?? (await locateAlertmanager({ env }));
  if (!alertmanager && installedAlertmanager)
    log(`Installed Alertmanager ${installedAlertmanager.version} at ${installedAlertmanager.bin}`);
  return { ...installed, alertmanager: installedAlertmanager };
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
