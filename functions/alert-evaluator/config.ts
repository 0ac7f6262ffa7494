import * as z from 'zod';
import { type AlertTarget, parseAlertTargets } from '../../shared/alerts/rules/index.js';
import { httpUrl, parseEnvironmentWithTargets, region, TABLE_NAME, TOPIC_ARN } from '../../shared/config/index.js';

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
  /** Set only for the local twin or a VPC endpoint. */
  snsEndpoint?: string;
  dynamoDbEndpoint?: string;
  /** Targets evaluated at once. */
  concurrency: number;
}

export const ALERT_EVALUATOR_DEFAULTS = { concurrency: 4, maxConcurrency: 16 } as const;

const concurrencyMessage = `must be an integer from 1 to ${ALERT_EVALUATOR_DEFAULTS.maxConcurrency}`;

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
});

/**
 * Reads the alert evaluator's configuration from environment variables. Throws `ConfigInvalidError` listing every
 * bad variable at once (a target problem reads `TARGETS: targets[1].alerts.rules.VLLMHighLatency.threshold: ...`).
 * An empty variable counts as unset.
 */
export function loadAlertEvaluatorConfig(env: Readonly<Record<string, string | undefined>>): AlertEvaluatorConfig {
  const { vars, targets } = parseEnvironmentWithTargets(env, environmentSchema, parseAlertTargets);
  return {
    targets,
    ampWorkspaceUrl: vars.AMP_WORKSPACE_URL,
    ampRegion: vars.AMP_REGION ?? vars.AWS_REGION,
    region: vars.AWS_REGION,
    topicArn: vars.ALERT_TOPIC_ARN,
    tableName: vars.ALERT_STATE_TABLE,
    ...(vars.ALERT_SILENCES_TABLE === undefined ? {} : { silencesTableName: vars.ALERT_SILENCES_TABLE }),
    ...(vars.SNS_ENDPOINT === undefined ? {} : { snsEndpoint: vars.SNS_ENDPOINT }),
    ...(vars.DYNAMODB_ENDPOINT === undefined ? {} : { dynamoDbEndpoint: vars.DYNAMODB_ENDPOINT }),
    concurrency: vars.EVALUATOR_CONCURRENCY ?? ALERT_EVALUATOR_DEFAULTS.concurrency,
  };
}
