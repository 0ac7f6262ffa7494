import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SNSClient } from '@aws-sdk/client-sns';
import { type SnsTwin, startSnsTwin } from '../../../sim/harness/index.js';
import { buildAlertMessage } from '../buildMessage.js';
import { groupNotifications, type AlertGroup } from '../group.js';
import type { AlertMessage } from '../message.js';
import { AlertPipelineInputInvalidError, AlertPublishError } from '../pipelineErrors.js';
import { FIXTURE_T0, fixtureInstance, fixtureState } from '../testing/fixtures.js';
import type { AlertState } from '../alertState.js';
import { alertSubject, SnsAlertPublisher, SNS_LIMITS } from './SnsAlertPublisher.js';
import type { PublishOutcome } from '../publisher.js';

const CREDENTIALS = { accessKeyId: 'AKIDTWINSNS', secretAccessKey: 'twin-sns-not-a-secret' };

/** A firing message for Pod `pod-<n>`; `extra` pads the description. */
function message(n: number, overrides: Partial<AlertState> = {}, extra = ''): AlertMessage {
  const pod = `vllm-inference-app-7d9c8b6f5d-p${String(n).padStart(3, '0')}`;
  const state: AlertState = {
    ...fixtureState(fixtureInstance(pod, { fingerprint: `kv-${String(n).padStart(3, '0')}` }), FIXTURE_T0),
    ...overrides,
  };
  state.description += extra;
  return buildAlertMessage({
    action: 'notify',
    target: state.target,
    fingerprint: state.fingerprint,
    alertname: state.alertname,
    severity: state.severity,
    status: state.status,
    reason: 'first',
    text: 'test',
    state,
    expectedVersion: null,
    followsUp: false,
  });
}

function groupOf(messages: AlertMessage[]): AlertGroup<AlertMessage> {
  const [group] = groupNotifications(messages);
  if (group === undefined || group.items.length !== messages.length) throw new Error('expected one group');
  return group;
}

function failures(outcomes: PublishOutcome[]): AlertPublishError[] {
  return outcomes.flatMap((o) => (o.ok ? [] : [o.error]));
}

describe('Class: SnsAlertPublisher', () => {
  let twin: SnsTwin;
  let client: SNSClient;
  let topicArn: string;
  const requests: string[] = [];

  beforeAll(async () => {
    twin = await startSnsTwin({ region: 'us-east-2', log: (line) => requests.push(line) });
    topicArn = twin.createTopic('vllm-eks-pilot-alerts');
    // One attempt: a failure the twin injects must reach the publisher, not be retried away by the SDK.
    client = new SNSClient({ region: twin.region, endpoint: twin.endpoint, credentials: CREDENTIALS, maxAttempts: 1 });
  });

  afterAll(async () => {
    client.destroy();
    await twin.stop();
  });

  beforeEach(() => {
    twin.clear();
    twin.failNextRequests(0);
    requests.length = 0;
  });

  describe('Method: publish', () => {
    it('publishes each message as JSON with a subject and String attributes for filter policies', async () => {
      // Prepare
      const publisher = new SnsAlertPublisher({ client, topicArn });
      const resolved = message(2, { status: 'resolved', endsAtMs: FIXTURE_T0 + 60_000 });
      const group = groupOf([message(1), resolved]);

      // Act
      const outcomes = await publisher.publish(group);

      // Assess
      const received = twin.messages(topicArn);
      expect(outcomes).toEqual(received.map((m) => ({ ok: true, messageId: m.messageId })));
      expect(received.map((m) => JSON.parse(m.message) as unknown)).toEqual(group.items);
      expect(received.map((m) => m.subject)).toEqual([
        '[FIRING] VLLMKVCacheFull prod-ministral',
        '[RESOLVED] VLLMKVCacheFull prod-ministral',
      ]);
      expect(received[1]?.attributes).toEqual({
        severity: { dataType: 'String', value: 'critical' },
        status: { dataType: 'String', value: 'resolved' },
        alertname: { dataType: 'String', value: 'VLLMKVCacheFull' },
        target: { dataType: 'String', value: 'prod-ministral' },
        cluster: { dataType: 'String', value: 'prod' },
        namespace: { dataType: 'String', value: 'inference' },
      });
      expect(received.every((m) => m.action === 'PublishBatch')).toBe(true);
    });

    it('sends 23 messages in batches of at most 10, in order', async () => {
      // Prepare
      const publisher = new SnsAlertPublisher({ client, topicArn });
      const group = groupOf(Array.from({ length: 23 }, (_, n) => message(n)));

      // Act
      const outcomes = await publisher.publish(group);

      // Assess
      expect(outcomes.every((o) => o.ok)).toBe(true);
      expect(requests.filter((line) => line.includes('PublishBatch'))).toEqual([
        expect.stringMatching(/-> 10 published, 0 failed$/),
        expect.stringMatching(/-> 10 published, 0 failed$/),
        expect.stringMatching(/-> 3 published, 0 failed$/),
      ]);
      expect(twin.messages(topicArn).map((m) => (JSON.parse(m.message) as AlertMessage).fingerprint)).toEqual(
        group.items.map((m) => m.fingerprint),
      );
    });

    it('keeps each batch within 256 KiB and fails only a message too large on its own', async () => {
      // Prepare: three messages of about 100 KB (two fit in a batch) and one above SNS's limit.
      const publisher = new SnsAlertPublisher({ client, topicArn });
      const big = 'x'.repeat(100_000);
      const group = groupOf([
        message(1, {}, big),
        message(2, {}, big),
        message(3, {}, 'y'.repeat(SNS_LIMITS.maxPayloadBytes)),
        message(4, {}, big),
      ]);

      // Act
      const outcomes = await publisher.publish(group);

      // Assess
      expect(outcomes.map((o) => o.ok)).toEqual([true, true, false, true]);
      expect(failures(outcomes)[0]).toMatchObject({ code: 'MessageTooLarge', retryable: false, batchLevel: false });
      expect(requests.filter((line) => line.includes('PublishBatch'))).toEqual([
        expect.stringMatching(/-> 2 published/),
        expect.stringMatching(/-> 1 published/),
      ]);
    });

    it("fails every entry of a batch SNS refused, and only that batch's", async () => {
      // Prepare: 12 messages (two batches); the first request fails with a 500.
      const publisher = new SnsAlertPublisher({ client, topicArn });
      const group = groupOf(Array.from({ length: 12 }, (_, n) => message(n)));
      twin.failNextRequests(1, 500);

      // Act
      const outcomes = await publisher.publish(group);

      // Assess
      expect(outcomes.map((o) => o.ok)).toEqual([...Array<boolean>(10).fill(false), true, true]);
      const errors = failures(outcomes);
      expect(errors.every((e) => e instanceof AlertPublishError && e.batchLevel && e.retryable)).toBe(true);
      expect(errors[0]?.message).toMatch(
        /^SNS PublishBatch to arn:aws:sns:us-east-2:000000000000:vllm-eks-pilot-alerts failed: InternalError/,
      );
      expect(twin.messages(topicArn)).toHaveLength(2);
    });

    const { namespace: _namespace, ...withoutNamespace } = fixtureInstance().labels;
    it.each([
      { case: 'an empty', labels: { ...withoutNamespace, namespace: '' } },
      { case: 'a missing', labels: withoutNamespace },
    ])(
      'sends "none" for $case label, as AMP\'s Alertmanager does (SNS refuses an empty value), and still publishes',
      async ({ labels }) => {
        // Prepare
        const publisher = new SnsAlertPublisher({ client, topicArn });
        const alert = message(1, { labels });

        // Act
        const outcomes = await publisher.publish(groupOf([alert]));

        // Assess: every attribute is there, so a filter policy matches the same messages from either engine.
        expect(outcomes.map((o) => o.ok)).toEqual([true]);
        const attributes = twin.messages(topicArn)[0]?.attributes ?? {};
        expect(Object.keys(attributes)).toEqual(['severity', 'status', 'alertname', 'target', 'cluster', 'namespace']);
        expect(attributes.namespace).toEqual({ dataType: 'String', value: 'none' });
      },
    );
  });

  describe('Method: publish (per-entry failures)', () => {
    let server: Server;
    let endpoint: string;
    let stub: SNSClient;

    beforeAll(async () => {
      // SNS answering a PublishBatch with one entry accepted and one refused.
      server = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          const body =
            '<PublishBatchResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><PublishBatchResult>' +
            '<Successful><member><Id>m0</Id><MessageId>11111111-2222-3333-4444-555555555555</MessageId></member></Successful>' +
            '<Failed><member><Id>m1</Id><Code>KMSThrottling</Code><Message>Rate exceeded for the key</Message>' +
            '<SenderFault>false</SenderFault></member></Failed>' +
            '</PublishBatchResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></PublishBatchResponse>';
          res.writeHead(200, { 'content-type': 'text/xml' });
          res.end(body);
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      stub = new SNSClient({ region: 'us-east-2', endpoint, credentials: CREDENTIALS, maxAttempts: 1 });
    });

    afterAll(async () => {
      stub.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('fails the refused entry alone, with its code, and passes the accepted one', async () => {
      // Prepare
      const publisher = new SnsAlertPublisher({ client: stub, topicArn: 'arn:aws:sns:us-east-2:123456789012:alerts' });

      // Act
      const outcomes = await publisher.publish(groupOf([message(1), message(2)]));

      // Assess
      expect(outcomes[0]).toEqual({ ok: true, messageId: '11111111-2222-3333-4444-555555555555' });
      expect(failures(outcomes)).toEqual([expect.any(AlertPublishError)]);
      expect(failures(outcomes)[0]).toMatchObject({ code: 'KMSThrottling', retryable: true, batchLevel: false });
      expect(failures(outcomes)[0]?.message).toMatch(/refused entry m1 .*: KMSThrottling: Rate exceeded for the key$/);
    });
  });

  describe('constructor', () => {
    it.each([
      { case: 'a topic name', topicArn: 'vllm-eks-pilot-alerts' },
      { case: 'an SQS ARN', topicArn: 'arn:aws:sqs:us-east-2:123456789012:alerts' },
      { case: 'a short account', topicArn: 'arn:aws:sns:us-east-2:1234:alerts' },
    ])('refuses $case as the topic', ({ topicArn }) => {
      // Act
      const act = () => new SnsAlertPublisher({ client, topicArn });

      // Assess
      expect(act).toThrow(AlertPipelineInputInvalidError);
      expect(act).toThrow(/^topicArn: .* is not an SNS topic ARN; accepted: arn:aws:sns:<region>/);
    });
  });
});

describe('Function: alertSubject', () => {
  it.each([
    {
      case: 'a firing alert',
      status: 'firing' as const,
      target: 'prod-ministral',
      expected: '[FIRING] VLLMKVCacheFull prod-ministral',
    },
    {
      case: 'a long target name, cut to 100 characters',
      status: 'resolved' as const,
      target: 't'.repeat(120),
      expected: `[RESOLVED] VLLMKVCacheFull ${'t'.repeat(70)}...`,
    },
    {
      case: 'characters SNS refuses',
      status: 'firing' as const,
      target: 'prod\nmünchen',
      expected: '[FIRING] VLLMKVCacheFull prod?m?nchen',
    },
  ])('writes $case', ({ status, target, expected }) => {
    // Prepare
    const alert = { ...message(1), status, target };

    // Act
    const subject = alertSubject(alert);

    // Assess
    expect(subject).toBe(expected);
    expect(subject).toMatch(/^[\x20-\x7e]{1,100}$/);
  });
});
