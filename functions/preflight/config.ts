import * as z from 'zod';
import {
  ConfigInvalidError,
  type ConfigIssue,
  httpUrl,
  parseEnvironmentWithTargets,
  region,
  TABLE_NAME,
  TARGET_NAME_RULES,
  targetSchema,
  toConfigIssues,
  TOPIC_ARN,
  uniqueTargetList,
} from '../../shared/config/index.js';
import {
  parsePreflightSettings,
  type PreflightSettings,
  PreflightSettingsInvalidError,
  type PreflightTarget,
} from '../../shared/preflight/index.js';

/** The preflight function's settings, read once per Lambda container from its environment. */
export interface PreflightConfig {
  targets: PreflightTarget[];
  ampWorkspaceUrl: string;
  ampRegion: string;
  /** The Lambda's region (`AWS_REGION`): EKS, SNS and DynamoDB clients use it. */
  region: string;
  topicArn: string;
  /** The calibration history table (the calibration functions call it HISTORY_TABLE too). */
  historyTable: string;
  /** The settings every check reads; `controlPlaneEvaluatorEnabled` comes from ALERT_EVALUATOR_ENABLED. */
  settings: PreflightSettings;
  /** Set only for the local twin or VPC endpoints. */
  eksEndpoint?: string;
  snsEndpoint?: string;
  dynamoDbEndpoint?: string;
}

const environmentSchema = z.object({
  TARGETS: z.string({
    error:
      'is required: a JSON list of targets (name, cluster, namespace, deployment, model; optional service, scaledObject)',
  }),
  AMP_WORKSPACE_URL: z.string({ error: 'is required: the AMP workspace URL' }).pipe(httpUrl('the AMP workspace URL')),
  AWS_REGION: region('the Lambda region (Lambda sets it)'),
  AMP_REGION: region('the AMP workspace region').optional(),
  PREFLIGHT_TOPIC_ARN: z.string({ error: 'is required: the ARN of the preflight SNS topic' }).regex(TOPIC_ARN, {
    error: 'must be an SNS topic ARN: arn:aws:sns:<region>:<12-digit account>:<topic name>',
  }),
  HISTORY_TABLE: z.string({ error: 'is required: the calibration history DynamoDB table' }).regex(TABLE_NAME, {
    error: 'must be a DynamoDB table name: 3-255 letters, digits, "_", "-" or "."',
  }),
  ALERT_EVALUATOR_ENABLED: z.enum(['true', 'false'], {
    error: 'is required: "true" when this stack\'s alert-evaluator runs the five rules, else "false"',
  }),
  // Parsed below with the checks' own schema (parsePreflightSettings).
  PREFLIGHT_SETTINGS: z.string().optional(),
  EKS_ENDPOINT: httpUrl('the EKS endpoint override').optional(),
  SNS_ENDPOINT: httpUrl('the SNS endpoint override').optional(),
  DYNAMODB_ENDPOINT: httpUrl('the DynamoDB endpoint override').optional(),
});

/** A target as the metrics functions take it, plus the Service and ScaledObject names preflight may need. */
const preflightTargetSchema = targetSchema.extend({
  service: z
    .string({ error: `must be a string; accepted: ${TARGET_NAME_RULES.dns1123Label.accepted}` })
    .regex(TARGET_NAME_RULES.dns1123Label.pattern, {
      error: `is not a Service name; accepted: ${TARGET_NAME_RULES.dns1123Label.accepted}`,
    })
    .optional(),
  // ScaledObject names are DNS-1123 subdomains (up to 253, dots allowed).
  scaledObject: z
    .string({ error: 'must be a string (the ScaledObject name)' })
    .regex(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, {
      error: 'is not a ScaledObject name; accepted: a DNS-1123 subdomain (lower-case letters, digits, "-", ".")',
    })
    .optional(),
}) satisfies z.ZodType<PreflightTarget>;

const preflightTargetsSchema = uniqueTargetList(preflightTargetSchema);

/** Parses the TARGETS list (JSON text); throws `ConfigInvalidError` naming index and field (`targets[0].service`). */
export function parsePreflightTargets(text: string): PreflightTarget[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const issue: ConfigIssue = {
      path: 'targets',
      message: `is not valid JSON (${(error as Error).message}); accepted: a JSON array of targets`,
    };
    throw new ConfigInvalidError('targets', [issue], { cause: error });
  }
  const parsed = preflightTargetsSchema.safeParse(value);
  if (!parsed.success) throw new ConfigInvalidError('targets', toConfigIssues('targets', parsed.error.issues));
  return parsed.data;
}

/**
 * Reads the preflight function's configuration from environment variables. Throws `ConfigInvalidError` listing every
 * bad variable at once (a settings problem reads `PREFLIGHT_SETTINGS.freshnessSeconds: ...`). An empty variable
 * counts as unset.
 */
export function loadPreflightConfig(env: Readonly<Record<string, string | undefined>>): PreflightConfig {
  const issues: ConfigIssue[] = [];
  let settings: PreflightSettings | undefined;
  try {
    settings = readSettings(env.PREFLIGHT_SETTINGS);
  } catch (error) {
    if (!(error instanceof ConfigInvalidError)) throw error;
    issues.push(...error.issues);
  }
  let parsed: ReturnType<typeof parseEnvironment> | undefined;
  try {
    parsed = parseEnvironment(env);
  } catch (error) {
    if (!(error instanceof ConfigInvalidError)) throw error;
    issues.unshift(...error.issues);
  }
  if (parsed === undefined || settings === undefined) throw new ConfigInvalidError('environment', issues);
  const { vars, targets } = parsed;
  return {
    targets,
    ampWorkspaceUrl: vars.AMP_WORKSPACE_URL,
    ampRegion: vars.AMP_REGION ?? vars.AWS_REGION,
    region: vars.AWS_REGION,
    topicArn: vars.PREFLIGHT_TOPIC_ARN,
    historyTable: vars.HISTORY_TABLE,
    settings: { ...settings, controlPlaneEvaluatorEnabled: vars.ALERT_EVALUATOR_ENABLED === 'true' },
    ...(vars.EKS_ENDPOINT === undefined ? {} : { eksEndpoint: vars.EKS_ENDPOINT }),
    ...(vars.SNS_ENDPOINT === undefined ? {} : { snsEndpoint: vars.SNS_ENDPOINT }),
    ...(vars.DYNAMODB_ENDPOINT === undefined ? {} : { dynamoDbEndpoint: vars.DYNAMODB_ENDPOINT }),
  };
}

function parseEnvironment(env: Readonly<Record<string, string | undefined>>) {
  return parseEnvironmentWithTargets(env, environmentSchema, parsePreflightTargets);
}

/** PREFLIGHT_SETTINGS is a JSON object; unset or empty means the defaults (suited to AWS). */
function readSettings(text: string | undefined): PreflightSettings {
  const refuse = (message: string, issues: ConfigIssue[], cause?: unknown) =>
    new ConfigInvalidError('environment', issues.length > 0 ? issues : [{ path: 'PREFLIGHT_SETTINGS', message }], {
      cause,
    });
  let value: unknown = {};
  if (text !== undefined && text !== '') {
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw refuse(
        `is not valid JSON (${(error as Error).message}); accepted: a JSON object of preflight settings`,
        [],
        error,
      );
    }
  }
  try {
    return parsePreflightSettings(value, 'PREFLIGHT_SETTINGS');
  } catch (error) {
    if (!(error instanceof PreflightSettingsInvalidError)) throw error;
    const issues = error.issues.map((issue) => ({
      path: issue.path === '(root)' ? 'PREFLIGHT_SETTINGS' : `PREFLIGHT_SETTINGS.${issue.path}`,
      message: issue.message,
    }));
    throw refuse('', issues, error);
  }
}
