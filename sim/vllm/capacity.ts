import { VirtualClock } from '../../shared/clock/index.js';
import { meanLengths, type RequestMix } from '../../shared/load/index.js';
import { sampleRequestAt } from '../mix/sampler.js';
import type { Profile } from '../profile/profile.js';
import { engineConfigFromProfile, type EngineOverrides, type RequestResult, VllmEngine } from './engine.js';
import { VllmMeasurementInputError } from './errors.js';

/**
 * Capacity and latency of ONE replica for a request shape, measured by running the engine model in virtual time
 * (deterministic: evenly spaced arrivals, no randomness). These are the numbers the twin's profiles are tuned
 * against and that `vllm-pilot twin capacity` prints.
 */

/** The shape of the load: every request has this prompt length and `max_tokens`. */
export interface RequestShape {
  promptTokens: number;
  maxTokens: number;
}

/**
 * What limits the replica's throughput at saturation: the batch at --max-num-seqs; the KV cache (the batch stops
 * growing because no block is free, and decodes preempt); prefill (most of each step's time goes to prompt tokens);
 * else the step time (the token budget and the per-sequence cost).
 */
export type CapacityLimit = 'maxNumSeqs' | 'kvCache' | 'prefill' | 'stepTime';

export interface CapacityResult {
  /** Steady-state completions per second with a queue that never empties (see measureCapacity). */
  capacityRps: number;
  offeredRps: number;
  shape: RequestShape;
  /** The measurement window (seconds since the model finished loading). */
  windowStartS: number;
  windowEndS: number;
  completedInWindow: number;
  /** Averages over the window, sampled at every arrival. */
  meanRunning: number;
  meanKvCacheUsage: number;
  meanStepMs: number;
  /** The share of the engine's busy time spent on prompt tokens (prefill, recompute after preemption included). */
  prefillShare: number;
  preemptions: number;
  limitedBy: CapacityLimit;
  reason: string;
}

export interface LatencyResult {
  offeredRps: number;
  durationS: number;
  shape: RequestShape;
  /** Requests measured: those arriving after the first 20 % of the run (the ramp-up transient). */
  measuredRequests: number;
  /** Completions per second while arrivals lasted. */
  achievedRps: number;
  p50E2eS: number;
  p95E2eS: number;
  p99E2eS: number;
  p50TtftS: number;
  p95TtftS: number;
  meanQueueTimeS: number;
  /** Queue depth (`vllm:num_requests_waiting`) sampled at every arrival. */
  meanWaiting: number;
  maxWaiting: number;
  meanKvCacheUsage: number;
  preemptions: number;
}

export interface MeasureOptions {
  /** Container-arg overrides applied to the profile's engine. */
  overrides?: EngineOverrides;
  /**
   * A request mix: request i gets the lengths the k6 script draws for iteration i (the same sampler text and seed),
   * instead of `shape`; `shape` is then ignored (results report the mix's expected lengths).
   */
  mix?: RequestMix;
}

/**
 * The lengths of request i: the mix's draw, else the fixed shape. A mix is simulated request by request rather than
 * replaced by its means because the engine is not linear in the lengths: a sequence holds ceil((prompt + output) /
 * blockSize) KV blocks, so long requests run out of cache (and preempt) where the mean would not; prefill costs a
 * step's time in proportion to each prompt; and a batch of mixed lifetimes turns over unevenly. Only a replica
 * bound by --max-num-seqs with short prompts completes about tokens/s ÷ mean output.
 */
function requestLengths(shape: RequestShape, options: MeasureOptions): (index: number) => RequestShape {
  const mix = options.mix;
  if (mix === undefined) return () => shape;
  return (index) => sampleRequestAt(mix, index);
}

/** The shape results report: the fixed one, or the mix's expected lengths. */
function reportedShape(shape: RequestShape, options: MeasureOptions): RequestShape {
  return options.mix === undefined ? { ...shape } : meanLengths(options.mix);
}

function checkShape(shape: RequestShape): void {
  for (const field of ['promptTokens', 'maxTokens'] as const) {
    const value = shape[field];
    if (!(Number.isInteger(value) && value >= 1)) {
      throw new VllmMeasurementInputError(`shape.${field}`, value, 'an integer >= 1');
    }
  }
}

/** Nearest-rank percentile of a sorted array (0 for an empty one). */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.max(1, Math.ceil(p * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] ?? 0;
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

function newEngine(profile: Profile, options: MeasureOptions): { engine: VllmEngine; clock: VirtualClock } {
  const clock = new VirtualClock(0);
  const engine = new VllmEngine(engineConfigFromProfile(profile, options.overrides), clock);
  clock.set(engine.loadedAtMs);
  return { engine, clock };
}

/** Runs the engine until it is idle (or `untilMs`), stepping the virtual clock from event to event. */
function drain(engine: VllmEngine, clock: VirtualClock, untilMs = Number.POSITIVE_INFINITY): void {
  for (;;) {
    const next = engine.nextEventMs();
    if (next === undefined || next > untilMs) return;
    // A step due exactly now is composed only once time passes it, so step just beyond it.
    clock.set(Math.max(clock.now(), next) + 1e-6);
    engine.advanceTo(clock.now());
  }
}

/**
 * Upper bound of the decode throughput: a full batch (maxNumSeqs, or what the KV cache holds) producing one token
 * per sequence per step, prefill ignored. Used to offer a load surely above capacity.
 */
function decodeBoundRps(profile: Profile, shape: RequestShape, options: MeasureOptions): number {
  const config = engineConfigFromProfile(profile, options.overrides);
  const blocksPerSeq = Math.ceil((shape.promptTokens + shape.maxTokens) / config.blockSize);
  const batch = Math.max(1, Math.min(config.maxNumSeqs, Math.floor(config.kvCacheBlocks / blocksPerSeq)));
  const stepMs = config.decodeStepMs.base + config.decodeStepMs.perSequence * batch;
  return (batch * 1000) / (shape.maxTokens * stepMs);
}

/** At or above this share of busy time on prompt tokens, prefill is what limits the replica. */
const PREFILL_BOUND_SHARE = 0.5;

/**
 * Measures one replica's capacity for a request shape.
 *
 * Method: offer evenly spaced arrivals at 1.5x the decode-bound throughput (so the queue never empties), run for
 * max(60 s, 40 full-batch request lifetimes), skip the first third (model warm-up and the batch filling up), and
 * count completions whose last token falls in the remaining two thirds.
 * What limits it, from the window's averages:
 * - maxNumSeqs: the batch stays at 95 % of --max-num-seqs or more;
 * - kvCache: else the KV cache is 90 % full on average, or decodes preempted (no free block for their next token);
 * - prefill: else at least PREFILL_BOUND_SHARE (50 %) of the busy time went to prompt tokens (tokens prefilled in the
 *   window / prefillTokensPerSecond, over the busy seconds): e.g. 1,500-token prompts, 64 output tokens;
 * - stepTime: otherwise.
 * capacity = completions / window length, whatever the limit: it is the highest rate from which the replica drains a
 * backlog. For a KV-bound replica it is also the honest figure although paced arrivals from an empty replica hold a
 * little more: such a replica is bistable above it. With a queue waiting, every freed block admits a prompt at once,
 * the cache fills with prompts, and growing decodes preempt the newest sequences, which are recomputed later; it then
 * completes less than it would with its batch paced. llama-2-13b-h100-kv (512/256 tokens) completes 6.26 req/s
 * saturated (1,851 preemptions in the window); 6.5 req/s offered to a warmed, empty replica holds (KV cache 75 %, no
 * preemption), but the same 6.5 req/s after the first requests' warm-up backlog never recovers (queue 52 → 108 over
 * 320 s, 775 preemptions). Thresholds derived from a rate above 6.26 would fail at the first burst.
 */
export function measureCapacity(
  profile: Profile,
  requested: RequestShape,
  options: MeasureOptions = {},
): CapacityResult {
  if (options.mix === undefined) checkShape(requested);
  const shape = reportedShape(requested, options);
  const lengthsOf = requestLengths(requested, options);
  const { engine, clock } = newEngine(profile, options);
  const config = engine.config;
  const bound = decodeBoundRps(profile, shape, options);
  // A mix's long requests hold more of the batch than its means say: twice the bound keeps a queue all the same.
  const offeredRps = bound * (options.mix === undefined ? 1.5 : 2);
  // A request lives about batch / throughput seconds once the batch is full (Little's law).
  const lifetimeS = config.maxNumSeqs / bound;
  const durationS = Math.max(60, 40 * lifetimeS);
  const t0 = engine.loadedAtMs;
  const windowStartMs = t0 + (durationS * 1000) / 3;
  const windowEndMs = t0 + durationS * 1000;

  let completedInWindow = 0;
  const onEvent = (event: { type: string; atMs: number }): void => {
    if (event.type === 'finished' && event.atMs >= windowStartMs && event.atMs < windowEndMs) completedInWindow += 1;
  };
  const running: number[] = [];
  const kvUsage: number[] = [];
  let statsAtWindowStart: ReturnType<VllmEngine['stats']> | undefined;
  const intervalMs = 1000 / offeredRps;
  for (let i = 0; ; i++) {
    const arrivalMs = t0 + i * intervalMs;
    if (arrivalMs >= windowEndMs) break;
    clock.set(arrivalMs);
    engine.submit(lengthsOf(i), onEvent);
    if (arrivalMs >= windowStartMs) {
      const stats = engine.stats();
      statsAtWindowStart ??= stats;
      running.push(stats.running);
      kvUsage.push(stats.kvCacheUsage);
    }
  }
  clock.set(windowEndMs);
  const end = engine.stats();
  const start = statsAtWindowStart ?? end;
  const windowS = (windowEndMs - windowStartMs) / 1000;
  const capacityRps = completedInWindow / windowS;
  const busyS = end.busySecondsTotal - start.busySecondsTotal;
  const prefillShare = busyS > 0 ? prefillSecondsBetween(engine, start, end) / busyS : 0;
  const steps = end.steps - start.steps;
  const meanStepMs = steps > 0 ? ((end.busySecondsTotal - start.busySecondsTotal) * 1000) / steps : 0;
  const meanRunning = mean(running);
  const meanKvCacheUsage = mean(kvUsage);
  const preemptions = end.preemptions - start.preemptions;

  let limitedBy: CapacityLimit;
  let reason: string;
  if (meanRunning >= config.maxNumSeqs * 0.95) {
    limitedBy = 'maxNumSeqs';
    reason =
      `the batch stays full at --max-num-seqs ${config.maxNumSeqs} (mean ${meanRunning.toFixed(1)} running); ` +
      `each step of ${meanStepMs.toFixed(1)} ms yields one token per sequence`;
  } else if (meanKvCacheUsage >= 0.9 || preemptions > 0) {
    limitedBy = 'kvCache';
    reason =
      `the KV cache is the limit (mean usage ${(meanKvCacheUsage * 100).toFixed(0)} %, ${preemptions} preemptions ` +
      `in the window) before the batch reaches --max-num-seqs ${config.maxNumSeqs} (mean ${meanRunning.toFixed(1)} ` +
      'running)';
  } else if (prefillShare >= PREFILL_BOUND_SHARE) {
    limitedBy = 'prefill';
    reason =
      `prefill is the limit: ${(prefillShare * 100).toFixed(0)} % of the busy time goes to prompt tokens ` +
      `(${shape.promptTokens} per request at ${config.prefillTokensPerSecond} tokens/s), with the batch at ` +
      `${meanRunning.toFixed(1)} of ${config.maxNumSeqs} and the KV cache ${(meanKvCacheUsage * 100).toFixed(0)} % full`;
  } else {
    limitedBy = 'stepTime';
    reason =
      `neither the batch (mean ${meanRunning.toFixed(1)} of ${config.maxNumSeqs}) nor the KV cache is full: ` +
      `the token budget and prefill time per step (${meanStepMs.toFixed(1)} ms) are the limit`;
  }
  return {
    capacityRps,
    offeredRps,
    shape: { ...shape },
    windowStartS: (windowStartMs - t0) / 1000,
    windowEndS: (windowEndMs - t0) / 1000,
    completedInWindow,
    meanRunning,
    meanKvCacheUsage,
    meanStepMs,
    prefillShare,
    preemptions,
    limitedBy,
    reason,
  };
}

/** Seconds of prefill between two engine snapshots: the tokens prefilled (recompute included) / prefillTokensPerSecond. */
function prefillSecondsBetween(
  engine: VllmEngine,
  start: ReturnType<VllmEngine['stats']>,
  end: ReturnType<VllmEngine['stats']>,
): number {
  return (end.prefilledTokens - start.prefilledTokens) / engine.config.prefillTokensPerSecond;
}

/**
 * Measures latency at a constant arrival rate, as the guide's k6 constant-arrival-rate step does.
 *
 * Method: a warm-up of `startup.warmupRequests` sequential requests first (like the guide's 100-request warm-up
 * Job, so the warm-up slowdown is over), then evenly spaced arrivals at `rps` for `durationS` seconds; the run
 * continues until every request finished. Percentiles (nearest rank) cover the requests that arrived after the
 * first 20 % of the run.
 */
export function measureLatency(
  profile: Profile,
  shape: RequestShape,
  rps: number,
  durationS: number,
  options: MeasureOptions & { warmup?: boolean } = {},
): LatencyResult {
  if (options.mix === undefined) checkShape(shape);
  if (!(rps > 0 && Number.isFinite(rps))) throw new VllmMeasurementInputError('rps', rps, 'a number > 0');
  if (!(durationS > 0 && Number.isFinite(durationS))) {
    throw new VllmMeasurementInputError('durationS', durationS, 'a number of seconds > 0');
  }
  const { engine, clock } = newEngine(profile, options);
  const lengthsOf = requestLengths(shape, options);
  if (options.warmup !== false) {
    for (let i = 0; i < engine.config.warmupRequests; i++) {
      engine.submit(lengthsOf(i));
      drain(engine, clock);
    }
  }
  const preemptionsBefore = engine.stats().preemptions;
  const t0 = clock.now();
  const measureFromMs = t0 + durationS * 1000 * 0.2;
  const endMs = t0 + durationS * 1000;
  const results: RequestResult[] = [];
  let completedDuringArrivals = 0;
  const waiting: number[] = [];
  const kvUsage: number[] = [];
  const intervalMs = 1000 / rps;
  for (let i = 0; ; i++) {
    const arrivalMs = t0 + i * intervalMs;
    if (arrivalMs >= endMs) break;
    clock.set(arrivalMs);
    // Sample before this arrival joins the queue, as a scrape between arrivals would see it.
    const stats = engine.stats();
    waiting.push(stats.waiting);
    kvUsage.push(stats.kvCacheUsage);
    const measured = arrivalMs >= measureFromMs;
    engine.submit(lengthsOf(i), (event) => {
      if (event.type !== 'finished') return;
      if (event.atMs < endMs) completedDuringArrivals += 1;
      if (measured) results.push(event.result);
    });
  }
  drain(engine, clock);
  const e2e = results.map((r) => (r.finishedMs - r.arrivalMs) / 1000).sort((a, b) => a - b);
  const ttft = results.map((r) => ((r.firstTokenMs ?? r.finishedMs) - r.arrivalMs) / 1000).sort((a, b) => a - b);
  return {
    offeredRps: rps,
    durationS,
    shape: reportedShape(shape, options),
    measuredRequests: results.length,
    achievedRps: completedDuringArrivals / durationS,
    p50E2eS: percentile(e2e, 0.5),
    p95E2eS: percentile(e2e, 0.95),
    p99E2eS: percentile(e2e, 0.99),
    p50TtftS: percentile(ttft, 0.5),
    p95TtftS: percentile(ttft, 0.95),
    meanQueueTimeS: mean(results.map((r) => ((r.scheduledMs ?? r.arrivalMs) - r.arrivalMs) / 1000)),
    meanWaiting: mean(waiting),
    maxWaiting: Math.max(0, ...waiting),
    meanKvCacheUsage: mean(kvUsage),
    preemptions: engine.stats().preemptions - preemptionsBefore,
  };
}
