import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import {
  CreateTopicCommand,
  PublishBatchCommand,
  PublishCommand,
  SNSClient,
  type MessageAttributeValue,
  type PublishBatchRequestEntry,
  type PublishCommandInput,
} from '@aws-sdk/client-sns';
import { VirtualClock } from '../../shared/clock/clock.js';
import { startSnsTwin, type RecordedMessage, type SnsTwin } from './sns.js';

const REGION = 'us-east-2';
const ACCOUNT = '123456789012';

/** What the SDK throws, reduced to what a caller can act on. */
async function failure(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    const e = error as Error & { $metadata?: { httpStatusCode?: number } };
    return { name: e.name, status: e.$metadata?.httpStatusCode, message: e.message };
  }
  throw new Error('expected the request to fail');
}

describe('Function: startSnsTwin', () => {
  const clock = new VirtualClock(Date.parse('2026-03-02T10:00:00Z'));
  const lines: string[] = [];
  let twin: SnsTwin;
  let client: SNSClient;
  let alerts: string;

  beforeAll(async () => {
    twin = await startSnsTwin({ region: REGION, accountId: ACCOUNT, clock, log: (line) => lines.push(line) });
    client = new SNSClient({
      region: REGION,
      endpoint: twin.endpoint,
      credentials: { accessKeyId: 'AKIDTWINSNS', secretAccessKey: 'twin-sns-not-a-secret' },
      maxAttempts: 1,
    });
    alerts = twin.createTopic('vllm-alerts-critical');
  });

  afterAll(async () => {
    client.destroy();
    await twin.stop();
  });

  beforeEach(() => {
    twin.clear();
    lines.length = 0;
  });

  describe('CreateTopic', () => {
    it('answers with the ARN in the twin’s region and account, the same one for the same name', async () => {
      // Act
      const first = await client.send(new CreateTopicCommand({ Name: 'vllm-alerts-warning' }));
      const again = await client.send(new CreateTopicCommand({ Name: 'vllm-alerts-warning' }));

      // Assess
      expect(first.TopicArn).toBe(`arn:aws:sns:${REGION}:${ACCOUNT}:vllm-alerts-warning`);
      expect(again.TopicArn).toBe(first.TopicArn);
      expect(twin.topics()).toContain(first.TopicArn);
    });

    it('refuses a name SNS would refuse', async () => {
      // Act
      const result = await failure(client.send(new CreateTopicCommand({ Name: 'alerts with spaces' })));

      // Assess
      expect(result).toMatchObject({ name: 'InvalidParameterException', status: 400 });
    });
  });

  describe('Publish', () => {
    it('records the message with its subject and every kind of attribute, and answers with its MessageId', async () => {
      // Prepare
      const attributes: Record<string, MessageAttributeValue> = {
        severity: { DataType: 'String', StringValue: 'critical' },
        alert: { DataType: 'String', StringValue: 'VLLMKVCacheFull' },
        value: { DataType: 'Number', StringValue: '0.97' },
        pods: { DataType: 'String.Array', StringValue: '["vllm-0","vllm-1"]' },
        raw: { DataType: 'Binary', BinaryValue: new Uint8Array([1, 2, 3]) },
      };

      // Act
      const response = await client.send(
        new PublishCommand({
          TopicArn: alerts,
          Subject: '[CRITICAL] VLLMKVCacheFull on prod/default/vllm-app',
          Message: 'KV-cache usage 97 % > 95 % for 30 s & rising <check>',
          MessageAttributes: attributes,
        }),
      );

      // Assess
      const expected: RecordedMessage = {
        messageId: response.MessageId ?? '',
        topicArn: alerts,
        message: 'KV-cache usage 97 % > 95 % for 30 s & rising <check>',
        subject: '[CRITICAL] VLLMKVCacheFull on prod/default/vllm-app',
        attributes: {
          severity: { dataType: 'String', value: 'critical' },
          alert: { dataType: 'String', value: 'VLLMKVCacheFull' },
          value: { dataType: 'Number', value: '0.97' },
          pods: { dataType: 'String.Array', value: '["vllm-0","vllm-1"]' },
          raw: { dataType: 'Binary', value: 'AQID' },
        },
        messageStructure: undefined,
        messageGroupId: undefined,
        messageDeduplicationId: undefined,
        action: 'Publish',
        batchEntryId: undefined,
        sequenceNumber: undefined,
        receivedAtMs: clock.now(),
      };
      expect(response.MessageId).toMatch(/^[0-9a-f-]{36}$/);
      expect(twin.messages(alerts)).toEqual([expected]);
    });

    it('serves the recorded messages on GET /_twin/messages, filtered by topic, and forgets them on DELETE', async () => {
      // Prepare
      const other = twin.createTopic('vllm-alerts-info');
      await client.send(new PublishCommand({ TopicArn: alerts, Message: 'one' }));
      await client.send(new PublishCommand({ TopicArn: other, Message: 'two' }));

      // Act
      const all = (await (await fetch(`${twin.endpoint}/_twin/messages`)).json()) as { messages: RecordedMessage[] };
      const filtered = (await (
        await fetch(`${twin.endpoint}/_twin/messages?topicArn=${encodeURIComponent(other)}`)
      ).json()) as { messages: RecordedMessage[] };
      await fetch(`${twin.endpoint}/_twin/messages`, { method: 'DELETE' });

      // Assess
      expect(all.messages.map((m) => m.message)).toEqual(['one', 'two']);
      expect(filtered.messages.map((m) => m.message)).toEqual(['two']);
      expect(twin.messages()).toEqual([]);
    });

    it('requires a MessageGroupId on a FIFO topic and gives FIFO messages a sequence number', async () => {
      // Prepare
      const fifo = twin.createTopic('vllm-alerts.fifo');

      // Act
      const refused = await failure(client.send(new PublishCommand({ TopicArn: fifo, Message: 'x' })));
      const accepted = await client.send(
        new PublishCommand({ TopicArn: fifo, Message: 'x', MessageGroupId: 'prod', MessageDeduplicationId: 'a1' }),
      );

      // Assess
      expect(refused).toMatchObject({ name: 'InvalidParameterException', message: /MessageGroupId/ });
      expect(accepted.SequenceNumber).toMatch(/^\d{20}$/);
      expect(twin.messages(fifo)[0]).toMatchObject({ messageGroupId: 'prod', messageDeduplicationId: 'a1' });
    });

    it.each<{ case: string; input: Omit<PublishCommandInput, 'TopicArn'> & { TopicArn?: string }; expected: object }>([
      {
        case: 'a topic that does not exist',
        input: { TopicArn: `arn:aws:sns:${REGION}:${ACCOUNT}:nope`, Message: 'x' },
        expected: { name: 'NotFoundException', status: 404, message: 'Topic does not exist' },
      },
      {
        case: 'an empty message',
        input: { Message: '' },
        expected: { name: 'InvalidParameterException', status: 400, message: 'Invalid parameter: Empty message' },
      },
      {
        case: 'a message over 256 KiB',
        input: { Message: 'x'.repeat(262_145) },
        expected: { name: 'InvalidParameterException', message: /^Invalid parameter: Message too long/ },
      },
      {
        case: 'a subject with a line break',
        input: { Message: 'x', Subject: 'two\nlines' },
        expected: { name: 'InvalidParameterException', message: /^Invalid parameter: Subject/ },
      },
      {
        case: 'a JSON message structure without a default entry',
        input: { Message: '{"email":"x"}', MessageStructure: 'json' },
        expected: { name: 'InvalidParameterException', message: /No default entry in JSON message body/ },
      },
      {
        case: 'eleven message attributes',
        input: {
          Message: 'x',
          MessageAttributes: Object.fromEntries(
            Array.from({ length: 11 }, (_, i) => [`a${i}`, { DataType: 'String', StringValue: 'v' }]),
          ),
        },
        expected: {
          name: 'InvalidParameterValueException',
          message: 'Number of message attributes [11] exceeds the allowed maximum [10].',
        },
      },
      {
        case: 'an attribute of an unknown type',
        input: { Message: 'x', MessageAttributes: { severity: { DataType: 'Text', StringValue: 'critical' } } },
        expected: {
          name: 'InvalidParameterValueException',
          message: /'severity' has an invalid message attribute type/,
        },
      },
      {
        case: 'a Number attribute that is not a number',
        input: { Message: 'x', MessageAttributes: { value: { DataType: 'Number', StringValue: 'high' } } },
        expected: { name: 'InvalidParameterValueException', message: /'value' has an invalid value "high"/ },
      },
      {
        case: 'an attribute name starting with AWS.',
        input: { Message: 'x', MessageAttributes: { 'AWS.x': { DataType: 'String', StringValue: 'v' } } },
        expected: { name: 'InvalidParameterValueException', message: /'AWS.x' has an invalid name/ },
      },
    ])('refuses $case as SNS does', async ({ input, expected }) => {
      // Act
      const result = await failure(client.send(new PublishCommand({ TopicArn: alerts, ...input })));

      // Assess
      expect(result).toMatchObject(expected);
      expect(twin.messages()).toEqual([]);
    });
  });

  describe('PublishBatch', () => {
    it('publishes the valid entries and reports each invalid one with its code, as SNS does', async () => {
      // Prepare
      const entries: PublishBatchRequestEntry[] = [
        {
          Id: 'kv-cache',
          Message: 'KV cache full',
          Subject: 'VLLMKVCacheFull',
          MessageAttributes: { severity: { DataType: 'String', StringValue: 'critical' } },
        },
        { Id: 'empty', Message: '' },
        { Id: 'latency', Message: 'p95 above SLO' },
      ];

      // Act
      const response = await client.send(
        new PublishBatchCommand({ TopicArn: alerts, PublishBatchRequestEntries: entries }),
      );

      // Assess
      expect(response.Successful?.map((entry) => entry.Id)).toEqual(['kv-cache', 'latency']);
      expect(response.Failed).toEqual([
        { Id: 'empty', Code: 'InvalidParameter', Message: 'Invalid parameter: Empty message', SenderFault: true },
      ]);
      const recorded = twin.messages(alerts);
      expect(recorded.map((m) => [m.batchEntryId, m.message, m.action])).toEqual([
        ['kv-cache', 'KV cache full', 'PublishBatch'],
        ['latency', 'p95 above SLO', 'PublishBatch'],
      ]);
      expect(recorded[0]?.attributes).toEqual({ severity: { dataType: 'String', value: 'critical' } });
      expect(response.Successful?.[0]?.MessageId).toBe(recorded[0]?.messageId);
    });

    it.each([
      { case: 'no entries', entries: [], name: 'EmptyBatchRequestException' },
      {
        case: 'eleven entries',
        entries: Array.from({ length: 11 }, (_, i) => ({ Id: `e${i}`, Message: 'x' })),
        name: 'TooManyEntriesInBatchRequestException',
      },
      {
        case: 'two entries with the same Id',
        entries: [
          { Id: 'same', Message: 'x' },
          { Id: 'same', Message: 'y' },
        ],
        name: 'BatchEntryIdsNotDistinctException',
      },
      { case: 'an Id with a space', entries: [{ Id: 'kv cache', Message: 'x' }], name: 'InvalidBatchEntryIdException' },
      {
        case: 'entries over 256 KiB together',
        entries: [
          { Id: 'a', Message: 'x'.repeat(200_000) },
          { Id: 'b', Message: 'x'.repeat(100_000) },
        ],
        name: 'BatchRequestTooLongException',
      },
    ])('refuses a batch with $case, publishing nothing', async ({ entries, name }) => {
      // Act
      const result = await failure(
        client.send(new PublishBatchCommand({ TopicArn: alerts, PublishBatchRequestEntries: entries })),
      );

      // Assess
      expect(result).toMatchObject({ name, status: 400 });
      expect(twin.messages()).toEqual([]);
    });
  });

  describe('subscribers', () => {
    it('delivers each later message of the topic to its local subscribers, until they unsubscribe', async () => {
      // Prepare
      const received: string[] = [];
      const unsubscribe = twin.subscribe(alerts, (message) => {
        received.push(`${message.subject ?? ''}: ${message.message}`);
      });

      // Act
      await client.send(new PublishCommand({ TopicArn: alerts, Subject: 'first', Message: 'one' }));
      await client.send(
        new PublishBatchCommand({ TopicArn: alerts, PublishBatchRequestEntries: [{ Id: 'b', Message: 'two' }] }),
      );
      await twin.flush();
      unsubscribe();
      await client.send(new PublishCommand({ TopicArn: alerts, Message: 'three' }));
      await twin.flush();

      // Assess
      expect(received).toEqual(['first: one', ': two']);
    });

    it('answers Publish even when a subscriber fails, and logs the failed delivery', async () => {
      // Prepare
      const unsubscribe = twin.subscribe(alerts, () => {
        throw new Error('Slack webhook returned 500');
      });

      // Act
      const response = await client.send(new PublishCommand({ TopicArn: alerts, Message: 'x' }));
      await twin.flush();
      unsubscribe();

      // Assess
      expect(response.MessageId).toBeDefined();
      expect(lines).toContainEqual(expect.stringMatching(/delivery of .* failed: Slack webhook returned 500$/));
    });
  });

  describe('failures', () => {
    it.each([
      { status: 500, name: 'InternalErrorException' },
      { status: 429, name: 'ThrottledException' },
    ])('fails the next request with $status ($name) when told to, then serves again', async ({ status, name }) => {
      // Prepare
      twin.failNextRequests(1, status);

      // Act
      const failed = await failure(client.send(new PublishCommand({ TopicArn: alerts, Message: 'x' })));
      const next = await client.send(new PublishCommand({ TopicArn: alerts, Message: 'y' }));

      // Assess
      expect(failed).toMatchObject({ name, status });
      expect(next.MessageId).toBeDefined();
      expect(twin.messages().map((m) => m.message)).toEqual(['y']);
    });

    it('refuses an unsigned request', async () => {
      // Act
      const response = await fetch(twin.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ Action: 'Publish', TopicArn: alerts, Message: 'x' }).toString(),
      });

      // Assess
      expect(response.status).toBe(403);
      expect(await response.text()).toContain('<Code>MissingAuthenticationToken</Code>');
    });
  });
});

describe('Method: stop', () => {
  it('releases the port even with the SDK’s keep-alive connection open', async () => {
    // Prepare
    const twin = await startSnsTwin({ region: REGION });
    const client = new SNSClient({
      region: REGION,
      endpoint: twin.endpoint,
      credentials: { accessKeyId: 'AKIDTWINSNS', secretAccessKey: 'twin-sns-not-a-secret' },
      maxAttempts: 1,
    });
    await client.send(new CreateTopicCommand({ Name: 'x' }));

    // Act
    await twin.stop();

    // Assess
    await expect(fetch(`${twin.endpoint}/_twin/messages`)).rejects.toThrow();
    client.destroy();
  });
});
