/**
 * A synthetic saturating server for the strategies' unit tests: given one replica's true capacity and a load step,
 * it returns the StepMeasurement the real measurement would, with the product's own decisions on it:
 * - the queue (`vllm:num_requests_waiting`) is sampled every scrape: max(0, (offered − C) × t) plus noise (a queue
 *   grows at the arrival rate minus the service rate); below capacity it stays near 0 (vLLM batches what arrives), with
 *   blips growing as the load nears capacity;
 * - completions: min(offered, C) over the window, less the requests still in flight when it closed (one request
 *   lifetime S: C × (W − S) / W, as the twin shows, e.g. 94 % at 50 of 57 req/s), with noise;
 * - latencies: p95 time to first token is the wait behind the queue at the end, p95 end-to-end adds the lifetime S;
 * - k6: every request sent (rate × hold); answered until its graceful stop (30 s) at capacity; iterations dropped when
 *   the VUs needed (rate × mean latency) exceed maxVUs;
 * - early ending: when plan.earlyStop is on, shared/calibration/earlyStop.ts decides at every watch (k6 is then null,
 *   as for a stopped Job), and the verdict is measure.ts `classifyStep`, never a hand-set flag.
 * Noise comes from a seeded PRNG (mulberry32, Box-Muller normals): the same seed gives the same steps.
 */
import type { K6Summary } from '../../../kube/index.js';
import { decideStepEnding, type QueueSample } from '../../earlyStop.js';
import type { CalibrationInput } from '../../input.js';
import { classifyStep } from '../../measure.js';
import type { AmpStepMeasurement, StepEnding, StepMeasurement, StrategyDecision } from '../../types.js';
import type { CalibrationStrategy } from '../types.js';

export interface SaturatingServerOptions {
  /** The true capacity of the replica, requests/s. */
  capacityRps: number;
  /** PRNG seed (default 1). */
  seed?: number;
  /** Relative standard deviation of the completion rate (default 0.01). */
  completionNoise?: number;
  /** SD of an overloaded replica's queue samples, requests (default 1; 0.4 × (rate / C)² of it below C). */
  queueNoise?: number;
  /** One request's lifetime once admitted (decode time), seconds (default 2). */
  lifetimeSeconds?: number;
  /** The scrape interval of the queue samples, seconds (default 5). */
  scrapeSeconds?: number;
  /** The KV cache's mean usage at capacity, 0-1 (default 0.5; it grows in proportion to the load). 0: none reported. */
  kvCacheUsageAtCapacity?: number;
  /**
   * The engine's --max-num-seqs, recorded with each step with the running batch (absent: neither is). The batch is
   * full at capacity and grows a little faster than the rate below it (a fuller batch decodes more slowly):
   * maxNumSeqs × (rate / C)^1.3.
   */
  maxNumSeqs?: number;
}

/** k6's graceful stop: the Job keeps waiting this long for the answers of requests in flight. */
const K6_GRACEFUL_STOP_SECONDS = 30;
const T0_MS = Date.UTC(2025, 5, 2, 9, 0, 0);

/** A seeded uniform (mulberry32) and standard normal (Box-Muller) source. */
export function seededRandom(seed: number): { uniform: () => number; normal: () => number } {
  let a = seed >>> 0;
  const uniform = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
  return { uniform, normal };
}

/** The synthetic replica: `measure` runs one load step against it. */
export class SaturatingServer {
  readonly capacityRps: number;
  private readonly random: ReturnType<typeof seededRandom>;
  private readonly completionNoise: number;
  private readonly queueNoise: number;
  private readonly lifetimeSeconds: number;
  private readonly scrapeSeconds: number;
  private readonly kvCacheUsageAtCapacity: number;
  private readonly maxNumSeqs: number | undefined;
  private startMs = T0_MS;

  constructor(options: SaturatingServerOptions) {
    this.capacityRps = options.capacityRps;
    this.random = seededRandom(options.seed ?? 1);
    this.completionNoise = options.completionNoise ?? 0.01;
    this.kvCacheUsageAtCapacity = options.kvCacheUsageAtCapacity ?? 0.5;
    this.maxNumSeqs = options.maxNumSeqs;
    this.queueNoise = options.queueNoise ?? 1;
    this.lifetimeSeconds = options.lifetimeSeconds ?? 2;
    this.scrapeSeconds = options.scrapeSeconds ?? 5;
  }

  /** Runs the step `decision` asks for (after its rest) and returns what the measurement would record. */
  measure(
    decision: Extract<StrategyDecision, { done: false }>,
    index: number,
    input: CalibrationInput,
  ): StepMeasurement {
    const rate = decision.rateRps;
    const planned = decision.holdSeconds;
    const c = this.capacityRps;
    const overload = Math.max(0, rate - c);
    this.startMs += (index === 0 ? 0 : decision.restSeconds) * 1000;

    const samples: QueueSample[] = [];
    for (let t = this.scrapeSeconds; t <= planned + 1e-9; t += this.scrapeSeconds) {
      // Below capacity vLLM admits arrivals into the batch at once: blips in the queue only as the load nears capacity.
      const sd = this.queueNoise * (overload > 0 ? 1 : 0.4 * (rate / c) ** 2);
      const queue = Math.max(0, Math.round(overload * t + sd * this.random.normal()));
      samples.push({ tMs: this.startMs + t * 1000, queue });
    }

    let ending: StepEnding = {
      kind: 'held',
      reason: `held the planned ${planned} s`,
      heldSeconds: planned,
      plannedHoldSeconds: planned,
    };
    const settings = {
      ...input.plan.earlyStop,
      stableAfterFraction: Math.max(input.plan.earlyStop.stableAfterFraction, decision.stableAfterFraction ?? 0),
    };
    if (settings.enabled) {
      for (let t = settings.watchSeconds; t < planned; t += settings.watchSeconds) {
        const seen = samples.filter((s) => s.tMs <= this.startMs + t * 1000);
        const verdict = decideStepEnding(seen, {
          offeredRps: rate,
          elapsedSeconds: t,
          plannedHoldSeconds: planned,
          pods: 1,
          // The twin's vLLM reports it from its histograms' means; here it is known.
          requestLifetimeSeconds: this.lifetimeSeconds,
          settings,
        });
        if (verdict.action === 'end') {
          ending = {
            kind: verdict.kind === 'saturated' ? 'saturated-early' : 'stable-early',
            reason: verdict.reason,
            heldSeconds: t,
            plannedHoldSeconds: planned,
          };
          break;
        }
      }
    }

    const window = ending.heldSeconds;
    const inWindow = samples.filter((s) => s.tMs <= this.startMs + window * 1000);
    const queues = inWindow.map((s) => s.queue);
    const queueEnd = overload * window;
    const waitEnd = queueEnd / c;
    const lifetime = Math.min(this.lifetimeSeconds, window / 2);
    const completed = Math.min(rate, c) * (1 - lifetime / window) * (1 + this.completionNoise * this.random.normal());
    const p95Ttft = 0.05 + 0.95 * waitEnd;
    const amp: AmpStepMeasurement = {
      queueMean: queues.reduce((a, b) => a + b, 0) / Math.max(1, queues.length),
      queueMax: Math.max(0, ...queues),
      queueSlopePerSecond: slope(inWindow),
      p95E2eSeconds: p95Ttft + lifetime,
      p95TtftSeconds: p95Ttft,
      p95InterTokenSeconds: 0.03,
      kvCacheUsageMean: Math.min(1, (this.kvCacheUsageAtCapacity * Math.min(rate, c)) / c),
      kvCacheUsageMax: Math.min(1, (1.2 * this.kvCacheUsageAtCapacity * Math.min(rate, c)) / c),
      ...(this.maxNumSeqs === undefined ? {} : { runningMean: this.maxNumSeqs * (Math.min(rate, c) / c) ** 1.3 }),
      preemptions: 0,
      completedRps: Math.max(0, completed),
      // The second half of the window runs at the service rate (the batch is full by then).
      completedRpsLateHalf: Math.max(0, Math.min(rate, c) * (1 + this.completionNoise * this.random.normal())),
      pods: 1,
      meanLifetimeSeconds: lifetime,
    };
    const k6 = ending.kind === 'held' ? this.k6(rate, planned, lifetime + waitEnd / 2, amp, input) : null;
    const step: StepMeasurement = {
      index,
      rateRps: rate,
      holdSeconds: window,
      windowStart: new Date(this.startMs).toISOString(),
      windowEnd: new Date(this.startMs + window * 1000).toISOString(),
      k6,
      amp,
      verdict: classifyStep(amp, k6, rate, input, window, ending),
      ending,
      ...(this.maxNumSeqs === undefined ? {} : { maxNumSeqs: this.maxNumSeqs }),
    };
    // The Job ends once its answers are in (held) or when it is stopped (early): the next rest starts then.
    this.startMs += (window + (k6 === null ? 0 : Math.min(K6_GRACEFUL_STOP_SECONDS, waitEnd + lifetime))) * 1000;
    return step;
  }

  private k6(rate: number, hold: number, meanLatency: number, amp: AmpStepMeasurement, input: CalibrationInput) {
    const sent = Math.round(rate * hold);
    const vusNeeded = rate * meanLatency;
    const dropped = vusNeeded > input.plan.maxVUs ? Math.round(sent * (1 - input.plan.maxVUs / vusNeeded)) : 0;
    const answered = Math.min(sent - dropped, Math.round(this.capacityRps * (hold + K6_GRACEFUL_STOP_SECONDS)));
    const ms = (s: number) => Math.round(s * 1000);
    const summary: K6Summary = {
      executor: 'constant-arrival-rate',
      rate,
      durationSeconds: hold + meanLatency,
      iterations: answered,
      droppedIterations: dropped,
      httpReqs: answered,
      httpReqFailed: 0,
      iterationsRate: answered / (hold + meanLatency),
      httpReqDurationMs: {
        avg: ms(meanLatency),
        min: ms(this.lifetimeSeconds * 0.6),
        med: ms(meanLatency),
        max: ms((amp.p95E2eSeconds ?? meanLatency) * 1.2),
        p90: ms((amp.p95E2eSeconds ?? meanLatency) * 0.95),
        p95: ms(amp.p95E2eSeconds ?? meanLatency),
        p99: ms((amp.p95E2eSeconds ?? meanLatency) * 1.1),
      },
    };
    return summary;
  }
}

/** Least-squares slope of the queue samples, requests/s (0 with fewer than two). */
function slope(samples: readonly QueueSample[]): number {
  const n = samples.length;
  if (n < 2) return 0;
  const xs = samples.map((s) => s.tMs / 1000);
  const xMean = xs.reduce((a, b) => a + b, 0) / n;
  const yMean = samples.reduce((a, s) => a + s.queue, 0) / n;
  let sxy = 0;
  let sxx = 0;
  samples.forEach((s, i) => {
    const dx = (xs[i] as number) - xMean;
    sxy += dx * (s.queue - yMean);
    sxx += dx * dx;
  });
  return sxx === 0 ? 0 : sxy / sxx;
}

export interface StrategyRun {
  steps: StepMeasurement[];
  decisions: StrategyDecision[];
  /** The final decision's reason. */
  reason: string;
  /** Seconds of load and rest: every step's window plus the rest before it (none before the first). */
  loadSeconds: number;
}

/** Runs `strategy` against `server` until it is done (or `limit` steps, a guard against a strategy that never ends). */
export function runStrategy(
  strategy: CalibrationStrategy,
  server: SaturatingServer,
  input: CalibrationInput,
  limit = 100,
): StrategyRun {
  const steps: StepMeasurement[] = [];
  const decisions: StrategyDecision[] = [];
  let loadSeconds = 0;
  for (;;) {
    const decision = strategy.next(steps, input.plan);
    decisions.push(decision);
    if (decision.done) return { steps, decisions, reason: decision.reason, loadSeconds };
    if (steps.length >= limit) throw new Error(`${strategy.name} did not finish within ${limit} steps`);
    const step = server.measure(decision, steps.length, input);
    loadSeconds += (steps.length === 0 ? 0 : decision.restSeconds) + step.holdSeconds;
    steps.push(step);
  }
}
