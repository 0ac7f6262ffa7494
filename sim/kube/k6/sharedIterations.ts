import type { Clock } from '../../../shared/clock/index.js';
import { LoadAgent } from '../../load/agent.js';
import { type CompletionOutcome, type CompletionShape, postCompletion } from './completionRequest.js';

export interface SharedIterationsOptions extends CompletionShape {
  url: string;
  vus: number;
  iterations: number;
  requestTimeoutMs: number;
  /** No iteration starts after this (k6 maxDuration, 10 min by default). */
  maxDurationMs: number;
  /** Iterations still running at maxDuration get this long before they are interrupted (k6 gracefulStop). */
  gracefulStopMs: number;
  clock: Clock;
  signal?: AbortSignal;
  onProgress?: (progress: SharedIterationsProgress) => void;
  progressIntervalMs?: number;
  /** Called with each answered request's measurements (streaming ones when streamed). */
  onRequestEnd?: (outcome: CompletionOutcome) => void;
}

export interface SharedIterationsProgress {
  elapsedMs: number;
  completed: number;
  interrupted: number;
  activeVUs: number;
}

/** The k6 metrics of a shared-iterations run. */
export interface SharedIterationsResult {
  /** Iterations that ran to the end (a failed request still completes its iteration, as in k6). */
  iterations: number;
  interrupted: number;
  httpReqs: number;
  httpReqFailed: number;
  /** http_req_duration of every request that got a response, in ms. */
  durationsMs: number[];
  failures: Record<string, number>;
  elapsedMs: number;
}

const INTERRUPTED = 'interrupted at graceful stop';
const STOPPED = 'stopped';

/**
 * k6's `shared-iterations` executor: `vus` VUs share `iterations` iterations; each VU starts its next iteration as
 * soon as its previous one ended, so the request rate follows the server's latency (closed-loop load, the guide's
 * 100-request warm-up with 1 VU).
 */
export async function runSharedIterations(options: SharedIterationsOptions): Promise<SharedIterationsResult> {
  const { clock } = options;
  const agent = new LoadAgent(options.vus);
  const startMs = clock.now();
  const inFlight = new Set<AbortController>();
  const durationsMs: number[] = [];
  const failures: Record<string, number> = {};
  let next = 0;
  let completed = 0;
  let interrupted = 0;
  let httpReqs = 0;
  let httpReqFailed = 0;
  let active = 0;
  let stopStarting = false;

  const fail = (cause: string) => {
    httpReqFailed += 1;
    failures[cause] = (failures[cause] ?? 0) + 1;
  };

  const iterate = async (iteration: number): Promise<void> => {
    const controller = new AbortController();
    inFlight.add(controller);
    const timer = setTimeout(() => controller.abort('request timeout'), options.requestTimeoutMs);
    const sentAt = clock.now();
    try {
      const outcome = await postCompletion(options.url, options, iteration, agent, controller.signal, clock);
      const reason: unknown = controller.signal.reason;
      if (controller.signal.aborted && (reason === INTERRUPTED || reason === STOPPED)) {
        interrupted += 1;
        return;
      }
      httpReqs += 1;
      if (outcome.status > 0) durationsMs.push(clock.now() - sentAt);
      if (outcome.status === 0) fail(outcome.error ?? 'error');
      else if (outcome.status >= 400) fail(`HTTP ${outcome.status}`);
      else if (outcome.error !== undefined) fail(outcome.error);
      else options.onRequestEnd?.(outcome);
      completed += 1;
    } finally {
      clearTimeout(timer);
      inFlight.delete(controller);
    }
  };

  const vu = async (): Promise<void> => {
    active += 1;
    try {
      while (!stopStarting && !options.signal?.aborted && next < options.iterations) {
        next += 1;
        await iterate(next - 1);
      }
    } finally {
      active -= 1;
    }
  };

  const progress = (): SharedIterationsProgress => ({
    elapsedMs: clock.now() - startMs,
    completed,
    interrupted,
    activeVUs: active,
  });
  const progressTimer = options.onProgress
    ? setInterval(() => options.onProgress?.(progress()), options.progressIntervalMs ?? 1_000)
    : undefined;
  const maxDurationTimer = setTimeout(() => {
    stopStarting = true;
    graceTimer = setTimeout(() => inFlight.forEach((c) => c.abort(INTERRUPTED)), options.gracefulStopMs);
  }, options.maxDurationMs);
  let graceTimer: NodeJS.Timeout | undefined;
  const onAbort = () => inFlight.forEach((c) => c.abort(STOPPED));
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await Promise.all(Array.from({ length: options.vus }, () => vu()));
  } finally {
    clearTimeout(maxDurationTimer);
    clearTimeout(graceTimer);
    if (progressTimer) clearInterval(progressTimer);
    options.signal?.removeEventListener('abort', onAbort);
    agent.destroy();
  }
  return {
    iterations: completed,
    interrupted,
    httpReqs,
    httpReqFailed,
    durationsMs,
    failures,
    elapsedMs: clock.now() - startMs,
  };
}
