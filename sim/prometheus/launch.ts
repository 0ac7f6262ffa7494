import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { closeSync, openSync, rmSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { promisify } from 'node:util';
import { PrometheusStartError } from './errors.js';
import { findOnPath } from './locatePrometheus.js';

/**
 * The process plumbing every Prometheus of the twin shares (the one that scrapes and answers, the agent, the
 * receiver), and its Alertmanager: a free loopback port, a parent-death signal, readiness that proves the answer came
 * from our process, and a stop that always ends it.
 */

const execFileAsync = promisify(execFile);

const STOP_GRACE_MS = 5_000;
const PORT_ATTEMPTS = 5;
const LOG_TAIL_LINES = 20;
const ADDRESS_IN_USE = /address already in use/i;

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  error?: Error;
}

export interface Launched {
  child: ChildProcess;
  exited: Promise<ExitInfo>;
}

/**
 * The flag in `/api/v1/status/flags` whose value is unique to our process: `storage.tsdb.path` for a server,
 * `storage.agent.path` for an agent (an agent still reports the default `storage.tsdb.path`, which is not ours).
 */
export interface ProcessIdentity {
  flag: 'storage.tsdb.path' | 'storage.agent.path';
  path: string;
}

export interface LaunchPrometheusOptions {
  bin: string;
  /** Every argument but `--web.listen-address`, which launch adds for the port it picked. */
  args: readonly string[];
  identity: ProcessIdentity;
  logFile: string;
  readyTimeoutMs: number;
  /** Names the process in log lines: `Prometheus`, `Prometheus agent`. */
  role: string;
  log: (message: string) => void;
}

/** What launchServer needs to start any Prometheus-family server (Prometheus, Alertmanager) on a free port. */
export interface LaunchServerOptions {
  bin: string;
  /** Every argument but `--web.listen-address`, which launch adds for the port it picked. */
  args: readonly string[];
  /** Does the server answering at `url` belong to this launch (and not to a process that took the port first)? */
  isOurs: (url: string) => Promise<boolean>;
  logFile: string;
  readyTimeoutMs: number;
  /** Names the process in log lines: `Prometheus`, `Alertmanager`. */
  role: string;
  log: (message: string) => void;
  /** The child's environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** The error thrown when the server exits or stays unready: the problem and the tail of its log. */
  startError: (problem: string, logTail: string) => Error;
}

export interface RunningPrometheus {
  /** `http://127.0.0.1:PORT` */
  url: string;
  pid: number;
  proc: Launched;
}

/**
 * Starts Prometheus on a free loopback port and waits until it is ready; throws PrometheusStartError with the tail of
 * its log when it exits or stays unready.
 */
export function launchPrometheus(options: LaunchPrometheusOptions): Promise<RunningPrometheus> {
  const { identity } = options;
  return launchServer({
    ...options,
    // Another Prometheus may have taken the port meanwhile: ours is the one with our storage path.
    async isOurs(url) {
      const flags = await fetch(`${url}/api/v1/status/flags`, { signal: AbortSignal.timeout(2_000) });
      const body = (await flags.json()) as { data?: Record<string, string> };
      return body.data?.[identity.flag] === identity.path;
    },
    startError: (problem, logTail) => new PrometheusStartError(options.bin, problem, logTail),
  });
}

/**
 * Starts a server of the Prometheus family (it serves `/-/ready` and takes `--web.listen-address`) on a free loopback
 * port and waits until it is ready; throws `startError(...)` with the tail of its log when it exits or stays unready.
 */
export async function launchServer(options: LaunchServerOptions): Promise<RunningPrometheus> {
  const { bin, isOurs, logFile, readyTimeoutMs, role, log } = options;
  const launcher = await deathSignalLauncher();
  if (!launcher) log(`setpriv --pdeathsig is not available: ${role} is stopped when this process exits normally`);
  for (let attempt = 1; ; attempt++) {
    // A port freed here can be taken by someone else before Prometheus binds it: retry on "address in use".
    const port = await pickFreePort();
    const url = `http://127.0.0.1:${port}`;
    const logOffset = await fileSize(logFile);
    const proc = launch(
      bin,
      [...options.args, `--web.listen-address=127.0.0.1:${port}`],
      logFile,
      launcher,
      options.env,
    );
    const outcome = await waitUntilReady(url, proc, isOurs, readyTimeoutMs);
    // Ready means our instance answered, so the child is running and has a pid.
    if (outcome === 'ready') return { url, pid: proc.child.pid ?? -1, proc };
    await terminate(proc);
    const attemptLog = await readFrom(logFile, logOffset);
    const logTail = tailLines(attemptLog, LOG_TAIL_LINES);
    if (outcome !== 'timeout' && ADDRESS_IN_USE.test(attemptLog) && attempt < PORT_ATTEMPTS) {
      log(`port ${port} was taken before ${role} could bind it; trying another (attempt ${attempt + 1})`);
      continue;
    }
    const problem =
      outcome === 'timeout'
        ? `not ready at ${url}/-/ready within ${readyTimeoutMs} ms`
        : `it exited (${describeExit(outcome)}): ${firstLogError(attemptLog)}`;
    throw options.startError(problem, logTail);
  }
}

/**
 * Logs an unexpected exit of each process, and kills them and removes `dataDir` if this Node process ends without
 * stop() (a crash, process.exit). Returns the function stop() calls first, so its own SIGTERM is not "unexpected".
 */
export function guardProcesses(
  processes: ReadonlyArray<{ running: RunningPrometheus; role: string }>,
  dataDir: string,
  log: (message: string) => void,
): () => void {
  let stopping = false;
  const exited = new Set<number>();
  for (const { running, role } of processes) {
    void running.proc.exited.then((info) => {
      exited.add(running.pid);
      if (!stopping) log(`${role} (pid ${running.pid}) exited unexpectedly: ${describeExit(info)}`);
    });
  }
  // Only synchronous work is possible in an 'exit' listener.
  const onParentExit = (): void => {
    for (const { running } of processes) {
      if (exited.has(running.pid)) continue;
      try {
        process.kill(running.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    try {
      rmSync(dataDir, { recursive: true, force: true });
    } catch {
      // Best effort: the directory is in the system's temporary folder.
    }
  };
  process.on('exit', onParentExit);
  return () => {
    stopping = true;
    process.removeListener('exit', onParentExit);
  };
}

function launch(
  bin: string,
  args: string[],
  logFile: string,
  launcher: string | undefined,
  env: NodeJS.ProcessEnv | undefined,
): Launched {
  // Prometheus logs to stderr: both streams go to the log file, which the child writes directly.
  const fd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    // setpriv --pdeathsig execs Prometheus (same PID) with a parent-death signal, so it dies with this process.
    child = launcher
      ? spawn(launcher, ['--pdeathsig', 'SIGTERM', '--', bin, ...args], { stdio: ['ignore', fd, fd], env })
      : spawn(bin, args, { stdio: ['ignore', fd, fd], env });
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
export async function terminate(proc: Launched): Promise<void> {
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
 * Polls `/-/ready` until our server answers. Another process may have taken the port in the meantime, so readiness
 * also asks `isOurs` (for Prometheus: the storage path in `/api/v1/status/flags`).
 */
async function waitUntilReady(
  url: string,
  proc: Launched,
  isOurs: (url: string) => Promise<boolean>,
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
      if (response.ok && (await isOurs(url))) return 'ready';
    } catch {
      // Not listening yet.
    }
    if (exitInfo) return exitInfo;
    if (performance.now() - startedAt > timeoutMs) return 'timeout';
    await withTimeout(proc.exited, 50);
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
