import * as z from 'zod';
import { AMP_WORKSPACE_ID } from '../../shared/alerts/amp/index.js';
import { AMP_RULE_NAMESPACE_LIMITS } from '../../shared/alerts/export/index.js';
import { type AlertTarget, parseAlertTargets } from '../../shared/alerts/rules/index.js';
import { httpUrl, parseEnvironmentWithTargets, region, TOPIC_ARN } from '../../shared/config/index.js';

/** The alert installer's settings, read once from the Lambda environment. */
export interface AlertInstallerConfig {
  /** The targets and their alert settings (the evaluator's TARGETS): one rule group each. */
  targets: AlertTarget[];
  ampWorkspaceId: string;
  ampRegion: string;
  /** The rule groups namespace this stage owns (`<service>-<stage>`). */
  ruleNamespace: string;
  /** The alerts topic AMP's Alertmanager publishes to, and its region (`sigv4.region`). */
  topicArn: string;
  topicRegion: string;
  /** AMP's control-plane endpoint override (the twin, or a VPC endpoint); unset: AMP's own for `ampRegion`. */
  ampControlPlaneEndpoint?: string;
  /** How long a resource may take to become ACTIVE. */
  waitTimeoutMs: number;
  /** Between two Describe calls while waiting. */
  pollIntervalMs: number;
}

export const ALERT_INSTALLER_DEFAULTS = {
  waitTimeoutSeconds: 240,
  pollIntervalSeconds: 5,
  /** Lambda's 15 minutes. */
  maxWaitTimeoutSeconds: 900,
  maxPollIntervalSeconds: 60,
} as const;

const seconds = (min: number, max: number) => {
  const message = `must be whole seconds from ${min} to ${max}`;
  return z
    .string()
    .regex(/^\d+$/, { error: message })
    .transform(Number)
    .pipe(z.number().int().min(min, { error: message }).max(max, { error: message }));
};

const environmentSchema = z.object({
  TARGETS: z.string({ error: 'is required: a JSON list of targets, each with optional `alerts` settings' }),
  AWS_REGION: region('the Lambda region (Lambda sets it)'),
  AMP_WORKSPACE_ID: z.string({ error: 'is required: the AMP workspace id (ws-...)' }).regex(AMP_WORKSPACE_ID, {
    error: 'must be an AMP workspace id: ws-<uuid>',
  }),
  AMP_REGION: region('the AMP workspace region').optional(),
  AMP_RULE_NAMESPACE: z
    .string({ error: 'is required: the rule groups namespace this stage owns' })
    .max(AMP_RULE_NAMESPACE_LIMITS.nameMaxLength, {
      error: `must be at most ${AMP_RULE_NAMESPACE_LIMITS.nameMaxLength} characters`,
    })
    .regex(AMP_RULE_NAMESPACE_LIMITS.namePattern, {
      error: 'must be letters, digits, "-", "." or "_", starting with a letter or digit',
    }),
  ALERT_TOPIC_ARN: z.string({ error: 'is required: the ARN of the alerts SNS topic' }).regex(TOPIC_ARN, {
    error: 'must be an SNS topic ARN: arn:aws:sns:<region>:<12-digit account>:<topic name>',
  }),
  AMP_CONTROL_PLANE_ENDPOINT: httpUrl(
    "the AMP control-plane endpoint override (aps.<region>.amazonaws.com's)",
  ).optional(),
  AMP_WAIT_TIMEOUT_SECONDS: seconds(1, ALERT_INSTALLER_DEFAULTS.maxWaitTimeoutSeconds).optional(),
  AMP_POLL_INTERVAL_SECONDS: seconds(1, ALERT_INSTALLER_DEFAULTS.maxPollIntervalSeconds).optional(),
});

/**
 * Reads the alert installer's configuration from environment variables. Throws `ConfigInvalidError` listing every bad
 * variable at once; an empty variable counts as unset.
 */
export function loadAlertInstallerConfig(env: Readonly<Record<string, string | undefined>>): AlertInstallerConfig {
  const { vars, targets } = parseEnvironmentWithTargets(env, environmentSchema, parseAlertTargets);
  // TOPIC_ARN matched, so the region is the ARN's fourth field.
  const topicRegion = vars.ALERT_TOPIC_ARN.split(':')[3] ?? vars.AWS_REGION;
  return {
    targets,
    ampWorkspaceId: vars.AMP_WORKSPACE_ID,
    ampRegion: vars.AMP_REGION ?? vars.AWS_REGION,
    ruleNamespace: vars.AMP_RULE_NAMESPACE,
    topicArn: vars.ALERT_TOPIC_ARN,
    topicRegion,
    ...(vars.AMP_CONTROL_PLANE_ENDPOINT === undefined
      ? {}
      : { ampControlPlaneEndpoint: vars.AMP_CONTROL_PLANE_ENDPOINT }),
    waitTimeoutMs: (vars.AMP_WAIT_TIMEOUT_SECONDS ?? ALERT_INSTALLER_DEFAULTS.waitTimeoutSeconds) * 1000,
    pollIntervalMs: (vars.AMP_POLL_INTERVAL_SECONDS ?? ALERT_INSTALLER_DEFAULTS.pollIntervalSeconds) * 1000,
  };
}
