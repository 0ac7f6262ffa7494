/**
 * `npm run bench:calibration`: for twin profiles whose one-replica capacity spans about 5 to 120 requests/s (limited
 * by --max-num-seqs, by the KV cache, or by prefill), and under conditions from the twin's kindest to the guide's own
 * (1 s scrapes; 15 s scrapes; the guide's 30 s scrapes with 30-60 s of AMP ingestion lag; users' traffic beside the
 * test), runs the calibration state machine with `adaptive` (and with the guide's `linear` plan when asked), exactly as
 * `vllm-pilot calibrate` does against a twin (a fresh twin for each), and prints per condition and profile the true
 * capacity, the detected saturation, its error, the load-test seconds spent and adaptive / linear. Asserts nothing.
 *
 *   npm run bench:calibration -- [--json] [--markdown] [--hold SECONDS] [--rest SECONDS] [--warmup N]
 *                                [--parallel N] [--only PROFILE,...] [--strategies linear,adaptive]
 *                                [--conditions ideal,scrape-15s,guide-30s,background] [--reports DIR]
 *
 * `linear` runs the guide's plan as the guide does (7 steps, every hold and rest in full), so its load-test seconds
 * are known without running it: 7 holds + 6 rests. By default only `adaptive` runs and adaptive / linear is taken
 * against that figure; `--strategies linear,adaptive` runs linear too (for its detected saturation and error). Each
 * condition runs the guide's own hold and rest, 60 s / 30 s: its plan is what adaptive is measured against, and a
 * request lives 10-13 s on the KV-bound and prefill-heavy profiles, so a shorter hold is under three lifetimes (once
 * halved to 30 s / 15 s with 1 s scrapes to save wall time; those profiles' saturated steps then had not reached the
 * steady state in their window); `--hold`/`--rest` replace them for every condition. `--parallel` calibrations (default 4) run at once, each in its own process with its own twin. `--json`
 * prints the results as JSON instead of the tables; `--markdown` prints the tables as Markdown (for
 * docs/benchmarks.md). `--reports DIR` keeps each run's calibration report there (its steps' verdicts and reasons).
 * Progress goes to stderr.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { printJson } from '../cli/options.js';
import { calibrationInputSchema } from '../shared/calibration/index.js';
import { STRATEGIES, type CalibrationStrategy } from '../shared/calibration/strategies/index.js';
import { calibrateOnTwin, loadProfile, measureCapacity, startTwin, type Twin } from '../sim/harness/index.js';
import type { Profile } from '../sim/harness/index.js';
import {
  adaptiveToLinear,
  fullGuidePlanSeconds,
  renderCalibrationBench,
  replayRests,
  summarizeRun,
  type CalibrationBenchResults,
  type CalibrationBenchSuite,
  type ProfileComparison,
  type StrategyRun,
} from './calibrationSummary.js';
import { BenchError, BenchUsageError } from './errors.js';
import { benchEnvironment } from './report.js';

/** The guide's request shape (the calibration input's default): a 35-token prompt, max_tokens 100. */
const GUIDE_SHAPE = { promptTokens: 35, maxTokens: 100 } as const;

/** The benchmark's profiles (sim/profile/profiles/bench/), each with the request shape it is meant for. */
const PROFILE_SHAPES: Readonly<Record<string, RequestShape>> = {
  'llama-70b-h100': GUIDE_SHAPE,
  'llama-8b-l4': GUIDE_SHAPE,
  'ministral-8b-l40s-fast': GUIDE_SHAPE,
  'llama-8b-h100': GUIDE_SHAPE,
  // Long prompts, short answers: prefill-bound (about 5 req/s).
  'llama-8b-l4-prefill': { promptTokens: 1500, maxTokens: 64 },
  // A RAG-style shape on a model without grouped-query attention: the KV cache fills before --max-num-seqs.
  'llama-2-13b-h100-kv': { promptTokens: 512, maxTokens: 256 },
};
const PROFILES = Object.keys(PROFILE_SHAPES);
const PROFILE_DIR = fileURLToPath(new URL('../sim/profile/profiles/bench/', import.meta.url));

const STRATEGY_ORDER = ['linear', 'adaptive'] as const;

/**
 * The conditions the calibration runs under: the twin's kindest (the profile as written: 1 s scrapes, no lag, nobody
 * else on the target), then the world's. Each gives the hold and rest its scrape interval needs.
 */
const NO_LAG = { ingestionLagSeconds: 0, ingestionJitterSeconds: 0 } as const;
const CONDITIONS: Readonly<Record<string, BenchCondition>> = {
  ideal: {
    description: 'the profile as written: 1 s scrapes, no AMP ingestion lag, nobody else on the target',
    holdSeconds: 60,
    restSeconds: 30,
    // Explicitly without lag: a bench profile may extend one that has it (ministral-8b-l40s-fast).
    profile: (profile) => ({ ...profile, amp: NO_LAG }),
  },
  'scrape-15s': {
    description: '15 s scrapes, no AMP ingestion lag',
    holdSeconds: 60,
    restSeconds: 30,
    profile: (profile) => ({ ...profile, prometheus: { scrapeIntervalSeconds: 15 }, amp: NO_LAG }),
  },
  'guide-30s': {
    description: "the guide's 30 s scrapes, and samples reach AMP 30-60 s late (remote write through a lagging relay)",
    holdSeconds: 60,
    restSeconds: 30,
    profile: (profile) => ({
      ...profile,
      prometheus: { scrapeIntervalSeconds: 30 },
      amp: { ingestionLagSeconds: 45, ingestionJitterSeconds: 15 },
    }),
  },
  background: {
    description:
      "users beside the test: 30 % of the replica's capacity through the Service, of the same request shape " +
      '(deploy.allowServingTraffic: true)',
    holdSeconds: 60,
    restSeconds: 30,
    profile: (profile, capacityRps, shape) => ({
      ...profile,
      amp: NO_LAG,
      traffic: {
        rateRps: Number((0.3 * capacityRps).toFixed(2)),
        ...shape,
        variationFraction: 0,
        periodSeconds: 600,
      },
    }),
    input: { deploy: { mode: 'adopt', allowServingTraffic: true } },
    // The users have been there before the calibration: Deploy measures them from AMP's samples.
    settleSeconds: 20,
  },
};
const CONDITION_NAMES = Object.keys(CONDITIONS);

const DEFAULTS = { warmupRequests: 12, parallel: 4, strategies: ['adaptive'] } as const;

interface RequestShape {
  promptTokens: number;
  maxTokens: number;
}

interface BenchCondition {
  description: string;
  holdSeconds: number;
  restSeconds: number;
  /** The profile under this condition, given its true capacity for its request shape. */
  profile: (profile: Profile, capacityRps: number, shape: RequestShape) => Profile;
  /** Input fields the condition needs. */
  input?: Record<string, unknown>;
  /** Seconds the twin runs before the calibration starts. */
  settleSeconds?: number;
}

interface CommandLine {
  json: boolean;
  markdown: boolean;
  /** Replaces every condition's hold and rest when given. */
  holdSeconds: number | undefined;
  restSeconds: number | undefined;
  warmupRequests: number;
  /** Calibrations run at once, each in its own process with its own twin. */
  parallel: number;
  profiles: string[];
  strategies: string[];
  conditions: string[];
  /** Where each run's calibration report is kept (`CONDITION-PROFILE-STRATEGY.json`), to read its steps' reasons. */
  reportsDir: string | undefined;
}

const USAGE =
  '[--json] [--markdown] [--hold SECONDS] [--rest SECONDS] [--warmup N] [--parallel N] [--reports DIR] ' +
  `[--only ${PROFILES.join(',')}] [--strategies ${STRATEGY_ORDER.join(',')}] ` +
  `[--conditions ${CONDITION_NAMES.join(',')}]`;

/** A condition's hold and rest, unless the command line replaces them. */
function timing(condition: string, cl: CommandLine): { holdSeconds: number; restSeconds: number } {
  const c = CONDITIONS[condition] as BenchCondition;
  return { holdSeconds: cl.holdSeconds ?? c.holdSeconds, restSeconds: cl.restSeconds ?? c.restSeconds };
}

function numberOption(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!(Number.isFinite(n) && n >= min && n <= max))
    throw new BenchUsageError(name, `${JSON.stringify(value)} is not valid`, `a number from ${min} to ${max}`);
  return n;
}

function listOption(
  name: string,
  value: string | undefined,
  accepted: readonly string[],
  fallback: readonly string[] = accepted,
): string[] {
  if (value === undefined) return [...fallback];
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
        conditions: { type: 'string' },
        reports: { type: 'string' },
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
    holdSeconds: text('hold') === undefined ? undefined : Math.round(numberOption('--hold', text('hold'), 60, 2, 60)),
    restSeconds: text('rest') === undefined ? undefined : Math.round(numberOption('--rest', text('rest'), 30, 0, 30)),
    warmupRequests: Math.round(numberOption('--warmup', text('warmup'), DEFAULTS.warmupRequests, 0, 100)),
    parallel: Math.round(numberOption('--parallel', text('parallel'), DEFAULTS.parallel, 1, 8)),
    profiles: listOption('--only', text('only'), PROFILES),
    strategies: listOption('--strategies', text('strategies'), STRATEGY_ORDER, DEFAULTS.strategies),
    conditions: listOption('--conditions', text('conditions'), CONDITION_NAMES),
    reportsDir: text('reports'),
  };
}

/** The early-ending watch interval scaled like the hold (the input's default for the guide's 60 s), whole seconds. */
function watchSeconds(holdSeconds: number): number {
  const defaultSeconds = calibrationInputSchema.shape.plan.parse({}).earlyStop.watchSeconds;
  return Math.max(1, Math.ceil((defaultSeconds * holdSeconds) / 60));
}

/**
 * The calibration input of one strategy; the twin fills in the target, as `calibrate --state-file` does. `linear` runs
 * the guide's plan as the guide runs it: all 7 steps, each held in full (no early ending, no stop at the first
 * saturated step), which is the baseline the issue measures against. `adaptive` runs with its defaults, early ending
 * included, its look interval scaled like the hold.
 */
function benchInput(
  strategy: string,
  condition: string,
  shape: RequestShape,
  cl: CommandLine,
): Record<string, unknown> {
  const times = timing(condition, cl);
  return {
    ...CONDITIONS[condition]?.input,
    testReplicas: 1,
    request: { ...shape },
    warmup: { requests: cl.warmupRequests },
    plan:
      strategy === 'linear'
        ? { strategy, ...times, stopAtSaturation: false, earlyStop: { enabled: false } }
        : { strategy, ...times, earlyStop: { watchSeconds: watchSeconds(times.holdSeconds) } },
    // Short polls: the bench's twin rolls out and scrapes within seconds (the same for both strategies).
    rollout: { timeoutSeconds: 120, pollSeconds: 1 },
    readiness: { timeoutSeconds: 180, pollSeconds: 1 },
  };
}

/** Runs one calibration through the state machine against the twin and sums it up; a failure is a result too. */
async function calibrateOnce(
  twin: Twin,
  strategy: string,
  condition: string,
  shape: RequestShape,
  trueCapacityRps: number,
  cl: CommandLine,
  log: (line: string) => void,
): Promise<StrategyRun> {
  const out = await mkdtemp(join(tmpdir(), 'vllm-pilot-bench-calibration-'));
  const input = benchInput(strategy, condition, shape, cl);
  const began = performance.now();
  const executionName = `bench-${twin.profile.name}-${strategy}`.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 80);
  try {
    const { report } = await calibrateOnTwin(twin.state, { input, reportsDir: out, executionName });
    const wallSeconds = (performance.now() - began) / 1000;
    if (cl.reportsDir !== undefined) {
      await mkdir(cl.reportsDir, { recursive: true });
      const file = join(cl.reportsDir, `${condition}-${twin.profile.name}-${strategy}.json`);
      await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
    }
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

async function benchProfile(
  name: string,
  condition: string,
  cl: CommandLine,
  log: (line: string) => void,
): Promise<ProfileComparison> {
  const shape = PROFILE_SHAPES[name] ?? GUIDE_SHAPE;
  const written = await loadProfile(join(PROFILE_DIR, `${name}.yaml`));
  // The same computation as `vllm-pilot twin capacity`: the engine model on a virtual clock.
  const capacity = measureCapacity(written, shape);
  const spec = CONDITIONS[condition] as BenchCondition;
  const profile = spec.profile(written, capacity.capacityRps, shape);
  log(`${profile.name} (${condition}): true capacity ${capacity.capacityRps.toFixed(1)} req/s (${capacity.limitedBy})`);
  const runs: StrategyRun[] = [];
  for (const strategy of cl.strategies) {
    // A twin per strategy: a saturated step leaves a queue that takes minutes to drain at these capacities, and the
    // second strategy must not measure the first one's leftovers.
    const twin = await startTwin({ profile, allowInstallPrometheus: false, log: (line) => log(`  ${line}`) });
    try {
      if (spec.settleSeconds !== undefined) await delay(spec.settleSeconds * 1000);
      log(`  calibrating with ${strategy}`);
      runs.push(await calibrateOnce(twin, strategy, condition, shape, capacity.capacityRps, cl, log));
    } finally {
      await twin.stop();
    }
  }
  const { holdSeconds, restSeconds } = timing(condition, cl);
  return {
    profile: profile.name,
    shapedAfter: `${profile.model} on ${profile.gpu.model}`,
    request: { ...shape },
    trueCapacityRps: capacity.capacityRps,
    limitedBy: capacity.limitedBy,
    runs,
    adaptiveToLinear: adaptiveToLinear(runs, fullGuidePlanSeconds(holdSeconds, restSeconds)),
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
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
async function inChildProcesses(
  condition: string,
  cl: CommandLine,
  log: (line: string) => void,
): Promise<ProfileComparison[]> {
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
        `--conditions=${condition}`,
        ...(cl.holdSeconds === undefined ? [] : [`--hold=${cl.holdSeconds}`]),
        ...(cl.restSeconds === undefined ? [] : [`--rest=${cl.restSeconds}`]),
        `--warmup=${cl.warmupRequests}`,
        ...(cl.reportsDir === undefined ? [] : [`--reports=${cl.reportsDir}`]),
      ];
      const tag = `${condition} ${profile} ${strategy}`;
      const { stdout, code, lastError } = await runChild(args, (line) =>
        log(`[${tag}] ${line.replace(/^bench: /, '')}`),
      );
      if (code !== 0) throw new BenchError(`the benchmark of ${tag} exited with ${code}: ${lastError}`);
      const comparison = (JSON.parse(stdout) as CalibrationBenchSuite).conditions[0]?.profiles[0];
      if (comparison === undefined) throw new BenchError(`the benchmark of ${tag} printed no profile`);
      results.set(`${profile}/${strategy}`, comparison);
    }
  };
  await Promise.all(Array.from({ length: Math.min(cl.parallel, jobs.length) }, () => worker()));
  const { holdSeconds, restSeconds } = timing(condition, cl);
  return cl.profiles.map((profile) => {
    const parts = cl.strategies.map((strategy) => results.get(`${profile}/${strategy}`) as ProfileComparison);
    const runs = parts.flatMap((part) => part.runs);
    return {
      ...(parts[0] as ProfileComparison),
      runs,
      adaptiveToLinear: adaptiveToLinear(runs, fullGuidePlanSeconds(holdSeconds, restSeconds)),
    };
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
  const suiteStart = performance.now();
  const conditions: CalibrationBenchResults[] = [];
  for (const condition of cl.conditions) {
    const startedAt = new Date().toISOString();
    const wallStart = performance.now();
    const profiles =
      cl.parallel > 1 && cl.profiles.length * cl.strategies.length > 1
        ? await inChildProcesses(condition, cl, log)
        : await inSequence(cl.profiles, (name) => benchProfile(name, condition, cl, log));
    const { holdSeconds, restSeconds } = timing(condition, cl);
    conditions.push({
      startedAt,
      condition: { name: condition, description: (CONDITIONS[condition] as BenchCondition).description },
      environment: benchEnvironment(),
      scaling: {
        holdSeconds,
        restSeconds,
        watchSeconds: watchSeconds(holdSeconds),
        guideHoldSeconds: 60,
        guideRestSeconds: 30,
      },
      warmupRequests: cl.warmupRequests,
      profiles,
      totalWallSeconds: (performance.now() - wallStart) / 1000,
    });
  }
  const suite: CalibrationBenchSuite = { conditions, totalWallSeconds: (performance.now() - suiteStart) / 1000 };
  if (cl.json) printJson(suite);
  else
    process.stdout.write(
      `${conditions.map((c) => renderCalibrationBench(c, cl.markdown ? 'markdown' : 'text')).join('\n\n')}\n`,
    );
}

try {
  await main();
} catch (error) {
  const e = error as Error;
  process.stderr.write(`bench: ${e.name}: ${e.message}\n`);
  process.exitCode = 1;
}
