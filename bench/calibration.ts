/**
 * `npm run bench:calibration`: for twin profiles whose one-replica capacity is about 8, 25, 55 and 120 requests/s,
 * runs the calibration state machine with the guide's `linear` plan and with `adaptive`, exactly as
 * `vllm-pilot calibrate` does against a twin (a fresh twin for each), and prints per profile the true capacity, the
 * detected saturation, its error, the load-test seconds spent and adaptive / linear. Asserts nothing.
 *
 *   npm run bench:calibration -- [--json] [--markdown] [--hold SECONDS] [--rest SECONDS] [--warmup N]
 *                                [--parallel N] [--only PROFILE,...] [--strategies linear,adaptive]
 *
 * `linear` runs the guide's plan as the guide does (7 steps, every hold and rest in full); `adaptive` its defaults.
 * Hold and rest are halved from the guide's 60 s / 30 s for both strategies (default 30 s and 15 s: the holds stay
 * several request lifetimes long), and `--parallel` calibrations (default 5) run at once, each in its own process with
 * its own twin, so the whole run takes about ten minutes. `--json` prints the results as JSON instead of the table;
 * `--markdown` prints the table as Markdown (for docs/benchmarks.md). Progress goes to stderr.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { printJson } from '../cli/options.js';
import { calibrationInputSchema } from '../shared/calibration/index.js';
import { STRATEGIES, type CalibrationStrategy } from '../shared/calibration/strategies/index.js';
import { calibrateOnTwin, loadProfile, measureCapacity, startTwin, type Twin } from '../sim/harness/index.js';
import {
  adaptiveToLinear,
  renderCalibrationBench,
  replayRests,
  summarizeRun,
  type CalibrationBenchResults,
  type ProfileComparison,
  type StrategyRun,
} from './calibrationSummary.js';
import { BenchError, BenchUsageError } from './errors.js';
import { benchEnvironment } from './report.js';

/** The guide's request shape (the calibration input's default): a 35-token prompt, max_tokens 100. */
const SHAPE = { promptTokens: 35, maxTokens: 100 } as const;

/** The benchmark's profiles (sim/profile/profiles/bench/), lowest capacity first. */
const PROFILES = ['llama-70b-h100', 'llama-8b-l4', 'ministral-8b-l40s-fast', 'llama-8b-h100'] as const;
const PROFILE_DIR = fileURLToPath(new URL('../sim/profile/profiles/bench/', import.meta.url));

const STRATEGY_ORDER = ['linear', 'adaptive'] as const;

const DEFAULTS = { holdSeconds: 30, restSeconds: 15, warmupRequests: 12, parallel: 5 } as const;

interface CommandLine {
  json: boolean;
  markdown: boolean;
  holdSeconds: number;
  restSeconds: number;
  warmupRequests: number;
  /** Calibrations run at once, each in its own process with its own twin. */
  parallel: number;
  profiles: string[];
  strategies: string[];
}

const USAGE =
  '[--json] [--markdown] [--hold SECONDS] [--rest SECONDS] [--warmup N] [--parallel N] ' +
  `[--only ${PROFILES.join(',')}] [--strategies ${STRATEGY_ORDER.join(',')}]`;

function numberOption(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!(Number.isFinite(n) && n >= min && n <= max))
    throw new BenchUsageError(name, `${JSON.stringify(value)} is not valid`, `a number from ${min} to ${max}`);
  return n;
}

function listOption(name: string, value: string | undefined, accepted: readonly string[]): string[] {
  if (value === undefined) return [...accepted];
  const names = value.split(',').map((part) => part.trim());
  for (const n of names)
    if (!accepted.includes(n))
      throw new BenchUsageError(
        name,
        `${JSON.stringify(n)} is not one of them`,
        `a comma-separated list of ${accepted.join(', ')}`,
      );
  // Keep the benchmark's order whatever order was typed.
  return accepted.filter((a) => names.includes(a));
}

function parseCommandLine(argv: string[]): CommandLine {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: argv,
      options: {
        json: { type: 'boolean' },
        markdown: { type: 'boolean' },
        hold: { type: 'string' },
        rest: { type: 'string' },
        warmup: { type: 'string' },
        parallel: { type: 'string' },
        only: { type: 'string' },
        strategies: { type: 'string' },
      },
      strict: true,
    }).values;
  } catch (error) {
    throw new BenchUsageError('arguments', (error as Error).message, USAGE, { cause: error });
  }
  const text = (key: string) => values[key] as string | undefined;
  return {
    json: values.json === true,
    markdown: values.markdown === true,
    // The k6 Job and the hold Wait take whole seconds; 60 s is the guide's own hold.
    holdSeconds: Math.round(numberOption('--hold', text('hold'), DEFAULTS.holdSeconds, 2, 60)),
    restSeconds: Math.round(numberOption('--rest', text('rest'), DEFAULTS.restSeconds, 0, 30)),
    warmupRequests: Math.round(numberOption('--warmup', text('warmup'), DEFAULTS.warmupRequests, 0, 100)),
    parallel: Math.round(numberOption('--parallel', text('parallel'), DEFAULTS.parallel, 1, 8)),
    profiles: listOption('--only', text('only'), PROFILES),
    strategies: listOption('--strategies', text('strategies'), STRATEGY_ORDER),
  };
}

/** The early-ending watch interval scaled like the hold (the input's default: 10 s for the guide's 60 s), whole seconds. */
function watchSeconds(holdSeconds: number): number {
  return Math.max(1, Math.ceil((10 * holdSeconds) / 60));
}

/**
 * The calibration input of one strategy; the twin fills in the target, as `calibrate --state-file` does. `linear` runs
 * the guide's plan as the guide runs it: all 7 steps, each held in full (no early ending, no stop at the first
 * saturated step), which is the baseline the issue measures against. `adaptive` runs with its defaults, early ending
 * included, its look interval scaled like the hold.
 */
function benchInput(strategy: string, cl: CommandLine): Record<string, unknown> {
  const timing = { holdSeconds: cl.holdSeconds, restSeconds: cl.restSeconds };
  return {
    testReplicas: 1,
    request: { ...SHAPE },
    warmup: { requests: cl.warmupRequests },
    plan:
      strategy === 'linear'
        ? { strategy, ...timing, stopAtSaturation: false, earlyStop: { enabled: false } }
        : { strategy, ...timing, earlyStop: { watchSeconds: watchSeconds(cl.holdSeconds) } },
    // Short polls: the bench's twin rolls out and scrapes within seconds (the same for both strategies).
    rollout: { timeoutSeconds: 120, pollSeconds: 1 },
    readiness: { timeoutSeconds: 180, pollSeconds: 1 },
  };
}

/** Runs one calibration through the state machine against the twin and sums it up; a failure is a result too. */
async function calibrateOnce(
  twin: Twin,
  strategy: string,
  trueCapacityRps: number,
  cl: CommandLine,
  log: (line: string) => void,
): Promise<StrategyRun> {
  const out = await mkdtemp(join(tmpdir(), 'vllm-pilot-bench-calibration-'));
  const input = benchInput(strategy, cl);
  const began = performance.now();
  const executionName = `bench-${twin.profile.name}-${strategy}`.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 80);
  try {
    const { report } = await calibrateOnTwin(twin.state, { input, reportsDir: out, executionName });
    const wallSeconds = (performance.now() - began) / 1000;
    const known = (STRATEGIES as Readonly<Record<string, CalibrationStrategy | undefined>>)[strategy];
    if (known === undefined) throw new BenchError(`strategy ${strategy} ran but is not in the registry`);
    const plan = calibrationInputSchema.shape.plan.parse(input.plan);
    const run = summarizeRun(report, trueCapacityRps, replayRests(known, report.steps, plan), wallSeconds);
    log(
      `  ${strategy}: ${report.steps.length} steps, ${run.status === 'succeeded' ? run.loadTestSeconds : 0} s of load test`,
    );
    return run;
  } catch (error) {
    const e = error as Error;
    log(`  ${strategy} failed: ${e.name}: ${e.message}`);
    return {
      strategy,
      status: 'failed',
      error: `${e.name}: ${e.message}`,
      wallSeconds: (performance.now() - began) / 1000,
    };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

async function benchProfile(name: string, cl: CommandLine, log: (line: string) => void): Promise<ProfileComparison> {
  const profile = await loadProfile(join(PROFILE_DIR, `${name}.yaml`));
  // The same computation as `vllm-pilot twin capacity`: the engine model on a virtual clock.
  const capacity = measureCapacity(profile, SHAPE);
  log(`${profile.name}: true capacity ${capacity.capacityRps.toFixed(1)} req/s (${capacity.limitedBy})`);
  const runs: StrategyRun[] = [];
  for (const strategy of cl.strategies) {
    // A twin per strategy: a saturated step leaves a queue that takes minutes to drain at these capacities, and the
    // second strategy must not measure the first one's leftovers.
    const twin = await startTwin({ profile, allowInstallPrometheus: false, log: (line) => log(`  ${line}`) });
    try {
      log(`  calibrating with ${strategy}`);
      runs.push(await calibrateOnce(twin, strategy, capacity.capacityRps, cl, log));
    } finally {
      await twin.stop();
    }
  }
  return {
    profile: profile.name,
    shapedAfter: `${profile.model} on ${profile.gpu.model}`,
    trueCapacityRps: capacity.capacityRps,
    limitedBy: capacity.limitedBy,
    runs,
    adaptiveToLinear: adaptiveToLinear(runs),
  };
}

async function inSequence<T>(names: readonly string[], run: (name: string) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (const name of names) out.push(await run(name));
  return out;
}

/**
 * Runs every (profile, strategy) pair `cl.parallel` at a time, each in a child process of this script
 * (`--only NAME --strategies S --json`) with its own twin and event loop, so that one run's engine timers do not wait
 * on another's. Linear's full plans are the longest, so they start first. Results keep the profiles' and strategies'
 * order; a child that fails fails the benchmark with its stderr's last line.
 */
async function inChildProcesses(cl: CommandLine, log: (line: string) => void): Promise<ProfileComparison[]> {
  const script = fileURLToPath(import.meta.url);
  const jobs = cl.strategies.flatMap((strategy) => cl.profiles.map((profile) => ({ profile, strategy })));
  const results = new Map<string, ProfileComparison>();
  const worker = async (): Promise<void> => {
    for (let job = jobs.shift(); job !== undefined; job = jobs.shift()) {
      const { profile, strategy } = job;
      const args = [
        ...process.execArgv,
        script,
        '--json',
        '--parallel=1',
        `--only=${profile}`,
        `--strategies=${strategy}`,
        `--hold=${cl.holdSeconds}`,
        `--rest=${cl.restSeconds}`,
        `--warmup=${cl.warmupRequests}`,
      ];
      const tag = `${profile} ${strategy}`;
      const { stdout, code, lastError } = await runChild(args, (line) =>
        log(`[${tag}] ${line.replace(/^bench: /, '')}`),
      );
      if (code !== 0) throw new BenchError(`the benchmark of ${tag} exited with ${code}: ${lastError}`);
      const comparison = (JSON.parse(stdout) as CalibrationBenchResults).profiles[0];
      if (comparison === undefined) throw new BenchError(`the benchmark of ${tag} printed no profile`);
      results.set(`${profile}/${strategy}`, comparison);
    }
  };
  await Promise.all(Array.from({ length: Math.min(cl.parallel, jobs.length) }, () => worker()));
  return cl.profiles.map((profile) => {
    const parts = cl.strategies.map((strategy) => results.get(`${profile}/${strategy}`) as ProfileComparison);
    const runs = parts.flatMap((part) => part.runs);
    return { ...(parts[0] as ProfileComparison), runs, adaptiveToLinear: adaptiveToLinear(runs) };
  });
}

function runChild(
  args: string[],
  onLine: (line: string) => void,
): Promise<{ stdout: string; code: number | null; lastError: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    let stdout = '';
    let pending = '';
    let lastError = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        // The progress bars redraw one line with \r: keep the finished lines only.
        const text = line.split('\r').pop() ?? '';
        if (text.trim() === '') continue;
        lastError = text;
        onLine(text);
      }
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ stdout, code, lastError }));
  });
}

async function main(): Promise<void> {
  const cl = parseCommandLine(process.argv.slice(2));
  const log = (line: string) => process.stderr.write(`bench: ${line}\n`);
  const startedAt = new Date().toISOString();
  const wallStart = performance.now();
  const profiles =
    cl.parallel > 1 && cl.profiles.length * cl.strategies.length > 1
      ? await inChildProcesses(cl, log)
      : await inSequence(cl.profiles, (name) => benchProfile(name, cl, log));
  const results: CalibrationBenchResults = {
    startedAt,
    environment: benchEnvironment(),
    request: { ...SHAPE },
    scaling: {
      holdSeconds: cl.holdSeconds,
      restSeconds: cl.restSeconds,
      watchSeconds: watchSeconds(cl.holdSeconds),
      guideHoldSeconds: 60,
      guideRestSeconds: 30,
    },
    warmupRequests: cl.warmupRequests,
    profiles,
    totalWallSeconds: (performance.now() - wallStart) / 1000,
  };
  if (cl.json) printJson(results);
  else process.stdout.write(`${renderCalibrationBench(results, cl.markdown ? 'markdown' : 'text')}\n`);
}

try {
  await main();
} catch (error) {
  const e = error as Error;
  process.stderr.write(`bench: ${e.name}: ${e.message}\n`);
  process.exitCode = 1;
}
