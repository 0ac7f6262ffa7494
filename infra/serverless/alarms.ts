/**
 * The alarms on the control plane itself ("who watches the watcher", issue 16), written once: what each watches and
 * why, all publishing ALARM and OK to one operations topic. stack.ts adds them to the template; test/stack.test.ts
 * reads them back from the packaged template.
 *
 * - every function's `Errors` (AWS/Lambda): a scheduled function that throws has done nothing that run;
 * - the calibration state machine's `ExecutionsFailed` and `ExecutionsTimedOut` (AWS/States);
 * - the Slack dead-letter queue's `ApproximateNumberOfMessagesVisible` (AWS/SQS): alerts Slack refused three times;
 * - the evaluator heartbeat (`EvaluatorCycles`, shared/alerts/heartbeat): no successful evaluation cycle for three
 *   minutes, missing data counting as breaching, so a stopped evaluator alarms too (Lambda engine only: with the
 *   AMP engine the evaluator's schedule is off).
 */
import { heartbeatAlarmProperties } from '../../shared/alerts/heartbeat/index.js';
import {
  CALIBRATION_EXTRA_FUNCTIONS,
  CALIBRATION_TASKS,
  calibrationFunctionKey,
  lambdaLogicalId,
  LOGICAL_IDS,
  MAIN_FUNCTIONS,
  type CfnValue,
} from './names.js';
import type { StackSettings } from './settings.js';

/** Logical ids of the operations topic and its key. */
export const OPERATIONS_IDS = {
  topic: 'OperationsTopic',
  topicKey: 'OperationsTopicKey',
  heartbeatAlarm: 'EvaluatorHeartbeatAlarm',
  stateMachineFailedAlarm: 'CalibrationExecutionsFailedAlarm',
  stateMachineTimedOutAlarm: 'CalibrationExecutionsTimedOutAlarm',
  deadLetterAlarm: 'SlackDeadLetterQueueAlarm',
} as const;

/**
 * The AWS service metrics' shared shape: any occurrence within 5 minutes alarms, once. Lambda and Step Functions send
 * no datapoint for a function or state machine that did not run, which is not a problem (notBreaching). SQS stops
 * sending the metrics of a queue idle for hours while its messages wait: the alarm keeps its state then (ignore), so a
 * dead letter that nobody replays keeps the alarm in ALARM.
 */
export const SERVICE_ALARM = {
  periodSeconds: 300,
  evaluationPeriods: 1,
  threshold: 1,
  comparisonOperator: 'GreaterThanOrEqualToThreshold',
} as const;

/**
 * What the operations topic's key lets CloudWatch do: publishing to an encrypted topic takes a data key and decrypts
 * it (Amazon CloudWatch User Guide, "Amazon SNS topic encryption"; CloudWatch cannot use the AWS managed key aws/sns,
 * whose policy nobody can change, so this topic has its own key).
 */
export const OPERATIONS_TOPIC_PUBLISH_KEY_ACTIONS = ['kms:GenerateDataKey', 'kms:Decrypt'] as const;

export interface OperationsResourcesOptions {
  /** The functions of the stack besides MAIN_FUNCTIONS and the calibration ones (the alert-installer, with AMP). */
  extraFunctionKeys: readonly string[];
  /** The key administration actions the account keeps on a key of this stack (listed, no wildcard). */
  keyAdminActions: readonly string[];
}

/** The name of one of this stage's alarms: `<service>-<stage>-<what>`. */
export function alarmName(settings: Pick<StackSettings, 'service' | 'stage'>, what: string): string {
  return `${settings.service}-${settings.stage}-${what}`;
}

/** Every function key of the stack, as osls names its AWS::Lambda::Function (`<Key>LambdaFunction`). */
export function stackFunctionKeys(extra: readonly string[]): string[] {
  return [
    ...MAIN_FUNCTIONS,
    ...CALIBRATION_TASKS.map(calibrationFunctionKey),
    ...CALIBRATION_EXTRA_FUNCTIONS.map(calibrationFunctionKey),
    ...extra,
  ];
}

/** The operations topic, its key, and the alarms publishing to it (CloudFormation resources, by logical id). */
export function operationsResources(
  settings: StackSettings,
  options: OperationsResourcesOptions,
): Record<string, unknown> {
  const topic: CfnValue = { Ref: OPERATIONS_IDS.topic };
  const actions = { ActionsEnabled: true, AlarmActions: [topic], OKActions: [topic] };
  const serviceAlarm = (
    what: string,
    description: string,
    metric: { namespace: string; name: string; dimension: { Name: string; Value: CfnValue }; statistic: string },
    treatMissingData: 'notBreaching' | 'ignore',
  ) => ({
    Type: 'AWS::CloudWatch::Alarm',
    Properties: {
      AlarmName: alarmName(settings, what),
      AlarmDescription: description,
      ...actions,
      Namespace: metric.namespace,
      MetricName: metric.name,
      Dimensions: [metric.dimension],
      Statistic: metric.statistic,
      Period: SERVICE_ALARM.periodSeconds,
      EvaluationPeriods: SERVICE_ALARM.evaluationPeriods,
      DatapointsToAlarm: SERVICE_ALARM.evaluationPeriods,
      Threshold: SERVICE_ALARM.threshold,
      ComparisonOperator: SERVICE_ALARM.comparisonOperator,
      TreatMissingData: treatMissingData,
    },
  });

  const functionAlarms = Object.fromEntries(
    stackFunctionKeys(options.extraFunctionKeys).map((key) => [
      `${lambdaLogicalId(key).replace(/LambdaFunction$/, '')}ErrorsAlarm`,
      serviceAlarm(
        `${key}-errors`,
        `The ${key} function failed (Lambda Errors >= 1 in 5 minutes): see its log group for the named error.`,
        {
          namespace: 'AWS/Lambda',
          name: 'Errors',
          // Ref of an AWS::Lambda::Function is its name.
          dimension: { Name: 'FunctionName', Value: { Ref: lambdaLogicalId(key) } },
          statistic: 'Sum',
        },
        'notBreaching',
      ),
    ]),
  );
  const stateMachine = { Name: 'StateMachineArn', Value: { Ref: LOGICAL_IDS.stateMachine } };

  return {
    [OPERATIONS_IDS.topicKey]: {
      Type: 'AWS::KMS::Key',
      Properties: {
        Description: `${alarmName(settings, 'operations')}: encrypts the operations topic; CloudWatch alarms may publish`,
        EnableKeyRotation: true,
        KeyPolicy: {
          Version: '2012-10-17',
          Statement: [
            {
              Sid: 'AccountAdministersAndPublishes',
              Effect: 'Allow',
              Principal: { AWS: { 'Fn::Sub': 'arn:${AWS::Partition}:iam::${AWS::AccountId}:root' } },
              Action: [...options.keyAdminActions, ...OPERATIONS_TOPIC_PUBLISH_KEY_ACTIONS],
              // In a key policy, "*" is this key.
              Resource: '*',
            },
            {
              Sid: 'CloudWatchAlarmsPublish',
              Effect: 'Allow',
              Principal: { Service: 'cloudwatch.amazonaws.com' },
              Action: [...OPERATIONS_TOPIC_PUBLISH_KEY_ACTIONS],
              Resource: '*',
            },
          ],
        },
      },
    },
    [OPERATIONS_IDS.topic]: {
      Type: 'AWS::SNS::Topic',
      // No topic policy: the default one lets this account's CloudWatch alarms publish.
      Properties: { TopicName: alarmName(settings, 'operations'), KmsMasterKeyId: { Ref: OPERATIONS_IDS.topicKey } },
    },
    ...functionAlarms,
    [OPERATIONS_IDS.stateMachineFailedAlarm]: serviceAlarm(
      'calibration-executions-failed',
      'A calibration execution FAILED (Step Functions ExecutionsFailed >= 1 in 5 minutes): its history names the ' +
        'state and the error; the calibration topic carries its failure message.',
      { namespace: 'AWS/States', name: 'ExecutionsFailed', dimension: stateMachine, statistic: 'Sum' },
      'notBreaching',
    ),
    [OPERATIONS_IDS.stateMachineTimedOutAlarm]: serviceAlarm(
      'calibration-executions-timed-out',
      'A calibration execution TIMED_OUT (Step Functions ExecutionsTimedOut >= 1 in 5 minutes): the ended-execution ' +
        'rule released its target; see the execution history for the state it was in.',
      { namespace: 'AWS/States', name: 'ExecutionsTimedOut', dimension: stateMachine, statistic: 'Sum' },
      'notBreaching',
    ),
    [OPERATIONS_IDS.deadLetterAlarm]: serviceAlarm(
      'slack-dead-letters',
      'Alerts wait in the Slack dead-letter queue (ApproximateNumberOfMessagesVisible >= 1): Slack refused them ' +
        'three times. Fix the webhook (docs/alerts.md, "Slack"), then replay them from the queue.',
      {
        namespace: 'AWS/SQS',
        name: 'ApproximateNumberOfMessagesVisible',
        dimension: { Name: 'QueueName', Value: { 'Fn::GetAtt': [LOGICAL_IDS.slackDeadLetterQueue, 'QueueName'] } },
        statistic: 'Maximum',
      },
      'ignore',
    ),
    ...(settings.alertingEngine === 'lambda'
      ? {
          [OPERATIONS_IDS.heartbeatAlarm]: {
            Type: 'AWS::CloudWatch::Alarm',
            Properties: heartbeatAlarmProperties<CfnValue>({
              alarmName: alarmName(settings, 'evaluator-heartbeat'),
              namespace: settings.cloudWatchNamespace,
              stage: settings.stage,
              topicArns: [topic],
            }),
          },
        }
      : {}),
  };
}

/** The stack outputs of the operations topic. */
export function operationsOutputs(): Record<string, unknown> {
  return {
    OperationsTopicArn: {
      Description:
        'CloudWatch alarms on the control plane (function errors, calibration failures, dead letters, heartbeat)',
      Value: { Ref: OPERATIONS_IDS.topic },
    },
  };
}
