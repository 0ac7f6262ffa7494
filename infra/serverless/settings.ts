/**
 * The stage parameters of serverless.yml (`params:` per stage, or `--param key=value`), checked once at package time
 * so that a bad target or ARN fails `osls package` with the field named, not every Lambda invocation after deploy.
 */
import * as z from 'zod';
import { ALERT_MESSAGE_ATTRIBUTES } from '../../shared/alerts/index.js';
import { AMP_WORKSPACE_ID } from '../../shared/alerts/amp/index.js';
import { parseAlertTargets } from '../../shared/alerts/rules/index.js';
import { namespaceProblem } from '../../shared/cloudwatch/index.js';
import {
  ConfigInvalidError,
  formatPath,
  parseTargets,
  REGION,
  REGION_PATTERN,
  TARGET_FIELDS,
  targetView,
  unknownTargetFields,
} from '../../shared/config/index.js';
import { ALERTING_ENGINES, type AlertingEngine, parsePreflightSettings } from '../../shared/preflight/index.js';
import { parsePreflightTargets } from '../../functions/preflight/config.js';
import { parseDriftTargets } from '../../functions/drift-detector/config.js';
import {
  COLLECTOR_DEFAULTS,
  COLLECTOR_SCHEDULE,
  collectorMetricList,
} from '../../functions/metrics-collector/config.js';
import { StackSettingsInvalidError, type StackSettingsIssue } from './errors.js';
import { parseVpcSettings, type VpcSettings } from './vpc.js';

/** What the stack is built from: the stage parameters, checked, with each function's view of the targets. */
export interface StackSettings {
  /** serverless.yml `service`: function names are `<service>-<stage>-<function>`. */
  service: string;
  stage: string;
  /** The TARGETS variable of each function, as JSON: each function takes only the fields its parser accepts. */
  targets: { metricsCollector: string; alertEvaluator: string; preflight: string; driftDetector: string };
  /** The EKS clusters the targets name: the only clusters `eks:DescribeCluster` is allowed on. */
  clusters: readonly string[];
  ampWorkspaceId: string;
  ampRegion: string;
  slackWebhookSecretArn: string;
  /** The SNS filter policy of the Slack subscription (on message attributes); undefined = every alert. */
  slackFilterPolicy?: Record<string, unknown[]>;
  cloudWatchNamespace: string;
  /** PREFLIGHT_SETTINGS as JSON, or undefined for the checks' defaults. */
  preflightSettings?: string;
  /**
   * The stage parameter `alerting.engine`: who evaluates the alert rules. `lambda`, the alert-evaluator on its
   * schedule (the default); or `amp`, AMP's own ruler and Alertmanager, kept in step by the alert-installer.
   */
  alertingEngine: AlertingEngine;
  /**
   * The stage parameters `vpc.subnetIds` and `vpc.securityGroupIds`: where the functions that call the Kubernetes
   * API run (a private cluster endpoint); undefined = no VPC anywhere (vpc.ts).
   */
  vpc?: VpcSettings;
  /** Advice on parameters that are accepted but risky (one subnet): printed by `osls package`, never fatal. */
  warnings: string[];
  /**
   * The stage parameters `collector.schedule` and `collector.metrics`: the collector's EventBridge rate (`off`: its
   * schedule is disabled) and COLLECTOR_METRICS ("" = every catalog metric). docs/metrics-collector.md, "What it costs".
   */
  collector: { schedule: string; enabled: boolean; metrics: string };
}

const ENGINES = Object.values(ALERTING_ENGINES);

// Secrets Manager ARNs end with "-" and six random characters that IAM needs to match the secret exactly.
const SECRET_ARN = new RegExp(
  `^arn:aws[a-z-]*:secretsmanager:${REGION_PATTERN}:\\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$`,
);
// serverless service and stage names end up in Lambda function names (letters, digits, "-", "_").
const NAME = /^[A-Za-z][A-Za-z0-9-]{0,40}$/;

const jsonOrValue = (what: string) =>
  z.union([
    z.string().transform((text, ctx) => {
      if (text.trim() === '') return undefined;
      try {
        return JSON.parse(text) as unknown;
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: `is not valid JSON (${(error as Error).message}); accepted: ${what}` });
        return z.NEVER;
      }
    }),
    z.record(z.string(), z.unknown()),
    z.array(z.unknown()),
    z.null().transform(() => undefined),
  ]);

const inputSchema = z.strictObject({
  service: z.string({ error: 'is required: the serverless service name' }).regex(NAME, {
    error: 'must be 1-41 letters, digits or "-", starting with a letter',
  }),
  stage: z.string({ error: 'is required: the stage' }).regex(NAME, {
    error: 'must be 1-41 letters, digits or "-", starting with a letter',
  }),
  targets: jsonOrValue('a JSON array of targets'),
  ampWorkspaceId: z.string({ error: 'is required: the AMP workspace id (ws-...)' }).regex(AMP_WORKSPACE_ID, {
    error: 'must be an AMP workspace id: ws-<uuid>, e.g. ws-b226cc2a-a446-46a9-933a-ac50479a5568',
  }),
  ampRegion: z.string({ error: 'is required: the AMP workspace region' }).regex(REGION, {
    error: 'must be an AWS region such as us-east-2',
  }),
  slackWebhookSecretArn: z
    .string({ error: 'is required: the ARN of the secret holding the Slack webhook URL' })
    .regex(SECRET_ARN, {
      error:
        'must be the full ARN of a Secrets Manager secret, with its 6-character suffix: arn:aws:secretsmanager:<region>:<account>:secret:<name>-AbCdEf',
    }),
  slackFilterPolicy: jsonOrValue('an SNS filter policy object').optional(),
  cloudWatchNamespace: z.string({ error: 'is required: the CloudWatch namespace of the metrics' }),
  preflightSettings: jsonOrValue('a JSON object of preflight settings').optional(),
  // serverless.yml passes the parameter `alerting.engine` as `alerting: { engine }`, so an issue reads `alerting.engine`.
  // Its default (`lambda`) is written in serverless.yml `params.default`; absent here (a caller building the stack
  // itself), it is the same.
  alerting: z
    .strictObject({
      engine: z.enum(ENGINES, {
        error: `must be one of ${ENGINES.join(', ')} (who evaluates the alert rules: the Lambda evaluator, or AMP's ruler and Alertmanager)`,
      }),
    })
    .optional(),
  // serverless.yml passes `vpc.subnetIds` and `vpc.securityGroupIds` as `vpc: { subnetIds, securityGroupIds }`;
  // checked by parseVpcSettings (vpc.ts), so its issues read `vpc.subnetIds[1]`.
  vpc: z.unknown().optional(),
  // serverless.yml passes `collector.schedule` and `collector.metrics` as `collector: { schedule, metrics }`.
  collector: z
    .strictObject({
      schedule: z.string({ error: 'is required' }).regex(COLLECTOR_SCHEDULE, {
        error:
          'must be off or an EventBridge rate in minutes or hours: rate(1 minute), rate(5 minutes), rate(1 hour), rate(2 hours)',
      }),
      metrics: z.union([z.literal(''), collectorMetricList]).optional(),
    })
    .optional(),
});

/** Parses the stage parameters; throws StackSettingsInvalidError naming every bad parameter at once. */
export function parseStackSettings(input: unknown): StackSettings {
  const parsed = inputSchema.safeParse(input);
  if (!parsed.success)
    throw new StackSettingsInvalidError(
      parsed.error.issues.map((issue) => ({ path: formatPath('', issue.path), message: issue.message })),
    );
  const vars = parsed.data;
  const issues: StackSettingsIssue[] = [];
  const warnings: string[] = [];

  const namespace = namespaceProblem(vars.cloudWatchNamespace);
  if (namespace !== undefined) issues.push({ path: 'cloudWatchNamespace', message: namespace });

  const targets = targetViews(vars.targets, issues);
  const slackFilterPolicy = filterPolicy(vars.slackFilterPolicy, issues);
  let preflightSettings: string | undefined;
  if (vars.preflightSettings !== undefined)
    try {
      parsePreflightSettings(vars.preflightSettings, 'preflightSettings');
      preflightSettings = JSON.stringify(vars.preflightSettings);
    } catch (error) {
      issues.push({ path: 'preflightSettings', message: (error as Error).message });
    }

  const vpc = parseVpcSettings(vars.vpc, issues, warnings);

  if (issues.length > 0 || targets === undefined) throw new StackSettingsInvalidError(issues);
  return {
    service: vars.service,
    stage: vars.stage,
    targets: targets.views,
    clusters: targets.clusters,
    ampWorkspaceId: vars.ampWorkspaceId,
    ampRegion: vars.ampRegion,
    slackWebhookSecretArn: vars.slackWebhookSecretArn,
    ...(slackFilterPolicy === undefined ? {} : { slackFilterPolicy }),
    cloudWatchNamespace: vars.cloudWatchNamespace,
    ...(preflightSettings === undefined ? {} : { preflightSettings }),
    alertingEngine: vars.alerting?.engine ?? ALERTING_ENGINES.lambda,
    ...(vpc === undefined ? {} : { vpc }),
    warnings,
    collector: collectorSchedule(vars.collector),
  };
}

/** The collector's schedule and metrics; `off` keeps a valid rate (EventBridge needs one) with the rule disabled. */
function collectorSchedule(input: { schedule: string; metrics?: string | string[] | undefined } | undefined) {
  const schedule = input?.schedule ?? COLLECTOR_DEFAULTS.schedule;
  const metrics = Array.isArray(input?.metrics) ? input.metrics.join(',') : '';
  return schedule === 'off'
    ? { schedule: COLLECTOR_DEFAULTS.schedule, enabled: false, metrics }
    : { schedule, enabled: true, metrics };
}

/**
 * One `targets` parameter, four views: each function's parser is strict (a typo fails loudly), so each gets only
 * the fields it reads, and each view is checked here with that function's own parser.
 */
function targetViews(
  input: unknown,
  issues: StackSettingsIssue[],
): { views: StackSettings['targets']; clusters: string[] } | undefined {
  if (!Array.isArray(input) || input.length === 0) {
    issues.push({ path: 'targets', message: 'must be a non-empty JSON array of targets' });
    return undefined;
  }
  const entries = input as unknown[];
  issues.push(...unknownTargetFields(entries));
  const view = (fields: readonly string[]) => targetView(entries, fields);
  const views = {
    metricsCollector: JSON.stringify(view(TARGET_FIELDS.metricsCollector)),
    alertEvaluator: JSON.stringify(view(TARGET_FIELDS.alertEvaluator)),
    preflight: JSON.stringify(view(TARGET_FIELDS.preflight)),
    driftDetector: JSON.stringify(view(TARGET_FIELDS.driftDetector)),
  };
  const before = issues.length;
  collect(issues, () => parseTargets(views.metricsCollector));
  // The common fields are already reported once; the other parsers only add what is theirs.
  if (issues.length === before) {
    collect(issues, () => parseAlertTargets(views.alertEvaluator));
    collect(issues, () => parsePreflightTargets(views.preflight));
    collect(issues, () => parseDriftTargets(views.driftDetector));
  }
  if (issues.length > before) return undefined;
  const clusters = [...new Set(parseTargets(views.metricsCollector).map((target) => target.cluster))];
  return { views, clusters };
}

function collect(issues: StackSettingsIssue[], parse: () => unknown): void {
  try {
    parse();
  } catch (error) {
    if (!(error instanceof ConfigInvalidError)) throw error;
    issues.push(...error.issues);
  }
}

/** An SNS filter policy on the alert message attributes: a key SNS never sees would silently drop every alert. */
function filterPolicy(input: unknown, issues: StackSettingsIssue[]): Record<string, unknown[]> | undefined {
  if (input === undefined) return undefined;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    issues.push({ path: 'slackFilterPolicy', message: 'must be a JSON object such as {"severity":["critical"]}' });
    return undefined;
  }
  const policy: Record<string, unknown[]> = {};
  for (const [key, value] of Object.entries(input)) {
    if (!(ALERT_MESSAGE_ATTRIBUTES as readonly string[]).includes(key))
      issues.push({
        path: `slackFilterPolicy.${key}`,
        message: `is not an alert message attribute; accepted: ${ALERT_MESSAGE_ATTRIBUTES.join(', ')}`,
      });
    else if (!Array.isArray(value) || value.length === 0)
      issues.push({
        path: `slackFilterPolicy.${key}`,
        message: 'must be a non-empty array of values, e.g. ["critical"]',
      });
    else policy[key] = value as unknown[];
  }
  return Object.keys(policy).length === 0 ? undefined : policy;
}
