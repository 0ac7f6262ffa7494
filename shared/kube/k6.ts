import * as z from 'zod';
import { K6MetricsInvalidError } from './errors.js';

/**
 * The contract between the k6 Jobs the product creates and whatever runs them: the real `grafana/k6` image on EKS,
 * or the twin's k6 emulation. The variables are not named `K6_*`: k6 reads `K6_VUS`, `K6_ITERATIONS`, ... as its own
 * options, which would replace the script's scenarios. The k6 script (shared/kube/manifests) reads everything from these environment
 * variables, and prints its end-of-test summary as one JSON line starting with SUMMARY_MARKER, so the product can find
 * it in the Pod log.
 */
export const K6_IMAGE = 'grafana/k6:0.54.0';

export const K6_ENV = {
  /** Base URL of the vLLM Service, e.g. `http://vllm-inference-svc.default.svc:8000`. */
  targetUrl: 'VLLM_PILOT_TARGET_URL',
  /** The `model` field of each completion request. */
  model: 'VLLM_PILOT_MODEL',
  /** `constant-arrival-rate` (load steps) or `shared-iterations` (warmup: VUs x iterations). */
  executor: 'VLLM_PILOT_EXECUTOR',
  /** Requests per second (constant-arrival-rate). */
  rate: 'VLLM_PILOT_RATE',
  /** Seconds of load (constant-arrival-rate). */
  durationSeconds: 'VLLM_PILOT_DURATION_SECONDS',
  preAllocatedVUs: 'VLLM_PILOT_PRE_ALLOCATED_VUS',
  maxVUs: 'VLLM_PILOT_MAX_VUS',
  /** shared-iterations: VUs and total iterations. */
  vus: 'VLLM_PILOT_VUS',
  iterations: 'VLLM_PILOT_ITERATIONS',
  /** Request shape. */
  promptTokens: 'VLLM_PILOT_PROMPT_TOKENS',
  maxTokens: 'VLLM_PILOT_MAX_TOKENS',
  /** Per-request timeout in seconds (the guide: 240). */
  requestTimeoutSeconds: 'VLLM_PILOT_REQUEST_TIMEOUT_SECONDS',
  /**
   * The request mix as JSON `{seed, prompt, output}` (shared/load): each iteration draws its lengths from it; when
   * set it replaces promptTokens and maxTokens.
   */
  requestMix: 'VLLM_PILOT_REQUEST_MIX',
  /** `true`: stream every answer (SSE through xk6-sse) and measure time to first token and inter-token latency. */
  stream: 'VLLM_PILOT_STREAM',
} as const;

export const K6_EXECUTORS = {
  constantArrivalRate: 'constant-arrival-rate',
  sharedIterations: 'shared-iterations',
} as const;

/** The first characters of the summary line in the k6 Pod's log. */
export const K6_SUMMARY_MARKER = 'K6_SUMMARY ';

/**
 * The summary the script prints (a subset of k6's `handleSummary` data, flattened): counts, rates, and
 * `http_req_duration` percentiles in milliseconds.
 */
const trendMs = z.object({
  avg: z.number(),
  min: z.number(),
  med: z.number(),
  max: z.number(),
  p90: z.number(),
  p95: z.number(),
  p99: z.number(),
});

/**
 * The custom metrics the script adds (k6 `Trend`s; the twin's emulation reports the same): time to first token and
 * inter-token latency of streamed answers (ms), and the prompt and completion tokens vLLM's `usage` reports.
 */
export const K6_CUSTOM_METRICS = {
  ttft: 'vllm_pilot_ttft',
  itl: 'vllm_pilot_itl',
  promptTokens: 'vllm_pilot_prompt_tokens',
  completionTokens: 'vllm_pilot_completion_tokens',
  /** A Rate: a streamed request that failed (xk6-sse reports no http_req_failed). */
  streamFailed: 'vllm_pilot_stream_failed',
} as const;

export const k6SummarySchema = z.object({
  executor: z.enum([K6_EXECUTORS.constantArrivalRate, K6_EXECUTORS.sharedIterations]),
  /** Offered rate (constant-arrival-rate) or null. */
  rate: z.number().nullable(),
  /** Test duration in seconds, as measured by k6. */
  durationSeconds: z.number(),
  iterations: z.number().int(),
  droppedIterations: z.number().int(),
  httpReqs: z.number().int(),
  httpReqFailed: z.number().int(),
  /** Completed iterations per second over the test. */
  iterationsRate: z.number(),
  httpReqDurationMs: trendMs,
  /** Streaming runs: time to first token per request (the script's K6_CUSTOM_METRICS.ttft); absent otherwise. */
  ttftMs: trendMs.nullable().optional(),
  /** Streaming runs: each request's mean gap between tokens after the first (K6_CUSTOM_METRICS.itl). */
  itlMs: trendMs.nullable().optional(),
  /** Mean prompt and completion tokens of the answered requests, from vLLM's `usage`; absent in older summaries. */
  promptTokensAvg: z.number().nullable().optional(),
  completionTokensAvg: z.number().nullable().optional(),
});

export type K6Summary = z.infer<typeof k6SummarySchema>;

/**
 * k6's REST API, which `k6 run --address 0.0.0.0:6565` serves while the test runs (k6's default address is
 * localhost:6565, which the API server's Pod proxy cannot reach). The product reads `GET /v1/metrics` through the
 * Pod proxy for a lag-free view of the load (shared/calibration/k6Signal.ts); AMP only sees samples a minute late.
 */
export const K6_REST = {
  port: 6565,
  /** The container port's name in the k6 Job. */
  portName: 'k6-api',
  metricsPath: '/v1/metrics',
} as const;

/** The k6 metrics the product reads, by name (k6's built-in metrics). */
export const K6_METRICS = {
  /** Gauge: VUs running an iteration now (constant-arrival-rate: one request in flight each, for the product's script). */
  vus: 'vus',
  vusMax: 'vus_max',
  iterations: 'iterations',
  droppedIterations: 'dropped_iterations',
  httpReqs: 'http_reqs',
  httpReqFailed: 'http_req_failed',
  httpReqDuration: 'http_req_duration',
} as const;

/**
 * One metric of k6's `/v1/metrics` answer, a JSON:API resource (k6's api/v1/metric_jsonapi.go and metric.go):
 * `{"type":"metrics","id":"vus","attributes":{"type":"gauge","contains":"default","tainted":null,"sample":{"value":12}}}`.
 * `sample` is the metric sink's format: gauge `{value}`, counter `{count, rate}`, rate `{rate}`, trend
 * `{avg, min, med, max, "p(90)", "p(95)"}` (milliseconds for `contains: time`).
 */
export const k6MetricResourceSchema = z.object({
  type: z.literal('metrics'),
  id: z.string().min(1),
  attributes: z.object({
    type: z.enum(['counter', 'gauge', 'rate', 'trend']).nullable(),
    contains: z.enum(['default', 'time', 'data']).nullable(),
    tainted: z.boolean().nullable(),
    sample: z.record(z.string(), z.number()),
  }),
});

/** `GET /v1/metrics`: every metric k6 has observed a sample of (a counter with no sample yet is absent). */
export const k6MetricsDocumentSchema = z.object({ data: z.array(k6MetricResourceSchema) });
export type K6MetricsDocument = z.infer<typeof k6MetricsDocumentSchema>;

/** What the product reads from k6's live metrics: the run's figures so far. */
export interface K6LiveMetrics {
  /** VUs busy now: under constant-arrival-rate, the requests in flight. */
  vus: number;
  /** VUs initialised so far (preAllocatedVUs, more when k6 had to add some); null when k6 does not report it. */
  vusMax: number | null;
  /** Iterations finished (answered or failed). */
  iterations: number;
  /** Iterations k6 could not start: every VU was busy. */
  droppedIterations: number;
  httpReqs: number;
  /** Fraction of the requests that failed; null before any answer. */
  httpReqFailedRate: number | null;
  /** Request durations so far, milliseconds; null before any answer. */
  httpReqDurationMs: { avg: number; min: number; med: number; max: number; p90: number; p95: number } | null;
}

/** The metric type and sample fields each metric the product reads must have. */
const EXPECTED: Record<keyof typeof K6_METRICS, { type: string; fields: readonly string[] }> = {
  vus: { type: 'gauge', fields: ['value'] },
  vusMax: { type: 'gauge', fields: ['value'] },
  iterations: { type: 'counter', fields: ['count'] },
  droppedIterations: { type: 'counter', fields: ['count'] },
  httpReqs: { type: 'counter', fields: ['count'] },
  httpReqFailed: { type: 'rate', fields: ['rate'] },
  httpReqDuration: { type: 'trend', fields: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)'] },
};

/**
 * Reads k6's `GET /v1/metrics` answer. Throws K6MetricsInvalidError naming what is wrong: not JSON, not k6's JSON:API
 * document, a metric the product reads with another type or without its sample fields, a negative or non-finite
 * figure, or no `vus` gauge (k6 reports it from the test's start: without it nothing runs yet).
 */
export function parseK6Metrics(body: string): K6LiveMetrics {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    throw new K6MetricsInvalidError(
      'body',
      `is not JSON (starts ${JSON.stringify(body.slice(0, 60))})`,
      'k6\'s JSON:API document {"data":[...]}',
      error,
    );
  }
  const parsed = k6MetricsDocumentSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue === undefined || issue.path.length === 0 ? 'body' : issue.path.map(String).join('.');
    throw new K6MetricsInvalidError(
      path,
      issue?.message ?? 'is not valid',
      'k6\'s JSON:API document {"data":[{"type":"metrics","id":...,"attributes":{"type","contains","tainted","sample"}}]}',
    );
  }
  const byId = new Map(parsed.data.data.map((resource) => [resource.id, resource.attributes]));
  const sample = (key: keyof typeof K6_METRICS): Record<string, number> | undefined => {
    const name = K6_METRICS[key];
    const attributes = byId.get(name);
    if (attributes === undefined) return undefined;
    const expected = EXPECTED[key];
    if (attributes.type !== expected.type)
      throw new K6MetricsInvalidError(
        name,
        `is a ${String(attributes.type)}`,
        `a ${expected.type} (k6's built-in metric)`,
      );
    for (const field of expected.fields) {
      const value = attributes.sample[field];
      if (value === undefined || !Number.isFinite(value) || value < 0)
        throw new K6MetricsInvalidError(
          `${name}.sample.${field}`,
          value === undefined ? 'is missing' : `is ${value}`,
          'a finite number >= 0',
        );
    }
    return attributes.sample;
  };
  const vus = sample('vus');
  if (vus === undefined)
    throw new K6MetricsInvalidError(
      K6_METRICS.vus,
      'is missing: the test has not started',
      'a vus gauge, which k6 reports from the start',
    );
  const count = (key: 'iterations' | 'droppedIterations' | 'httpReqs') => sample(key)?.['count'] ?? 0;
  const duration = sample('httpReqDuration');
  return {
    vus: vus['value'] as number,
    vusMax: sample('vusMax')?.['value'] ?? null,
    iterations: count('iterations'),
    droppedIterations: count('droppedIterations'),
    httpReqs: count('httpReqs'),
    httpReqFailedRate: sample('httpReqFailed')?.['rate'] ?? null,
    httpReqDurationMs:
      duration === undefined
        ? null
        : {
            avg: duration['avg'] as number,
            min: duration['min'] as number,
            med: duration['med'] as number,
            max: duration['max'] as number,
            p90: duration['p(90)'] as number,
            p95: duration['p(95)'] as number,
          },
  };
}
