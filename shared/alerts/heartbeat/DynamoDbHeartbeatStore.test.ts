import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { type DynamoDbTwin, startDynamoDbTwin } from '../../../sim/harness/index.js';
import { AlertStateCorruptError } from '../pipelineErrors.js';
import { ALERT_STATE_TABLE, DynamoDbAlertStateStore } from '../state/index.js';
import { DynamoDbHeartbeatStore, HEARTBEAT_KEY } from './DynamoDbHeartbeatStore.js';
import type { HeartbeatBeat } from './heartbeat.js';

const TABLE = 'vllm-eks-pilot-alert-state';
const T0 = Date.parse('2026-12-03T14:00:00Z');

const beat = (overrides: Partial<HeartbeatBeat> = {}): HeartbeatBeat => ({
  lastCycleAtMs: T0,
  evaluationTimeMs: T0 - 1_000,
  intervalSeconds: 15,
  evaluatorId: 'req-1',
  targets: 2,
  ok: true,
  failedTargets: [],
  partialTargets: [],
  ...overrides,
});

describe('Class: DynamoDbHeartbeatStore', () => {
  let twin: DynamoDbTwin;
  let client: DynamoDBClient;
  let tableIndex = 0;

  beforeAll(async () => {
    const tables = Array.from({ length: 6 }, (_, i) => ({ TableName: `${TABLE}-${i}`, ...ALERT_STATE_TABLE }));
    twin = await startDynamoDbTwin({ tables, region: 'us-east-2' });
    client = new DynamoDBClient({
      region: twin.region,
      endpoint: twin.endpoint,
      credentials: twin.credentials,
      maxAttempts: 1,
    });
  });

  afterAll(async () => {
    client.destroy();
    await twin.stop();
  });

  function fresh(): { store: DynamoDbHeartbeatStore; tableName: string } {
    const tableName = `${TABLE}-${tableIndex}`;
    tableIndex += 1;
    return { store: new DynamoDbHeartbeatStore({ client, tableName }), tableName };
  }

  it('reads nothing before the first cycle, then the cycle as recorded', async () => {
    // Prepare
    const { store } = fresh();
    const before = await store.read();

    // Act
    const outcome = await store.record(beat());

    // Assess
    expect(before).toBeUndefined();
    expect(outcome).toBe('recorded');
    expect(await store.read()).toEqual({ ...beat(), lastOkAtMs: T0 });
  });

  it('keeps the last ok cycle through failed ones, with the failed targets and their reasons', async () => {
    // Prepare
    const { store } = fresh();
    await store.record(beat());

    // Act
    await store.record(
      beat({
        lastCycleAtMs: T0 + 15_000,
        ok: false,
        failedTargets: [{ target: 'prod', reason: 'VLLMHighQueueDepth: Error: AMP answered HTTP 403' }],
      }),
    );

    // Assess
    expect(await store.read()).toMatchObject({
      lastCycleAtMs: T0 + 15_000,
      ok: false,
      failedTargets: [{ target: 'prod', reason: 'VLLMHighQueueDepth: Error: AMP answered HTTP 403' }],
      lastOkAtMs: T0,
    });
  });

  it('never moves back: a cycle older than the recorded one (an overlapping invocation) is stale', async () => {
    // Prepare
    const { store } = fresh();
    await store.record(beat({ lastCycleAtMs: T0 + 30_000, evaluatorId: 'req-2' }));

    // Act
    const outcome = await store.record(beat({ evaluatorId: 'req-1' }));

    // Assess
    expect(outcome).toBe('stale');
    expect(await store.read()).toMatchObject({ lastCycleAtMs: T0 + 30_000, evaluatorId: 'req-2' });
  });

  it("stays out of every target's alert states", async () => {
    // Prepare: the same table, read by target as the evaluator does.
    const { store, tableName } = fresh();
    await store.record(beat());

    // Act
    const states = new DynamoDbAlertStateStore({ client, tableName });

    // Assess
    expect(await states.list('prod')).toEqual([]);
    expect(HEARTBEAT_KEY.partition.startsWith('#')).toBe(true);
  });

  it('names the attribute of a heartbeat item it cannot read', async () => {
    // Prepare
    const { store, tableName } = fresh();
    await client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: {
          pk: { S: HEARTBEAT_KEY.partition },
          sk: { S: HEARTBEAT_KEY.sort },
          schemaVersion: { N: '1' },
          ok: { BOOL: true },
          evaluatorId: { S: 'x' },
          lastCycleAtMs: { S: 'yesterday' },
        },
      }),
    );

    // Act
    const reading = store.read();

    // Assess
    await expect(reading).rejects.toThrow(AlertStateCorruptError);
    await expect(reading).rejects.toThrow(/attribute lastCycleAtMs is not a number/);
  });
});
