import * as z from 'zod';
import { TARGET_NAME_RULES } from '../../config/index.js';
import { parseInput } from './parseInput.js';
import { DEFAULT_WARMUP_REQUESTS } from './warmup.js';

/** The EKS guide's names and the monitoring guide's advice, used when an input leaves a field out. */
export const VLLM_DEFAULTS = {
  name: 'vllm-inference-app',
  namespace: 'default',
  image: 'vllm/vllm-openai:v0.11.0',
  /** The monitoring guide: 0.85 (vLLM's default 0.9 leaves too little headroom and risks OOM). */
  gpuMemoryUtilization: 0.85,
  replicas: 1,
  port: 8000,
  gpus: 1,
  /** Models load for 2-10 minutes (the monitoring guide); the startup probe allows 15. */
  startupTimeoutSeconds: 900,
} as const;

/**
 * The toleration for the guide's GPU NodePool taint `nvidia.com/gpu:NoSchedule`. A toleration only allows
 * scheduling there; it requires nothing, so it is safe on clusters without the taint.
 */
export const GPU_TOLERATION = { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' } as const;

export function dns1123Label(what: string) {
  const rule = TARGET_NAME_RULES.dns1123Label;
  return z.string({ error: `must be a string (${what}); accepted: ${rule.accepted}` }).regex(rule.pattern, {
    error: (issue) => `${JSON.stringify(issue.input)} is not valid; accepted: ${rule.accepted}`,
  });
}

export function requiredString(what: string) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? `is required (${what})` : `must be a string (${what})`) })
    .min(1, { error: `must not be empty (${what})` });
}

export function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  const accepted = max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`;
  return z
    .number({ error: `must be a number; accepted: ${accepted}` })
    .int({ error: `must be an integer; accepted: ${accepted}` })
    .min(min, { error: `is too small; accepted: ${accepted}` })
    .max(max, { error: `is too large; accepted: ${accepted}` });
}

export const tolerationSchema = z.strictObject({
  key: z.string().optional(),
  operator: z.enum(['Exists', 'Equal']).optional(),
  value: z.string().optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
  tolerationSeconds: integer(0).optional(),
});

/** Input of the vLLM Deployment, Service and ServiceMonitor generators. Unknown keys are refused. */
export const vllmDeploymentInputSchema = z
  .strictObject({
    name: dns1123Label('the Deployment name').default(VLLM_DEFAULTS.name),
    namespace: dns1123Label('the namespace').default(VLLM_DEFAULTS.namespace),
    image: requiredString('the vLLM container image').default(VLLM_DEFAULTS.image),
    model: requiredString(
      'the model: an s3:// path or a Hugging Face id such as "mistralai/Ministral-8B-Instruct-2410"',
    ),
    /** The `model_name` label of every vLLM series and the `model` field of requests. Default: `model`. */
    servedModelName: requiredString('the served model name').optional(),
    gpuMemoryUtilization: z
      .number({ error: 'must be a number from 0 (exclusive) to 1' })
      .gt(0, { error: 'must be > 0; accepted: a fraction of GPU memory in (0, 1], the guide advises 0.85' })
      .max(1, { error: 'must be <= 1; accepted: a fraction of GPU memory in (0, 1], the guide advises 0.85' })
      .default(VLLM_DEFAULTS.gpuMemoryUtilization),
    // No default on purpose: vLLM's own default (the model's maximum context) reserves KV cache that is never used.
    maxModelLen: z
      .number({
        error: (issue) =>
          issue.input === undefined
            ? 'is required: the longest prompt + output, in tokens, you serve (e.g. 8192); the guide advises an explicit value'
            : 'must be an integer number of tokens',
      })
      .int({ error: 'must be an integer number of tokens' })
      .min(1, { error: 'must be >= 1 token' }),
    maxNumSeqs: integer(1).optional(),
    /** `null` leaves `spec.replicas` out, so re-applying does not reset what KEDA/HPA scaled to. */
    replicas: integer(0).nullable().default(VLLM_DEFAULTS.replicas),
    port: integer(1, 65535).default(VLLM_DEFAULTS.port),
    gpus: integer(1, 16).default(VLLM_DEFAULTS.gpus),
    /** Default: the name without a trailing `-app`, plus `-svc` (`vllm-inference-app` → `vllm-inference-svc`, the guide's). */
    serviceName: dns1123Label('the Service name').optional(),
    nodeSelector: z.record(z.string(), z.string()).optional(),
    tolerations: z.array(tolerationSchema).default(() => [{ ...GPU_TOLERATION }]),
    /** More vLLM flags, appended as given (e.g. `["--load-format", "runai_streamer"]` for s3:// models). */
    extraArgs: z.array(z.string()).default(() => []),
    env: z.record(z.string(), z.string()).default(() => ({})),
    startupTimeoutSeconds: integer(10).default(VLLM_DEFAULTS.startupTimeoutSeconds),
    /**
     * Warmup after start (monitoring guide, "GPU warmup"): the replica sends itself `requests` sequential completions
     * and only then reports Ready. `false` turns it off (readiness is then /health alone).
     */
    warmup: z
      .union([z.strictObject({ requests: integer(1).default(DEFAULT_WARMUP_REQUESTS) }), z.literal(false)], {
        error: 'must be { requests: <integer >= 1> } or false',
      })
      .default(() => ({ requests: DEFAULT_WARMUP_REQUESTS })),
    /** Extra labels on the ServiceMonitor, for a Prometheus whose serviceMonitorSelector wants one (`release: ...`). */
    monitorLabels: z.record(z.string(), z.string()).default(() => ({})),
  })
  .superRefine((input, ctx) => {
    if (input.serviceName === undefined && defaultServiceName(input.name).length > 63)
      ctx.addIssue({
        code: 'custom',
        path: ['serviceName'],
        message: `the default ${JSON.stringify(defaultServiceName(input.name))} is longer than 63 characters; set serviceName`,
      });
  })
  .transform((input) => ({
    ...input,
    servedModelName: input.servedModelName ?? input.model,
    serviceName: input.serviceName ?? defaultServiceName(input.name),
  }));

/** The guide's naming: `vllm-inference-app` → `vllm-inference-svc`; any other name gets `-svc` appended. */
export function defaultServiceName(name: string): string {
  return `${name.replace(/-app$/, '')}-svc`;
}

/** The input as callers write it (defaults optional). */
export type VllmDeploymentInputSpec = z.input<typeof vllmDeploymentInputSchema>;
/** The input with every default filled in. */
export type VllmDeploymentInput = z.output<typeof vllmDeploymentInputSchema>;

/** Validates and completes the vLLM input; throws `KubeManifestInputError` naming each bad field. */
export function parseVllmDeploymentInput(input: unknown): VllmDeploymentInput {
  return parseInput(vllmDeploymentInputSchema, input, 'vllm deployment');
}
