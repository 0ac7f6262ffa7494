import type { Clock } from '../../../shared/clock/index.js';
import { K6_EXECUTORS, type K6Summary } from '../../../shared/kube/index.js';
import { type LoadProgress, runConstantArrivalLoad } from '../../load/constantArrival.js';
import { K6_DEFAULTS, listensOnPodAddress, type K6Plan } from './k6Plan.js';
import { sampleRequestAt } from '../../mix/sampler.js';
import {
  buildK6Summary,
  k6Banner,
  k6Duration,
  k6Elapsed,
  k6LogLine,
  type K6Measurements,
  summaryLine,
} from './k6Output.js';
import { type K6LiveFigures, startK6RestApi } from './k6RestApi.js';
import { runSharedIterations } from './sharedIterations.js';

/** k6's exit codes (go.k6.io/k6/errext/exitcodes) that the emulation can end with. */
export const K6_EXIT_CODES = {
  ok: 0,
  thresholdsHaveFailed: 99,
  invalidConfig: 104,
  externalAbort: 105,
  scriptException: 107,
} as const;

export interface RunK6Options {
  plan: K6Plan;
  /** Maps the in-cluster target URL to one this process can reach (the Service's loopback proxy). */
  resolve: (url: string) => string;
  clock: Clock;
  /** One line of the Pod log. */
  log: (line: string) => void;
  /** Stops the run (the Pod was deleted): requests in flight are aborted. */
  signal?: AbortSignal;
  progressIntervalMs?: number;
  /**
   * Called with the loopback URL of k6's REST API (`/v1/metrics`) once it serves, and with undefined when the run
   * is over (k6 exits, its API with it). Never called when `--address` keeps the API on localhost: the API server's
   * Pod proxy, which dials the Pod's address, cannot reach it.
   */
  onRestApi?: (url: string | undefined) => void;
}

export interface K6RunResult {
  exitCode: number;
  /** Why the run ended as it did, for the Pod status and the controller's log. */
  reason: string;
  summary: K6Summary;
}

/**
 * Runs a k6 plan the way `k6 run` would inside the Job's Pod: banner, progress lines every second, then the summary
 * line (K6_SUMMARY_MARKER + JSON) that the product's script prints from handleSummary, always last in the log.
 * The run fails (exit 99, as the script's `http_req_failed` threshold would) when every request failed, and with
 * exit 107 when the target's in-cluster name resolves to no Service (the DNS lookup fails in the script's setup).
 */
export async function runK6(options: RunK6Options): Promise<K6RunResult> {
  const startMs = options.clock.now();
  const live = new LiveRun(options.plan, options.clock, startMs);
  const api =
    options.onRestApi !== undefined && listensOnPodAddress(options.plan.restAddress)
      ? await startK6RestApi(() => live.figures())
      : undefined;
  if (api !== undefined) options.onRestApi?.(api.url);
  try {
    return await runPlan(options, startMs, live);
  } finally {
    if (api !== undefined) {
      options.onRestApi?.(undefined);
      await api.stop();
    }
  }
}

/**
 * The figures of a running plan, as k6's metrics engine holds them: read on demand by the REST API. Constant arrival
 * reads the load generator's live counters; shared-iterations its last progress report (each second).
 */
class LiveRun {
  readonly #clock: Clock;
  readonly #startMs: number;
  readonly #durationsMs: number[] = [];
  #vusMax: number;
  #counts: () => Omit<K6LiveFigures, 'elapsedMs' | 'vusMax' | 'durationsMs'> = () => ({
    vus: 0,
    iterations: 0,
    droppedIterations: 0,
    httpReqs: 0,
    httpReqFailed: 0,
  });

  constructor(plan: K6Plan, clock: Clock, startMs: number) {
    this.#clock = clock;
    this.#startMs = startMs;
    this.#vusMax = plan.executor === K6_EXECUTORS.constantArrivalRate ? plan.preAllocatedVUs : plan.vus;
  }

  /** The constant-arrival load's counters: VUs busy = requests in flight (one request per iteration). */
  constantArrival(progress: () => LoadProgress, maxVUs: number): void {
    this.#counts = () => {
      const p = progress();
      const ended = p.completed + p.failed;
      // k6 initialises VUs beyond the pre-allocated ones when the busy ones do not suffice, up to maxVUs.
      this.#vusMax = Math.min(maxVUs, Math.max(this.#vusMax, p.inFlight));
      return {
        vus: p.inFlight,
        iterations: ended,
        droppedIterations: p.dropped,
        httpReqs: ended,
        httpReqFailed: p.failed,
      };
    };
  }

  requestEnded(durationMs: number): void {
    this.#durationsMs.push(durationMs);
  }

  sharedIterations(p: { activeVUs: number; completed: number }): void {
    this.#counts = () => ({
      vus: p.activeVUs,
      iterations: p.completed,
      droppedIterations: 0,
      httpReqs: p.completed,
      httpReqFailed: 0,
    });
  }

  figures(): K6LiveFigures {
    const counts = this.#counts();
    return {
      ...counts,
      elapsedMs: this.#clock.now() - this.#startMs,
      vusMax: this.#vusMax,
      durationsMs: this.#durationsMs,
    };
  }
}

async function runPlan(options: RunK6Options, startMs: number, live: LiveRun): Promise<K6RunResult> {
  const { plan, clock, log } = options;
  for (const line of k6Banner(plan)) log(line);
  const target = options.resolve(plan.targetUrl);
  const host = new URL(target).hostname;
  if (isClusterName(host)) {
    log(
      k6LogLine(
        clock.now(),
        'error',
        `Error: GET ${plan.targetUrl} failed: dial tcp: lookup ${host} on 172.20.0.10:53: no such host\n\tat setup (file://${plan.script})`,
        'hint="script exception"',
      ),
    );
    return finish(
      options,
      startMs,
      K6_EXIT_CODES.scriptException,
      `target ${plan.targetUrl} does not resolve: no such Service`,
      {
        durationSeconds: (clock.now() - startMs) / 1000,
        iterations: 0,
        droppedIterations: 0,
        httpReqs: 0,
        httpReqFailed: 0,
        durationsMs: [],
      },
    );
  }

  const mix = plan.requestMix;
  const shape = {
    model: plan.model,
    promptTokens: plan.promptTokens,
    maxTokens: plan.maxTokens,
    // The script's own sampler text, by iteration number: the same seed draws the same lengths as on EKS.
    ...(mix === undefined ? {} : { sample: (index: number) => sampleRequestAt(mix, index) }),
    stream: plan.stream === true,
  };
  const perRequest = new PerRequest(plan.stream === true);
  const intervalMs = options.progressIntervalMs ?? 1_000;
  if (plan.executor === K6_EXECUTORS.constantArrivalRate) {
    let warned = false;
    const total = Math.round(plan.rate * plan.durationSeconds);
    const onProgress = (p: LoadProgress) => {
      // The generator's last report (everything started and answered) is the final line finish() prints.
      if (p.inFlight === 0 && p.started + p.dropped >= total) return;
      const pct = Math.min(100, Math.floor((p.elapsedS / plan.durationSeconds) * 100));
      if (p.dropped > 0 && !warned) {
        warned = true;
        log(
          k6LogLine(
            clock.now(),
            'warning',
            `Insufficient VUs, reached ${plan.maxVUs} active VUs and cannot initialize more`,
            'executor=constant-arrival-rate scenario=default',
          ),
        );
      }
      const vus = `${pad(p.inFlight, plan.maxVUs)}/${plan.maxVUs} VUs`;
      log(
        `running (${k6Elapsed(clock.now() - startMs)}), ${vus}, ${p.completed + p.failed} complete and 0 interrupted iterations`,
      );
      log(
        `default   [ ${String(pct).padStart(3)}% ] ${vus}  ${k6Elapsed(p.elapsedS * 1000)}/${k6Elapsed(plan.durationSeconds * 1000)}  ${plan.rate.toFixed(2)} iters/s`,
      );
    };
    const result = await runConstantArrivalLoad({
      urls: [target],
      ...shape,
      rps: plan.rate,
      durationS: plan.durationSeconds,
      maxVUs: plan.maxVUs,
      requestTimeoutMs: plan.requestTimeoutSeconds * 1000,
      gracefulStopMs: K6_DEFAULTS.gracefulStopSeconds * 1000,
      clock,
      ...(options.signal ? { signal: options.signal } : {}),
      onProgress,
      progressIntervalMs: intervalMs,
      onStart: (progress) => live.constantArrival(progress, plan.maxVUs),
      onRequestEnd: (end) => {
        live.requestEnded(end.durationMs);
        if (end.ok) perRequest.add(end);
      },
    });
    // Interrupted and stopped requests never finished their iteration: k6 does not count them.
    const unfinished = result.interrupted + (result.failures['stopped'] ?? 0);
    const iterations = result.completed + result.failed - unfinished;
    const l = result.latencyMs;
    // LoadSummary has no minimum yet: 0 until runConstantArrivalLoad reports one.
    const min = (l as Partial<Record<'min', number>>).min ?? 0;
    return finish(options, startMs, undefined, undefined, {
      durationSeconds: (clock.now() - startMs) / 1000,
      iterations,
      droppedIterations: result.droppedIterations,
      httpReqs: iterations,
      httpReqFailed: result.failed - unfinished,
      aggregateMs: { avg: l.mean, min, med: l.p50, max: l.max, p90: l.p90, p95: l.p95, p99: l.p99 },
      ...perRequest.measurements(),
    });
  }

  const result = await runSharedIterations({
    url: target,
    ...shape,
    vus: plan.vus,
    iterations: plan.iterations,
    requestTimeoutMs: plan.requestTimeoutSeconds * 1000,
    maxDurationMs: K6_DEFAULTS.maxDurationSeconds * 1000,
    gracefulStopMs: K6_DEFAULTS.gracefulStopSeconds * 1000,
    clock,
    ...(options.signal ? { signal: options.signal } : {}),
    progressIntervalMs: intervalMs,
    onRequestEnd: (outcome) => perRequest.add(outcome),
    onProgress: (p) => {
      live.sharedIterations(p);
      const pct = Math.min(100, Math.floor((p.completed / plan.iterations) * 100));
      log(
        `running (${k6Elapsed(p.elapsedMs)}), ${pad(p.activeVUs, plan.vus)}/${plan.vus} VUs, ${p.completed} complete and ${p.interrupted} interrupted iterations`,
      );
      log(
        `default   [ ${String(pct).padStart(3)}% ] ${plan.vus} VUs  ${k6Elapsed(p.elapsedMs)}/${k6Elapsed(K6_DEFAULTS.maxDurationSeconds * 1000)}  ${p.completed}/${plan.iterations} shared iters`,
      );
    },
  });
  return finish(options, startMs, undefined, undefined, {
    durationSeconds: result.elapsedMs / 1000,
    iterations: result.iterations,
    droppedIterations: 0,
    httpReqs: result.httpReqs,
    httpReqFailed: result.httpReqFailed,
    durationsMs: result.durationsMs,
    ...perRequest.measurements(),
  });
}

/** The script's custom Trends: TTFT and inter-token latency when streamed, and the tokens of vLLM's usage. */
class PerRequest {
  readonly #ttftMs: number[] = [];
  readonly #itlMs: number[] = [];
  readonly #promptTokens: number[] = [];
  readonly #completionTokens: number[] = [];

  constructor(private readonly stream: boolean) {}

  add(end: { ttftMs?: number; itlMs?: number; promptTokens?: number; completionTokens?: number }): void {
    if (end.ttftMs !== undefined) this.#ttftMs.push(end.ttftMs);
    if (end.itlMs !== undefined) this.#itlMs.push(end.itlMs);
    if (end.promptTokens !== undefined) this.#promptTokens.push(end.promptTokens);
    if (end.completionTokens !== undefined) this.#completionTokens.push(end.completionTokens);
  }

  measurements(): Pick<K6Measurements, 'ttftMs' | 'itlMs' | 'promptTokens' | 'completionTokens'> {
    return {
      ...(this.stream ? { ttftMs: this.#ttftMs, itlMs: this.#itlMs } : {}),
      promptTokens: this.#promptTokens,
      completionTokens: this.#completionTokens,
    };
  }
}

function finish(
  options: RunK6Options,
  startMs: number,
  exitCode: number | undefined,
  reason: string | undefined,
  measurements: Parameters<typeof buildK6Summary>[1],
): K6RunResult {
  const { plan, clock, log } = options;
  const summary = buildK6Summary(plan, measurements);
  let code = exitCode;
  let why = reason;
  if (code === undefined) {
    if (options.signal?.aborted) {
      code = K6_EXIT_CODES.externalAbort;
      why = 'the run was stopped';
    } else if (summary.httpReqs > 0 && summary.httpReqFailed === summary.httpReqs) {
      code = K6_EXIT_CODES.thresholdsHaveFailed;
      why = `every one of ${summary.httpReqs} requests failed`;
      log(k6LogLine(clock.now(), 'error', "thresholds on metrics 'http_req_failed' have been crossed"));
    } else {
      code = K6_EXIT_CODES.ok;
      why = `${summary.iterations} iterations in ${summary.durationSeconds.toFixed(1)} s (${summary.iterationsRate.toFixed(2)}/s), ${summary.httpReqFailed} failed, ${summary.droppedIterations} dropped`;
    }
  }
  const maxVUs = plan.executor === K6_EXECUTORS.constantArrivalRate ? plan.maxVUs : plan.vus;
  const vus = `${pad(0, maxVUs)}/${maxVUs} VUs`;
  const done =
    plan.executor === K6_EXECUTORS.constantArrivalRate
      ? `${k6Duration(plan.durationSeconds)}  ${plan.rate.toFixed(2)} iters/s`
      : `${k6Elapsed(clock.now() - startMs)}/${k6Duration(K6_DEFAULTS.maxDurationSeconds)}  ${summary.iterations}/${plan.iterations} shared iters`;
  log(
    `running (${k6Elapsed(clock.now() - startMs)}), ${vus}, ${summary.iterations} complete and 0 interrupted iterations`,
  );
  log(`default ${code === K6_EXIT_CODES.ok ? '✓' : '✗'} [ 100% ] ${vus}  ${done}`);
  log('');
  log(summaryLine(summary));
  return { exitCode: code, reason: why ?? '', summary };
}

/** In-cluster DNS names (`svc`, `svc.ns.svc`, `*.cluster.local`) that only the cluster's DNS can resolve. */
function isClusterName(host: string): boolean {
  const h = host.toLowerCase();
  if (h === 'localhost' || /^[\d.]+$/.test(h) || h.startsWith('[')) return false;
  return !h.includes('.') || h.endsWith('.svc') || h.endsWith('.cluster.local');
}

function pad(n: number, max: number): string {
  return String(n).padStart(String(max).length, '0');
}
