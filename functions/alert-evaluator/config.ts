import * as z from 'zod';
import { type AlertTarget, parseAlertTargets } from '../../shared/alerts/rules/index.js';
import { namespaceProblem } from '../../shared/cloudwatch/index.js';
import {
  ConfigInvalidError,
  httpUrl,
  parseEnvironmentWithTargets,
  region,
  TABLE_NAME,
  TOPIC_ARN,
} from '../../shared/config/index.js';
import { COLLECTOR_DEFAULTS } from '../metrics-collector/config.js';

/** The alert evaluator's settings, read once from the Lambda environment. */
export interface AlertEvaluatorConfig {
  /** The targets and their alert settings (the guide's defaults where a target sets none). */
  targets: AlertTarget[];
  ampWorkspaceUrl: string;
  ampRegion: string;
  /** The Lambda's region (`AWS_REGION`): SNS and DynamoDB clients use it. */
  region: string;
  topicArn: string;
  tableName: string;
  /** The silences table (ALERT_SILENCES_TABLE); unset: no silence is read, every notification goes out. */
  silencesTableName?: string;
  /**
   * The calibration history table (HISTORY_TABLE); unset: no calibrated alert thresholds, only the settings' and the
   * guide's.
   */
  historyTableName?: string;
  /** Set only for the local twin or a VPC endpoint. */
  snsEndpoint?: string;
  dynamoDbEndpoint?: string;
  /** Targets evaluated at once. */
  concurrency: number;
  /** Seconds between two evaluation cycles (EVALUATION_INTERVAL_SECONDS). */
  intervalSeconds: number;
  /** Seconds between two scheduled invocations (SCHEDULE_PERIOD_SECONDS, the EventBridge rate): a multiple of the interval. */
  schedulePeriodSeconds: number;
  /** Cycles one invocation runs, `intervalSeconds` apart from its start: schedulePeriodSeconds / intervalSeconds. */
  cyclesPerInvocation: number;
  /** The heartbeat metric's namespace (CLOUDWATCH_NAMESPACE, the product's, as the collector's). */
  cloudWatchNamespace: string;
  /** The heartbeat metric's `Stage` dimension (STAGE). */
  stage: string;
  cloudWatchEndpoint?: string;
}

export const ALERT_EVALUATOR_DEFAULTS = {
  concurrency: 4,
  maxConcurrency: 16,
  /** Four cycles per one-minute schedule: a `for` is detected within about 15 s of its end (issue 16). */
  intervalSeconds: 15,
  schedulePeriodSeconds: 60,
  /** The longest interval and period: a heartbeat older than two intervals counts as missing. */
  maxIntervalSeconds: 300,
  maxSchedulePeriodSeconds: 900,
  /** The collector's: the heartbeat metric sits beside the metrics it publishes. */
  cloudWatchNamespace: COLLECTOR_DEFAULTS.cloudWatchNamespace,
} as const;

const concurrencyMessage = `must be an integer from 1 to ${ALERT_EVALUATOR_DEFAULTS.maxConcurrency}`;

const intMessage = (max: number) => `must be a whole number of seconds from 1 to ${max}`;
const wholeSeconds = (max: number) =>
  z
    .string()
    .regex(/^\d+$/, { error: intMessage(max) })
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(1, { error: intMessage(max) })
        .max(max, { error: intMessage(max) }),
    );

// The dimension value of a metric (CloudWatch: 1-1024 characters); a stage name is far shorter.
const STAGE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

const environmentSchema = z.object({
  TARGETS: z.string({ error: 'is required: a JSON (or YAML) list of targets, each with optional `alerts` settings' }),
  AMP_WORKSPACE_URL: z.string({ error: 'is required: the AMP workspace URL' }).pipe(httpUrl('the AMP workspace URL')),
  AWS_REGION: region('the Lambda region (Lambda sets it)'),
  AMP_REGION: region('the AMP workspace region').optional(),
  ALERT_TOPIC_ARN: z.string({ error: 'is required: the ARN of the alerts SNS topic' }).regex(TOPIC_ARN, {
    error: 'must be an SNS topic ARN: arn:aws:sns:<region>:<12-digit account>:<topic name>',
  }),
  ALERT_STATE_TABLE: z.string({ error: 'is required: the name of the alert state DynamoDB table' }).regex(TABLE_NAME, {
    error: 'must be a DynamoDB table name: 3-255 letters, digits, "_", "-" or "."',
  }),
  ALERT_SILENCES_TABLE: z
    .string()
    .regex(TABLE_NAME, { error: 'must be a DynamoDB table name: 3-255 letters, digits, "_", "-" or "."' })
    .optional(),
  HISTORY_TABLE: z
    .string()
    .regex(TABLE_NAME, { error: 'must be a DynamoDB table name: 3-255 letters, digits, "_", "-" or "."' })
    .optional(),
  SNS_ENDPOINT: httpUrl('the SNS endpoint override').optional(),
  DYNAMODB_ENDPOINT: httpUrl('the DynamoDB endpoint override').optional(),
  EVALUATOR_CONCURRENCY: z
    .string()
    .regex(/^\d+$/, { error: concurrencyMessage })
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(1, { error: concurrencyMessage })
        .max(ALERT_EVALUATOR_DEFAULTS.maxConcurrency, { error: concurrencyMessage }),
    )
    .optional(),
  EVALUATION_INTERVAL_SECONDS: wholeSeconds(ALERT_EVALUATOR_DEFAULTS.maxIntervalSeconds).optional(),
  SCHEDULE_PERIOD_SECONDS: wholeSeconds(ALERT_EVALUATOR_DEFAULTS.maxSchedulePeriodSeconds).optional(),
  CLOUDWATCH_NAMESPACE: z
    .string()
    .superRefine((value, ctx) => {
      const problem = namespaceProblem(value);
      if (problem !== undefined)
        ctx.addIssue({ code: 'custom', message: `${problem}; accepted: a CloudWatch namespace` });
    })
    .optional(),
  CLOUDWATCH_ENDPOINT: httpUrl('the CloudWatch endpoint override').optional(),
  STAGE: z
    .string({ error: "is required: the stage (the heartbeat metric's Stage dimension)" })
    .regex(STAGE, { error: 'must be 1-128 letters, digits, "_", "." or "-", starting with a letter or digit' }),
});

/**
 * Reads the alert evaluator's configuration from environment variables. Throws `ConfigInvalidError` listing every
 * bad variable at once (a target problem reads `TARGETS: targets[1].alerts.rules.VLLMHighLatency.threshold: ...`).
 * An empty variable counts as unset.
 */
export function loadAlertEvaluatorConfig(env: Readonly<Record<string, string | undefined>>): AlertEvaluatorConfig {
  const { vars, targets } = parseEnvironmentWithTargets(env, environmentSchema, parseAlertTargets);
  const intervalSeconds = vars.EVALUATION_INTERVAL_SECONDS ?? ALERT_EVALUATOR_DEFAULTS.intervalSeconds;
  const schedulePeriodSeconds = vars.SCHEDULE_PERIOD_SECONDS ?? ALERT_EVALUATOR_DEFAULTS.schedulePeriodSeconds;
  // Cycles sit at whole intervals from the invocation's start; a period that is not a multiple would leave a gap or
  // an overlap at every invocation boundary.
  if (schedulePeriodSeconds % intervalSeconds !== 0)
    throw new ConfigInvalidError('environment', [
      {
        path: 'SCHEDULE_PERIOD_SECONDS',
        message: `${schedulePeriodSeconds} is not a multiple of EVALUATION_INTERVAL_SECONDS ${intervalSeconds}; accepted: a whole number of intervals (60 with 15)`,
      },
    ]);
  return {
    targets,
    ampWorkspaceUrl: vars.AMP_WORKSPACE_URL,
    ampRegion: vars.AMP_REGION ?? vars.AWS_REGION,
    region: vars.AWS_REGION,
    topicArn: vars.ALERT_TOPIC_ARN,
    tableName: vars.ALERT_STATE_TABLE,
    ...(vars.ALERT_SILENCES_TABLE === undefined ? {} : { silencesTableName: vars.ALERT_SILENCES_TABLE }),
    ...(vars.HISTORY_TABLE === undefined ? {} : { historyTableName: vars.HISTORY_TABLE }),
    ...(vars.SNS_ENDPOINT === undefined ? {} : { snsEndpoint: vars.SNS_ENDPOINT }),
    ...(vars.DYNAMODB_ENDPOINT === undefined ? {} : { dynamoDbEndpoint: vars.DYNAMODB_ENDPOINT }),
    concurrency: vars.EVALUATOR_CONCURRENCY ?? ALERT_EVALUATOR_DEFAULTS.concurrency,
    intervalSeconds,
    schedulePeriodSeconds,
    cyclesPerInvocation: schedulePeriodSeconds / intervalSeconds,
    cloudWatchNamespace: vars.CLOUDWATCH_NAMESPACE ?? ALERT_EVALUATOR_DEFAULTS.cloudWatchNamespace,
    stage: vars.STAGE,
    ...(vars.CLOUDWATCH_ENDPOINT === undefined ? {} : { cloudWatchEndpoint: vars.CLOUDWATCH_ENDPOINT }),
  };
}
