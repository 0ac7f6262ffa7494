import * as z from 'zod';
import { namespaceProblem, PUT_METRIC_DATA_LIMITS } from '../../shared/cloudwatch/index.js';
import { httpUrl, parseEnvironmentWithTargets, parseTargets, REGION, type Target } from '../../shared/config/index.js';
import { CATALOG } from '../../shared/metrics/index.js';

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
  /**
   * The CloudWatch metric names to query and publish (COLLECTOR_METRICS), in catalog order; undefined = the whole
   * catalog. Each name is one series per target (or per Pod / GPU): the cheapest lever on the CloudWatch bill.
   */
  metrics?: string[];
}

/**
 * The collector's EventBridge schedule (stage parameter `collector.schedule`): `rate(N minute[s])` or
 * `rate(N hour[s])`, as EventBridge writes it (singular for 1), or `off` (no schedule: nothing is published to
 * CloudWatch; dashboards and alarms read AMP, e.g. its recording rules). A longer rate divides every CloudWatch and
 * Lambda figure of the collector; CloudWatch keeps a metric billed for every hour it receives a datum, so the series
 * count only falls with `off` or fewer COLLECTOR_METRICS.
 */
export const COLLECTOR_SCHEDULE = /^(off|rate\(1 (minute|hour)\)|rate\(([2-9]|[1-9]\d+) (minutes|hours)\))$/;

export const COLLECTOR_DEFAULTS = {
  cloudWatchNamespace: 'vLLM/EKSPilot',
  rateWindow: '2m',
  concurrency: 2,
  schedule: 'rate(1 minute)',
  maxConcurrency: 16,
} as const;

// PromQL durations: one or more <integer><unit> parts, units ms, s, m, h, d, w, y (Prometheus docs, "Time durations").
const PROMQL_DURATION = /^(\d+(ms|s|m|h|d|w|y))+$/;

const nonEmpty = (what: string) =>
  z
    .string()
    .trim()
    .min(1, { error: `must not be empty (${what})` });

const CATALOG_METRIC_NAMES: readonly string[] = CATALOG.map((entry) => entry.metricName);

/** COLLECTOR_METRICS: a comma-separated list of catalog metric names, each known, none twice. */
export const collectorMetricList = z
  .string()
  .transform((text) => text.split(',').map((name) => name.trim()))
  .superRefine((names, ctx) => {
    const seen = new Set<string>();
    for (const name of names) {
      if (!CATALOG_METRIC_NAMES.includes(name))
        ctx.addIssue({
          code: 'custom',
          message: `${JSON.stringify(name)} is not a metric the collector publishes; accepted: a comma-separated list of ${CATALOG_METRIC_NAMES.join(', ')}`,
        });
      else if (seen.has(name)) ctx.addIssue({ code: 'custom', message: `${name} is listed twice` });
      seen.add(name);
    }
  });

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
  COLLECTOR_METRICS: collectorMetricList.optional(),
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
    ...(vars.COLLECTOR_METRICS === undefined
      ? {}
      : { metrics: CATALOG_METRIC_NAMES.filter((name) => vars.COLLECTOR_METRICS?.includes(name)) }),
  };
}
