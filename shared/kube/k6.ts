import * as z from 'zod';

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
  httpReqDurationMs: z.object({
    avg: z.number(),
    min: z.number(),
    med: z.number(),
    max: z.number(),
    p90: z.number(),
    p95: z.number(),
    p99: z.number(),
  }),
});

export type K6Summary = z.infer<typeof k6SummarySchema>;
