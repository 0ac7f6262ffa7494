import type { Profile } from '../profile/profile.js';
import { measureCapacity, measureLatency, type RequestShape } from '../vllm/capacity.js';

/**
 * One replica's performance as a function of the rate offered to it, measured once per run with the twin's own
 * engine (`VllmEngine`, through `measureCapacity` and `measureLatency`) on its virtual clock.
 *
 * Why a measured curve and not the engine itself: a day at a few dozen requests per second is millions of requests
 * per candidate; the demo's engine runs about 40,000 requests per CPU second (bench/engineThroughput.ts, one engine),
 * so request by request a day would cost most of a minute of CPU per candidate, more with larger batches. The curve
 * costs one 60 s engine run per grid point (under a second in all), and the replay then advances one second at a
 * time (a fluid model: rates and a backlog, not requests) in about 0.2 s a day. What that leaves out: everything
 * inside a second (the burstiness of arrivals, a batch filling up, warm-up of a new Pod's first requests, preemption
 * cascades), and the per-request spread of latency around the measured p95.
 *
 * The grid stops just below capacity on purpose: above it the engine has no steady state (its queue grows for as
 * long as the load lasts), and the replay models exactly that growth as a backlog drained at `capacityRps`.
 */

/** One measured point: the engine offered `rps` evenly spaced requests per second. */
export interface PerformancePoint {
  rps: number;
  /** p95 end-to-end latency (seconds) of the requests measured at this rate. */
  p95S: number;
  /** Mean `vllm:num_requests_waiting` of the replica at this rate. */
  meanWaiting: number;
}

export interface PerformanceModel {
  profile: string;
  shape: RequestShape;
  /** Completions per second of one saturated replica (measureCapacity). */
  capacityRps: number;
  /** Sorted by rate. */
  points: PerformancePoint[];
}

/** Shares of the capacity measured; 10 points, each a 60 s engine run after the warm-up. */
export const GRID_FRACTIONS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95] as const;
const POINT_DURATION_S = 60;

/** Measures the curve for a profile and a request shape (deterministic: the same input gives the same model). */
export function measurePerformanceModel(profile: Profile, shape: RequestShape): PerformanceModel {
  const capacity = measureCapacity(profile, shape);
  const points = GRID_FRACTIONS.map((fraction) => {
    const rps = capacity.capacityRps * fraction;
    const latency = measureLatency(profile, shape, rps, POINT_DURATION_S);
    return { rps, p95S: latency.p95E2eS, meanWaiting: latency.meanWaiting };
  });
  return { profile: profile.name, shape: { ...shape }, capacityRps: capacity.capacityRps, points };
}

/**
 * The point at a per-replica rate, interpolated linearly between grid points; below the first point the latency is
 * the first point's (an idle replica is not faster than a lightly loaded one) and the queue shrinks to 0; above
 * the last point both are the last point's (the backlog above capacity is the replay's).
 */
export function performanceAt(model: PerformanceModel, rps: number): PerformancePoint {
  const { points } = model;
  const first = points[0];
  const last = points[points.length - 1];
  if (first === undefined || last === undefined) return { rps, p95S: 0, meanWaiting: 0 };
  if (rps <= first.rps) return { rps, p95S: first.p95S, meanWaiting: (first.meanWaiting * rps) / first.rps };
  if (rps >= last.rps) return { rps, p95S: last.p95S, meanWaiting: last.meanWaiting };
  let index = 1;
  while ((points[index]?.rps ?? Infinity) < rps) index += 1;
  const lo = points[index - 1] ?? first;
  const hi = points[index] ?? last;
  const f = (rps - lo.rps) / (hi.rps - lo.rps);
  return {
    rps,
    p95S: lo.p95S + f * (hi.p95S - lo.p95S),
    meanWaiting: lo.meanWaiting + f * (hi.meanWaiting - lo.meanWaiting),
  };
}
