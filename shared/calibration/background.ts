/**
 * The target's own users beside a calibration. Before anything changes, Deploy measures what the target already serves
 * (BACKGROUND_RULES). In `adopt` mode a target that serves users is refused unless the input allows it: the test
 * saturates the replica on purpose, and its users would share it. Whatever runs, each step offers k6's rate ON TOP of
 * that traffic, and the analysis judges the total: a replica's capacity is what it serves in all, not what k6 sent.
 */
import { guardSeries, VALUE_DOMAIN, type MetricsSource, type RangeSeries } from '../metrics/index.js';
import { CalibrationTargetServingError } from './errors.js';
import { fmt } from './format.js';
import type { CalibrationInput } from './input.js';
import { BACKGROUND_RULES } from './rules.js';
import { calibrationTarget, completionCountersQuery } from './stepQueries.js';

/** What the target served before the calibration began. */
export interface Background {
  /** Completed requests/s the target serves steadily (0 when AMP has none). */
  rateRps: number;
  reason: string;
}

/** The Deployment's record of its last calibration (Cleanup writes it): when it ended, and its background. */
export interface LastCalibration {
  endedAtMs: number;
  backgroundRps: number | null;
}

/** The annotation value Cleanup writes. */
export function lastCalibrationRecord(endedAtMs: number, backgroundRps: number | null): string {
  return JSON.stringify({ endedAtMs, backgroundRps } satisfies LastCalibration);
}

/** The record read back; undefined when absent or not one (a hand-edited annotation is ignored, not trusted). */
export function parseLastCalibration(value: string | undefined): LastCalibration | undefined {
  if (value === undefined) return undefined;
  try {
    const parsed = JSON.parse(value) as Partial<LastCalibration>;
    if (typeof parsed.endedAtMs !== 'number' || !Number.isFinite(parsed.endedAtMs)) return undefined;
    const rps = parsed.backgroundRps;
    return {
      endedAtMs: parsed.endedAtMs,
      backgroundRps: typeof rps === 'number' && Number.isFinite(rps) && rps >= 0 ? rps : null,
    };
  } catch {
    return undefined;
  }
}

/**
 * Measures the target's steady traffic from AMP at `nowMs`: the completions of the lookback (per counter series, a
 * drop counted as a restart from 0, as PromQL's `increase` does) over the seconds AMP's samples cover. When the last
 * calibration ended within the lookback, its own load is in those samples: the background it measured before it
 * began stands instead. Every counter sample passes the shared AMP answer guard (>= 0: a negative count or ±Inf is a
 * named error, never a rate).
 */
export async function measureBackground(
  source: MetricsSource,
  input: CalibrationInput,
  nowMs: number,
  last?: LastCalibration,
): Promise<Background> {
  const { lookbackSeconds, stepSeconds } = BACKGROUND_RULES;
  if (last !== undefined && last.backgroundRps !== null) {
    const agoSeconds = (nowMs - last.endedAtMs) / 1000;
    if (agoSeconds >= 0 && agoSeconds < lookbackSeconds)
      return {
        rateRps: last.backgroundRps,
        reason:
          `the last calibration ended ${fmt(agoSeconds, 0)} s ago and its load is still in AMP's recent samples, so ` +
          `the ${fmt(last.backgroundRps, 2)} completed req/s it measured before it began stands`,
      };
  }
  const query = completionCountersQuery(calibrationTarget(input));
  const series = guardSeries(
    await source.range(query, { startMs: nowMs - lookbackSeconds * 1000, endMs: nowMs, stepSeconds }),
    VALUE_DOMAIN.nonNegative,
    query,
  );
  const { completed, coveredSeconds } = countCompletions(series);
  const minutes = fmt(lookbackSeconds / 60, 0);
  if (coveredSeconds <= 0)
    return {
      rateRps: 0,
      reason: `AMP holds too few samples of the target in the last ${minutes} min: it serves nobody`,
    };
  const rateRps = completed / coveredSeconds;
  return {
    rateRps,
    reason:
      `the target served ${fmt(rateRps, 2)} completed req/s over the last ${fmt(coveredSeconds, 0)} s ` +
      `(${fmt(completed, 0)} completions of vllm:request_success_total in AMP)`,
  };
}

/** Completions across counter series (resets counted as restarts from 0), and the seconds the samples span. */
export function countCompletions(series: readonly RangeSeries[]): { completed: number; coveredSeconds: number } {
  let completed = 0;
  let firstMs = Infinity;
  let lastMs = -Infinity;
  for (const { points } of series) {
    const finite = points.filter((p) => Number.isFinite(p.value));
    for (let i = 1; i < finite.length; i++) {
      const before = finite[i - 1]?.value ?? 0;
      const now = finite[i]?.value ?? 0;
      completed += now >= before ? now - before : now;
    }
    if (finite.length > 0) {
      firstMs = Math.min(firstMs, finite[0]?.timestampMs ?? Infinity);
      lastMs = Math.max(lastMs, finite.at(-1)?.timestampMs ?? -Infinity);
    }
  }
  return { completed, coveredSeconds: lastMs > firstMs ? (lastMs - firstMs) / 1000 : 0 };
}

/** Whether the background counts as users (at or above BACKGROUND_RULES.servingRps). */
export function servesUsers(background: Background): boolean {
  return background.rateRps >= BACKGROUND_RULES.servingRps;
}

/**
 * Refuses to saturate a target that serves users in `adopt` mode unless `deploy.allowServingTraffic` is true: the
 * error names the measured rate and the field that allows it.
 */
export function refuseServingTarget(input: CalibrationInput, background: Background): void {
  if (input.deploy.mode !== 'adopt' || input.deploy.allowServingTraffic || !servesUsers(background)) return;
  const { namespace, deployment } = input.target;
  throw new CalibrationTargetServingError(
    `Deployment ${namespace}/${deployment} already serves users: ${background.reason}. The calibration saturates ` +
      'its test replica on purpose and those users would share it; set deploy.allowServingTraffic: true to calibrate ' +
      'it with that traffic beside the test (the analysis counts it), or calibrate a separate Deployment ' +
      '(deploy.mode: apply with another target.deployment)',
  );
}

/** The slowest rate k6 is asked for: a tenth of a request/s (adaptive's floor too). */
export const MIN_K6_RPS = 0.1;

/**
 * The k6 rate of a step planned at `plannedRps` in all: the background is already offered, k6 adds the rest (at least
 * MIN_K6_RPS).
 */
export function k6RateFor(plannedRps: number, backgroundRps: number): number {
  return Math.max(MIN_K6_RPS, Number((plannedRps - backgroundRps).toFixed(3)));
}
