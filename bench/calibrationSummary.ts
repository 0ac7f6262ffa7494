/**
 * The pure half of `npm run bench:calibration`: from a calibration report and the true capacity of the replica, the
 * figures the benchmark prints (detected saturation, error, load-test seconds, steps) and the table itself.
 * Nothing here starts a process or reads the clock.
 */
import { formatNumber, table } from '../cli/output.js';
import type {
  CalibrationPlan,
  CalibrationReport,
  StepEndingKind,
  StepMeasurement,
} from '../shared/calibration/index.js';
import type { CalibrationStrategy } from '../shared/calibration/strategies/index.js';
import { calibrationInputSchema } from '../shared/calibration/index.js';
import { BenchError } from './errors.js';
import type { BenchEnvironment } from './report.js';

/** The input's default look interval at a running step, for the tables' note. */
const DEFAULT_WATCH_SECONDS = calibrationInputSchema.shape.plan.parse({}).earlyStop.watchSeconds;

/** The guide's plan has 7 steps (10, 20, ... 70 req/s): what linear spends when nothing saturates. */
export const GUIDE_STEPS = 7;

/** What one load step cost: the seconds load was offered and the rest waited before it. */
export interface StepTime {
  index: number;
  rateRps: number;
  saturated: boolean;
  /** Seconds the load was held: the step's recorded early ending when it has one, else its planned hold. */
  heldSeconds: number;
  /** Seconds of rest the workflow waited before this step (none before the first). */
  restBeforeSeconds: number;
  /** How the step ended when early ending recorded it (`held`, `saturated-early`, `stable-early`); null otherwise. */
  ending: StepEndingKind | null;
}

/** Where the detected saturation point lies relative to the plan that was run. */
export type Detected =
  /** A saturated step with a stable step below it: linear's answer is that step's rate (the guide's reading). */
  | { kind: 'found'; saturationRps: number; lastStableRps: number }
  /**
   * Adaptive's answer: the knee, its capacity estimate (the analysis' capacity), inside the bracket of its highest
   * stable and lowest saturated steps.
   */
  | { kind: 'knee'; saturationRps: number; lastStableRps: number; saturatedRps: number }
  /** The very first (lowest) step saturated: the saturation point lies at or below it, nothing was stable. */
  | { kind: 'belowPlan'; saturationRps: number }
  /** No step saturated: the capacity lies above the highest rate of the plan. */
  | { kind: 'notFound'; highestRps: number; reason: string };

/** One strategy's calibration of one profile, as the benchmark reports it. */
export type StrategyRun =
  | {
      strategy: string;
      status: 'succeeded';
      detected: Detected;
      /** The analysis' capacity of one replica (a lower bound when nothing saturated); null when it gave none. */
      capacityEstimateRps: number | null;
      /** (saturation point − true capacity) / true capacity × 100; null when no saturation point was found. */
      errorPct: number | null;
      /** (capacity estimate − true capacity) / true capacity × 100; null without an estimate. */
      capacityErrorPct: number | null;
      steps: StepTime[];
      /** Sum of the held seconds and of the rests between steps: the load-test time a GPU spends. */
      loadTestSeconds: number;
      /** Wall seconds of the whole execution (deploy, warmup, readiness, steps, analysis, report). */
      wallSeconds: number;
    }
  | { strategy: string; status: 'failed'; error: string; wallSeconds: number };

/** One profile: its true capacity and both strategies' runs. */
export interface ProfileComparison {
  profile: string;
  /** What the profile is shaped after (model on GPU). */
  shapedAfter: string;
  /** The request shape the profile is calibrated with. */
  request: { promptTokens: number; maxTokens: number };
  trueCapacityRps: number;
  limitedBy: string;
  runs: StrategyRun[];
  /** Load-test seconds of adaptive / linear's full guide plan; null when adaptive failed. */
  adaptiveToLinear: number | null;
}

/** Everything one `npm run bench:calibration` measured, as written with `--json`. */
export interface CalibrationBenchResults {
  startedAt: string;
  /** The condition the calibrations ran under (scrape interval, AMP ingestion lag, users beside the test). */
  condition: { name: string; description: string };
  environment: BenchEnvironment;
  /** The scaled hold and rest every step of both strategies used, and the guide's originals. */
  scaling: {
    holdSeconds: number;
    restSeconds: number;
    /** How often early ending looked at a running step (plan.earlyStop.watchSeconds). */
    watchSeconds: number;
    guideHoldSeconds: 60;
    guideRestSeconds: 30;
  };
  warmupRequests: number;
  profiles: ProfileComparison[];
  totalWallSeconds: number;
}

/** Every condition's results, as `--json` prints them. */
export interface CalibrationBenchSuite {
  conditions: CalibrationBenchResults[];
  totalWallSeconds: number;
}

/** The signed relative error of a detected value against the true capacity, in percent. */
export function errorPercent(detected: number, trueCapacityRps: number): number {
  if (!(Number.isFinite(trueCapacityRps) && trueCapacityRps > 0))
    throw new BenchError(`true capacity must be a positive number of requests/s, got ${trueCapacityRps}`);
  return ((detected - trueCapacityRps) / trueCapacityRps) * 100;
}

/**
 * The rest the workflow waited before each step, replayed from the steps: a strategy is a pure function of the
 * steps before, so asking it again gives the decision PlanNextStep acted on, and PlanNextStep waits
 * ceil(restSeconds) before every step but the first (functions/calibration/planNextStep.ts).
 */
export function replayRests(
  strategy: CalibrationStrategy,
  steps: readonly StepMeasurement[],
  plan: CalibrationPlan,
): number[] {
  return steps.map((step, i) => {
    if (i === 0) return 0;
    const decision = strategy.next(steps.slice(0, i), plan);
    if (decision.done)
      throw new BenchError(
        `strategy ${strategy.name} says "done" (${decision.reason}) before step ${i + 1}, which was measured: the ` +
          'replay does not match the run',
      );
    if (decision.rateRps !== step.rateRps)
      throw new BenchError(
        `strategy ${strategy.name} plans ${decision.rateRps} req/s for step ${i + 1}, but ${step.rateRps} req/s ` +
          'was measured: the replay does not match the run',
      );
    return Math.ceil(decision.restSeconds);
  });
}

/** Each step's held seconds (its early ending's when recorded) and the rest before it. */
export function stepTimes(steps: readonly StepMeasurement[], restsBefore: readonly number[]): StepTime[] {
  if (restsBefore.length !== steps.length)
    throw new BenchError(`${steps.length} steps but ${restsBefore.length} rests: give the rest before every step`);
  return steps.map((step, i) => {
    return {
      index: step.index,
      rateRps: step.rateRps,
      saturated: step.verdict.saturated,
      // Reports written before steps could end early carry no ending: every step was held in full.
      heldSeconds: step.ending?.heldSeconds ?? step.holdSeconds,
      restBeforeSeconds: restsBefore[i] ?? 0,
      ending: step.ending?.kind ?? null,
    };
  });
}

/** The load-test seconds a GPU spends: every hold plus every rest between steps. */
export function loadTestSeconds(times: readonly StepTime[]): number {
  return times.reduce((sum, t) => sum + t.heldSeconds + t.restBeforeSeconds, 0);
}

/** What linear's whole plan of `GUIDE_STEPS` steps costs at a hold and rest: 7 holds and 6 rests. */
export function fullGuidePlanSeconds(holdSeconds: number, restSeconds: number): number {
  return GUIDE_STEPS * holdSeconds + (GUIDE_STEPS - 1) * restSeconds;
}

/**
 * Where the report's analysis puts the saturation point. The guide reads it off its plan: the first saturated rate,
 * at the plan's 10 req/s resolution (`linear`). `adaptive` searches for the knee itself, so its answer is the capacity
 * estimate it converged on, between its highest stable and lowest saturated steps.
 */
export function detectedSaturation(report: CalibrationReport): Detected {
  const { saturation, lastStableRps, capacityRps } = report.analysis;
  if (!saturation.found) {
    const highestRps = Math.max(...report.steps.map((s) => s.rateRps));
    return { kind: 'notFound', highestRps, reason: saturation.reason };
  }
  if (lastStableRps === null) return { kind: 'belowPlan', saturationRps: saturation.rateRps };
  if (report.provenance.strategy === 'adaptive' && capacityRps !== null) {
    // Per replica in the analysis; the benchmark tests one replica, so it is also the rate of the test.
    return { kind: 'knee', saturationRps: capacityRps.value, lastStableRps, saturatedRps: saturation.rateRps };
  }
  return { kind: 'found', saturationRps: saturation.rateRps, lastStableRps };
}

/** One strategy's figures from its report, the rests before its steps and the execution's wall time. */
export function summarizeRun(
  report: CalibrationReport,
  trueCapacityRps: number,
  restsBefore: readonly number[],
  wallSeconds: number,
): StrategyRun {
  const detected = detectedSaturation(report);
  const capacity = report.analysis.capacityRps?.value ?? null;
  const times = stepTimes(report.steps, restsBefore);
  return {
    strategy: report.provenance.strategy,
    status: 'succeeded',
    detected,
    capacityEstimateRps: capacity,
    // Outside the plan there is no saturation point to compare: "≤ first rate" or "> last rate" is not a value.
    errorPct:
      detected.kind === 'found' || detected.kind === 'knee'
        ? errorPercent(detected.saturationRps, trueCapacityRps)
        : null,
    capacityErrorPct: capacity === null ? null : errorPercent(capacity, trueCapacityRps),
    steps: times,
    loadTestSeconds: loadTestSeconds(times),
    wallSeconds,
  };
}

/**
 * Adaptive's load-test seconds over linear's. Linear as the guide runs it (every hold and rest in full) always spends
 * its full plan, so when linear did not run, `guidePlanSeconds` stands for it. null when adaptive failed, or linear
 * ran and failed.
 */
export function adaptiveToLinear(runs: readonly StrategyRun[], guidePlanSeconds?: number): number | null {
  const linear = runs.find((r) => r.strategy === 'linear');
  const adaptive = runs.find((r) => r.strategy === 'adaptive');
  if (adaptive?.status !== 'succeeded') return null;
  const linearSeconds =
    linear === undefined ? guidePlanSeconds : linear.status === 'succeeded' ? linear.loadTestSeconds : undefined;
  if (linearSeconds === undefined || linearSeconds <= 0) return null;
  return adaptive.loadTestSeconds / linearSeconds;
}

function detectedText(detected: Detected): string {
  switch (detected.kind) {
    case 'found':
      return `${formatNumber(detected.saturationRps)} (stable ${formatNumber(detected.lastStableRps)})`;
    case 'knee':
      return `${formatNumber(detected.saturationRps)} (bracket ${formatNumber(detected.lastStableRps)}-${formatNumber(detected.saturatedRps)})`;
    case 'belowPlan':
      return `not found within the plan (its first step, ${formatNumber(detected.saturationRps)}, saturated)`;
    case 'notFound':
      return `not found within the plan (≤ ${formatNumber(detected.highestRps)} stable)`;
  }
}

function signedPercent(value: number | null): string {
  if (value === null) return '-';
  const rounded = Number(value.toFixed(1));
  return `${rounded > 0 ? '+' : ''}${rounded === 0 ? 0 : rounded} %`;
}

/** The table rows: one per profile and strategy. */
export function tableRows(results: CalibrationBenchResults): string[][] {
  const rows: string[][] = [];
  for (const p of results.profiles) {
    for (const run of p.runs) {
      const first = run === p.runs[0];
      const lead = [
        first ? `${p.profile} (${p.request.promptTokens}/${p.request.maxTokens})` : '',
        first ? `${formatNumber(p.trueCapacityRps)} (${p.limitedBy})` : '',
        run.strategy,
      ];
      if (run.status === 'failed') {
        rows.push([...lead, `failed: ${run.error.split('\n')[0] ?? ''}`, '-', '-', '-', '-', '-']);
        continue;
      }
      const isAdaptive = run.strategy === 'adaptive';
      rows.push([
        ...lead,
        detectedText(run.detected),
        signedPercent(run.errorPct),
        run.capacityEstimateRps === null
          ? '-'
          : run.detected.kind === 'notFound'
            ? // Nothing saturated: the analysis gives what the replica completed, a lower bound, not an estimate.
              `≥ ${formatNumber(run.capacityEstimateRps)} (a lower bound)`
            : `${formatNumber(run.capacityEstimateRps)} (${signedPercent(run.capacityErrorPct)})`,
        String(run.steps.length),
        formatNumber(run.loadTestSeconds),
        isAdaptive && p.adaptiveToLinear !== null ? `${formatNumber(p.adaptiveToLinear * 100)} %` : '',
      ]);
    }
  }
  return rows;
}

const HEADER = [
  'profile',
  'true capacity req/s',
  'strategy',
  'detected saturation req/s',
  'error',
  'capacity estimate req/s',
  'steps',
  'load-test s',
  'adaptive / linear',
] as const;

/** The benchmark's report: what was scaled, then one row per profile and strategy (text, or Markdown for docs/benchmarks.md). */
export function renderCalibrationBench(results: CalibrationBenchResults, format: 'text' | 'markdown' = 'text'): string {
  const { holdSeconds, restSeconds } = results.scaling;
  const env = results.environment;
  const rows = tableRows(results);
  const body =
    format === 'markdown'
      ? [
          `| ${HEADER.join(' | ')} |`,
          `|${HEADER.map((_, i) => (i === 1 || i >= 4 ? ' ---: ' : ' --- ')).join('|')}|`,
          ...rows.map((r) => `| ${r.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`),
        ].join('\n')
      : table(HEADER, rows);
  const lines = [
    `vllm-eks-pilot bench:calibration (${results.startedAt}): Node ${env.node} on ${env.platform}, ${env.cpus} x ${env.cpu}`,
    `Condition ${results.condition.name}: ${results.condition.description}.`,
    `Request shape per profile (prompt tokens / max_tokens) after its name; warmup ` +
      `${results.warmupRequests} requests. Every strategy: hold ${formatNumber(holdSeconds)} s, rest ` +
      `${formatNumber(restSeconds)} s per step (the guide: 60 s / 30 s, ×${formatNumber(holdSeconds / 60)} and ` +
      `×${formatNumber(restSeconds / 30)}), early-ending look every ${formatNumber(results.scaling.watchSeconds)} s ` +
      `(default ${formatNumber(DEFAULT_WATCH_SECONDS)} s). linear runs the guide's plan as the guide does: 7 steps, 10 to 70 req/s, every hold and rest ` +
      `in full (${formatNumber(fullGuidePlanSeconds(holdSeconds, restSeconds))} s, which adaptive / linear divides by ` +
      'when linear did not run); adaptive runs with its defaults, early ending included.',
    'True capacity: `vllm-pilot twin capacity` (virtual clock). Detected saturation: linear, the first saturated rate ' +
      "of its plan (the guide's reading); adaptive, its capacity estimate inside its bracket [highest stable, lowest " +
      'saturated]. Error: detected vs true. Capacity estimate: the analysis, in-flight corrected, for both. ' +
      'Load-test s: seconds held (until the early ending, if any) + rests between steps.',
    '',
    body,
    '',
    `Total ${formatNumber(results.totalWallSeconds)} s wall.`,
  ];
  return lines.join('\n');
}
