import { type Clock, systemClock } from '../../shared/clock/index.js';
import { mean, quantile } from '../../shared/util/index.js';
import type { SampledRequest } from '../../shared/load/index.js';
import { estimatePromptTokens } from '../vllm/tokens.js';
import { LoadAgent } from './agent.js';
import { sendCompletion } from './completion.js';

/**
 * A constant-arrival-rate load generator shaped after k6's `constant-arrival-rate` executor, which the AWS guide
 * uses: iterations start at a fixed rate regardless of how fast the server answers; an iteration that would need
 * more than `maxVUs` requests in flight is dropped and counted (k6's `dropped_iterations`).
 *
 * One deviation from the guide's k6 script: connections are reused (keep-alive). The guide sets
 * `noConnectionReuse`, which at 70 requests/s over minutes exhausts loopback ephemeral ports on one machine; the
 * simulated server has no per-connection cost, so the measured behaviour is the same. An idle connection is closed
 * by the client before the server would close it (LoadAgent), so reuse never fails a request.
 */
export interface ConstantArrivalOptions {
  /** Base URLs to send to, round-robin (a Service URL, or each replica). */
  urls: readonly string[];
  model: string;
  rps: number;
  durationS: number;
  /** Request shape: prompt length in tokens (approximate) and `max_tokens`. */
  promptTokens: number;
  maxTokens: number;
  /**
   * Request lengths by iteration number (0, 1, ... in the order iterations start, as k6's iterationInTest): a request
   * mix's sampler; without it every request has promptTokens and maxTokens.
   */
  sample?: (index: number) => SampledRequest;
  /** Stream every answer and time its tokens (the k6 script's streaming mode). */
  stream?: boolean;
  /** Most requests in flight at once (k6 maxVUs; the guide uses 500). */
  maxVUs?: number;
  /** Per-request timeout (the guide's k6 script uses 240 s). */
  requestTimeoutMs?: number;
  /** How long to wait for requests still in flight after the last arrival (k6's gracefulStop, 30 s). */
  gracefulStopMs?: number;
  clock?: Clock;
  signal?: AbortSignal;
  /** Called about every `progressIntervalMs` while the load runs. */
  onProgress?: (progress: LoadProgress) => void;
  progressIntervalMs?: number;
  /** Called once as the load starts with a reader of its live counters (k6's REST API reads them on demand). */
  onStart?: (live: () => LoadProgress) => void;
  /** Called as each request ends: its duration, whether it was answered 200, and what the k6 script measures of it. */
  onRequestEnd?: (request: RequestEnd) => void;
}

/** One request's end, with the script's per-request measurements (streaming ones when streamed). */
export interface RequestEnd {
  durationMs: number;
  ok: boolean;
  ttftMs?: number;
  itlMs?: number;
  promptTokens?: number;
  completionTokens?: number;
}

export interface LoadProgress {
  elapsedS: number;
  durationS: number;
  started: number;
  completed: number;
  failed: number;
  dropped: number;
  inFlight: number;
}

export interface LoadSummary {
  offeredRps: number;
  durationS: number;
  /** Iterations started (requests sent). */
  iterations: number;
  completed: number;
  failed: number;
  /** Iterations not started because `maxVUs` requests were already in flight. */
  droppedIterations: number;
  /** Requests still unanswered when the graceful stop ended (counted as failed too). */
  interrupted: number;
  /** Completed requests per second of the load window. */
  achievedRps: number;
  latencyMs: { mean: number; min: number; p50: number; p90: number; p95: number; p99: number; max: number };
  generatedTokens: number;
  /** Failures by cause (HTTP status or error name), for the summary. */
  failures: Record<string, number>;
}

const INTERRUPTED = 'interrupted at graceful stop';
const PADDING = ['Include', 'examples', 'from', 'production', 'inference', 'clusters', 'and', 'explain', 'tradeoffs'];
/** The tokens each padding word adds (its count alone, less the beginning-of-sequence token). */
const PADDING_TOKENS = PADDING.map((word) => estimatePromptTokens(word) - 1);

/**
 * A prompt of about `tokens` tokens (as the twin counts them), built from the AWS guide's k6 prompt: "Starting with
 * the word "<random>", write a brief technical explanation about cloud computing concepts. ..." (35 tokens). The
 * random 10-letter word defeats prefix caching, as in the guide; shorter or longer prompts are cut or padded.
 */
export function buildPrompt(
  tokens: number,
  random: () => number = Math.random,
  countTokens: (text: string) => number = estimatePromptTokens,
): string {
  const word = Array.from({ length: 10 }, () => String.fromCharCode(97 + Math.floor(random() * 26))).join('');
  const words =
    `Starting with the word "${word}", write a brief technical explanation about cloud computing concepts. Cover containerization, orchestration, and scalability in about 80 words.`.split(
      ' ',
    );
  while (countTokens(words.join(' ')) > tokens && words.length > 1) words.pop();
  // Padding is counted word by word: a padding word is letters only, so it adds its own tokens whatever precedes it.
  // Re-counting the whole prompt after each word (as this did) is quadratic: ~110 ms of CPU for a 1,500-token prompt,
  // which at 10 requests/s blocked the twin's event loop (its k6, its replicas' HTTP and /metrics) for longer than
  // the load lasted.
  let count = countTokens(words.join(' '));
  for (let i = 0; count < tokens; i++) {
    words.push(PADDING[i % PADDING.length] as string);
    count += PADDING_TOKENS[i % PADDING.length] as number;
  }
  return words.join(' ');
}

/** Runs constant-arrival-rate load and resolves with a k6-like summary once the last request ended. */
export async function runConstantArrivalLoad(options: ConstantArrivalOptions): Promise<LoadSummary> {
  const { urls, rps, durationS } = options;
  if (urls.length === 0) throw new RangeError('runConstantArrivalLoad: urls must not be empty');
  if (!(rps > 0) || !(durationS > 0)) throw new RangeError(`runConstantArrivalLoad: rps and durationS must be > 0`);
  const clock = options.clock ?? systemClock;
  const maxVUs = options.maxVUs ?? 500;
  const requestTimeoutMs = options.requestTimeoutMs ?? 240_000;
  const gracefulStopMs = options.gracefulStopMs ?? 30_000;
  const agent = new LoadAgent(maxVUs);

  const latencies: number[] = [];
  const failures: Record<string, number> = {};
  const inFlight = new Set<AbortController>();
  let started = 0;
  let completed = 0;
  let failed = 0;
  let dropped = 0;
  let generatedTokens = 0;
  const total = Math.round(rps * durationS);
  const startMs = clock.now();
  const pending: Promise<void>[] = [];

  const fail = (cause: string) => {
    failed += 1;
    failures[cause] = (failures[cause] ?? 0) + 1;
  };

  const send = async (index: number, iteration: number): Promise<void> => {
    const controller = new AbortController();
    inFlight.add(controller);
    const timer = setTimeout(() => controller.abort('timeout'), requestTimeoutMs);
    const sentAt = clock.now();
    let end: Omit<RequestEnd, 'durationMs'> = { ok: false };
    try {
      const url = urls[index % urls.length] as string;
      const shape = options.sample?.(iteration) ?? { promptTokens: options.promptTokens, maxTokens: options.maxTokens };
      const result = await sendCompletion(
        url,
        {
          model: options.model,
          prompt: buildPrompt(shape.promptTokens),
          maxTokens: shape.maxTokens,
          stream: options.stream === true,
        },
        agent,
        controller.signal,
        clock,
      );
      if (result.status !== 200) {
        fail(`HTTP ${result.status}`);
        return;
      }
      if (result.streamError !== undefined) {
        fail(result.streamError);
        return;
      }
      generatedTokens += result.usage?.completionTokens ?? 0;
      completed += 1;
      latencies.push(clock.now() - sentAt);
      end = {
        ok: true,
        ...(result.ttftMs === undefined ? {} : { ttftMs: result.ttftMs }),
        ...(result.itlMs === undefined ? {} : { itlMs: result.itlMs }),
        ...(result.usage === undefined
          ? {}
          : { promptTokens: result.usage.promptTokens, completionTokens: result.usage.completionTokens }),
      };
    } catch (error) {
      // An aborted request failed for the reason it was aborted with; anything else by the error's code or name.
      const reason: unknown = controller.signal.reason;
      if (controller.signal.aborted && typeof reason === 'string') fail(reason);
      else fail((error as NodeJS.ErrnoException).code ?? (error as Error).name);
    } finally {
      clearTimeout(timer);
      inFlight.delete(controller);
      options.onRequestEnd?.({ durationMs: clock.now() - sentAt, ...end });
    }
  };

  const progress = (): LoadProgress => ({
    elapsedS: Math.min((clock.now() - startMs) / 1000, durationS),
    durationS,
    started,
    completed,
    failed,
    dropped,
    inFlight: inFlight.size,
  });
  const progressTimer = options.onProgress
    ? setInterval(() => options.onProgress?.(progress()), options.progressIntervalMs ?? 500)
    : undefined;
  options.onStart?.(progress);

  // Arrivals: iteration i is due at startMs + i / rps. Each tick starts every iteration that is due, so a late
  // timer never lowers the offered rate.
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      if (options.signal?.aborted) return resolve();
      const now = clock.now();
      while (next < total && startMs + (next * 1000) / rps <= now) {
        if (inFlight.size >= maxVUs) dropped += 1;
        else {
          pending.push(send(next, started));
          started += 1;
        }
        next += 1;
      }
      if (next >= total) return resolve();
      const dueIn = startMs + (next * 1000) / rps - clock.now();
      setTimeout(tick, Math.max(0, Math.min(dueIn, 50)));
    };
    tick();
  });
  // A stopped run's window ends when it was stopped; a full run's at its planned end (late timers do not shorten it).
  const loadEndMs = options.signal?.aborted ? clock.now() : Math.max(clock.now(), startMs + durationS * 1000);

  // Graceful stop: wait for what is in flight, then abort the rest.
  const stopTimer = setTimeout(() => inFlight.forEach((c) => c.abort(INTERRUPTED)), gracefulStopMs);
  const onAbort = () => inFlight.forEach((c) => c.abort('stopped'));
  // Stopped during the arrivals: cancel what is in flight now; stopped later: when the signal fires.
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  await Promise.all(pending);
  clearTimeout(stopTimer);
  options.signal?.removeEventListener('abort', onAbort);
  if (progressTimer) clearInterval(progressTimer);
  options.onProgress?.(progress());
  agent.destroy();

  const windowS = (loadEndMs - startMs) / 1000;
  return {
    offeredRps: rps,
    durationS: windowS,
    iterations: started,
    completed,
    failed,
    droppedIterations: dropped,
    interrupted: failures[INTERRUPTED] ?? 0,
    achievedRps: completed / windowS,
    latencyMs: {
      mean: mean(latencies),
      min: latencies.length ? Math.min(...latencies) : Number.NaN,
      p50: quantile(latencies, 0.5),
      p90: quantile(latencies, 0.9),
      p95: quantile(latencies, 0.95),
      p99: quantile(latencies, 0.99),
      max: latencies.length ? Math.max(...latencies) : Number.NaN,
    },
    generatedTokens,
    failures,
  };
}
