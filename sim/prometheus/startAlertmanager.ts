import { AlertmanagerStartError, PrometheusError } from './errors.js';
import { guardProcesses, launchServer, terminate } from './launch.js';

export interface StartAlertmanagerOptions {
  /** The Alertmanager binary (from ensurePrometheus / locateAlertmanager). */
  bin: string;
  configFile: string;
  /** `--storage.path`: the notification log and silences. */
  storageDir: string;
  logFile: string;
  /**
   * A string that only this instance's config holds (an absolute path in it, such as its templates' directory): how
   * readiness knows the server answering on the port is ours, in `/api/v2/status` (`config.original`).
   */
  identityMarker: string;
  /** Removed with the process if this Node process ends without stop(). */
  dataDir: string;
  /** The child's whole environment (it signs its SNS requests with the AWS credentials found there). */
  env: NodeJS.ProcessEnv;
  /** How long to wait for `/-/ready` (default 30 s). */
  readyTimeoutMs?: number;
  log?: (message: string) => void;
}

/** An Alertmanager started by this process on a free loopback port. */
export interface RunningAlertmanager {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** `127.0.0.1:PORT`, as Prometheus's `alerting` section names it. */
  address: string;
  pid: number;
  /** Re-reads the config file and its templates (`POST /-/reload`); throws with Alertmanager's reason when refused. */
  reload(): Promise<void>;
  /** SIGTERM, SIGKILL after a grace period. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Starts Debian's `prometheus-alertmanager` on a free loopback port, alone (no cluster: `--cluster.listen-address=`
 * would otherwise bind :9094 on every interface), and waits until it is ready.
 */
export async function startAlertmanager(options: StartAlertmanagerOptions): Promise<RunningAlertmanager> {
  const log = options.log ?? (() => undefined);
  const running = await launchServer({
    bin: options.bin,
    args: [`--config.file=${options.configFile}`, `--storage.path=${options.storageDir}`, '--cluster.listen-address='],
    async isOurs(url) {
      const status = await fetch(`${url}/api/v2/status`, { signal: AbortSignal.timeout(2_000) });
      const body = (await status.json()) as { config?: { original?: string } };
      return body.config?.original?.includes(options.identityMarker) === true;
    },
    logFile: options.logFile,
    readyTimeoutMs: options.readyTimeoutMs ?? 30_000,
    role: 'Alertmanager',
    log,
    env: options.env,
    startError: (problem, logTail) => new AlertmanagerStartError(options.bin, problem, logTail),
  });
  const releaseGuard = guardProcesses([{ running, role: 'Alertmanager' }], options.dataDir, log);
  let stopping: Promise<void> | undefined;
  return {
    url: running.url,
    address: new URL(running.url).host,
    pid: running.pid,
    async reload() {
      const response = await fetch(`${running.url}/-/reload`, { method: 'POST', signal: AbortSignal.timeout(10_000) });
      const body = await response.text();
      if (!response.ok)
        throw new PrometheusError(`Alertmanager reload failed with HTTP ${response.status}: ${body.trim()}`);
    },
    stop() {
      stopping ??= (async () => {
        releaseGuard();
        await terminate(running.proc);
        log(`Alertmanager (pid ${running.pid}) stopped`);
      })();
      return stopping;
    },
  };
}
