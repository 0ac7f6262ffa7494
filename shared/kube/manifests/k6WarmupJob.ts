import * as z from 'zod';
import { K6_EXECUTORS } from '../k6.js';
import type { KubeObject } from '../types.js';
import { buildK6Job, k6JobCommonShape, k6RequestEnv } from './k6Job.js';
import { parseInput } from './parseInput.js';
import { integer } from './vllmInput.js';

/** The EKS guide's warmup: 100 sequential requests (one VU), so CUDA graphs and kernels are ready before measuring. */
export const K6_WARMUP_DEFAULTS = { iterations: 100, vus: 1 } as const;

export const k6WarmupJobInputSchema = z.strictObject({
  ...k6JobCommonShape,
  name: k6JobCommonShape.name.default('vllm-pilot-warmup'),
  iterations: integer(1).default(K6_WARMUP_DEFAULTS.iterations),
  vus: integer(1).default(K6_WARMUP_DEFAULTS.vus),
});

export type K6WarmupJobInputSpec = z.input<typeof k6WarmupJobInputSchema>;

/** The warmup Job: shared-iterations, `vus` VUs sharing `iterations` requests. */
export function k6WarmupJob(spec: K6WarmupJobInputSpec): KubeObject {
  const input = parseInput(k6WarmupJobInputSchema, spec, 'k6 warmup job');
  // The script's maxDuration (30 min) plus k6's start and graceful stop.
  const deadline = input.activeDeadlineSeconds ?? 30 * 60 + 120;
  return buildK6Job({
    name: input.name,
    namespace: input.namespace,
    scriptConfigMap: input.scriptConfigMap,
    component: 'warmup',
    labels: input.labels,
    ttlSecondsAfterFinished: input.ttlSecondsAfterFinished,
    activeDeadlineSeconds: deadline,
    env: {
      targetUrl: input.targetUrl,
      model: input.model,
      executor: K6_EXECUTORS.sharedIterations,
      vus: input.vus,
      iterations: input.iterations,
      ...k6RequestEnv(input),
      requestTimeoutSeconds: input.requestTimeoutSeconds,
    },
    pod: input.pod,
  });
}
