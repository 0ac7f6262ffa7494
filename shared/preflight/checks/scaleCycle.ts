import { guardSinglePoints, VALUE_DOMAIN, VLLM, vllmSelector } from '../../metrics/index.js';
import { CHECK_IDS, type PreflightCheck } from '../types.js';
import { guardedAnswer, seriesEvidence, signalOf } from '../workload.js';

interface Point {
  timestampMs: number;
  value: number;
}

/** A scale-out (the count rose above an earlier value) followed later by a scale-in (it fell again). */
export interface ScaleCycle {
  before: Point;
  out: Point;
  in: Point;
}

/**
 * Finds the largest scale-out followed by a scale-in in a series of serving-Pod counts: the highest point with a lower
 * count somewhere before it and somewhere after it. The largest, not the first, because a rolling update also adds a
 * surge Pod for a moment; reporting KEDA's 1 → 4 → 1 says more than a one-step blip. `before` and `in` are the
 * lowest counts on either side (earliest on ties), `out` the first time the peak was reached.
 */
export function findScaleCycle(points: readonly Point[]): ScaleCycle | undefined {
  const n = points.length;
  // lowestAfter[i]: the lowest point after i (the earliest of equals).
  const lowestAfter: Array<Point | undefined> = new Array<Point | undefined>(n).fill(undefined);
  for (let i = n - 2; i >= 0; i--) {
    const next = points[i + 1] as Point;
    const rest = lowestAfter[i + 1];
    lowestAfter[i] = rest === undefined || next.value <= rest.value ? next : rest;
  }
  let lowestBefore: Point | undefined;
  let best: ScaleCycle | undefined;
  for (let i = 0; i < n; i++) {
    const point = points[i] as Point;
    const after = lowestAfter[i];
    if (lowestBefore !== undefined && after !== undefined && lowestBefore.value < point.value) {
      if (after.value < point.value && (best === undefined || point.value > best.out.value))
        best = { before: lowestBefore, out: point, in: after };
    }
    if (lowestBefore === undefined || point.value < lowestBefore.value) lowestBefore = point;
  }
  return best;
}

/**
 * Item 11: within the lookback, AMP shows the Deployment's serving Pods (those exposing
 * vllm:num_requests_running) growing and shrinking again: KEDA and Karpenter scaled out and back in at least once.
 */
export const scaleCycle: PreflightCheck = {
  id: CHECK_IDS.scaleCycle,
  item: 11,
  title: 'Scale out → scale in cycle observed',
  async run(context) {
    const { settings, target } = context;
    const query = `count(${vllmSelector(target, VLLM.numRequestsRunning)})`;
    const endMs = context.clock.now();
    const startMs = endMs - settings.scaleCycleLookbackSeconds * 1000;
    const series = await context.metrics.range(query, {
      startMs,
      endMs,
      stepSeconds: settings.scaleCycleStepSeconds,
      ...signalOf(context),
    });
    // One series (count()), a count of Pods: several series, a negative count or ±Inf fails the check.
    const answer = guardedAnswer(query, series.length, () =>
      guardSinglePoints(series, VALUE_DOMAIN.nonNegative, query),
    );
    if (!answer.ok) return answer.outcome;
    const points = answer.value;
    const lookback = describeSeconds(settings.scaleCycleLookbackSeconds);
    const counts = points.map((p) => p.value);
    const range = counts.length === 0 ? null : { min: Math.min(...counts), max: Math.max(...counts) };
    const cycle = findScaleCycle(points);
    const fix = `Drive load past the ScaledObject's threshold and stop it (e.g. a calibration run, or vllm-pilot twin load on the twin), then watch kubectl -n ${target.namespace} get hpa,pods -w scale out and back in`;
    const at = (p: Point) => new Date(p.timestampMs).toISOString();
    if (cycle === undefined) {
      return {
        status: 'warn',
        reason:
          range === null
            ? `no serving Pods of ${target.deployment} in AMP over the last ${lookback}: no scale-out → scale-in cycle observed`
            : `no scale-out followed by a scale-in in the last ${lookback} (serving Pods between ${range.min} and ${range.max})`,
        evidence: [seriesEvidence(query, series.length, { startMs, endMs, points: points.length, ...(range ?? {}) })],
        fix,
      };
    }
    return {
      status: 'pass',
      reason: `scaled out from ${cycle.before.value} to ${cycle.out.value} serving Pods at ${at(cycle.out)} and back in to ${cycle.in.value} at ${at(cycle.in)}`,
      evidence: [
        seriesEvidence(query, series.length, {
          startMs,
          endMs,
          points: points.length,
          before: { at: at(cycle.before), pods: cycle.before.value },
          scaledOut: { at: at(cycle.out), pods: cycle.out.value },
          scaledIn: { at: at(cycle.in), pods: cycle.in.value },
        }),
      ],
    };
  },
};

function describeSeconds(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} d`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}
