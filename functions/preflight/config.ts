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
import { parseAlertSettings } from '../../shared/alerts/rules/index.js';
import {
  ALERTING_ENGINES,
  type AlertingEngine,
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
  /** The settings every check reads; `alertingEngine` comes from ALERTING_ENGINE, `ampRuleNamespace` from AMP_RULE_NAMESPACE. */
  settings: PreflightSettings;
  /** The alert state table, where the evaluator records its heartbeat (the Lambda engine's check 5 reads it). */
  alertStateTable?: string;
  /** Set only for the local twin or VPC endpoints. */
  ampControlPlaneEndpoint?: string;
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
  ALERTING_ENGINE: z.enum(Object.values(ALERTING_ENGINES), {
    error: `is required: who evaluates the alert rules, one of ${Object.values(ALERTING_ENGINES).join(', ')} (the stage's alerting.engine)`,
  }),
  ALERT_STATE_TABLE: z
    .string()
    .regex(TABLE_NAME, { error: 'must be a DynamoDB table name: 3-255 letters, digits, "_", "-" or "."' })
    .optional(),
  AMP_RULE_NAMESPACE: z
    .string()
    .regex(/^[0-9A-Za-z][-.0-9A-Z_a-z]{0,127}$/, {
      error: 'must be an AMP rule groups namespace name: 1-128 letters, digits, "-", "." or "_"',
    })
    .optional(),
  // Parsed below with the checks' own schema (parsePreflightSettings).
  PREFLIGHT_SETTINGS: z.string().optional(),
  AMP_CONTROL_PLANE_ENDPOINT: httpUrl(
    "the AMP control-plane endpoint override (aps.<region>.amazonaws.com's)",
  ).optional(),
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
  // The evaluator's alert settings of the target (parsed below): check 5 compares AMP's rules with what they generate.
  alerts: z.unknown().optional(),
});

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
  const issues: ConfigIssue[] = [];
  const targets = parsed.data.map(({ alerts, ...target }, index): PreflightTarget => {
    if (alerts === undefined) return target;
    try {
      return { ...target, alerts: parseAlertSettings(alerts, `targets[${index}].alerts`) };
    } catch (error) {
      if (!(error instanceof ConfigInvalidError)) throw error;
      issues.push(...error.issues);
      return target;
    }
  });
  if (issues.length > 0) throw new ConfigInvalidError('targets', issues);
  return targets;
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
  if (parsed !== undefined) {
    // Each engine's evidence needs its own address (check 5).
    const engine: AlertingEngine = parsed.vars.ALERTING_ENGINE;
    if (engine === ALERTING_ENGINES.lambda && parsed.vars.ALERT_STATE_TABLE === undefined)
      issues.push({
        path: 'ALERT_STATE_TABLE',
        message: "is required with ALERTING_ENGINE=lambda: the alert state table, where the evaluator's heartbeat is",
      });
    if (engine === ALERTING_ENGINES.amp && parsed.vars.AMP_RULE_NAMESPACE === undefined)
      issues.push({
        path: 'AMP_RULE_NAMESPACE',
        message: 'is required with ALERTING_ENGINE=amp: the rule groups namespace the AMP engine installs',
      });
  }
  if (parsed === undefined || settings === undefined || issues.length > 0)
    throw new ConfigInvalidError('environment', issues);
  const { vars, targets } = parsed;
  return {
    targets,
    ampWorkspaceUrl: vars.AMP_WORKSPACE_URL,
    ampRegion: vars.AMP_REGION ?? vars.AWS_REGION,
    region: vars.AWS_REGION,
    topicArn: vars.PREFLIGHT_TOPIC_ARN,
    historyTable: vars.HISTORY_TABLE,
    settings: {
      ...settings,
      alertingEngine: vars.ALERTING_ENGINE,
      ...(vars.AMP_RULE_NAMESPACE === undefined ? {} : { ampRuleNamespace: vars.AMP_RULE_NAMESPACE }),
    },
    ...(vars.ALERT_STATE_TABLE === undefined ? {} : { alertStateTable: vars.ALERT_STATE_TABLE }),
    ...(vars.AMP_CONTROL_PLANE_ENDPOINT === undefined
      ? {}
      : { ampControlPlaneEndpoint: vars.AMP_CONTROL_PLANE_ENDPOINT }),
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
