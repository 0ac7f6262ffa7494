import { CloudWatchClient, PutMetricAlarmCommand, type PutMetricAlarmCommandInput } from '@aws-sdk/client-cloudwatch';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { heartbeatAlarmProperties } from '../../shared/alerts/heartbeat/index.js';
import { ALERT_EVALUATOR_DEFAULTS } from '../../functions/alert-evaluator/config.js';
import { TWIN_CREDENTIALS, TWIN_HEARTBEAT_ALARM_PERIOD_SECONDS, TWIN_REGION, TWIN_RESOURCES } from './constants.js';

/**
 * The deployed stack's alarms on the product itself, as far as the twin can run them: the evaluator heartbeat alarm
 * (infra/serverless/alarms.ts defines it for CloudFormation from the same heartbeatAlarmProperties), put into the
 * twin's CloudWatch through the SDK and publishing to the twin's operations topic. Lambda's, Step Functions' and
 * SQS's own metrics do not exist on the twin, so their alarms do not either.
 */

/** The stage the twin's evaluator names in its heartbeat metric (sim/harness/alerts.ts sets STAGE to it). */
export const TWIN_STAGE = 'twin';

/** Defines the heartbeat alarm in the twin's CloudWatch (PutMetricAlarm, as CloudFormation would). */
export async function putTwinHeartbeatAlarm(cloudwatchEndpoint: string, operationsTopicArn: string): Promise<void> {
  const client = new CloudWatchClient({
    region: TWIN_REGION,
    endpoint: cloudwatchEndpoint,
    credentials: TWIN_CREDENTIALS,
    maxAttempts: 1,
  });
  try {
    const input = heartbeatAlarmProperties({
      alarmName: TWIN_RESOURCES.heartbeatAlarm,
      namespace: ALERT_EVALUATOR_DEFAULTS.cloudWatchNamespace,
      stage: TWIN_STAGE,
      topicArns: [operationsTopicArn],
      periodSeconds: TWIN_HEARTBEAT_ALARM_PERIOD_SECONDS,
    }) as unknown as PutMetricAlarmCommandInput;
    await client.send(new PutMetricAlarmCommand(input));
  } finally {
    client.destroy();
  }
}

/** Publishes an alarm message to the twin's SNS, as CloudWatch publishes to an alarm's SNS actions. */
export function twinAlarmPublisher(snsEndpoint: () => string | undefined): {
  publish(topicArn: string, subject: string, message: string): Promise<void>;
  destroy(): void;
} {
  let client: SNSClient | undefined;
  return {
    publish: async (topicArn, subject, message) => {
      const endpoint = snsEndpoint();
      if (endpoint === undefined) throw new Error('the twin has no SNS endpoint yet');
      client ??= new SNSClient({ region: TWIN_REGION, endpoint, credentials: TWIN_CREDENTIALS, maxAttempts: 1 });
      await client.send(new PublishCommand({ TopicArn: topicArn, Subject: subject, Message: message }));
    },
    destroy: () => client?.destroy(),
  };
}
