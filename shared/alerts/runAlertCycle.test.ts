import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import { type DynamoDbTwin, type SnsTwin, startDynamoDbTwin, startSnsTwin } from '../../sim/harness/index.js';
import { VirtualClock } from '../clock/index.js';
import type { AlertMessage } from './message.js';
import { SnsAlertPublisher } from './notify/index.js';
import type { LoggerPort } from '../log/index.js';
import {
  type AlertCycleSummary,
  mergeAlertCycleSummaries,
  runAlertCycle,
  summarizeAlertCycle,
  type RunAlertCycleInput,
} from './runAlertCycle.js';
import { AlertPipelineInputInvalidError } from './pipelineErrors.js';
import { activeSilence, type Silence } from './silences/index.js';
import { ALERT_STATE_TABLE, DynamoDbAlertStateStore } from './state/index.js';
import { FIXTURE_T0, FIXTURE_TARGET, fixtureEvaluation, fixtureInstance, fixtureState } from './testing/fixtures.js';
import type { AlertStateRecord, AlertStateStore } from './alertState.js';
import { ALERT_NAMES, type AlertInstance, type TargetEvaluation } from './types.js';

const TABLE = 'vllm-eks-pilot-alert-state';
const TABLES = 16;
const REPEAT_SECONDS = 10;

/** A store whose reads fail for one target: a DynamoDB partition that throttles. */
class FailingForTarget implements AlertStateStore {
  constructor(
    private readonly inner: AlertStateStore,
    private readonly target: string,
  ) {}

  list(target: string): Promise<AlertStateRecord[]> {
    if (target === this.target) return Promise.reject(new Error('ProvisionedThroughputExceededException (test)'));
    return this.inner.list(target);
  }
  claim: AlertStateStore['claim'] = (request) => this.inner.claim(request);
  commit: AlertStateStore['commit'] = (request) => this.inner.commit(request);
  release: AlertStateStore['release'] = (request) => this.inner.release(request);
}

describe('Function: runAlertCycle', () => {
  let dynamo: DynamoDbTwin;
  let sns: SnsTwin;
  let dynamoClient: DynamoDBClient;
  let snsClient: SNSClient;
  let topicArn: string;
  let tableIndex = 0;
  const snsRequests: string[] = [];

  beforeAll(async () => {
    const tables = Array.from({ length: TABLES }, (_, i) => ({ TableName: `${TABLE}-${i}`, ...ALERT_STATE_TABLE }));
    [dynamo, sns] = await Promise.all([
      startDynamoDbTwin({ tables, region: 'us-east-2' }),
      startSnsTwin({ region: 'us-east-2', log: (line) => snsRequests.push(line) }),
    ]);
    topicArn = sns.createTopic('vllm-eks-pilot-alerts');
    dynamoClient = new DynamoDBClient({
      region: dynamo.region,
      endpoint: dynamo.endpoint,
      credentials: dynamo.credentials,
      maxAttempts: 1,
    });
    // One attempt: an injected SNS failure must reach the pipeline instead of being retried away by the SDK.
    snsClient = new SNSClient({
      region: sns.region,
      endpoint: sns.endpoint,
      credentials: { accessKeyId: 'AKIDTWINSNS', secretAccessKey: 'twin-sns-not-a-secret' },
      maxAttempts: 1,
    });
  });

  afterAll(async () => {
    dynamoClient.destroy();
    snsClient.destroy();
    await Promise.all([dynamo.stop(), sns.stop()]);
  });

  beforeEach(() => {
    sns.clear();
    sns.failNextRequests(0);
    snsRequests.length = 0;
  });

  /** A fresh table, a clock at T0 and a `cycle(firing, overrides)` that evaluates "now" and runs one cycle. */
  function world(repeatIntervalSeconds = REPEAT_SECONDS) {
    const store = new DynamoDbAlertStateStore({ client: dynamoClient, tableName: `${TABLE}-${tableIndex}` });
    tableIndex += 1;
    const clock = new VirtualClock(FIXTURE_T0);
    const publisher = new SnsAlertPublisher({ client: snsClient, topicArn });
    const input = (evaluations: TargetEvaluation[], evaluatorId = 'evaluator-a'): RunAlertCycleInput => ({
      evaluations,
      settingsFor: () => ({ repeatIntervalSeconds }),
      store,
      publisher,
      clock,
      evaluatorId,
    });
    const cycle = (firing: AlertInstance[], overrides: Partial<TargetEvaluation> = {}, evaluatorId = 'evaluator-a') =>
      runAlertCycle(input([fixtureEvaluation(firing, clock.now(), overrides)], evaluatorId));
    return { store, clock, publisher, input, cycle };
  }

  /** The messages SNS accepted since the last call, as `<status> <reason>`. */
  let seen = 0;
  function newMessages(): string[] {
    const all = sns.messages(topicArn).map((m) => JSON.parse(m.message) as AlertMessage);
    const fresh = all.slice(seen);
    seen = all.length;
    return fresh.map((m) => `${m.status} ${m.reason}`);
  }
  beforeEach(() => {
    seen = 0;
  });

  const instance = fixtureInstance();

  it('sends a first notification once, not on every evaluation', async () => {
    // Prepare
    const { clock, cycle } = world(4 * 60 * 60);

    // Act
    const first = await cycle([instance]);
    const afterFirst = newMessages();
    clock.advance(60_000);
    const second = await cycle([instance]);

    // Assess
    expect(afterFirst).toEqual(['firing first']);
    expect(first.targets[0]).toMatchObject({ status: 'ok', firing: 1, failed: [], skipped: [] });
    expect(first.targets[0]?.sent).toEqual([
      expect.objectContaining({
        alertname: 'VLLMKVCacheFull',
        status: 'firing',
        reason: 'first',
        messageId: expect.any(String),
      }),
    ]);
    expect(newMessages()).toEqual([]);
    expect(second.targets[0]?.decisions).toEqual([
      expect.objectContaining({
        action: 'none',
        reason: 'still-firing',
        text: expect.stringMatching(/repeat in 14340 s$/),
      }),
    ]);
  });

  it('sends exactly one notification when two evaluators run at the same moment', async () => {
    // Prepare
    const { cycle } = world();

    // Act
    const results = await Promise.all([cycle([instance], {}, 'evaluator-a'), cycle([instance], {}, 'evaluator-b')]);

    // Assess
    expect(newMessages()).toEqual(['firing first']);
    expect(results.map((r) => r.targets[0]?.sent.length).sort()).toEqual([0, 1]);
    expect(results.flatMap((r) => r.targets.flatMap((t) => t.failed))).toEqual([]);
    // The other evaluator lost the claim, saw it claimed, or saw it sent, depending on timing; never a second send.
    const other = results.find((r) => r.targets[0]?.sent.length === 0)?.targets[0];
    expect(other?.skipped.length === 1 || other?.decisions[0]?.reason === 'still-firing').toBe(true);
  });

  it('retries a notification SNS refused on the next run, exactly once', async () => {
    // Prepare
    const { clock, cycle } = world(4 * 60 * 60);
    sns.failNextRequests(1, 500);

    // Act
    const failing = await cycle([instance]);
    const afterFailure = newMessages();
    clock.advance(60_000);
    const retried = await cycle([instance]);
    const afterRetry = newMessages();
    clock.advance(60_000);
    await cycle([instance]);

    // Assess
    expect(afterFailure).toEqual([]);
    expect(failing.targets[0]).toMatchObject({ status: 'failed', sent: [] });
    expect(failing.targets[0]?.failed).toEqual([
      expect.objectContaining({ reason: 'first', errorName: 'AlertPublishError', retryable: true }),
    ]);
    expect(afterRetry).toEqual(['firing retry']);
    expect(retried.targets[0]?.status).toBe('ok');
    expect(newMessages()).toEqual([]);
  });

  it('waits for the claim of an evaluator that crashed, then sends once it expires', async () => {
    // Prepare: another evaluator claimed the first notification at T0 and died before publishing.
    const { clock, cycle, store } = world();
    await store.claim({
      state: { ...fixtureState(instance, clock.now()) },
      expectedVersion: null,
      claimId: 'crashed/1',
      nowMs: clock.now(),
      claimUntilMs: clock.now() + 60_000,
    });

    // Act
    clock.advance(30_000);
    const blocked = await cycle([instance]);
    const whileClaimed = newMessages();
    clock.advance(30_000);
    await cycle([instance]);

    // Assess
    expect(whileClaimed).toEqual([]);
    expect(blocked.targets[0]?.skipped).toEqual([
      expect.objectContaining({
        why: expect.stringMatching(/^skipped: another evaluator holds the claim \(crashed\/1\)/),
      }),
    ]);
    expect(newMessages()).toEqual(['firing retry']);
  });

  it('repeats a firing alert after the repeat interval, and not before', async () => {
    // Prepare
    const { clock, cycle } = world(REPEAT_SECONDS);
    const perCycle: string[][] = [];

    // Act: cycles at 0, 5, 10, 15 and 20 s.
    for (let i = 0; i < 5; i += 1) {
      await cycle([instance]);
      perCycle.push(newMessages());
      clock.advance(5_000);
    }

    // Assess
    expect(perCycle).toEqual([['firing first'], [], ['firing repeat'], [], ['firing repeat']]);
  });

  it('sends the resolved notification once, and keeps the record only until its TTL', async () => {
    // Prepare
    const { clock, cycle, store } = world();
    await cycle([instance]);
    newMessages();

    // Act
    clock.advance(60_000);
    await cycle([]);
    const afterResolve = newMessages();
    clock.advance(60_000);
    const later = await cycle([]);

    // Assess
    expect(afterResolve).toEqual(['resolved resolved']);
    expect(newMessages()).toEqual([]);
    expect(later.targets[0]?.decisions).toEqual([]);
    const [record] = await store.list(FIXTURE_TARGET.name);
    expect(record?.expiresAt).toBe(Math.floor((FIXTURE_T0 + 60_000) / 1000) + 7 * 24 * 3600);
    const resolved = sns.messages(topicArn).map((m) => JSON.parse(m.message) as AlertMessage)[1];
    expect(resolved).toMatchObject({ status: 'resolved', value: 0.97, endsAt: '2025-06-01T12:01:00.000Z' });
  });

  it('never loses a resolved notification whose publish failed', async () => {
    // Prepare
    const { clock, cycle } = world();
    await cycle([instance]);
    newMessages();
    sns.failNextRequests(1, 429);

    // Act
    clock.advance(60_000);
    await cycle([]);
    const afterFailure = newMessages();
    clock.advance(60_000);
    await cycle([]);
    const afterRetry = newMessages();
    clock.advance(60_000);
    await cycle([]);

    // Assess
    expect(afterFailure).toEqual([]);
    expect(afterRetry).toEqual(['resolved retry']);
    expect(newMessages()).toEqual([]);
    const resolved = sns.messages(topicArn).map((m) => JSON.parse(m.message) as AlertMessage)[1];
    // The end is when the condition cleared, not when the retry went out.
    expect(resolved?.endsAt).toBe('2025-06-01T12:01:00.000Z');
  });

  it('sends the pending resolved notification before a new incident of the same instance', async () => {
    // Prepare: firing sent; resolved fails to go out.
    const { clock, cycle } = world();
    await cycle([instance]);
    sns.failNextRequests(1, 500);
    clock.advance(60_000);
    await cycle([]);
    newMessages();

    // Act: it fires again.
    clock.advance(60_000);
    const result = await cycle([instance]);

    // Assess
    expect(newMessages()).toEqual(['resolved retry', 'firing first']);
    const [resolved, incident] = sns
      .messages(topicArn)
      .slice(-2)
      .map((m) => JSON.parse(m.message) as AlertMessage);
    expect(resolved?.startsAt).toBe('2025-06-01T12:00:00.000Z');
    expect(incident).toMatchObject({ startsAt: '2025-06-01T12:02:00.000Z', endsAt: null });
    expect(result.targets[0]?.status).toBe('ok');
  });

  it('keeps a firing alert of a rule whose query failed, sending nothing', async () => {
    // Prepare
    const { clock, cycle } = world();
    await cycle([instance]);
    newMessages();

    // Act
    clock.advance(60_000);
    const result = await cycle([], {
      evaluatedRules: ALERT_NAMES.filter((name) => name !== 'VLLMKVCacheFull'),
      failures: [{ alertname: 'VLLMKVCacheFull', error: new Error('HTTP 503 from AMP') }],
    });

    // Assess
    expect(newMessages()).toEqual([]);
    expect(result.targets[0]).toMatchObject({
      status: 'partial',
      ruleFailures: [{ alertname: 'VLLMKVCacheFull', error: 'Error: HTTP 503 from AMP' }],
    });
    expect(result.targets[0]?.decisions.map((d) => d.reason)).toEqual(['rule-failed']);
  });

  it('publishes one batch per target and severity', async () => {
    // Prepare
    const { cycle } = world();
    const queue = fixtureInstance('pod-q', {
      alertname: 'VLLMHighQueueDepth',
      severity: 'warning',
      fingerprint: 'queue-pod-q',
    });

    // Act
    await cycle([instance, fixtureInstance('pod-b', { fingerprint: 'kv-pod-b' }), queue]);

    // Assess
    expect(newMessages()).toHaveLength(3);
    expect(snsRequests.filter((line) => line.includes('PublishBatch'))).toEqual([
      expect.stringMatching(/-> 2 published/),
      expect.stringMatching(/-> 1 published/),
    ]);
  });

  it("does not let one target's failures stop the others", async () => {
    // Prepare: three targets; "broken" cannot read its state, "first" meets an SNS outage, "third" is healthy.
    const { input, store, clock } = world();
    const evaluationOf = (name: string) => {
      const target = { ...FIXTURE_TARGET, name };
      return fixtureEvaluation([fixtureInstance(undefined, { target: name, fingerprint: `kv-${name}` })], clock.now(), {
        target,
      });
    };
    sns.failNextRequests(1, 500);

    // Act: one target at a time, so the single injected failure hits the first target's publish.
    const result = await runAlertCycle({
      ...input([evaluationOf('first'), evaluationOf('broken'), evaluationOf('third')]),
      store: new FailingForTarget(store, 'broken'),
      concurrency: 1,
    });

    // Assess
    expect(result.targets.map((t) => [t.target, t.status, t.sent.length, t.failed.length])).toEqual([
      ['first', 'failed', 0, 1],
      ['broken', 'failed', 0, 0],
      ['third', 'ok', 1, 0],
    ]);
    expect(result.targets[1]?.problems).toEqual(['Error: ProvisionedThroughputExceededException (test)']);
    expect(newMessages()).toEqual(['firing first']);
    expect(summarizeAlertCycle(result).totals).toEqual({
      targets: 3,
      failedTargets: 2,
      firing: 3,
      sent: 1,
      failed: 1,
      skipped: 0,
      muted: 0,
    });
  });

  it('logs each notification sent and each failure with the target and reason', async () => {
    // Prepare
    const { input, clock } = world();
    const lines: Array<[string, string, Record<string, unknown>]> = [];
    const log: LoggerPort = {
      debug: () => undefined,
      info: (message, fields = {}) => lines.push(['info', message, fields]),
      warn: (message, fields = {}) => lines.push(['warn', message, fields]),
      error: (message, fields = {}) => lines.push(['error', message, fields]),
    };
    sns.failNextRequests(1, 500);

    // Act
    await runAlertCycle({ ...input([fixtureEvaluation([instance], clock.now())]), log });
    clock.advance(60_000);
    await runAlertCycle({ ...input([fixtureEvaluation([instance], clock.now())]), log });

    // Assess
    expect(lines.map(([level, message, fields]) => [level, message, fields.target, fields.reason])).toEqual([
      ['error', 'alert notification not sent; the next run retries it', 'prod-ministral', 'first'],
      ['info', 'alert notification sent', 'prod-ministral', 'retry'],
    ]);
  });

  it('summarises a cycle in one line per notification', async () => {
    // Prepare
    const { cycle } = world();

    // Act
    const summary = summarizeAlertCycle(await cycle([instance]));

    // Assess
    expect(summary).toEqual({
      evaluatorId: 'evaluator-a',
      at: '2025-06-01T12:00:00.000Z',
      totals: { targets: 1, failedTargets: 0, firing: 1, sent: 1, failed: 0, skipped: 0, muted: 0 },
      targets: [
        {
          target: 'prod-ministral',
          status: 'ok',
          firing: 1,
          sent: [`VLLMKVCacheFull firing (first) ${instance.fingerprint}`],
          failed: [],
          skipped: 0,
          muted: [],
          ruleFailures: [],
          problems: [],
        },
      ],
    });
  });

  it('mutes a silenced target: nothing sent, each due notification recorded as muted; sent once the silence ends', async () => {
    // Prepare
    const { input, clock } = world();
    const silence: Silence = {
      target: 'ai-eks/default/vllm-inference-app',
      id: 'calibration:calib-1',
      kind: 'calibration',
      reason: 'calibration execution calib-1 is saturating the target on purpose',
      createdBy: 'arn:aws:states:us-east-2:1:execution:m:calib-1',
      startsAtMs: clock.now() - 1_000,
      endsAtMs: clock.now() + 120_000,
    };
    const run = () =>
      runAlertCycle({
        ...input([fixtureEvaluation([instance], clock.now())]),
        silenceFor: () => activeSilence([silence], clock.now()),
      });

    // Act
    const during = await run();
    const sentDuring = newMessages();
    clock.advance(180_000);
    const after = await run();

    // Assess
    expect(sentDuring).toEqual([]);
    expect(during.targets[0]?.sent).toEqual([]);
    expect(during.targets[0]?.muted).toEqual([
      expect.objectContaining({
        alertname: 'VLLMKVCacheFull',
        status: 'firing',
        silence: { id: silence.id, kind: 'calibration', reason: silence.reason, endsAtMs: silence.endsAtMs },
      }),
    ]);
    expect(summarizeAlertCycle(during).targets[0]?.muted).toEqual([
      expect.stringContaining('muted by calibration silence calibration:calib-1 (calibration execution calib-1'),
    ]);
    expect(newMessages()).toEqual(['firing first']);
    expect(after.targets[0]?.muted).toEqual([]);
  });

  it('refuses two evaluations of one target', async () => {
    // Prepare
    const { input, clock } = world();
    const evaluation = fixtureEvaluation([], clock.now());

    // Act
    const act = runAlertCycle(input([evaluation, evaluation]));

    // Assess
    await expect(act).rejects.toThrow(/^evaluations: target prod-ministral appears more than once/);
  });
});

describe('Function: mergeAlertCycleSummaries', () => {
  /** One cycle's summary of target `prod`: `sent` lines, `firing` instances, its status. */
  const cycle = (at: string, sent: string[], firing: number, status: 'ok' | 'failed' = 'ok'): AlertCycleSummary => ({
    evaluatorId: 'req-1',
    at,
    totals: {
      targets: 1,
      failedTargets: status === 'failed' ? 1 : 0,
      firing,
      sent: sent.length,
      failed: 0,
      skipped: 1,
      muted: 0,
    },
    targets: [
      {
        target: 'prod',
        status,
        firing,
        sent,
        failed: [],
        skipped: 1,
        muted: [],
        ruleFailures: status === 'failed' ? ['VLLMHighQueueDepth: Error: timeout'] : [],
        problems: [],
      },
    ],
  });

  it("sums what any cycle sent or skipped, and keeps the last cycle's state (firing, status, failures)", () => {
    // Prepare: the alert fires in the first cycle, resolves in the third; the fourth fails.
    const cycles = [
      cycle('2026-12-03T14:00:00.000Z', ['VLLMKVCacheFull firing (first) fp'], 1),
      cycle('2026-12-03T14:00:15.000Z', [], 1),
      cycle('2026-12-03T14:00:30.000Z', ['VLLMKVCacheFull resolved (resolved) fp'], 0),
      cycle('2026-12-03T14:00:45.000Z', [], 0, 'failed'),
    ];

    // Act
    const merged = mergeAlertCycleSummaries(cycles);

    // Assess
    expect(merged.at).toBe('2026-12-03T14:00:00.000Z');
    expect(merged.totals).toEqual({
      targets: 1,
      failedTargets: 1,
      firing: 0,
      sent: 2,
      failed: 0,
      skipped: 4,
      muted: 0,
    });
    expect(merged.targets[0]).toMatchObject({
      status: 'failed',
      sent: ['VLLMKVCacheFull firing (first) fp', 'VLLMKVCacheFull resolved (resolved) fp'],
      ruleFailures: ['VLLMHighQueueDepth: Error: timeout'],
    });
  });

  it('merges one cycle to itself, and refuses none', () => {
    // Prepare
    const one = cycle('2026-12-03T14:00:00.000Z', ['x'], 1);

    // Act / Assess
    expect(mergeAlertCycleSummaries([one])).toEqual(one);
    expect(() => mergeAlertCycleSummaries([])).toThrow(AlertPipelineInputInvalidError);
  });
});
