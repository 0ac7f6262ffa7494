import { fmt } from '../format.js';
import type { CalibrationPlan } from '../input.js';
import { SATURATION_RULES } from '../rules.js';
import type { StepMeasurement, StrategyDecision } from '../types.js';
import { capacityUpperBound, kneeEstimate, requestLifetimeSeconds, type KneeEstimate } from '../capacityEstimate.js';
import type { CalibrationStrategy } from './types.js';

/**
 * The `adaptive` strategy (docs/adr/0013): find the knee with few steps, then pin it to ±resolution of capacity.
 *
 * 1. Bracket: startRps (10), then after every stable step × growthFactor (3), or straight past the capacity bound
 *    that step gives (bracketRate: its batch against --max-num-seqs, its KV cache's usage), up to maxRps ("not
 *    saturated up to maxRps" when a step at maxRps is stable). A step far above the knee costs no accuracy: it
 *    completes at capacity too, and each stable step climbing to the knee costs a hold.
 * 2. Estimate: the lowest saturated step gives the capacity C (capacityEstimate.ts: completions, queue slope, batch),
 *    averaged with the other saturated steps that agree with it, never below what a stable step below it completed
 *    (it kept up with that much).
 * 3. Confirm: probe C × (1 − resolution), expecting stable, then C × (1 + resolution), expecting saturated. A surprise
 *    moves the bracket [highest stable, lowest saturated] and C is estimated again from it; when the next probe would
 *    fall outside the bracket (the estimate and the verdicts disagree) the bracket is bisected instead.
 * 4. Stop when the bracket lies within C × (1 ± resolution), or after maxSteps, with the reason.
 *
 * The verdict (measure.ts classifyStep) cannot see an overload smaller than its queue-slope limit max(0.1, 2 % of the
 * rate) req/s, nor one whose queue stays under queueMaxFloor (5) within the hold: where that is more than 5 % of
 * capacity, the upper probe goes at least twice that far above C (DETECTION_MARGIN) and the stop accepts the bracket at
 * that width; the reason says so.
 *
 * Holds: plan.holdSeconds, or plan.adaptive.bracketHoldSeconds for the bracket steps (far from the knee their verdict is
 * clear-cut, so with a scrape interval a few times shorter they can be shorter; off by default because with the
 * guide's 30 s scrapes a short window holds too few samples). Rests: see restBefore.
 */
export const adaptiveStrategy: CalibrationStrategy = {
  name: 'adaptive',
  description:
    'geometric steps until one saturates, capacity from its completions and queue slope, then probes at capacity ' +
    '± 5 % until the bracket is that narrow (plan.adaptive)',
  next(steps: readonly StepMeasurement[], plan: CalibrationPlan): StrategyDecision {
    return decideAdaptive(steps, plan).decision;
  },
};

/** Where the search stands: the bracket, the capacity estimate and the next decision. */
export interface AdaptiveState {
  /** The highest stable rate below the lowest saturated one (null: none, or nothing saturated yet). */
  stableRps: number | null;
  /** The lowest saturated rate (null: nothing saturated yet). */
  saturatedRps: number | null;
  /** One replica's capacity (all Pods of the test together) with how it was found; null before any saturation. */
  capacity: KneeEstimate | null;
  decision: StrategyDecision;
}

/** The slowest rate offered: k6's constant-arrival-rate takes fractions, but a tenth of a request/s is the floor. */
export const MIN_RATE_RPS = 0.1;

/** How far (as a fraction of the resolution) the bracket may sit outside C × (1 ± resolution) when C moved. */
const ESTIMATE_SLACK = 0.2;

/** Extra margin over the verdict's least detectable overload, so that noise does not hide the upper probe's queue. */
const DETECTION_MARGIN = 2;

/** The adaptive search's state and next decision for the steps measured so far (pure; `next` returns its decision). */
export function decideAdaptive(steps: readonly StepMeasurement[], plan: CalibrationPlan): AdaptiveState {
  const cfg = plan.adaptive;
  const sorted = [...steps].sort((a, b) => a.rateRps - b.rateRps || a.index - b.index);
  const measured = new Set(steps.map((s) => s.rateRps));
  const hiStep = sorted.find((s) => s.verdict.saturated);
  const rest = restBefore(steps, plan, null);
  const budgetLeft = steps.length < cfg.maxSteps;
  const none = { stableRps: null, saturatedRps: null, capacity: null };

  if (hiStep === undefined) {
    const top = sorted[sorted.length - 1];
    const state = { ...none, stableRps: top?.rateRps ?? null };
    if (top !== undefined && top.rateRps >= cfg.maxRps) {
      return done(state, `not saturated up to maxRps: every step was stable, up to ${fmt(top.rateRps)} req/s`);
    }
    if (!budgetLeft) {
      return done(
        state,
        `step budget spent (maxSteps ${cfg.maxSteps}) before any step saturated; highest stable ` +
          `${fmt(top?.rateRps ?? 0)} req/s: raise plan.adaptive.startRps or growthFactor`,
      );
    }
    const hold = cfg.bracketHoldSeconds ?? plan.holdSeconds;
    if (top === undefined) {
      const first = Math.min(cfg.maxRps, roundRate(cfg.startRps));
      return load(state, first, hold, rest, `bracket: first step at startRps ${fmt(first)} req/s`);
    }
    const { rate, why } = bracketRate(top, cfg);
    return load(state, rate, hold, rest, why);
  }

  const hi = hiStep.rateRps;
  const loStep = sorted.filter((s) => !s.verdict.saturated && s.rateRps < hi).pop();
  const lo = loStep?.rateRps ?? null;
  const capacity = kneeEstimate(steps) as KneeEstimate;
  const c = capacity.value;
  const state = { stableRps: lo, saturatedRps: hi, capacity };
  const restHere = restBefore(steps, plan, c);
  const res = cfg.resolution;
  const lowTarget = c * (1 - res);
  const detectable = c + detectableOverload(c, plan.holdSeconds);
  const highTarget = Math.max(c * (1 + res), detectable);
  const verdictLimited = detectable > c * (1 + res);
  const cText = `capacity ≈ ${fmt(c, 1)} req/s (${capacity.reason})`;
  const bracket = `[${lo === null ? '-' : fmt(lo)}, ${fmt(hi)}] req/s`;
  const noisy = sorted.filter((s) => !s.verdict.saturated && s.rateRps > hi).map((s) => fmt(s.rateRps));
  const noisyText = noisy.length > 0 ? `; stable above it (noisy): ${noisy.join(', ')} req/s` : '';

  // The estimate moves a little with each saturated probe (noise): a fifth of the resolution of slack keeps the search
  // from chasing it, and the rate rounding of the probes is allowed for.
  const slack = ESTIMATE_SLACK * res;
  const lowBound = Math.min(lowTarget * (1 - slack), ceilRate(lowTarget));
  const highBound = Math.max(highTarget * (1 + slack), verdictLimited ? ceilRate(highTarget) : highTarget);
  if (lo !== null && lo >= lowBound - 1e-9 && hi <= highBound + 1e-9) {
    const width = verdictLimited
      ? `within ${fmt(c * (1 - res), 2)}-${fmt(highTarget, 2)} req/s (−${fmt(res * 100)} %, and above only as far ` +
        `as the verdict can see an overload: queue growth > ${fmt(detectable - c, 2)} req/s)`
      : `within ±${fmt(res * 100)} % of it`;
    return done(state, `bracket ${bracket} is ${width}; ${cText}${noisyText}`);
  }
  if (!budgetLeft) {
    return done(state, `step budget spent (maxSteps ${cfg.maxSteps}); bracket ${bracket}; ${cText}${noisyText}`);
  }

  const inside = (rate: number) => rate > (lo ?? 0) && rate < hi && !measured.has(rate) && rate >= MIN_RATE_RPS;
  const probeLow = lo === null || lo < lowBound - 1e-9;
  // At the target, rounded towards capacity below it (the estimate may still move up) and to the nearest rate above it
  // (rounding down could land where the verdict cannot see the overload), never outside the bounds.
  const probe = probeLow
    ? ceilRate(lowTarget)
    : Math.min(
        cfg.maxRps,
        verdictLimited ? ceilRate(highTarget) : Math.min(floorRate(highBound), roundRate(highTarget)),
      );
  if (inside(probe)) {
    const why = probeLow
      ? `confirm below: ${fmt(probe)} req/s ≈ capacity × (1 − ${fmt(res)}) should be stable`
      : `confirm above: ${fmt(probe)} req/s ≈ ${verdictLimited ? 'capacity + the least overload the verdict sees' : `capacity × (1 + ${fmt(res)})`} should saturate`;
    return load(state, probe, plan.holdSeconds, restHere, `${why}; bracket ${bracket}; ${cText}`, nearKnee(plan));
  }
  // The probe falls outside the bracket or was measured: the estimate and the verdicts disagree, so bisect.
  const mid = lo === null ? roundRate(hi / cfg.growthFactor) : roundRate((lo + hi) / 2);
  if (inside(mid)) {
    return load(
      state,
      mid,
      plan.holdSeconds,
      restHere,
      `bisect ${bracket}: the probe at ${fmt(probe)} req/s is outside it or measured (the estimate and the verdicts ` +
        `disagree); ${cText}`,
      nearKnee(plan),
    );
  }
  if (lo === null && mid < MIN_RATE_RPS) {
    return done(state, `saturated even at ${fmt(hi)} req/s, and no lower rate can be offered; ${cText}`);
  }
  return done(
    state,
    `bracket ${bracket} cannot be narrowed at the rate rounding (0.1 / 1 req/s); ${cText}${noisyText}`,
  );
}

/** How far above a stable step's capacity bound the bracket jumps: clearly saturated, even when the bound is tight. */
export const JUMP_MARGIN = 1.25;

/**
 * The bracket's next rate after the stable step `top`: × growthFactor, or, when the step bounds the capacity from
 * above (capacityUpperBound: the batch against --max-num-seqs, the KV cache's usage), JUMP_MARGIN above that bound
 * when it is higher, so that one step saturates instead of several stable ones climbing to the knee; at most
 * growthFactor³ × the step's rate, never above maxRps.
 */
export function bracketRate(top: StepMeasurement, cfg: CalibrationPlan['adaptive']): { rate: number; why: string } {
  const grown = roundRate(top.rateRps * cfg.growthFactor);
  const bound = capacityUpperBound(top);
  const jump = bound === null ? null : roundRate(JUMP_MARGIN * bound.value);
  const ceiling = roundRate(top.rateRps * cfg.growthFactor ** 3);
  let rate = jump !== null && jump > grown ? Math.min(jump, ceiling) : grown;
  let why =
    jump !== null && jump > grown
      ? `bracket: ${fmt(top.rateRps)} req/s was stable and bounds the capacity (${bound?.reason}), so ` +
        `${fmt(JUMP_MARGIN)} × that${jump > ceiling ? ` capped at × ${fmt(cfg.growthFactor)}³ (${fmt(ceiling)})` : ''}`
      : `bracket: ${fmt(top.rateRps)} req/s was stable, so × ${fmt(cfg.growthFactor)}`;
  if (rate <= top.rateRps) rate = top.rateRps + granularity(top.rateRps);
  if (rate >= cfg.maxRps) {
    rate = cfg.maxRps;
    why += ` (capped at maxRps ${fmt(cfg.maxRps)})`;
  }
  return { rate, why };
}

/**
 * The smallest overload (req/s above capacity) the verdict flags, with a margin: the queue slope must exceed
 * max(queueSlopeMinPerSecond, queueSlopeRateFraction × rate) (rules.ts) and reach queueMaxFloor within the hold.
 */
export function detectableOverload(capacityRps: number, holdSeconds: number): number {
  const r = SATURATION_RULES;
  // slope > f × (C + δ) ⟺ δ > f × C / (1 − f)
  const byRate = (r.queueSlopeRateFraction * capacityRps) / (1 - r.queueSlopeRateFraction);
  return DETECTION_MARGIN * Math.max(r.queueSlopeMinPerSecond, byRate, r.queueMaxFloor / holdSeconds);
}

/**
 * The rest before the next step, in whole seconds, at most plan.restSeconds: after a step held in full, its queue
 * drained at capacity (queueMax / C, C the estimate or what that step completed) plus one p95 latency for its requests
 * in flight; after a step ended early, whose load was stopped, one request lifetime and a second. Less the seconds the
 * step then waited for AMP to hold its window (its `ingestion`): its Job had finished or been stopped, so the replica
 * rested meanwhile.
 */
export function restBefore(steps: readonly StepMeasurement[], plan: CalibrationPlan, capacityRps: number | null) {
  const previous = steps.reduce<StepMeasurement | undefined>(
    (a, s) => (a === undefined || s.index > a.index ? s : a),
    undefined,
  );
  if (previous === undefined) return 0;
  const rested = previous.ingestion?.waitedSeconds ?? 0;
  return Math.max(0, Math.ceil(restNeeded(previous, plan, capacityRps) - rested));
}

/** The rest a step's leftovers need from when its load stopped (see restBefore), at most plan.restSeconds. */
function restNeeded(previous: StepMeasurement, plan: CalibrationPlan, capacityRps: number | null): number {
  if (previous.ending !== undefined && previous.ending.kind !== 'held') {
    // Ended early: its k6 Job was deleted, the clients went away and vLLM aborted what they had queued or running
    // (it aborts a request whose connection closes), so nothing is left to drain; one request lifetime and a second
    // let the gauges settle before the next window opens.
    return Math.min(plan.restSeconds, Math.ceil(requestLifetimeSeconds(previous)) + 1);
  }
  const drainRps = capacityRps ?? previous.amp.completedRps;
  const latency =
    previous.amp.p95E2eSeconds ?? (previous.k6 === null ? null : previous.k6.httpReqDurationMs.p95 / 1000);
  if (!(drainRps > 0) || latency === null) return plan.restSeconds;
  return Math.min(plan.restSeconds, Math.ceil(previous.amp.queueMax / drainRps + latency));
}

/** The rate step at `rate`: 0.1 req/s below 10, 1 req/s from 10 on. */
function granularity(rate: number): number {
  return rate < 10 ? 0.1 : 1;
}

/** Rounds to the rate step (0.1 below 10 req/s, whole requests/s above). */
export function roundRate(rate: number): number {
  return rate < 9.95 ? Math.max(MIN_RATE_RPS, Math.round(rate * 10) / 10) : Math.round(rate);
}

function ceilRate(rate: number): number {
  return rate < 9.95 ? Math.ceil(rate * 10 - 1e-9) / 10 : Math.ceil(rate - 1e-9);
}

function floorRate(rate: number): number {
  return rate < 10 ? Math.floor(rate * 10 + 1e-9) / 10 : Math.floor(rate + 1e-9);
}

/**
 * The stable-ending bar of a probe near the knee: at least half the hold. Just above capacity the queue starts growing
 * only once the running batch is full, which takes longer the nearer the rate is to capacity; far below the knee (the
 * bracket steps) the plan's own bar is enough.
 */
export const NEAR_KNEE_STABLE_AFTER_FRACTION = 0.5;

function nearKnee(plan: CalibrationPlan): number {
  return Math.max(plan.earlyStop.stableAfterFraction, NEAR_KNEE_STABLE_AFTER_FRACTION);
}

function load(
  state: Omit<AdaptiveState, 'decision'>,
  rateRps: number,
  holdSeconds: number,
  restSeconds: number,
  reason: string,
  stableAfterFraction?: number,
): AdaptiveState {
  return {
    ...state,
    decision: {
      done: false,
      rateRps,
      holdSeconds,
      restSeconds,
      reason,
      ...(stableAfterFraction === undefined ? {} : { stableAfterFraction }),
    },
  };
}

function done(state: Omit<AdaptiveState, 'decision'>, reason: string): AdaptiveState {
  return { ...state, decision: { done: true, reason } };
}
