import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { closeSync, openSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, open, rm, stat, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import {
  PrometheusConfigError,
  PrometheusError,
  PrometheusStartError,
  PrometheusTargetsDownError,
  type TargetState,
} from './errors.js';
import { findOnPath } from './locatePrometheus.js';
import {
  formatDuration,
  renderPrometheusConfig,
  SCRAPE_JOB_NAMES,
  type ScrapeJobName,
  type TargetGroup,
  type TargetGroups,
  validateTargetGroups,
} from './scrapeConfig.js';
import { targetFilePaths, writeTargetFiles } from './targetFiles.js';

const execFileAsync = promisify(execFile);

export interface StartPrometheusOptions {
  /** The Prometheus binary (from ensurePrometheus / locatePrometheus). */
  bin: string;
  scrapeIntervalSeconds: number;
  /** Rule evaluation interval (default: the scrape interval). */
  evaluationIntervalSeconds?: number;
  /** The initial targets per job; change them later with setTargets. */
  targetGroups: TargetGroups;
  /** Rule files to load (resolved to absolute paths). */
  ruleFiles?: readonly string[];
  /**
   * Rule files given as their text, by file name (`vllm-alerts.rules.yaml`): written into the data directory and
   * loaded after `ruleFiles`, so a caller holding rules in code needs no file of its own (and nothing to clean up).
   */
  ruleFileContents?: Readonly<Record<string, string>>;
  /** `global.external_labels`, e.g. `{ cluster: 'twin' }` as a Prometheus that remote-writes to AMP would set. */
  externalLabels?: Record<string, string>;
  /** How long to wait for `/-/ready` (default 30 s). */
  readyTimeoutMs?: number;
  /** Progress and decisions, one line each. */
  log?: (message: string) => void;
}

export interface WaitForTargetsOptions {
  timeoutMs: number;
  /** Default 250 ms. */
  pollIntervalMs?: number;
}

/** A running Prometheus started by this process, with its own port, config and temporary TSDB. */
export interface PrometheusInstance {
  /** `http://127.0.0.1:PORT` */
  url: string;
  pid: number;
  /** Temporary directory holding the config, the file_sd files, the TSDB and the log; removed by stop(). */
  dataDir: string;
  configFile: string;
  /** Prometheus's stdout and stderr. */
  logFile: string;
  /**
   * Replaces the targets of every job (a job left out has none). Prometheus 2.x starts scraping new targets about
   * 5 s later (its discovery-to-scrape throttle); waitForTargets waits for that.
   */
  setTargets(groups: TargetGroups): Promise<void>;
  /** Resolves once every current target is discovered and `up`; else throws PrometheusTargetsDownError. */
  waitForTargets(options: WaitForTargetsOptions): Promise<TargetState[]>;
  /** Reloads the config and rule files (`POST /-/reload`). */
  reload(): Promise<void>;
  /** SIGTERM, SIGKILL after a grace period, then removes the data directory. Safe to call twice. */
  stop(): Promise<void>;
}

const DEFAULT_READY_TIMEOUT_MS = 30_000;
/** A plain file name: no directories, so a rule file cannot be written outside the data directory. */
const RULE_FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Writes each rule file into `dir`; returns their absolute paths (a bad file name is refused, naming it). */
async function writeRuleFiles(dir: string, contents: Readonly<Record<string, string>>): Promise<string[]> {
  const names = Object.keys(contents);
  if (names.length === 0) return [];
  await mkdir(dir);
  const paths: string[] = [];
  for (const name of names) {
    if (!RULE_FILE_NAME.test(name))
      throw new PrometheusConfigError(
        'ruleFileContents',
        name,
        'must be keyed by plain file names: 1-128 letters, digits, ".", "_" or "-"',
      );
    const path = join(dir, name);
    await writeFile(path, contents[name] ?? '');
    paths.push(path);
  }
  return paths;
}
const STOP_GRACE_MS = 5_000;
const PORT_ATTEMPTS = 5;
const LOG_TAIL_LINES = 20;
const ADDRESS_IN_USE = /address already in use/i;

/** Starts Prometheus on a free loopback port with file-based discovery for the vllm, dcgm and cAdvisor jobs. */
export async function startPrometheus(options: StartPrometheusOptions): Promise<PrometheusInstance> {
  const log = options.log ?? (() => undefined);
  if (typeof options.bin !== 'string' || options.bin.length === 0)
    throw new PrometheusConfigError('bin', options.bin, 'must be the path of the Prometheus binary');
  let groups = validateTargetGroups(options.targetGroups);
  formatDuration(options.scrapeIntervalSeconds, 'scrapeIntervalSeconds');
  if (options.evaluationIntervalSeconds !== undefined)
    formatDuration(options.evaluationIntervalSeconds, 'evaluationIntervalSeconds');
  const readyTimeoutMs = options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;

  const dataDir = await mkdtemp(join(tmpdir(), 'vllm-pilot-prometheus-'));
  const configFile = join(dataDir, 'prometheus.yml');
  const logFile = join(dataDir, 'prometheus.log');
  const tsdbDir = join(dataDir, 'tsdb');
  const targetFiles = targetFilePaths(join(dataDir, 'targets'));
  try {
    await mkdir(join(dataDir, 'targets'));
    await mkdir(tsdbDir);
    await writeTargetFiles(targetFiles, groups);
    const ownRuleFiles = await writeRuleFiles(join(dataDir, 'rules'), options.ruleFileContents ?? {});
    await writeFile(
      configFile,
      renderPrometheusConfig({
        scrapeIntervalSeconds: options.scrapeIntervalSeconds,
        ...(options.evaluationIntervalSeconds !== undefined
          ? { evaluationIntervalSeconds: options.evaluationIntervalSeconds }
          : {}),
        targetFiles,
        ruleFiles: [...(options.ruleFiles ?? []).map((file) => resolve(file)), ...ownRuleFiles],
        ...(options.externalLabels ? { externalLabels: options.externalLabels } : {}),
      }),
    );
    const launcher = await deathSignalLauncher();
    if (!launcher) log('setpriv --pdeathsig is not available: Prometheus is stopped when this process exits normally');

    for (let attempt = 1; ; attempt++) {
      // A port freed here can be taken by someone else before Prometheus binds it: retry on "address in use".
      const port = await pickFreePort();
      const url = `http://127.0.0.1:${port}`;
      const logOffset = await fileSize(logFile);
      const args = [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${tsdbDir}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--web.enable-lifecycle',
      ];
      const proc = launch(options.bin, args, logFile, launcher);
      const outcome = await waitUntilReady(url, proc, tsdbDir, readyTimeoutMs);
      // Ready means our instance (identified by its TSDB path) answered, so the child is running and has a pid.
      if (outcome === 'ready') {
        const pid = proc.child.pid ?? -1;
        log(`Prometheus ready at ${url} (pid ${pid}, data ${dataDir})`);
        return makeInstance({ url, proc, pid, dataDir, configFile, logFile, log });
      }
      await terminate(proc);
      const attemptLog = await readFrom(logFile, logOffset);
      const logTail = tailLines(attemptLog, LOG_TAIL_LINES);
      if (outcome !== 'timeout' && ADDRESS_IN_USE.test(attemptLog) && attempt < PORT_ATTEMPTS) {
        log(`port ${port} was taken before Prometheus could bind it; trying another (attempt ${attempt + 1})`);
        continue;
      }
      const problem =
        outcome === 'timeout'
          ? `not ready at ${url}/-/ready within ${readyTimeoutMs} ms`
          : `it exited (${describeExit(outcome)}): ${firstLogError(attemptLog)}`;
      throw new PrometheusStartError(options.bin, problem, logTail);
    }
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }

  function makeInstance(started: {
    url: string;
    proc: Launched;
    pid: number;
    dataDir: string;
    configFile: string;
    logFile: string;
    log: (message: string) => void;
  }): PrometheusInstance {
    const { url, proc, pid } = started;
    let exitInfo: ExitInfo | undefined;
    let stopping: Promise<void> | undefined;
    void proc.exited.then((info) => {
      exitInfo = info;
      if (!stopping) started.log(`Prometheus (pid ${pid}) exited unexpectedly: ${describeExit(info)}`);
    });
    // If this process ends without stop() (a crash, process.exit), do not leave Prometheus behind. Only
    // synchronous work is possible in an 'exit' listener.
    const onParentExit = (): void => {
      if (!exitInfo) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      try {
        rmSync(started.dataDir, { recursive: true, force: true });
      } catch {
        // Best effort: the directory is in the system's temporary folder.
      }
    };
    process.on('exit', onParentExit);

    return {
      url,
      pid,
      dataDir: started.dataDir,
      configFile: started.configFile,
      logFile: started.logFile,
      async setTargets(next) {
        const validated = validateTargetGroups(next);
        await writeTargetFiles(targetFiles, validated);
        groups = validated;
      },
      waitForTargets(waitOptions) {
        return waitForTargets(url, groups, waitOptions);
      },
      async reload() {
        const response = await fetch(`${url}/-/reload`, { method: 'POST', signal: AbortSignal.timeout(10_000) });
        const body = await response.text();
        if (!response.ok)
          throw new PrometheusError(`Prometheus reload failed with HTTP ${response.status}: ${body.trim()}`);
      },
      stop() {
        stopping ??= (async () => {
          process.removeListener('exit', onParentExit);
          await terminate(proc);
          await rm(started.dataDir, { recursive: true, force: true });
          started.log(`Prometheus (pid ${pid}) stopped`);
        })();
        return stopping;
      },
    };
  }
}

interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  error?: Error;
}

interface Launched {
  child: ChildProcess;
  exited: Promise<ExitInfo>;
}

function launch(bin: string, args: string[], logFile: string, launcher: string | undefined): Launched {
  // Prometheus logs to stderr: both streams go to the log file, which the child writes directly.
  const fd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    // setpriv --pdeathsig execs Prometheus (same PID) with a parent-death signal, so it dies with this process.
    child = launcher
      ? spawn(launcher, ['--pdeathsig', 'SIGTERM', '--', bin, ...args], { stdio: ['ignore', fd, fd] })
      : spawn(bin, args, { stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  const exited = new Promise<ExitInfo>((resolveExit) => {
    child.once('error', (error) => resolveExit({ code: null, signal: null, error }));
    child.once('exit', (code, signal) => resolveExit({ code, signal }));
  });
  return { child, exited };
}

/** SIGTERM, then SIGKILL after the grace period; resolves once the process has exited. */
async function terminate(proc: Launched): Promise<void> {
  const { child } = proc;
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) {
    await proc.exited;
    return;
  }
  child.kill('SIGTERM');
  if ((await withTimeout(proc.exited, STOP_GRACE_MS)) === TIMED_OUT) {
    child.kill('SIGKILL');
    await proc.exited;
  }
}

/**
 * Polls `/-/ready` until our Prometheus answers. Another process may have taken the port in the meantime, so
 * readiness also checks the TSDB path in `/api/v1/status/flags`.
 */
async function waitUntilReady(
  url: string,
  proc: Launched,
  tsdbDir: string,
  timeoutMs: number,
): Promise<'ready' | 'timeout' | ExitInfo> {
  let exitInfo: ExitInfo | undefined;
  void proc.exited.then((info) => (exitInfo = info));
  const startedAt = performance.now();
  for (;;) {
    if (exitInfo) return exitInfo;
    try {
      const response = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.ok) {
        const flags = await fetch(`${url}/api/v1/status/flags`, { signal: AbortSignal.timeout(2_000) });
        const body = (await flags.json()) as { data?: Record<string, string> };
        if (body.data?.['storage.tsdb.path'] === tsdbDir) return 'ready';
      }
    } catch {
      // Not listening yet.
    }
    if (exitInfo) return exitInfo;
    if (performance.now() - startedAt > timeoutMs) return 'timeout';
    await withTimeout(proc.exited, 50);
  }
}

interface ApiTarget {
  discoveredLabels?: Record<string, string>;
  scrapePool?: string;
  health?: string;
  lastError?: string;
}

async function waitForTargets(
  url: string,
  groups: Record<ScrapeJobName, TargetGroup[]>,
  options: WaitForTargetsOptions,
): Promise<TargetState[]> {
  const { timeoutMs, pollIntervalMs = 250 } = options;
  if (!(timeoutMs >= 0)) throw new PrometheusConfigError('timeoutMs', timeoutMs, 'must be a number of ms >= 0');
  const expected = SCRAPE_JOB_NAMES.flatMap((job) =>
    [...new Set(groups[job].flatMap((group) => group.targets))].map((address) => ({ job, address })),
  );
  const startedAt = performance.now();
  let apiProblem = '';
  for (;;) {
    let active: ApiTarget[] = [];
    try {
      const response = await fetch(`${url}/api/v1/targets?state=active`, { signal: AbortSignal.timeout(5_000) });
      const body = (await response.json()) as { data?: { activeTargets?: ApiTarget[] } };
      active = body.data?.activeTargets ?? [];
      apiProblem = response.ok ? '' : `targets API answered HTTP ${response.status}`;
    } catch (error) {
      apiProblem = `targets API unreachable: ${error instanceof Error ? error.message : String(error)}`;
    }
    const states: TargetState[] = expected.map(({ job, address }) => {
      const target = active.find((t) => t.scrapePool === job && t.discoveredLabels?.__address__ === address);
      if (!target) return { job, address, health: 'missing', lastError: apiProblem };
      const health = target.health === 'up' || target.health === 'down' ? target.health : 'unknown';
      return { job, address, health, lastError: target.lastError ?? '' };
    });
    if (states.every((state) => state.health === 'up')) return states;
    if (performance.now() - startedAt >= timeoutMs) throw new PrometheusTargetsDownError(timeoutMs, states);
    await delay(pollIntervalMs);
  }
}

/** A free loopback port: listen on port 0, read the port, close. */
function pickFreePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolvePort(port));
    });
  });
}

let launcherLookup: Promise<string | undefined> | undefined;

/** setpriv (util-linux) when it supports --pdeathsig, looked up once per process. */
function deathSignalLauncher(): Promise<string | undefined> {
  launcherLookup ??= (async () => {
    if (process.platform !== 'linux') return undefined;
    const setpriv = await findOnPath('setpriv');
    if (!setpriv) return undefined;
    try {
      const { stdout } = await execFileAsync(setpriv, ['--help'], { timeout: 5_000, encoding: 'utf8' });
      return stdout.includes('--pdeathsig') ? setpriv : undefined;
    } catch {
      return undefined;
    }
  })();
  return launcherLookup;
}

const TIMED_OUT = Symbol('timed out');

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolveTimeout) => {
    timer = setTimeout(() => resolveTimeout(TIMED_OUT), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolveDelay) => setTimeout(resolveDelay, ms));
}

async function fileSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

async function readFrom(path: string, offset: number): Promise<string> {
  try {
    const handle = await open(path, 'r');
    try {
      const { size } = await handle.stat();
      const start = Math.max(offset, size - 64 * 1024);
      const buffer = Buffer.alloc(Math.max(0, size - start));
      await handle.read(buffer, 0, buffer.length, start);
      return buffer.toString('utf8');
    } finally {
      await handle.close();
    }
  } catch {
    return '';
  }
}

function tailLines(text: string, lines: number): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** The first error Prometheus logged (its `err`, else its `msg`), else the last line: the reason it stopped. */
function firstLogError(text: string): string {
  const lines = text.trimEnd().split('\n');
  const errorLine = lines.find((line) => line.includes('level=error'));
  if (!errorLine) return lines.at(-1) ?? 'no log output';
  const field = /\berr="((?:[^"\\]|\\.)*)"/.exec(errorLine) ?? /\bmsg="((?:[^"\\]|\\.)*)"/.exec(errorLine);
  return field?.[1]?.replace(/\\"/g, '"') ?? errorLine;
}

function describeExit(info: ExitInfo): string {
  if (info.error) return info.error.message;
  return info.signal ? `signal ${info.signal}` : `code ${info.code}`;
}
