import { createHash } from 'node:crypto';
import type { SNSEvent, SNSMessageAttributes } from 'aws-lambda';
import type { RecordedMessage, SnsTwin, SnsUnsubscribe, SubscribeOptions } from './sns.js';

/**
 * What a Lambda function subscribed to an SNS topic receives, built from a message the twin recorded, so that the
 * product's real handlers (the Slack notifier) can be subscribed to the twin's topic. The shape follows the Lambda
 * developer guide ("Using AWS Lambda with Amazon SNS", example event): one record per invocation, EventSource
 * `aws:sns`, EventVersion `1.0`, Sns.Type `Notification`, `Subject` null when the message had none, and every
 * message attribute as `{ Type, Value }` (Binary values base64).
 *
 * The signature cannot be a real one (it is made with SNS's private key); it is a base64 digest of the string SNS
 * signs, so it has the right shape and changes with the message. Nothing in the product verifies it: Lambda
 * invocations from SNS are authorised by the function's resource policy, not by the signature.
 */

/** SNS's signature version 1 (SHA1withRSA), which the Lambda event carries. */
const SIGNATURE_VERSION = '1';

/** The `Sns` object of a record, with `Subject` as Lambda sends it (null when the message had none). */
interface LambdaSnsMessage {
  SignatureVersion: string;
  Timestamp: string;
  Signature: string;
  SigningCertUrl: string;
  MessageId: string;
  Message: string;
  MessageAttributes: SNSMessageAttributes;
  Type: string;
  UnsubscribeUrl: string;
  TopicArn: string;
  Subject: string | null;
}

/** The SNS event Lambda receives for one message delivered through the subscription `subscriptionArn`. */
export function snsEventOf(message: RecordedMessage, subscriptionArn: string): SNSEvent {
  const region = regionOf(message.topicArn);
  const body = lambdaBody(message);
  const timestamp = new Date(message.receivedAtMs).toISOString();
  const sns: LambdaSnsMessage = {
    SignatureVersion: SIGNATURE_VERSION,
    Timestamp: timestamp,
    Signature: signatureOf(message, body, timestamp),
    SigningCertUrl: `https://sns.${region}.amazonaws.com/SimpleNotificationService-twin.pem`,
    MessageId: message.messageId,
    Message: body,
    MessageAttributes: Object.fromEntries(
      Object.entries(message.attributes).map(([name, attribute]) => [
        name,
        { Type: attribute.dataType, Value: attribute.value },
      ]),
    ),
    Type: 'Notification',
    UnsubscribeUrl: `https://sns.${region}.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=${subscriptionArn}`,
    TopicArn: message.topicArn,
    Subject: message.subject ?? null,
  };
  return {
    Records: [
      {
        EventSource: 'aws:sns',
        EventVersion: '1.0',
        EventSubscriptionArn: subscriptionArn,
        // @types/aws-lambda declares `Subject?: string`; Lambda really sends null, which handlers must accept.
        Sns: sns as unknown as SNSEvent['Records'][number]['Sns'],
      },
    ],
  };
}

/**
 * Subscribes a Lambda-style handler to a topic of the SNS twin: every message that matches `options.filterPolicy`
 * is delivered as one SNS event, after Publish has been answered. What the handler throws is logged by the twin (SNS
 * would retry an asynchronous invocation; the twin does not). Returns the unsubscribe function.
 */
export function subscribeLambda(
  sns: Pick<SnsTwin, 'subscribe'>,
  topicArn: string,
  handler: (event: SNSEvent) => Promise<unknown>,
  options: SubscribeOptions = {},
): SnsUnsubscribe {
  return sns.subscribe(
    topicArn,
    async (message, subscription) => {
      await handler(snsEventOf(message, subscription.subscriptionArn));
    },
    options,
  );
}

/** `arn:aws:sns:<region>:<account>:<name>` → region. */
function regionOf(topicArn: string): string {
  return topicArn.split(':')[3] ?? 'us-east-1';
}

/** With MessageStructure `json`, a Lambda endpoint gets the `lambda` entry, or `default` without one (SNS). */
function lambdaBody(message: RecordedMessage): string {
  if (message.messageStructure !== 'json') return message.message;
  const bodies = JSON.parse(message.message) as Record<string, unknown>;
  const body = bodies.lambda ?? bodies.default;
  return typeof body === 'string' ? body : message.message;
}

/** A stand-in for SNS's signature: base64 of a digest of the fields SNS signs for a Notification, in its order. */
function signatureOf(message: RecordedMessage, body: string, timestamp: string): string {
  const fields = [
    ['Message', body],
    ['MessageId', message.messageId],
    ...(message.subject === undefined ? [] : [['Subject', message.subject]]),
    ['Timestamp', timestamp],
    ['TopicArn', message.topicArn],
    ['Type', 'Notification'],
  ];
  const stringToSign = fields.map(([name, value]) => `${name}\n${value}\n`).join('');
  return createHash('sha256').update(stringToSign).digest('base64');
}
