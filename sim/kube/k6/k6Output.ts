import { K6_EXECUTORS, K6_SUMMARY_MARKER, type K6Summary, k6SummarySchema } from '../../../shared/kube/index.js';
import { mean, quantile } from '../../../shared/util/index.js';
import { K6_DEFAULTS, type K6Plan } from './k6Plan.js';

/** k6 prints durations as Go's time.Duration does: `3s`, `33s`, `1m0s`, `1m30s`, `1h0m0s`. */
export function k6Duration(seconds: number): string {
  const tenths = Math.round(seconds * 10);
  const h = Math.floor(tenths / 36_000);
  const m = Math.floor((tenths % 36_000) / 600);
  const s = (tenths % 600) / 10;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

/** The elapsed-time format of k6's progress lines: `0m05.0s`. */
export function k6Elapsed(ms: number): string {
  const seconds = Math.max(0, ms) / 1000;
  const minutes = Math.floor(seconds / 60);
  return `${minutes}m${(seconds - minutes * 60).toFixed(1).padStart(4, '0')}s`;
}

/** The lines k6 prints before a run: the logo, the execution block and the scenario. */
export function k6Banner(plan: K6Plan): string[] {
  const grace = K6_DEFAULTS.gracefulStopSeconds;
  const scenario =
    plan.executor === K6_EXECUTORS.constantArrivalRate
      ? [
          `     scenarios: (100.00%) 1 scenario, ${plan.maxVUs} max VUs, ${k6Duration(plan.durationSeconds + grace)} max duration (incl. graceful stop):`,
          `              * default: ${plan.rate.toFixed(2)} iterations/s for ${k6Duration(plan.durationSeconds)} (maxVUs: ${plan.preAllocatedVUs}-${plan.maxVUs}, gracefulStop: ${grace}s)`,
        ]
      : [
          `     scenarios: (100.00%) 1 scenario, ${plan.vus} max VUs, ${k6Duration(K6_DEFAULTS.maxDurationSeconds + grace)} max duration (incl. graceful stop):`,
          `              * default: ${plan.iterations} iterations shared among ${plan.vus} VUs (maxDuration: ${k6Duration(K6_DEFAULTS.maxDurationSeconds)}, gracefulStop: ${grace}s)`,
        ];
  return [
    '',
    '         /\\      Grafana   /‾‾/  ',
    '    /\\  /  \\     |\\  __   /  /   ',
    '   /  \\/    \\    | |/ /  /   ‾‾\\ ',
    '  /          \\   |   (  |  (‾)  |',
    ' / __________ \\  |_|\\_\\  \\_____/ ',
    '',
    '     execution: local',
    `        script: ${plan.script}`,
    '        output: -',
    '',
    ...scenario,
    '',
  ];
}

/** `time="2024-05-12T10:00:00Z" level=warning msg="..."`: k6's logfmt log line. */
export function k6LogLine(nowMs: number, level: 'info' | 'warning' | 'error', message: string, extra = ''): string {
  const time = new Date(nowMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return `time="${time}" level=${level} msg=${JSON.stringify(message)}${extra ? ` ${extra}` : ''}`;
}

/** What the summary is built from, whichever executor ran. */
export interface K6Measurements {
  durationSeconds: number;
  iterations: number;
  droppedIterations: number;
  httpReqs: number;
  httpReqFailed: number;
  /** Per-request durations when known (shared-iterations); otherwise the aggregate below. */
  durationsMs?: readonly number[];
  aggregateMs?: { avg: number; min: number; med: number; max: number; p90: number; p95: number; p99: number };
  /** Streaming runs: each answered request's time to first token and mean inter-token gap, ms. */
  ttftMs?: readonly number[];
  itlMs?: readonly number[];
  /** The prompt and completion tokens of each answer's usage. */
  promptTokens?: readonly number[];
  completionTokens?: readonly number[];
}

/**
 * The summary the product's k6 script prints from `handleSummary` (shared/kube/k6.ts): counts, the completed
 * iterations per second over the whole test (as k6's `iterations` rate: the test duration includes waiting for the
 * last requests), and http_req_duration percentiles. k6 reports 0 for a trend with no samples; so does this.
 */
export function buildK6Summary(plan: K6Plan, m: K6Measurements): K6Summary {
  const d = m.durationsMs;
  const finite = (n: number) => (Number.isFinite(n) ? n : 0);
  const durations =
    d !== undefined
      ? {
          avg: mean(d),
          min: d.length ? Math.min(...d) : 0,
          med: quantile(d, 0.5),
          max: d.length ? Math.max(...d) : 0,
          p90: quantile(d, 0.9),
          p95: quantile(d, 0.95),
          p99: quantile(d, 0.99),
        }
      : (m.aggregateMs ?? { avg: 0, min: 0, med: 0, max: 0, p90: 0, p95: 0, p99: 0 });
  // As the script's trend(): null without a sample; mean(): null without one.
  const trend = (values: readonly number[] | undefined) =>
    values === undefined || values.length === 0
      ? null
      : {
          avg: round(mean(values), 3),
          min: round(Math.min(...values), 3),
          med: round(quantile(values, 0.5), 3),
          max: round(Math.max(...values), 3),
          p90: round(quantile(values, 0.9), 3),
          p95: round(quantile(values, 0.95), 3),
          p99: round(quantile(values, 0.99), 3),
        };
  const average = (values: readonly number[] | undefined) =>
    values === undefined || values.length === 0 ? null : round(mean(values), 3);
  const summary: K6Summary = {
    executor: plan.executor,
    rate: plan.executor === K6_EXECUTORS.constantArrivalRate ? plan.rate : null,
    durationSeconds: round(m.durationSeconds, 3),
    iterations: m.iterations,
    droppedIterations: m.droppedIterations,
    httpReqs: m.httpReqs,
    httpReqFailed: m.httpReqFailed,
    iterationsRate: m.durationSeconds > 0 ? round(m.iterations / m.durationSeconds, 4) : 0,
    httpReqDurationMs: {
      avg: round(finite(durations.avg), 3),
      min: round(finite(durations.min), 3),
      med: round(finite(durations.med), 3),
      max: round(finite(durations.max), 3),
      p90: round(finite(durations.p90), 3),
      p95: round(finite(durations.p95), 3),
      p99: round(finite(durations.p99), 3),
    },
    ttftMs: trend(m.ttftMs),
    itlMs: trend(m.itlMs),
    promptTokensAvg: average(m.promptTokens),
    completionTokensAvg: average(m.completionTokens),
  };
  return k6SummarySchema.parse(summary);
}

/** The summary line the product looks for in the Pod log. */
export function summaryLine(summary: K6Summary): string {
  return `${K6_SUMMARY_MARKER}${JSON.stringify(summary)}`;
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
