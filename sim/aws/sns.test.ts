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
import { VirtualClock } from '../../shared/clock/index.js';
import {
  checkFilterPolicy,
  filterPolicyMatches,
  SnsFilterPolicyInvalidError,
  startSnsTwin,
  type FilterPolicyScope,
  type RecordedAttribute,
  type RecordedMessage,
  type SnsTwin,
} from './sns.js';

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

    it('accepts a subject in UTF-8 beyond ASCII, as SNS does (an Alertmanager subject carries label values)', async () => {
      // Act
      await client.send(
        new PublishCommand({ TopicArn: alerts, Subject: '[FIRING] KV-Cache ≥ 95 % – prod', Message: 'x' }),
      );

      // Assess
      expect(twin.messages(alerts)[0]?.subject).toBe('[FIRING] KV-Cache ≥ 95 % – prod');
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
        case: 'a subject with a control character',
        input: { Message: 'x', Subject: 'bell\u0007' },
        expected: { name: 'InvalidParameterException', message: /^Invalid parameter: Subject/ },
      },
      {
        case: 'a subject over 100 characters',
        input: { Message: 'x', Subject: 's'.repeat(101) },
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

  describe('filter policies', () => {
    /** Publishes one alert-like message per severity, as the product does (severity and status attributes). */
    async function publishSeverities(severities: readonly string[]): Promise<void> {
      for (const severity of severities) {
        await client.send(
          new PublishCommand({
            TopicArn: alerts,
            Message: JSON.stringify({ severity, alertname: `alert-${severity}` }),
            MessageAttributes: {
              severity: { DataType: 'String', StringValue: severity },
              status: { DataType: 'String', StringValue: 'firing' },
            },
          }),
        );
      }
      await twin.flush();
    }

    it('delivers only critical messages to a {"severity":["critical"]} subscriber, and every message to one without a policy', async () => {
      // Prepare
      const pager: string[] = [];
      const everything: string[] = [];
      const unsubscribePager = twin.subscribe(alerts, (m) => void pager.push(m.attributes.severity?.value ?? ''), {
        filterPolicy: { severity: ['critical'] },
      });
      const unsubscribeAll = twin.subscribe(alerts, (m) => void everything.push(m.attributes.severity?.value ?? ''));

      // Act
      await publishSeverities(['warning', 'critical', 'warning', 'critical']);
      await client.send(
        new PublishBatchCommand({
          TopicArn: alerts,
          PublishBatchRequestEntries: [
            { Id: 'w', Message: 'w', MessageAttributes: { severity: { DataType: 'String', StringValue: 'warning' } } },
            { Id: 'c', Message: 'c', MessageAttributes: { severity: { DataType: 'String', StringValue: 'critical' } } },
            { Id: 'none', Message: 'no attributes' },
          ],
        }),
      );
      await twin.flush();
      unsubscribePager();
      unsubscribeAll();

      // Assess
      expect(pager).toEqual(['critical', 'critical', 'critical']);
      expect(everything).toEqual(['warning', 'critical', 'warning', 'critical', 'warning', 'critical', '']);
      // Every message is still recorded: filtering decides delivery, not acceptance.
      expect(twin.messages(alerts)).toHaveLength(7);
    });

    it('matches a MessageBody policy against the JSON body', async () => {
      // Prepare
      const received: string[] = [];
      const unsubscribe = twin.subscribe(alerts, (m) => void received.push(m.message), {
        filterPolicy: { alertname: [{ prefix: 'alert-crit' }] },
        filterPolicyScope: 'MessageBody',
      });

      // Act
      await publishSeverities(['warning', 'critical']);
      unsubscribe();

      // Assess
      expect(received.map((m) => (JSON.parse(m) as { severity: string }).severity)).toEqual(['critical']);
    });

    it('lists each subscription with its topic, ARN and policy, and forgets it on unsubscribe', () => {
      // Prepare
      const policy = { severity: ['critical'], status: ['firing', 'resolved'] };

      // Act
      const unsubscribe = twin.subscribe(alerts, () => undefined, { filterPolicy: policy });
      const listed = twin.subscriptions();
      unsubscribe();

      // Assess
      expect(listed).toEqual([
        {
          subscriptionArn: unsubscribe.subscriptionArn,
          topicArn: alerts,
          filterPolicy: policy,
          filterPolicyScope: 'MessageAttributes',
        },
      ]);
      expect(unsubscribe.subscriptionArn).toMatch(new RegExp(`^${alerts}:[0-9a-f-]{36}$`));
      expect(twin.subscriptions()).toEqual([]);
    });

    it('refuses an invalid policy on subscribe with a named error that names the key', () => {
      // Act
      const act = () => twin.subscribe(alerts, () => undefined, { filterPolicy: { severity: 'critical' } });

      // Assess
      expect(act).toThrow(SnsFilterPolicyInvalidError);
      expect(act).toThrow('Invalid parameter: FilterPolicy: "severity": must be an array of values');
      expect(twin.subscriptions()).toEqual([]);
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

/** Attributes as the twin records them, from name → value (a number becomes a Number attribute). */
function attributesOf(values: Record<string, string | number | string[]>): Record<string, RecordedAttribute> {
  return Object.fromEntries(
    Object.entries(values).map(([name, value]) => [
      name,
      Array.isArray(value)
        ? { dataType: 'String.Array', value: JSON.stringify(value) }
        : typeof value === 'number'
          ? { dataType: 'Number', value: String(value) }
          : { dataType: 'String', value },
    ]),
  );
}

describe('Function: filterPolicyMatches', () => {
  it.each<{ case: string; policy: object; attributes: Record<string, string | number | string[]>; matches: boolean }>([
    // Exact strings: OR within a key, case-sensitive.
    {
      case: 'one of the listed values',
      policy: { severity: ['critical', 'warning'] },
      attributes: { severity: 'warning' },
      matches: true,
    },
    {
      case: 'a value not listed',
      policy: { severity: ['critical'] },
      attributes: { severity: 'warning' },
      matches: false,
    },
    {
      case: 'a value in another case',
      policy: { severity: ['critical'] },
      attributes: { severity: 'Critical' },
      matches: false,
    },
    // Keys are AND-ed.
    {
      case: 'every key matching',
      policy: { severity: ['critical'], status: ['firing'] },
      attributes: { severity: 'critical', status: 'firing' },
      matches: true,
    },
    {
      case: 'one key of two not matching',
      policy: { severity: ['critical'], status: ['firing'] },
      attributes: { severity: 'critical', status: 'resolved' },
      matches: false,
    },
    // A message without the attribute does not match a policy on it.
    {
      case: 'the attribute missing',
      policy: { severity: ['critical'] },
      attributes: { status: 'firing' },
      matches: false,
    },
    {
      case: 'anything-but with the attribute missing',
      policy: { severity: [{ 'anything-but': ['warning'] }] },
      attributes: { status: 'firing' },
      matches: false,
    },
    // anything-but, prefix, suffix, equals-ignore-case.
    {
      case: 'anything-but, another value',
      policy: { severity: [{ 'anything-but': ['warning'] }] },
      attributes: { severity: 'critical' },
      matches: true,
    },
    {
      case: 'anything-but, the excluded value',
      policy: { severity: [{ 'anything-but': 'warning' }] },
      attributes: { severity: 'warning' },
      matches: false,
    },
    {
      case: 'anything-but a prefix',
      policy: { target: [{ 'anything-but': { prefix: 'dev-' } }] },
      attributes: { target: 'dev-ministral' },
      matches: false,
    },
    {
      case: 'a prefix',
      policy: { alertname: [{ prefix: 'VLLMKV' }] },
      attributes: { alertname: 'VLLMKVCacheFull' },
      matches: true,
    },
    {
      case: 'another prefix',
      policy: { alertname: [{ prefix: 'VLLMKV' }] },
      attributes: { alertname: 'VLLMHighLatency' },
      matches: false,
    },
    {
      case: 'a suffix',
      policy: { target: [{ suffix: '-prod' }] },
      attributes: { target: 'ministral-prod' },
      matches: true,
    },
    {
      case: 'equals-ignore-case',
      policy: { severity: [{ 'equals-ignore-case': 'CRITICAL' }] },
      attributes: { severity: 'critical' },
      matches: true,
    },
    // Key matching.
    {
      case: 'exists true, present',
      policy: { namespace: [{ exists: true }] },
      attributes: { namespace: 'default' },
      matches: true,
    },
    {
      case: 'exists true, absent',
      policy: { namespace: [{ exists: true }] },
      attributes: { severity: 'critical' },
      matches: false,
    },
    {
      case: 'exists false, absent (another attribute present)',
      policy: { namespace: [{ exists: false }] },
      attributes: { severity: 'critical' },
      matches: true,
    },
    {
      case: 'exists false, present',
      policy: { namespace: [{ exists: false }] },
      attributes: { namespace: 'default' },
      matches: false,
    },
    {
      case: 'exists false, no attributes at all',
      policy: { namespace: [{ exists: false }] },
      attributes: {},
      matches: false,
    },
    // Numeric matching: Number attributes only.
    { case: 'numeric > 5 with 7', policy: { value: [{ numeric: ['>', 5] }] }, attributes: { value: 7 }, matches: true },
    {
      case: 'numeric > 5 with 5',
      policy: { value: [{ numeric: ['>', 5] }] },
      attributes: { value: 5 },
      matches: false,
    },
    {
      case: 'a numeric range, inside',
      policy: { value: [{ numeric: ['>', 0, '<=', 0.95] }] },
      attributes: { value: 0.95 },
      matches: true,
    },
    {
      case: 'a numeric range, above',
      policy: { value: [{ numeric: ['>', 0, '<=', 0.95] }] },
      attributes: { value: 0.97 },
      matches: false,
    },
    {
      case: 'numeric = with an equal value',
      policy: { value: [{ numeric: ['=', 301.5] }] },
      attributes: { value: 301.5 },
      matches: true,
    },
    {
      case: 'numeric on a String attribute',
      policy: { value: [{ numeric: ['>', 5] }] },
      attributes: { value: '7' },
      matches: false,
    },
    { case: 'an exact number', policy: { value: [100] }, attributes: { value: 100 }, matches: true },
    // String.Array: each element is matched on its own.
    {
      case: 'a String.Array with a listed element',
      policy: { pods: ['vllm-1'] },
      attributes: { pods: ['vllm-0', 'vllm-1'] },
      matches: true,
    },
    {
      case: 'a String.Array without one',
      policy: { pods: ['vllm-2'] },
      attributes: { pods: ['vllm-0', 'vllm-1'] },
      matches: false,
    },
  ])('$case: $matches', ({ policy, attributes, matches }) => {
    // Prepare
    checkFilterPolicy(policy);

    // Act
    const result = filterPolicyMatches(policy, 'MessageAttributes', {
      message: '{}',
      attributes: attributesOf(attributes),
    });

    // Assess
    expect(result).toBe(matches);
  });

  it.each<{ case: string; policy: object; body: string; matches: boolean }>([
    {
      case: 'a top-level property',
      policy: { severity: ['critical'] },
      body: '{"severity":"critical"}',
      matches: true,
    },
    {
      case: 'a nested property',
      policy: { labels: { pod: [{ prefix: 'vllm-' }] } },
      body: '{"labels":{"pod":"vllm-0"}}',
      matches: true,
    },
    {
      case: 'a nested property that differs',
      policy: { labels: { pod: ['vllm-1'] } },
      body: '{"labels":{"pod":"vllm-0"}}',
      matches: false,
    },
    { case: 'an array property', policy: { tags: ['gpu'] }, body: '{"tags":["kv","gpu"]}', matches: true },
    { case: 'a number property', policy: { value: [{ numeric: ['>=', 50] }] }, body: '{"value":73}', matches: true },
    { case: 'a body that is not JSON', policy: { severity: ['critical'] }, body: 'critical', matches: false },
    {
      case: 'a missing property with exists false',
      policy: { endsAt: [{ exists: false }] },
      body: '{"severity":"critical"}',
      matches: true,
    },
  ])('MessageBody scope, $case: $matches', ({ policy, body, matches }) => {
    // Prepare
    const scope: FilterPolicyScope = 'MessageBody';
    checkFilterPolicy(policy, scope);

    // Act
    const result = filterPolicyMatches(policy, scope, { message: body, attributes: {} });

    // Assess
    expect(result).toBe(matches);
  });
});

describe('Function: checkFilterPolicy', () => {
  it.each<{ case: string; policy: unknown; scope?: FilterPolicyScope; key: string; reason: RegExp }>([
    {
      case: 'a bare value instead of an array',
      policy: { severity: 'critical' },
      key: 'severity',
      reason: /must be an array/,
    },
    { case: 'an empty array', policy: { severity: [] }, key: 'severity', reason: /empty arrays/ },
    {
      case: 'an unknown operator',
      policy: { severity: [{ prefixx: 'c' }] },
      key: 'severity',
      reason: /unrecognized match type prefixx/,
    },
    {
      case: 'two operators in one object',
      policy: { severity: [{ prefix: 'c', suffix: 'l' }] },
      key: 'severity',
      reason: /exactly one operator/,
    },
    {
      case: 'exists with a string',
      policy: { target: [{ exists: 'yes' }] },
      key: 'target',
      reason: /exists takes true or false/,
    },
    {
      case: 'a numeric operator that does not exist',
      policy: { value: [{ numeric: ['>>', 5] }] },
      key: 'value',
      reason: /numeric takes/,
    },
    {
      case: 'a numeric range upside down',
      policy: { value: [{ numeric: ['>', 10, '<', 5] }] },
      key: 'value',
      reason: /numeric takes/,
    },
    { case: 'a number over 1e9', policy: { value: [2e9] }, key: 'value', reason: /outside the numeric range/ },
    {
      case: 'a mixed anything-but list',
      policy: { value: [{ 'anything-but': ['a', 1] }] },
      key: 'value',
      reason: /only strings or only numbers/,
    },
    {
      case: 'a nested policy on attributes',
      policy: { labels: { pod: ['x'] } },
      key: 'labels',
      reason: /only with FilterPolicyScope MessageBody/,
    },
    {
      case: 'six keys',
      policy: { a: ['1'], b: ['1'], c: ['1'], d: ['1'], e: ['1'], f: ['1'] },
      key: 'f',
      reason: /at most 5 keys/,
    },
    {
      case: 'more than 150 combinations',
      policy: { a: Array.from({ length: 20 }, (_, i) => `a${i}`), b: Array.from({ length: 8 }, (_, i) => `b${i}`) },
      key: 'b',
      reason: /160 combinations/,
    },
    { case: 'an $or', policy: { $or: [{ a: ['1'] }, { b: ['1'] }] }, key: '$or', reason: /\$or/ },
    { case: 'an array as the policy', policy: [{ severity: ['critical'] }], key: '(policy)', reason: /JSON object/ },
  ])('refuses $case, naming the key', ({ policy, scope, key, reason }) => {
    // Act
    let error: unknown;
    try {
      checkFilterPolicy(policy, scope);
    } catch (caught) {
      error = caught;
    }

    // Assess
    expect(error).toBeInstanceOf(SnsFilterPolicyInvalidError);
    expect(error).toMatchObject({ name: 'SnsFilterPolicyInvalidError', code: 'InvalidParameter', key });
    expect((error as Error).message).toMatch(reason);
  });
});
