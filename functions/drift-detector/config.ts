import * as z from 'zod';
import {
  ConfigInvalidError,
  type ConfigIssue,
  httpUrl,
  parseEnvironmentWithTargets,
  region,
  STATE_MACHINE_ARN,
  TABLE_NAME,
  type Target,
  targetSchema,
  toConfigIssues,
  TOPIC_ARN,
  uniqueTargetList,
} from '../../shared/config/index.js';
import { type DriftSettings, parseDriftSettings } from '../../shared/drift/index.js';

/** A target with its drift settings (`drift`, defaults: notify, 600 s). */
export interface DriftTarget {
  target: Target;
  settings: DriftSettings;
}

/** The drift detector's settings, read once per Lambda container from its environment. */
export interface DriftDetectorConfig {
  targets: DriftTarget[];
  ampWorkspaceUrl: string;
  ampRegion: string;
  region: string;
  /** Where drift is reported (the stack gives the preflight topic: drift is checklist item 8 gone stale). */
  topicArn: string;
  historyTable: string;
  /** The calibration state machine auto mode starts; required when a target's mode is auto. */
  stateMachineArn?: string;
  eksEndpoint?: string;
  snsEndpoint?: string;
  dynamoDbEndpoint?: string;
  stepFunctionsEndpoint?: string;
}

const environmentSchema = z.object({
  TARGETS: z.string({ error: 'is required: a JSON list of targets, each with optional `drift` settings' }),
  AMP_WORKSPACE_URL: z.string({ error: 'is required: the AMP workspace URL' }).pipe(httpUrl('the AMP workspace URL')),
  AWS_REGION: region('the Lambda region (Lambda sets it)'),
  AMP_REGION: region('the AMP workspace region').optional(),
  DRIFT_TOPIC_ARN: z.string({ error: 'is required: the SNS topic drift is reported to' }).regex(TOPIC_ARN, {
    error: 'must be an SNS topic ARN: arn:aws:sns:<region>:<12-digit account>:<topic name>',
  }),
  HISTORY_TABLE: z.string({ error: 'is required: the calibration history DynamoDB table' }).regex(TABLE_NAME, {
    error: 'must be a DynamoDB table name: 3-255 letters, digits, "_", "-" or "."',
  }),
  STATE_MACHINE_ARN: z
    .string()
    .regex(STATE_MACHINE_ARN, {
      error: 'must be a state machine ARN: arn:aws:states:<region>:<account>:stateMachine:<name>',
    })
    .optional(),
  EKS_ENDPOINT: httpUrl('the EKS endpoint override').optional(),
  SNS_ENDPOINT: httpUrl('the SNS endpoint override').optional(),
  DYNAMODB_ENDPOINT: httpUrl('the DynamoDB endpoint override').optional(),
  STEP_FUNCTIONS_ENDPOINT: httpUrl('the Step Functions endpoint override').optional(),
});

const driftTargetsSchema = uniqueTargetList(targetSchema.extend({ drift: z.unknown().optional() }));

/** Parses TARGETS (JSON text); throws ConfigInvalidError naming index and field (`targets[0].drift.mode`). */
export function parseDriftTargets(text: string): DriftTarget[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigInvalidError(
      'targets',
      [
        {
          path: 'targets',
          message: `is not valid JSON (${(error as Error).message}); accepted: a JSON array of targets`,
        },
      ],
      { cause: error },
    );
  }
  const parsed = driftTargetsSchema.safeParse(value);
  if (!parsed.success) throw new ConfigInvalidError('targets', toConfigIssues('targets', parsed.error.issues));
  const issues: ConfigIssue[] = [];
  const targets = parsed.data.map(({ drift, ...target }, index): DriftTarget => {
    try {
      return { target, settings: parseDriftSettings(drift, `targets[${index}].drift`) };
    } catch (error) {
      if (!(error instanceof ConfigInvalidError)) throw error;
      issues.push(...error.issues);
      return { target, settings: parseDriftSettings(undefined) };
    }
  });
  if (issues.length > 0) throw new ConfigInvalidError('targets', issues);
  return targets;
}

/** Reads the configuration; throws ConfigInvalidError listing every bad variable at once. */
export function loadDriftDetectorConfig(env: Readonly<Record<string, string | undefined>>): DriftDetectorConfig {
  const { vars, targets } = parseEnvironmentWithTargets(env, environmentSchema, parseDriftTargets);
  const auto = targets.filter((t) => t.settings.mode === 'auto').map((t) => t.target.name);
  if (auto.length > 0 && vars.STATE_MACHINE_ARN === undefined)
    throw new ConfigInvalidError('environment', [
      {
        path: 'STATE_MACHINE_ARN',
        message: `is required: target(s) ${auto.join(', ')} have drift mode auto, which starts the calibration state machine`,
      },
    ]);
  return {
    targets,
    ampWorkspaceUrl: vars.AMP_WORKSPACE_URL,
    ampRegion: vars.AMP_REGION ?? vars.AWS_REGION,
    region: vars.AWS_REGION,
    topicArn: vars.DRIFT_TOPIC_ARN,
    historyTable: vars.HISTORY_TABLE,
    ...(vars.STATE_MACHINE_ARN === undefined ? {} : { stateMachineArn: vars.STATE_MACHINE_ARN }),
    ...(vars.EKS_ENDPOINT === undefined ? {} : { eksEndpoint: vars.EKS_ENDPOINT }),
    ...(vars.SNS_ENDPOINT === undefined ? {} : { snsEndpoint: vars.SNS_ENDPOINT }),
    ...(vars.DYNAMODB_ENDPOINT === undefined ? {} : { dynamoDbEndpoint: vars.DYNAMODB_ENDPOINT }),
    ...(vars.STEP_FUNCTIONS_ENDPOINT === undefined ? {} : { stepFunctionsEndpoint: vars.STEP_FUNCTIONS_ENDPOINT }),
  };
}
