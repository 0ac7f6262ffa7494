/**
 * Least privilege, written once: what each function may do (a list of capabilities), and what each capability is
 * in IAM (actions on one resource). Every function gets its own role with exactly its capabilities plus writing its
 * own log group; test/stack.test.ts reads the packaged template back and checks it.
 */
import type { CalibrationStepName } from '../../shared/calibration/workflow/index.js';
import { ampRuleNamespaceName, LOGICAL_IDS, type CalibrationExtraFunction, type CfnValue } from './names.js';
import type { StackSettings } from './settings.js';

/** An IAM policy statement as CloudFormation takes it. */
export interface IamStatement {
  Sid: string;
  Effect: 'Allow';
  Action: string[];
  Resource: CfnValue | CfnValue[];
  Condition?: Record<string, Record<string, CfnValue>>;
}

interface Capability {
  /** Why a function holds it, in one line. */
  why: string;
  /** One statement, or several when the actions take different resources. */
  statement: (settings: StackSettings) => IamStatement | readonly IamStatement[];
}

const sub = (text: string): CfnValue => ({ 'Fn::Sub': text });
const arn = (logicalId: string): CfnValue => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });
/** The AMP workspace's ARN (IAM resources, and the aws:SourceArn AMP publishes to the alert topic with). */
export const workspaceArn = (settings: Pick<StackSettings, 'ampRegion' | 'ampWorkspaceId'>): CfnValue =>
  sub(`arn:\${AWS::Partition}:aps:${settings.ampRegion}:\${AWS::AccountId}:workspace/${settings.ampWorkspaceId}`);

// The rule groups namespace actions take the namespace as their resource, the Alertmanager definition ones the
// workspace (Service Authorization Reference, Amazon Managed Service for Prometheus: resource types per action).
const ruleNamespaceArn = (settings: StackSettings) =>
  sub(
    `arn:\${AWS::Partition}:aps:${settings.ampRegion}:\${AWS::AccountId}:rulegroupsnamespace/` +
      `${settings.ampWorkspaceId}/${ampRuleNamespaceName(settings)}`,
  );

/** Every capability a function of this stack may hold. */
export const CAPABILITIES = {
  ampQuery: {
    why: 'PromQL instant and range queries against the AMP workspace',
    statement: (settings) => ({
      Sid: 'QueryAmpWorkspace',
      Effect: 'Allow',
      Action: ['aps:QueryMetrics'],
      Resource: workspaceArn(settings),
    }),
  },
  ampListRules: {
    why: "read the workspace's alerting rule groups (GET api/v1/rules)",
    statement: (settings) => ({
      Sid: 'ListAmpRules',
      Effect: 'Allow',
      Action: ['aps:ListRules'],
      Resource: workspaceArn(settings),
    }),
  },
  ampRuleGroupsInstall: {
    why: "create, read, update and (on removal) delete this stage's own rule groups namespace, nothing else in AMP",
    statement: (settings) => ({
      Sid: 'InstallAmpRuleGroupsNamespace',
      Effect: 'Allow',
      Action: [
        'aps:CreateRuleGroupsNamespace',
        'aps:DescribeRuleGroupsNamespace',
        'aps:PutRuleGroupsNamespace',
        'aps:DeleteRuleGroupsNamespace',
      ],
      Resource: ruleNamespaceArn(settings),
    }),
  },
  ampAlertManagerInstall: {
    why: "create, read, update and (on removal) delete the workspace's Alertmanager definition",
    statement: (settings) => ({
      Sid: 'InstallAmpAlertManagerDefinition',
      Effect: 'Allow',
      Action: [
        'aps:CreateAlertManagerDefinition',
        'aps:DescribeAlertManagerDefinition',
        'aps:PutAlertManagerDefinition',
        'aps:DeleteAlertManagerDefinition',
      ],
      Resource: workspaceArn(settings),
    }),
  },
  ampDescribeRuleGroups: {
    why: "read this stage's rule groups namespace, to compare it with the generated rules (preflight, AMP engine)",
    statement: (settings) => ({
      Sid: 'DescribeAmpRuleGroupsNamespace',
      Effect: 'Allow',
      Action: ['aps:DescribeRuleGroupsNamespace'],
      Resource: ruleNamespaceArn(settings),
    }),
  },
  eksDescribeCluster: {
    why: "the cluster's endpoint and CA for the Kubernetes client (API access itself comes from an EKS access entry)",
    statement: (settings) => ({
      Sid: 'DescribeTargetClusters',
      Effect: 'Allow',
      Action: ['eks:DescribeCluster'],
      Resource: settings.clusters.map((cluster) =>
        sub(`arn:\${AWS::Partition}:eks:\${AWS::Region}:\${AWS::AccountId}:cluster/${cluster}`),
      ),
    }),
  },
  cloudWatchPutMetricData: {
    why: 'publish the collected metrics, only into the configured namespace',
    // PutMetricData has no resource type (AWS Service Authorization Reference, CloudWatch): "*" is the only
    // Resource AWS accepts, so the `cloudwatch:namespace` condition is what narrows it.
    statement: (settings) => ({
      Sid: 'PutMetricsInOwnNamespace',
      Effect: 'Allow',
      Action: ['cloudwatch:PutMetricData'],
      Resource: '*',
      Condition: { StringEquals: { 'cloudwatch:namespace': settings.cloudWatchNamespace } },
    }),
  },
  publishAlerts: {
    why: 'publish alert notifications',
    statement: () => ({
      Sid: 'PublishAlerts',
      Effect: 'Allow',
      Action: ['sns:Publish'],
      Resource: { Ref: LOGICAL_IDS.alertTopic },
    }),
  },
  publishPreflight: {
    why: 'publish the preflight summary when a check fails',
    statement: () => ({
      Sid: 'PublishPreflightSummary',
      Effect: 'Allow',
      Action: ['sns:Publish'],
      Resource: { Ref: LOGICAL_IDS.preflightTopic },
    }),
  },
  alertStateReadWrite: {
    why: "read a target's alert states (Query), claim/commit notifications and record the heartbeat (conditional UpdateItem)",
    statement: () => ({
      Sid: 'ReadWriteAlertState',
      Effect: 'Allow',
      Action: ['dynamodb:Query', 'dynamodb:UpdateItem'],
      Resource: arn(LOGICAL_IDS.alertStateTable),
    }),
  },
  heartbeatRead: {
    why: "read the alert evaluator's heartbeat item (GetItem), the Lambda engine's evidence for check 5",
    statement: () => ({
      Sid: 'ReadEvaluatorHeartbeat',
      Effect: 'Allow',
      Action: ['dynamodb:GetItem'],
      Resource: arn(LOGICAL_IDS.alertStateTable),
    }),
  },
  historyWrite: {
    why: 'write the calibration record (conditional PutItem; GetItem to accept a retried identical write)',
    statement: () => ({
      Sid: 'WriteCalibrationHistory',
      Effect: 'Allow',
      Action: ['dynamodb:PutItem', 'dynamodb:GetItem'],
      Resource: arn(LOGICAL_IDS.historyTable),
    }),
  },
  silencesRead: {
    why: "read a target's alert silences (Query), to mute what they cover",
    statement: () => ({
      Sid: 'ReadAlertSilences',
      Effect: 'Allow',
      Action: ['dynamodb:Query'],
      Resource: arn(LOGICAL_IDS.silencesTable),
    }),
  },
  silencesPut: {
    why: "put the calibration's silence on the target it holds (Deploy)",
    statement: () => ({
      Sid: 'PutCalibrationSilence',
      Effect: 'Allow',
      Action: ['dynamodb:PutItem'],
      Resource: arn(LOGICAL_IDS.silencesTable),
    }),
  },
  silencesDelete: {
    why: "remove the calibration's silence when the target is released (the cleanups)",
    statement: () => ({
      Sid: 'DeleteCalibrationSilence',
      Effect: 'Allow',
      Action: ['dynamodb:DeleteItem'],
      Resource: arn(LOGICAL_IDS.silencesTable),
    }),
  },
  historyRead: {
    why: "find a deployment's latest calibration record (Query)",
    statement: () => ({
      Sid: 'ReadCalibrationHistory',
      Effect: 'Allow',
      Action: ['dynamodb:Query'],
      Resource: arn(LOGICAL_IDS.historyTable),
    }),
  },
  reportWrite: {
    why: 'upload the calibration report and chart under the calibrations/ prefix',
    statement: () => ({
      Sid: 'WriteCalibrationReports',
      Effect: 'Allow',
      Action: ['s3:PutObject'],
      Resource: sub(`\${${LOGICAL_IDS.reportBucket}.Arn}/${REPORT_PREFIX}*`),
    }),
  },
  slackSecretRead: {
    why: 'read the Slack webhook URL',
    statement: (settings) => ({
      Sid: 'ReadSlackWebhookSecret',
      Effect: 'Allow',
      Action: ['secretsmanager:GetSecretValue'],
      Resource: settings.slackWebhookSecretArn,
    }),
  },
  describeCalibrationExecutions: {
    why: "whether the execution holding a target still runs (the lease sweep), only this stage's state machine's",
    statement: (settings) => ({
      Sid: 'DescribeCalibrationExecutions',
      Effect: 'Allow',
      Action: ['states:DescribeExecution'],
      Resource: sub(
        `arn:\${AWS::Partition}:states:\${AWS::Region}:\${AWS::AccountId}:execution:` +
          `${calibrationStateMachineName(settings)}:*`,
      ),
    }),
  },
  startCalibrations: {
    why: "list this stage's calibrations and start one (drift re-calibration in the maintenance window), only on its state machine",
    statement: () => ({
      Sid: 'StartDriftRecalibrations',
      Effect: 'Allow',
      Action: ['states:ListExecutions', 'states:StartExecution'],
      Resource: { Ref: LOGICAL_IDS.stateMachine },
    }),
  },
  vpcNetworkInterfaces: {
    why:
      "Lambda creates, describes and deletes the function's network interfaces in the stage's subnets with the " +
      'function role (only with the vpc.* stage parameters, only for the functions that call the Kubernetes API)',
    // The actions the Lambda developer guide lists ("Giving Lambda functions access to resources in an Amazon VPC",
    // execution role permissions), the ENI actions of the AWS managed policy AWSLambdaVPCAccessExecutionRole, without
    // its logs:* (WriteOwnLogs covers the function's own log group). Version 3 of that policy (2024) also has
    // ec2:DescribeSubnets, which the guide does not require. No resource type narrows DescribeNetworkInterfaces
    // ("only works if it's allowed on all resources"); the others take this account's EC2 resources in this
    // region, the form the guide gives for DeleteNetworkInterface.
    statement: () => [
      {
        Sid: 'ManageLambdaNetworkInterfaces',
        Effect: 'Allow',
        Action: [
          'ec2:CreateNetworkInterface',
          'ec2:DeleteNetworkInterface',
          'ec2:AssignPrivateIpAddresses',
          'ec2:UnassignPrivateIpAddresses',
        ],
        Resource: sub(`arn:\${AWS::Partition}:ec2:\${AWS::Region}:\${AWS::AccountId}:*/*`),
      },
      {
        Sid: 'DescribeLambdaNetworkInterfaces',
        Effect: 'Allow',
        Action: ['ec2:DescribeNetworkInterfaces'],
        Resource: '*',
      },
    ],
  },
  slackDeadLetter: {
    why: 'keep an alert Slack refused (the on-failure destination sends with the function role)',
    statement: () => ({
      Sid: 'SendUndeliveredAlerts',
      Effect: 'Allow',
      Action: ['sqs:SendMessage'],
      Resource: arn(LOGICAL_IDS.slackDeadLetterQueue),
    }),
  },
} as const satisfies Record<string, Capability>;

export type CapabilityName = keyof typeof CAPABILITIES;

/** Where the calibration functions put reports (functions/calibration/deps.ts defaultReportPrefix). */
export const REPORT_PREFIX = 'calibrations/';

/** The five scheduled or subscribed functions. */
export const FUNCTION_CAPABILITIES = {
  metricsCollector: ['ampQuery', 'cloudWatchPutMetricData'],
  // cloudWatchPutMetricData: the heartbeat metric (EvaluatorCycles), in the product's namespace only.
  // historyRead: each target's last calibration, for the alert thresholds it derived.
  alertEvaluator: [
    'ampQuery',
    'publishAlerts',
    'alertStateReadWrite',
    'silencesRead',
    'cloudWatchPutMetricData',
    'historyRead',
  ],
  slackNotifier: ['slackSecretRead', 'slackDeadLetter'],
  // ampDescribeRuleGroups: check 5 compares this stage's rule groups namespace with the generated rules when
  // alerts.engine is amp (its own namespace only; harmless read with the lambda engine).
  preflight: [
    'ampQuery',
    'ampListRules',
    'ampDescribeRuleGroups',
    'eksDescribeCluster',
    'historyRead',
    'publishPreflight',
    'heartbeatRead',
  ],
  // publishPreflight: drift goes to the preflight topic (checklist item 8 gone stale).
  driftDetector: ['ampQuery', 'eksDescribeCluster', 'historyRead', 'publishPreflight', 'startCalibrations'],
} as const satisfies Record<string, readonly CapabilityName[]>;

/** The alert-installer (`alerting.engine: amp` only): the two AMP resources, nothing else. */
export const ALERT_INSTALLER_CAPABILITIES: readonly CapabilityName[] = [
  'ampRuleGroupsInstall',
  'ampAlertManagerInstall',
];

/**
 * The calibration tasks, read from their code (functions/calibration/<name>.ts and the ports in deps.ts):
 * `deps.cluster` needs eks:DescribeCluster, `deps.metricsSource` AMP, `deps.reports` S3, `deps.history` DynamoDB.
 * Keyed by CALIBRATION_STEPS' names, so a new task does not compile until its permissions are written here.
 */
export const CALIBRATION_CAPABILITIES: Record<CalibrationStepName, readonly CapabilityName[]> = {
  validateInput: [],
  deploy: ['eksDescribeCluster', 'ampQuery', 'silencesPut'],
  checkRollout: ['eksDescribeCluster', 'ampQuery'],
  startWarmup: ['eksDescribeCluster'],
  checkJob: ['eksDescribeCluster'],
  readinessGate: ['eksDescribeCluster', 'ampQuery'],
  planNextStep: [],
  startLoadStep: ['eksDescribeCluster'],
  watchLoadStep: ['eksDescribeCluster', 'ampQuery'],
  awaitStepData: ['eksDescribeCluster', 'ampQuery'],
  measureStep: ['eksDescribeCluster', 'ampQuery'],
  analyze: [],
  applyThresholds: ['eksDescribeCluster'],
  dryRun: ['eksDescribeCluster'],
  storeReport: ['eksDescribeCluster', 'reportWrite', 'historyWrite'],
  cleanup: ['eksDescribeCluster', 'silencesDelete'],
  validateTargets: [],
  storeBatchReport: ['reportWrite'],
};

/** The calibration functions no Task state calls (CALIBRATION_EXTRA_FUNCTIONS). */
export const CALIBRATION_EXTRA_CAPABILITIES: Record<CalibrationExtraFunction, readonly CapabilityName[]> = {
  cleanupEndedExecution: ['eksDescribeCluster', 'silencesDelete'],
  sweepLeases: ['eksDescribeCluster', 'describeCalibrationExecutions', 'silencesDelete'],
  rollback: ['eksDescribeCluster', 'historyRead', 'historyWrite'],
};

/** The calibration state machine's name, as serverless.yml sets it: `<service>-<stage>-calibration`. */
export function calibrationStateMachineName(settings: Pick<StackSettings, 'service' | 'stage'>): string {
  return `${settings.service}-${settings.stage}-calibration`;
}

/**
 * The functions that call the Kubernetes API: those that look the cluster up (eks:DescribeCluster gives the client
 * its endpoint). With the vpc.* stage parameters they, and only they, run in the VPC.
 */
export function callsKubernetes(capabilities: readonly CapabilityName[]): boolean {
  return capabilities.includes('eksDescribeCluster');
}

/**
 * A function's capabilities in this stage: its own, plus the network interfaces when it runs in the VPC. The other
 * functions stay outside: they reach AMP, SNS, DynamoDB, CloudWatch, S3, Secrets Manager and SQS over public
 * endpoints and need no ENI; in a VPC they would need a NAT gateway or an endpoint per service for nothing.
 */
export function stageCapabilities(
  settings: Pick<StackSettings, 'vpc'>,
  capabilities: readonly CapabilityName[],
): readonly CapabilityName[] {
  return settings.vpc !== undefined && callsKubernetes(capabilities)
    ? [...capabilities, 'vpcNetworkInterfaces']
    : capabilities;
}

/** A Lambda function's role: assumed by Lambda only, writing its own log group, plus its capabilities. */
export function lambdaRole(
  settings: StackSettings,
  logGroupLogicalId: string,
  capabilities: readonly CapabilityName[],
): Record<string, unknown> {
  const statements: IamStatement[] = [
    {
      Sid: 'WriteOwnLogs',
      Effect: 'Allow',
      Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      // The log group's Arn attribute ends in ":*", which covers its log streams.
      Resource: arn(logGroupLogicalId),
    },
    ...stageCapabilities(settings, capabilities).flatMap((name) => CAPABILITIES[name].statement(settings)),
  ];
  return role({ Service: 'lambda.amazonaws.com' }, statements);
}

/**
 * The state machine's role: invoke exactly the calibration functions, publish to the calibration topic, and (many
 * targets) run its own executions, one per target, with `states:startExecution.sync:2`.
 */
export function stateMachineRole(
  settings: Pick<StackSettings, 'service' | 'stage'>,
  functionLogicalIds: readonly string[],
): Record<string, unknown> {
  // By name, not by Ref: the role is part of the state machine's own definition, and a Ref would be a cycle.
  const name = calibrationStateMachineName(settings);
  const states = `arn:\${AWS::Partition}:states:\${AWS::Region}:\${AWS::AccountId}`;
  // Step Functions documents aws:SourceAccount in its trust policy (confused-deputy prevention); Lambda does not.
  const sameAccount = { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } };
  return role(
    { Service: 'states.amazonaws.com' },
    [
      {
        Sid: 'InvokeCalibrationFunctions',
        Effect: 'Allow',
        Action: ['lambda:InvokeFunction'],
        Resource: functionLogicalIds.map(arn),
      },
      {
        Sid: 'PublishCalibrationOutcome',
        Effect: 'Allow',
        Action: ['sns:Publish'],
        Resource: { Ref: LOGICAL_IDS.calibrationTopic },
      },
      {
        Sid: 'StartOwnExecutionPerTarget',
        Effect: 'Allow',
        Action: ['states:StartExecution'],
        Resource: sub(`${states}:stateMachine:${name}`),
      },
      {
        // .sync follows the child (DescribeExecution) and stops it when the parent is stopped (StopExecution).
        Sid: 'FollowOwnChildExecutions',
        Effect: 'Allow',
        Action: ['states:DescribeExecution', 'states:StopExecution'],
        Resource: sub(`${states}:execution:${name}:*`),
      },
      {
        // The managed rule through which Step Functions learns that a .sync child ended (the service integration guide).
        Sid: 'ManagedRuleForSyncChildren',
        Effect: 'Allow',
        Action: ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'],
        Resource: sub(
          'arn:${AWS::Partition}:events:${AWS::Region}:${AWS::AccountId}:rule/StepFunctionsGetEventsForStepFunctionsExecutionRule',
        ),
      },
    ],
    sameAccount,
  );
}

function role(
  principal: { Service: string },
  statements: IamStatement[],
  condition?: IamStatement['Condition'],
): Record<string, unknown> {
  return {
    Type: 'AWS::IAM::Role',
    Properties: {
      AssumeRolePolicyDocument: {
        Version: '2012-10-17',
        Statement: [
          {
            Effect: 'Allow',
            Principal: principal,
            Action: ['sts:AssumeRole'],
            ...(condition === undefined ? {} : { Condition: condition }),
          },
        ],
      },
      Policies: [{ PolicyName: 'least-privilege', PolicyDocument: { Version: '2012-10-17', Statement: statements } }],
    },
  };
}
