/**
 * Names the stack's parts share: CloudFormation logical ids, serverless function keys, and the ids osls derives
 * from a function key (osls lib/plugins/aws/lib/naming.js: `<Key>LambdaFunction`, `<Key>LogGroup`).
 */
import { CALIBRATION_STEPS, type CalibrationStepName } from '../../shared/calibration/workflow/index.js';

/** A CloudFormation value: a literal or an intrinsic function. */
export type CfnValue = string | { Ref: string } | { 'Fn::GetAtt': [string, string] } | { 'Fn::Sub': string };

/** Logical ids of the resources this stack defines itself (serverless.yml refers to them with !Ref / !GetAtt). */
export const LOGICAL_IDS = {
  alertTopic: 'AlertTopic',
  calibrationTopic: 'CalibrationTopic',
  preflightTopic: 'PreflightTopic',
  alertStateTable: 'AlertStateTable',
  historyTable: 'CalibrationHistoryTable',
  silencesTable: 'AlertSilencesTable',
  reportBucket: 'ReportBucket',
  reportBucketPolicy: 'ReportBucketPolicy',
  /** `alerting.engine: amp` only: the alert topic's own KMS key (AMP cannot use alias/aws/sns), its policy for AMP. */
  alertTopicKey: 'AlertTopicKey',
  alertTopicPolicy: 'AlertTopicPolicy',
  /** `alerting.engine: amp` only: the custom resource the alert-installer answers on deploy, update and removal. */
  ampAlerting: 'AmpAlerting',
  slackDeadLetterQueue: 'SlackNotifierDeadLetterQueue',
  /** serverless-step-functions names the state machine resource by its `id` in serverless.yml. */
  stateMachine: 'CalibrationStateMachine',
  stateMachineRole: 'CalibrationStateMachineRole',
} as const;

/** The serverless.yml keys of the functions written out there (the calibration ones are generated). */
export const MAIN_FUNCTIONS = [
  'metricsCollector',
  'alertEvaluator',
  'slackNotifier',
  'preflight',
  'driftDetector',
] as const;
export type MainFunctionKey = (typeof MAIN_FUNCTIONS)[number];

/** The function that installs the AMP engine's rules and Alertmanager definition (`alerting.engine: amp` only). */
export const ALERT_INSTALLER_FUNCTION = 'alertInstaller';

/**
 * The rule groups namespace a stage owns in the AMP workspace: `<service>-<stage>`, so two stages sharing a workspace
 * never overwrite each other's rules (the Alertmanager definition is one per workspace: see docs/deploy.md).
 */
export function ampRuleNamespaceName(settings: { service: string; stage: string }): string {
  return `${settings.service}-${settings.stage}`;
}

/** The calibration task names, in CALIBRATION_STEPS order (the state machine's order of first use). */
export const CALIBRATION_TASKS = Object.keys(CALIBRATION_STEPS) as CalibrationStepName[];

/**
 * The calibration functions no Task state calls (functions/calibration/<name>.ts): the target of the EventBridge
 * rule on the state machine's ABORTED, TIMED_OUT and FAILED executions, the scheduled lease sweep, and the rollback
 * (invoked directly).
 */
export const CALIBRATION_EXTRA_FUNCTIONS = ['cleanupEndedExecution', 'sweepLeases', 'rollback'] as const;
export type CalibrationExtraFunction = (typeof CALIBRATION_EXTRA_FUNCTIONS)[number];

/** The serverless function key of a calibration function: `calibration` + its name (`calibrationDeploy`). */
export function calibrationFunctionKey(task: CalibrationStepName | CalibrationExtraFunction): string {
  return `calibration${upperFirst(task)}`;
}

/** osls' logical id of a function's AWS::Lambda::Function. */
export function lambdaLogicalId(functionKey: string): string {
  return `${normalized(functionKey)}LambdaFunction`;
}

/** osls' logical id of a function's log group (`/aws/lambda/<function name>`). */
export function logGroupLogicalId(functionKey: string): string {
  return `${normalized(functionKey)}LogGroup`;
}

/** Our logical id of a function's own role. */
export function roleLogicalId(functionKey: string): string {
  return `${normalized(functionKey)}Role`;
}

function normalized(functionKey: string): string {
  return upperFirst(functionKey.replace(/-/g, 'Dash').replace(/_/g, 'Underscore'));
}

function upperFirst(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
