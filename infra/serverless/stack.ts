/**
 * The generated part of serverless.yml: the calibration functions (one per CALIBRATION_STEPS entry), one IAM
 * role per function, the tables (from their one definition in shared/), topics, bucket and queue, and the state
 * machine's DefinitionSubstitutions. serverless.yml loads it through osls/stack.js; test/stack.test.ts checks the result.
 */
import { CALIBRATION_STEPS, ENDED_WITHOUT_CLEANUP } from '../../shared/calibration/workflow/index.js';
import { ALERT_SILENCES_TABLE, SILENCE_KEY } from '../../shared/alerts/silences/index.js';
import { ALERT_STATE_KEY, ALERT_STATE_TABLE } from '../../shared/alerts/state/index.js';
import { CALIBRATION_HISTORY_TABLE } from '../../shared/calibration/history/index.js';
import {
  CALIBRATION_EXTRA_FUNCTIONS,
  CALIBRATION_TASKS,
  calibrationFunctionKey,
  lambdaLogicalId,
  LOGICAL_IDS,
  logGroupLogicalId,
  MAIN_FUNCTIONS,
  roleLogicalId,
  type CfnValue,
} from './names.js';
import {
  CALIBRATION_CAPABILITIES,
  CALIBRATION_EXTRA_CAPABILITIES,
  FUNCTION_CAPABILITIES,
  lambdaRole,
  stateMachineRole,
  type CapabilityName,
} from './permissions.js';
import { parseStackSettings, type StackSettings } from './settings.js';

/** The calibration functions' Lambda settings: each task is short (the ASL bounds every Task at 300 s). */
export const CALIBRATION_FUNCTION_DEFAULTS = { timeout: 120, memorySize: 512 } as const;

/** What serverless.yml takes from the builder, each piece under the name osls/stack.js exports it as. */
export interface BuiltStack {
  settings: StackSettings;
  /** `functions:` entries of the calibration tasks. */
  calibrationFunctions: Record<string, Record<string, unknown>>;
  /** `resources:` (Resources and Outputs) the stack defines itself. */
  resources: { Resources: Record<string, unknown>; Outputs: Record<string, unknown> };
  /** CloudFormation substitutes these into the ASL file's `${...}` placeholders (DefinitionSubstitutions). */
  definitionSubstitutions: Record<string, CfnValue>;
  /** The slack-notifier's `sns` event: the alert topic, with the filter policy if one is set. */
  slackSubscription: Record<string, unknown>;
  /** TARGETS of each main function. */
  targets: StackSettings['targets'];
  /** PREFLIGHT_SETTINGS: the JSON, or "" for the checks' defaults (the function reads "" as unset). */
  preflightSettings: string;
  stateMachineRoleArn: CfnValue;
}

/** Builds the generated part of the stack from the `custom.stack` block of serverless.yml. */
export function buildStack(input: unknown): BuiltStack {
  const settings = parseStackSettings(input);
  const calibrationKeys = CALIBRATION_TASKS.map(calibrationFunctionKey);
  return {
    settings,
    calibrationFunctions: calibrationFunctions(),
    resources: { Resources: resources(settings), Outputs: outputs() },
    definitionSubstitutions: {
      ...Object.fromEntries(
        CALIBRATION_TASKS.map((task) => [
          CALIBRATION_STEPS[task].placeholder,
          { 'Fn::GetAtt': [lambdaLogicalId(calibrationFunctionKey(task)), 'Arn'] },
        ]),
      ),
      CalibrationTopicArn: { Ref: LOGICAL_IDS.calibrationTopic },
    },
    slackSubscription: {
      arn: { Ref: LOGICAL_IDS.alertTopic },
      topicName: topicName(settings, 'alerts'),
      ...(settings.slackFilterPolicy === undefined
        ? {}
        : { filterPolicy: settings.slackFilterPolicy, filterPolicyScope: 'MessageAttributes' }),
    },
    targets: settings.targets,
    preflightSettings: settings.preflightSettings ?? '',
    stateMachineRoleArn: { 'Fn::GetAtt': [LOGICAL_IDS.stateMachineRole, 'Arn'] },
  };

  function outputs(): Record<string, unknown> {
    const clusterRoles = (keys: readonly string[]) => ({
      'Fn::Join': [',', keys.map((key) => ({ 'Fn::GetAtt': [roleLogicalId(key), 'Arn'] }))],
    });
    const eksCalibrationKeys = [
      ...CALIBRATION_TASKS.filter((task) => CALIBRATION_CAPABILITIES[task].includes('eksDescribeCluster')),
      ...CALIBRATION_EXTRA_FUNCTIONS,
    ].map(calibrationFunctionKey);
    return {
      AlertTopicArn: { Description: 'Alert notifications (subscribe with a filter policy)', Value: ref('alertTopic') },
      CalibrationTopicArn: { Description: 'Calibration outcomes', Value: ref('calibrationTopic') },
      PreflightTopicArn: { Description: 'Preflight summaries when a check fails', Value: ref('preflightTopic') },
      CalibrationStateMachineArn: {
        Description: 'vllm-pilot calibrate --aws --state-machine-arn',
        Value: ref('stateMachine'),
      },
      ReportBucketName: { Description: 'Calibration reports (calibrations/...)', Value: ref('reportBucket') },
      AlertStateTableName: { Value: ref('alertStateTable') },
      CalibrationHistoryTableName: { Value: ref('historyTable') },
      AlertSilencesTableName: { Description: 'vllm-pilot alerts silence --aws --table', Value: ref('silencesTable') },
      SlackDeadLetterQueueUrl: { Description: 'Alerts Slack refused', Value: ref('slackDeadLetterQueue') },
      PreflightRoleArn: {
        Description: 'EKS access entry: read-only Kubernetes access for the preflight checks',
        Value: { 'Fn::GetAtt': [roleLogicalId('preflight'), 'Arn'] },
      },
      CalibrationClusterRoleArns: {
        Description: 'EKS access entries: the calibration functions that call the Kubernetes API (comma-separated)',
        Value: clusterRoles(eksCalibrationKeys),
      },
    };
  }

  function ref(key: keyof typeof LOGICAL_IDS): CfnValue {
    return { Ref: LOGICAL_IDS[key] };
  }

  function resources(settings: StackSettings): Record<string, unknown> {
    const roles: Record<string, unknown> = {};
    const addRole = (key: string, capabilities: readonly CapabilityName[]) => {
      roles[roleLogicalId(key)] = lambdaRole(settings, logGroupLogicalId(key), capabilities);
    };
    for (const key of MAIN_FUNCTIONS) addRole(key, FUNCTION_CAPABILITIES[key]);
    for (const task of CALIBRATION_TASKS) addRole(calibrationFunctionKey(task), CALIBRATION_CAPABILITIES[task]);
    for (const name of CALIBRATION_EXTRA_FUNCTIONS)
      addRole(calibrationFunctionKey(name), CALIBRATION_EXTRA_CAPABILITIES[name]);
    roles[LOGICAL_IDS.stateMachineRole] = stateMachineRole(calibrationKeys.map(lambdaLogicalId));

    const topic = (name: string) => ({
      Type: 'AWS::SNS::Topic',
      // The AWS managed key: encrypted at rest, and publishers in the account need no KMS permission of their own.
      Properties: { TopicName: topicName(settings, name), KmsMasterKeyId: 'alias/aws/sns' },
    });
    const pointInTimeRecovery = { PointInTimeRecoveryEnabled: true };

    return {
      ...roles,
      [LOGICAL_IDS.alertTopic]: topic('alerts'),
      [LOGICAL_IDS.calibrationTopic]: topic('calibration'),
      [LOGICAL_IDS.preflightTopic]: topic('preflight'),
      [LOGICAL_IDS.alertStateTable]: {
        Type: 'AWS::DynamoDB::Table',
        Properties: {
          ...ALERT_STATE_TABLE,
          PointInTimeRecoverySpecification: pointInTimeRecovery,
          TimeToLiveSpecification: { AttributeName: ALERT_STATE_KEY.ttl, Enabled: true },
        },
      },
      [LOGICAL_IDS.historyTable]: {
        Type: 'AWS::DynamoDB::Table',
        // The record of every calibration: kept when the stack is removed.
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
        Properties: { ...CALIBRATION_HISTORY_TABLE, PointInTimeRecoverySpecification: pointInTimeRecovery },
      },
      [LOGICAL_IDS.silencesTable]: {
        Type: 'AWS::DynamoDB::Table',
        Properties: {
          ...ALERT_SILENCES_TABLE,
          PointInTimeRecoverySpecification: pointInTimeRecovery,
          TimeToLiveSpecification: { AttributeName: SILENCE_KEY.ttl, Enabled: true },
        },
      },
      [LOGICAL_IDS.reportBucket]: {
        Type: 'AWS::S3::Bucket',
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
        Properties: {
          // SSE-S3, as S3ReportStore asks for on every PutObject (ServerSideEncryption: AES256).
          BucketEncryption: {
            ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
          },
          PublicAccessBlockConfiguration: {
            BlockPublicAcls: true,
            BlockPublicPolicy: true,
            IgnorePublicAcls: true,
            RestrictPublicBuckets: true,
          },
          OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
          VersioningConfiguration: { Status: 'Enabled' },
        },
      },
      [LOGICAL_IDS.reportBucketPolicy]: {
        Type: 'AWS::S3::BucketPolicy',
        Properties: {
          Bucket: { Ref: LOGICAL_IDS.reportBucket },
          PolicyDocument: {
            Version: '2012-10-17',
            Statement: [
              {
                // A Deny narrows access: every request over plain HTTP is refused, whoever sends it.
                Sid: 'DenyInsecureTransport',
                Effect: 'Deny',
                Principal: '*',
                Action: 's3:*',
                Resource: [
                  { 'Fn::GetAtt': [LOGICAL_IDS.reportBucket, 'Arn'] },
                  { 'Fn::Sub': `\${${LOGICAL_IDS.reportBucket}.Arn}/*` },
                ],
                Condition: { Bool: { 'aws:SecureTransport': 'false' } },
              },
            ],
          },
        },
      },
      [LOGICAL_IDS.slackDeadLetterQueue]: {
        Type: 'AWS::SQS::Queue',
        Properties: {
          SqsManagedSseEnabled: true,
          // The longest SQS allows (14 days): time to fix the webhook and replay.
          MessageRetentionPeriod: 1_209_600,
        },
      },
    };
  }

  function calibrationFunctions(): Record<string, Record<string, unknown>> {
    const environment = {
      REPORT_BUCKET: { Ref: LOGICAL_IDS.reportBucket },
      HISTORY_TABLE: { Ref: LOGICAL_IDS.historyTable },
    };
    const tasks = CALIBRATION_TASKS.map((task): [string, Record<string, unknown>] => {
      const key = calibrationFunctionKey(task);
      return [
        key,
        {
          handler: `functions/calibration/${task}.handler`,
          description: `vLLM calibration task ${task} (state machine ${LOGICAL_IDS.stateMachine})`,
          role: roleLogicalId(key),
          ...CALIBRATION_FUNCTION_DEFAULTS,
          environment: CALIBRATION_CAPABILITIES[task].some((c) => c === 'silencesPut' || c === 'silencesDelete')
            ? { ...environment, ALERT_SILENCES_TABLE: { Ref: LOGICAL_IDS.silencesTable } }
            : environment,
        },
      ];
    });
    const withSilences = { ...environment, ALERT_SILENCES_TABLE: { Ref: LOGICAL_IDS.silencesTable } };
    // Step Functions runs no Catch for a stopped or timed-out execution: this rule runs the same cleanup for it.
    const cleanupEndedExecution = {
      handler: 'functions/calibration/cleanupEndedExecution.handler',
      description: 'Releases the target of a calibration execution that ended ABORTED, TIMED_OUT or FAILED',
      role: roleLogicalId(calibrationFunctionKey('cleanupEndedExecution')),
      ...CALIBRATION_FUNCTION_DEFAULTS,
      environment: withSilences,
      events: [
        {
          eventBridge: {
            pattern: {
              source: ['aws.states'],
              'detail-type': ['Step Functions Execution Status Change'],
              detail: {
                status: [...ENDED_WITHOUT_CLEANUP],
                stateMachineArn: [{ Ref: LOGICAL_IDS.stateMachine }],
              },
            },
          },
        },
      ],
    };
    // The backstop when no event could run the cleanup: every target, every LEASE_SWEEP_SCHEDULE.
    const sweepLeases = {
      handler: 'functions/calibration/sweepLeases.handler',
      description: 'Releases calibration targets whose execution ended without its cleanup, or whose lease expired',
      role: roleLogicalId(calibrationFunctionKey('sweepLeases')),
      ...CALIBRATION_FUNCTION_DEFAULTS,
      environment: { ...withSilences, TARGETS: settings.targets.metricsCollector },
      events: [{ schedule: LEASE_SWEEP_SCHEDULE }],
    };
    // Restores a target's thresholds from its history; invoked directly (docs/calibration.md, "Rolling back").
    const rollback = {
      handler: 'functions/calibration/rollback.handler',
      description: "Restores a target's ScaledObject thresholds from its calibration history",
      role: roleLogicalId(calibrationFunctionKey('rollback')),
      ...CALIBRATION_FUNCTION_DEFAULTS,
      environment,
    };
    return Object.fromEntries<Record<string, unknown>>([
      ...tasks,
      [calibrationFunctionKey('cleanupEndedExecution'), cleanupEndedExecution],
      [calibrationFunctionKey('sweepLeases'), sweepLeases],
      [calibrationFunctionKey('rollback'), rollback],
    ]);
  }
}

/** How often the lease sweep runs: a target held by a dead execution regains KEDA within this much. */
export const LEASE_SWEEP_SCHEDULE = 'rate(10 minutes)';

/** An SNS topic's name: `<service>-<stage>-<what>`, so two stages in one account never share a topic. */
export function topicName(settings: Pick<StackSettings, 'service' | 'stage'>, what: string): string {
  return `${settings.service}-${settings.stage}-${what}`;
}
