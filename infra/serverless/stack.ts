/**
 * The generated part of serverless.yml: the calibration functions (one per CALIBRATION_STEPS entry), one IAM
 * role per function, the tables (from their one definition in shared/), topics, bucket and queue, and the state
 * machine's DefinitionSubstitutions. serverless.yml loads it through osls/stack.js; test/stack.test.ts checks the result.
 */
import { CALIBRATION_STEPS, ENDED_WITHOUT_CLEANUP } from '../../shared/calibration/workflow/index.js';
import { ALERT_SILENCES_TABLE, SILENCE_KEY } from '../../shared/alerts/silences/index.js';
import { ALERT_STATE_KEY, ALERT_STATE_TABLE } from '../../shared/alerts/state/index.js';
import { CALIBRATION_HISTORY_TABLE } from '../../shared/calibration/history/index.js';
import { ampDataDigest, desiredAmpAlerting } from '../../shared/alerts/amp/index.js';
import { AlertExportInvalidError } from '../../shared/alerts/index.js';
import { parseAlertTargets } from '../../shared/alerts/rules/index.js';
import { RBAC_GROUPS } from '../../shared/kube/manifests/index.js';
import {
  ALERT_INSTALLER_FUNCTION,
  ampRuleNamespaceName,
  CALIBRATION_EXTRA_FUNCTIONS,
  CALIBRATION_TASKS,
  calibrationFunctionKey,
  lambdaLogicalId,
  LOGICAL_IDS,
  logGroupLogicalId,
  MAIN_FUNCTIONS,
  type MainFunctionKey,
  roleLogicalId,
  type CfnValue,
} from './names.js';
import {
  ALERT_INSTALLER_CAPABILITIES,
  CALIBRATION_CAPABILITIES,
  CALIBRATION_EXTRA_CAPABILITIES,
  callsKubernetes,
  FUNCTION_CAPABILITIES,
  lambdaRole,
  stateMachineRole,
  workspaceArn,
  type CapabilityName,
} from './permissions.js';
import { operationsOutputs, operationsResources } from './alarms.js';
import { StackSettingsInvalidError } from './errors.js';
import { parseStackSettings, type StackSettings } from './settings.js';

/** The calibration functions' Lambda settings: each task is short (the ASL bounds every Task at 300 s). */
export const CALIBRATION_FUNCTION_DEFAULTS = { timeout: 120, memorySize: 512 } as const;

/** What serverless.yml takes from the builder, each piece under the name osls/stack.js exports it as. */
export interface BuiltStack {
  settings: StackSettings;
  /** `functions:` entries of the calibration tasks. */
  calibrationFunctions: Record<string, Record<string, unknown>>;
  /** `functions:` entries of the alerting engine: the alert-installer with `alerting.engine: amp`, else none. */
  alertingFunctions: Record<string, Record<string, unknown>>;
  /** Whether the alert-evaluator's schedule runs: only with `alerting.engine: lambda` (AMP evaluates otherwise). */
  alertEvaluatorScheduleEnabled: boolean;
  /** The collector's schedule rate, whether it runs (`collector.schedule: off`: not), and its COLLECTOR_METRICS. */
  collector: StackSettings['collector'];
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
  /**
   * The `vpc` of each function written out in serverless.yml: the stage's subnets and security groups for a function
   * that calls the Kubernetes API when the vpc.* parameters are set, else `false` (osls then writes no VpcConfig).
   */
  vpc: Record<MainFunctionKey, FunctionVpc | false>;
}

/** A function's `vpc` as osls takes it (its VpcConfig). */
export interface FunctionVpc {
  subnetIds: string[];
  securityGroupIds: string[];
}

/**
 * Where a function runs: in the stage's VPC when it calls the Kubernetes API (a private endpoint is reachable only
 * from there) and the vpc.* parameters are set; outside any VPC otherwise (permissions.ts stageCapabilities says why).
 */
export function functionVpc(
  settings: Pick<StackSettings, 'vpc'>,
  capabilities: readonly CapabilityName[],
): FunctionVpc | undefined {
  if (settings.vpc === undefined || !callsKubernetes(capabilities)) return undefined;
  return { subnetIds: [...settings.vpc.subnetIds], securityGroupIds: [...settings.vpc.securityGroupIds] };
}

/** Builds the generated part of the stack from the `custom.stack` block of serverless.yml. */
export function buildStack(input: unknown): BuiltStack {
  const settings = parseStackSettings(input);
  const calibrationKeys = CALIBRATION_TASKS.map(calibrationFunctionKey);
  const amp = settings.alertingEngine === 'amp' ? ampDigests(settings) : undefined;
  return {
    settings,
    calibrationFunctions: calibrationFunctions(),
    alertingFunctions: amp === undefined ? {} : { [ALERT_INSTALLER_FUNCTION]: alertInstallerFunction() },
    alertEvaluatorScheduleEnabled: settings.alertingEngine === 'lambda',
    collector: settings.collector,
    resources: {
      Resources: {
        ...resources(settings),
        // The alarms on the control plane itself and their operations topic (alarms.ts).
        ...operationsResources(settings, {
          extraFunctionKeys: amp === undefined ? [] : [ALERT_INSTALLER_FUNCTION],
          keyAdminActions: ALERT_TOPIC_KEY_ADMIN_ACTIONS,
        }),
      },
      Outputs: { ...outputs(), ...operationsOutputs() },
    },
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
    vpc: Object.fromEntries(
      MAIN_FUNCTIONS.map((key) => [key, functionVpc(settings, FUNCTION_CAPABILITIES[key]) ?? false]),
    ) as BuiltStack['vpc'],
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
      // Each role's EKS access entry maps it to its own Kubernetes group (infra/kubernetes/control-plane-rbac.yaml).
      PreflightRoleArn: {
        Description: `EKS access entry, Kubernetes group ${RBAC_GROUPS.read}: read-only, for the preflight checks`,
        Value: { 'Fn::GetAtt': [roleLogicalId('preflight'), 'Arn'] },
      },
      DriftDetectorRoleArn: {
        Description: `EKS access entry, Kubernetes group ${RBAC_GROUPS.read}: read-only, for drift detection`,
        Value: { 'Fn::GetAtt': [roleLogicalId('driftDetector'), 'Arn'] },
      },
      CalibrationClusterRoleArns: {
        Description:
          `EKS access entries, Kubernetes group ${RBAC_GROUPS.calibration}: writes in the targets' namespaces only; ` +
          'the calibration functions that call the Kubernetes API (comma-separated)',
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
    if (amp !== undefined) addRole(ALERT_INSTALLER_FUNCTION, ALERT_INSTALLER_CAPABILITIES);
    roles[LOGICAL_IDS.stateMachineRole] = stateMachineRole(settings, calibrationKeys.map(lambdaLogicalId));

    const topic = (name: string) => ({
      Type: 'AWS::SNS::Topic',
      // The AWS managed key: encrypted at rest, and publishers in the account need no KMS permission of their own.
      Properties: { TopicName: topicName(settings, name), KmsMasterKeyId: 'alias/aws/sns' },
    });
    const pointInTimeRecovery = { PointInTimeRecoveryEnabled: true };

    return {
      ...roles,
      [LOGICAL_IDS.alertTopic]:
        amp === undefined
          ? topic('alerts')
          : {
              Type: 'AWS::SNS::Topic',
              // AMP cannot use the AWS managed key: the AMP engine's topic has its own (alertTopicKey).
              Properties: { TopicName: topicName(settings, 'alerts'), KmsMasterKeyId: ref('alertTopicKey') },
            },
      ...(amp === undefined ? {} : ampAlertingResources(settings, amp)),
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

  /**
   * The alert-installer: on deploy and update (the AmpAlerting custom resource) and every ALERT_INSTALL_SCHEDULE, it
   * makes the workspace hold this stage's rule groups namespace and the Alertmanager definition.
   */
  function alertInstallerFunction(): Record<string, unknown> {
    return {
      handler: 'functions/alert-installer/handler.handler',
      description: "Installs the alert rules and the Alertmanager definition in AMP's ruler, and repairs drift hourly",
      role: roleLogicalId(ALERT_INSTALLER_FUNCTION),
      // Waits for ACTIVE up to AMP_WAIT_TIMEOUT_SECONDS, and keeps time to answer CloudFormation after it.
      timeout: ALERT_INSTALLER_TIMEOUT_SECONDS,
      events: [{ schedule: ALERT_INSTALL_SCHEDULE }],
      environment: {
        TARGETS: settings.targets.alertEvaluator,
        AMP_WORKSPACE_ID: settings.ampWorkspaceId,
        AMP_REGION: settings.ampRegion,
        AMP_RULE_NAMESPACE: ampRuleNamespaceName(settings),
        ALERT_TOPIC_ARN: ref('alertTopic'),
        AMP_WAIT_TIMEOUT_SECONDS: String(ALERT_INSTALLER_TIMEOUT_SECONDS - 60),
      },
    };
  }

  /** `vpc` for a function with these capabilities, or nothing (no key at all: osls writes no VpcConfig). */
  function inVpc(capabilities: readonly CapabilityName[]): { vpc?: FunctionVpc } {
    const vpc = functionVpc(settings, capabilities);
    return vpc === undefined ? {} : { vpc };
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
          ...inVpc(CALIBRATION_CAPABILITIES[task]),
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
      ...inVpc(CALIBRATION_EXTRA_CAPABILITIES.cleanupEndedExecution),
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
      ...inVpc(CALIBRATION_EXTRA_CAPABILITIES.sweepLeases),
      environment: { ...withSilences, TARGETS: settings.targets.metricsCollector },
      events: [{ schedule: LEASE_SWEEP_SCHEDULE }],
    };
    // Restores a target's thresholds from its history; invoked directly (docs/calibration.md, "Rolling back").
    const rollback = {
      handler: 'functions/calibration/rollback.handler',
      description: "Restores a target's ScaledObject thresholds from its calibration history",
      role: roleLogicalId(calibrationFunctionKey('rollback')),
      ...CALIBRATION_FUNCTION_DEFAULTS,
      ...inVpc(CALIBRATION_EXTRA_CAPABILITIES.rollback),
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

/** How often the alert-installer repairs drift in AMP (someone edited or deleted the rules or the definition). */
export const ALERT_INSTALL_SCHEDULE = 'rate(1 hour)';

/** The alert-installer's Lambda timeout: AMP usually activates in seconds; this leaves minutes for a slow day. */
export const ALERT_INSTALLER_TIMEOUT_SECONDS = 300;

/**
 * What the key's account may do with it: administration, listed action by action (no wildcard), so that the key
 * stays manageable through IAM (CloudFormation updating or deleting it), plus the publishing calls an operator's
 * own IAM grant may allow (a test message). KMS key policy actions: AWS KMS Developer Guide, "Key policies".
 */
export const ALERT_TOPIC_KEY_ADMIN_ACTIONS = [
  'kms:CancelKeyDeletion',
  'kms:CreateAlias',
  'kms:CreateGrant',
  'kms:DeleteAlias',
  'kms:DescribeKey',
  'kms:DisableKey',
  'kms:DisableKeyRotation',
  'kms:EnableKey',
  'kms:EnableKeyRotation',
  'kms:GetKeyPolicy',
  'kms:GetKeyRotationStatus',
  'kms:ListGrants',
  'kms:ListKeyPolicies',
  'kms:ListKeyRotations',
  'kms:ListResourceTags',
  'kms:PutKeyPolicy',
  'kms:RetireGrant',
  'kms:RevokeGrant',
  'kms:RotateKeyOnDemand',
  'kms:ScheduleKeyDeletion',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:UpdateAlias',
  'kms:UpdateKeyDescription',
] as const;

/**
 * What publishing to an SSE topic takes from its key (SNS developer guide, "Key management"; AMP user guide, "Giving
 * Amazon Managed Service for Prometheus permission to send alert messages to your Amazon SNS topic").
 */
export const ALERT_TOPIC_PUBLISH_KEY_ACTIONS = ['kms:GenerateDataKey*', 'kms:Decrypt'] as const;

/** The digests of the desired AMP data: in the custom resource's properties, a rule change is a stack update. */
interface AmpDigests {
  ruleGroups: string;
  alertManagerDefinition: string;
}

/**
 * Builds the AMP data at package time, as the installer will: a rule AMP would refuse (a name too long, a repeat
 * interval AMP cannot take) fails `osls package` naming it, and the digests trigger the custom resource on change.
 */
function ampDigests(settings: StackSettings): AmpDigests {
  try {
    const desired = desiredAmpAlerting({
      targets: parseAlertTargets(settings.targets.alertEvaluator),
      namespace: ampRuleNamespaceName(settings),
      // The real ARN is a property of its own (TopicArn); a stand-in of the same shape gives the same digest inputs.
      topicArn: `arn:aws:sns:${settings.ampRegion}:000000000000:${topicName(settings, 'alerts')}`,
      topicRegion: settings.ampRegion,
    });
    return {
      ruleGroups: ampDataDigest(desired.ruleGroupsNamespace.data),
      alertManagerDefinition: ampDataDigest(desired.alertManagerDefinition.data),
    };
  } catch (error) {
    if (!(error instanceof AlertExportInvalidError)) throw error;
    throw new StackSettingsInvalidError([{ path: 'targets', message: `alerting.engine amp: ${error.message}` }], {
      cause: error,
    });
  }
}

/**
 * The AMP engine's resources: the alert topic's KMS key (AMP may use it, and the evaluator, which can still be
 * invoked by hand), the topic policy letting this workspace publish, and the custom resource the installer answers.
 * Both AMP grants are confined to this account and workspace (aws:SourceAccount, aws:SourceArn: confused-deputy
 * prevention, as the AMP user guide shows).
 */
function ampAlertingResources(settings: StackSettings, digests: AmpDigests): Record<string, unknown> {
  const fromThisWorkspace = {
    StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
    ArnEquals: { 'aws:SourceArn': workspaceArn(settings) },
  };
  const ampPrincipal = { Service: 'aps.amazonaws.com' };
  return {
    [LOGICAL_IDS.alertTopicKey]: {
      Type: 'AWS::KMS::Key',
      Properties: {
        Description: `${topicName(settings, 'alerts')}: encrypts the alert topic; AMP's Alertmanager may publish`,
        EnableKeyRotation: true,
        KeyPolicy: {
          Version: '2012-10-17',
          Statement: [
            {
              Sid: 'AccountAdministersAndDelegates',
              Effect: 'Allow',
              Principal: { AWS: { 'Fn::Sub': 'arn:${AWS::Partition}:iam::${AWS::AccountId}:root' } },
              Action: [...ALERT_TOPIC_KEY_ADMIN_ACTIONS, ...ALERT_TOPIC_PUBLISH_KEY_ACTIONS],
              // In a key policy, "*" is this key.
              Resource: '*',
            },
            {
              Sid: 'AlertEvaluatorPublishes',
              Effect: 'Allow',
              Principal: { AWS: { 'Fn::GetAtt': [roleLogicalId('alertEvaluator'), 'Arn'] } },
              Action: [...ALERT_TOPIC_PUBLISH_KEY_ACTIONS],
              Resource: '*',
            },
            {
              Sid: 'AmpAlertmanagerPublishes',
              Effect: 'Allow',
              Principal: ampPrincipal,
              Action: [...ALERT_TOPIC_PUBLISH_KEY_ACTIONS],
              Resource: '*',
              Condition: fromThisWorkspace,
            },
          ],
        },
      },
    },
    [LOGICAL_IDS.alertTopicPolicy]: {
      Type: 'AWS::SNS::TopicPolicy',
      Properties: {
        Topics: [{ Ref: LOGICAL_IDS.alertTopic }],
        PolicyDocument: {
          Version: '2012-10-17',
          Statement: [
            {
              Sid: 'AmpAlertmanagerPublishes',
              Effect: 'Allow',
              Principal: ampPrincipal,
              Action: ['sns:Publish', 'sns:GetTopicAttributes'],
              Resource: { Ref: LOGICAL_IDS.alertTopic },
              Condition: fromThisWorkspace,
            },
          ],
        },
      },
    },
    [LOGICAL_IDS.ampAlerting]: {
      Type: 'Custom::AmpAlerting',
      // AMP may publish before the first alert fires.
      DependsOn: [LOGICAL_IDS.alertTopicPolicy],
      Properties: {
        ServiceToken: { 'Fn::GetAtt': [lambdaLogicalId(ALERT_INSTALLER_FUNCTION), 'Arn'] },
        // A Lambda that never answers fails the stack after this, not after CloudFormation's hour.
        ServiceTimeout: ALERT_INSTALLER_TIMEOUT_SECONDS + 60,
        WorkspaceId: settings.ampWorkspaceId,
        RuleGroupsNamespace: ampRuleNamespaceName(settings),
        TopicArn: { Ref: LOGICAL_IDS.alertTopic },
        RuleGroupsSha256: digests.ruleGroups,
        AlertManagerDefinitionSha256: digests.alertManagerDefinition,
      },
    },
  };
}
