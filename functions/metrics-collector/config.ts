import * as z from 'zod';
import { namespaceProblem, PUT_METRIC_DATA_LIMITS } from '../../shared/cloudwatch/index.js';
import { httpUrl, parseEnvironmentWithTargets, parseTargets, REGION, type Target } from '../../shared/config/index.js';

/** The metrics collector's settings, read once from the Lambda environment. */
export interface CollectorConfig {
  targets: Target[];
  ampWorkspaceUrl: string;
  ampRegion: string;
  /** Region of the CloudWatch client: the Lambda's own (`AWS_REGION`). */
  cloudWatchRegion: string;
  cloudWatchNamespace: string;
  /** Set only for the local twin or a VPC endpoint. */
  cloudWatchEndpoint?: string;
  rateWindow: string;
  concurrency: number;
}

export const COLLECTOR_DEFAULTS = {
  cloudWatchNamespace: 'vLLM/EKSPilot',
  rateWindow: '2m',
  concurrency: 2,
  maxConcurrency: 16,
} as const;

// PromQL durations: one or more <integer><unit> parts, units ms, s, m, h, d, w, y (Prometheus docs, "Time durations").
const PROMQL_DURATION = /^(\d+(ms|s|m|h|d|w|y))+$/;

const nonEmpty = (what: string) =>
  z
    .string()
    .trim()
    .min(1, { error: `must not be empty (${what})` });

const environmentSchema = z.object({
  TARGETS: z.string({ error: 'is required: a JSON array of targets' }),
  AMP_WORKSPACE_URL: z.string({ error: 'is required: the AMP workspace URL' }).pipe(httpUrl('the AMP workspace URL')),
  AWS_REGION: z
    .string({ error: 'is required (Lambda sets it): the region of CloudWatch' })
    .regex(REGION, { error: 'must be an AWS region such as us-east-2' }),
  AMP_REGION: z.string().regex(REGION, { error: 'must be an AWS region such as us-east-2' }).optional(),
  CLOUDWATCH_NAMESPACE: nonEmpty('a CloudWatch namespace')
    .superRefine((value, ctx) => {
      const problem = namespaceProblem(value);
      if (problem !== undefined)
        ctx.addIssue({
          code: 'custom',
          message: `${problem}; accepted: 1-${PUT_METRIC_DATA_LIMITS.maxNameLength} printable ASCII characters, not starting with ":" or "AWS/"`,
        });
    })
    .default(COLLECTOR_DEFAULTS.cloudWatchNamespace),
  CLOUDWATCH_ENDPOINT: httpUrl('the CloudWatch endpoint override').optional(),
  RATE_WINDOW: z
    .string()
    .regex(PROMQL_DURATION, { error: 'must be a PromQL duration such as 2m, 90s or 1m30s' })
    .refine((value) => /[1-9]/.test(value), { error: 'must be longer than zero' })
    .default(COLLECTOR_DEFAULTS.rateWindow),
  COLLECTOR_CONCURRENCY: z
    .string()
    .regex(/^\d+$/, { error: `must be an integer from 1 to ${COLLECTOR_DEFAULTS.maxConcurrency}` })
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(1, { error: `must be an integer from 1 to ${COLLECTOR_DEFAULTS.maxConcurrency}` })
        .max(COLLECTOR_DEFAULTS.maxConcurrency, {
          error: `must be an integer from 1 to ${COLLECTOR_DEFAULTS.maxConcurrency}`,
        }),
    )
    .optional(),
});

/**
 * Reads the collector's configuration from environment variables. Throws `ConfigInvalidError` listing every bad
 * variable at once (a target problem reads `TARGETS: targets[1].namespace: ...`). An empty variable counts as unset.
 */
export function loadCollectorConfig(env: Readonly<Record<string, string | undefined>>): CollectorConfig {
  const { vars, targets } = parseEnvironmentWithTargets(env, environmentSchema, parseTargets);
  return {
    targets,
    ampWorkspaceUrl: vars.AMP_WORKSPACE_URL,
    ampRegion: vars.AMP_REGION ?? vars.AWS_REGION,
    cloudWatchRegion: vars.AWS_REGION,
    cloudWatchNamespace: vars.CLOUDWATCH_NAMESPACE,
    ...(vars.CLOUDWATCH_ENDPOINT === undefined ? {} : { cloudWatchEndpoint: vars.CLOUDWATCH_ENDPOINT }),
    rateWindow: vars.RATE_WINDOW,
    concurrency: vars.COLLECTOR_CONCURRENCY ?? COLLECTOR_DEFAULTS.concurrency,
  };
}
