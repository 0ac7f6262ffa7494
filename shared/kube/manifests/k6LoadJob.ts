import * as z from 'zod';
import { K6_EXECUTORS } from '../k6.js';
import type { KubeObject } from '../types.js';
import { buildK6Job, k6JobCommonShape, k6RequestEnv } from './k6Job.js';
import { parseInput } from './parseInput.js';
import { integer } from './vllmInput.js';

/** The EKS guide's load step: constant arrival rate for 60 s, 50 pre-allocated VUs, at most 500. */
export const K6_LOAD_DEFAULTS = { durationSeconds: 60, preAllocatedVUs: 50, maxVUs: 500 } as const;

/** k6 stops iterations still running this long after the planned duration (its default gracefulStop). */
const K6_GRACEFUL_STOP_SECONDS = 30;
/** Time for the image to start and k6 to initialise its VUs. */
const K6_START_SECONDS = 60;

export const k6LoadJobInputSchema = z
  .strictObject({
    ...k6JobCommonShape,
    name: k6JobCommonShape.name.default('vllm-pilot-load'),
    /** Requests per second offered, whatever the answers' latency (k6 adds VUs up to maxVUs to keep the rate). */
    rate: z
      .number({
        error: (issue) =>
          issue.input === undefined ? 'is required (requests per second)' : 'must be a number of requests per second',
      })
      .gt(0, { error: 'must be > 0 requests per second' }),
    durationSeconds: integer(1).default(K6_LOAD_DEFAULTS.durationSeconds),
    preAllocatedVUs: integer(1).default(K6_LOAD_DEFAULTS.preAllocatedVUs),
    maxVUs: integer(1).default(K6_LOAD_DEFAULTS.maxVUs),
  })
  .refine((input) => input.maxVUs >= input.preAllocatedVUs, {
    path: ['maxVUs'],
    error: 'must be >= preAllocatedVUs',
  });

export type K6LoadJobInputSpec = z.input<typeof k6LoadJobInputSchema>;

/** A load step Job: constant-arrival-rate at `rate` requests/s for `durationSeconds`. */
export function k6LoadJob(spec: K6LoadJobInputSpec): KubeObject {
  const input = parseInput(k6LoadJobInputSchema, spec, 'k6 load job');
  const deadline =
    input.activeDeadlineSeconds ??
    input.durationSeconds + input.requestTimeoutSeconds + K6_GRACEFUL_STOP_SECONDS + K6_START_SECONDS;
  return buildK6Job({
    name: input.name,
    namespace: input.namespace,
    scriptConfigMap: input.scriptConfigMap,
    component: 'load',
    labels: input.labels,
    ttlSecondsAfterFinished: input.ttlSecondsAfterFinished,
    activeDeadlineSeconds: deadline,
    env: {
      targetUrl: input.targetUrl,
      model: input.model,
      executor: K6_EXECUTORS.constantArrivalRate,
      rate: input.rate,
      durationSeconds: input.durationSeconds,
      preAllocatedVUs: input.preAllocatedVUs,
      maxVUs: input.maxVUs,
      ...k6RequestEnv(input),
      requestTimeoutSeconds: input.requestTimeoutSeconds,
    },
    pod: input.pod,
  });
}
