import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import type { SNSEvent } from 'aws-lambda';
import { VirtualClock } from '../../shared/clock/index.js';
import { startSnsTwin, type RecordedMessage, type SnsTwin } from './sns.js';
import { snsEventOf, subscribeLambda } from './snsLambdaEvent.js';

const REGION = 'us-east-2';
const TOPIC = `arn:aws:sns:${REGION}:000000000000:vllm-eks-pilot-alerts`;
const SUBSCRIPTION = `${TOPIC}:0c6f1c9e-3d5a-4b7e-9f21-8a4d6e2b1c3f`;

/** A message as the twin records it. */
function recorded(overrides: Partial<RecordedMessage> = {}): RecordedMessage {
  return {
    messageId: '95df01b4-ee98-5cb9-9903-4c221d41eb5e',
    topicArn: TOPIC,
    message: '{"alertname":"VLLMKVCacheFull","status":"firing"}',
    subject: '[FIRING] VLLMKVCacheFull',
    attributes: {
      severity: { dataType: 'String', value: 'critical' },
      value: { dataType: 'Number', value: '0.97' },
      raw: { dataType: 'Binary', value: 'AQID' },
    },
    messageStructure: undefined,
    messageGroupId: undefined,
    messageDeduplicationId: undefined,
    action: 'Publish',
    batchEntryId: undefined,
    sequenceNumber: undefined,
    receivedAtMs: Date.parse('2026-03-02T10:00:00.123Z'),
    ...overrides,
  };
}

describe('Function: snsEventOf', () => {
  it('builds the event Lambda receives from SNS: one Notification record with the message and its attributes', () => {
    // Act
    const event = snsEventOf(recorded(), SUBSCRIPTION);

    // Assess
    expect(event.Records).toHaveLength(1);
    const record = event.Records[0];
    expect(record).toMatchObject({ EventSource: 'aws:sns', EventVersion: '1.0', EventSubscriptionArn: SUBSCRIPTION });
    expect(record?.Sns).toEqual({
      SignatureVersion: '1',
      Timestamp: '2026-03-02T10:00:00.123Z',
      Signature: expect.stringMatching(/^[A-Za-z0-9+/]+=*$/),
      SigningCertUrl: `https://sns.${REGION}.amazonaws.com/SimpleNotificationService-twin.pem`,
      MessageId: '95df01b4-ee98-5cb9-9903-4c221d41eb5e',
      Message: '{"alertname":"VLLMKVCacheFull","status":"firing"}',
      MessageAttributes: {
        severity: { Type: 'String', Value: 'critical' },
        value: { Type: 'Number', Value: '0.97' },
        raw: { Type: 'Binary', Value: 'AQID' },
      },
      Type: 'Notification',
      UnsubscribeUrl: `https://sns.${REGION}.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=${SUBSCRIPTION}`,
      TopicArn: TOPIC,
      Subject: '[FIRING] VLLMKVCacheFull',
    });
  });

  it('sends Subject null when the message had none, as Lambda does', () => {
    // Act
    const event = snsEventOf(recorded({ subject: undefined }), SUBSCRIPTION);

    // Assess
    expect(event.Records[0]?.Sns.Subject).toBeNull();
    expect(JSON.parse(JSON.stringify(event)) as SNSEvent).toEqual(event);
  });

  it.each([
    { case: 'a lambda entry', bodies: { default: 'for everyone', lambda: 'for Lambda' }, expected: 'for Lambda' },
    { case: 'only a default entry', bodies: { default: 'for everyone', email: 'for email' }, expected: 'for everyone' },
  ])('delivers the right body of a JSON message structure with $case', ({ bodies, expected }) => {
    // Act
    const event = snsEventOf(recorded({ message: JSON.stringify(bodies), messageStructure: 'json' }), SUBSCRIPTION);

    // Assess
    expect(event.Records[0]?.Sns.Message).toBe(expected);
  });

  it('gives two different messages two different signatures', () => {
    // Act
    const first = snsEventOf(recorded(), SUBSCRIPTION).Records[0]?.Sns.Signature;
    const second = snsEventOf(recorded({ message: 'other' }), SUBSCRIPTION).Records[0]?.Sns.Signature;

    // Assess
    expect(first).not.toBe(second);
  });
});

describe('Function: subscribeLambda', () => {
  const clock = new VirtualClock(Date.parse('2026-03-02T10:00:00Z'));
  let twin: SnsTwin;
  let client: SNSClient;
  let topicArn: string;

  beforeAll(async () => {
    twin = await startSnsTwin({ region: REGION, clock });
    topicArn = twin.createTopic('vllm-eks-pilot-alerts');
    client = new SNSClient({
      region: REGION,
      endpoint: twin.endpoint,
      credentials: { accessKeyId: 'AKIDTWINSNS', secretAccessKey: 'twin-sns-not-a-secret' },
      maxAttempts: 1,
    });
  });

  afterAll(async () => {
    client.destroy();
    await twin.stop();
  });

  it('invokes the handler with one SNS event per matching message, through the subscription and its filter policy', async () => {
    // Prepare
    const events: SNSEvent[] = [];
    const unsubscribe = subscribeLambda(
      twin,
      topicArn,
      async (event) => {
        events.push(event);
        return Promise.resolve();
      },
      { filterPolicy: { severity: ['critical'] } },
    );

    // Act
    for (const severity of ['warning', 'critical']) {
      await client.send(
        new PublishCommand({
          TopicArn: topicArn,
          Message: `a ${severity} alert`,
          MessageAttributes: { severity: { DataType: 'String', StringValue: severity } },
        }),
      );
    }
    await twin.flush();
    unsubscribe();

    // Assess
    expect(events).toHaveLength(1);
    const record = events[0]?.Records[0];
    expect(record?.EventSubscriptionArn).toBe(unsubscribe.subscriptionArn);
    expect(record?.Sns).toMatchObject({
      Message: 'a critical alert',
      TopicArn: topicArn,
      Subject: null,
      MessageAttributes: { severity: { Type: 'String', Value: 'critical' } },
      Timestamp: new Date(clock.now()).toISOString(),
    });
  });
});
