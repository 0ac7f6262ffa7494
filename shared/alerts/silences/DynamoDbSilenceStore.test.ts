import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type DynamoDbTwin, startDynamoDbTwin } from '../../../sim/harness/index.js';
import { DynamoDbSilenceStore } from './DynamoDbSilenceStore.js';
import { AlertSilenceInvalidError } from './errors.js';
import { activeSilence, type Silence } from './silence.js';
import { ALERT_SILENCES_TABLE } from './table.js';

const T0 = Date.UTC(2026, 11, 3, 9, 0, 0);
const TARGET = 'ai-eks/default/vllm-inference-app';

function silence(overrides: Partial<Silence> = {}): Silence {
  return {
    target: TARGET,
    id: 'maint-1',
    kind: 'manual',
    reason: 'node pool upgrade',
    createdBy: 'alice',
    startsAtMs: T0,
    endsAtMs: T0 + 7_200_000,
    ...overrides,
  };
}

describe('Class: DynamoDbSilenceStore', () => {
  let twin: DynamoDbTwin;
  let client: DynamoDBClient;
  let store: DynamoDbSilenceStore;

  beforeAll(async () => {
    twin = await startDynamoDbTwin({
      tables: [{ TableName: 'silences', ...ALERT_SILENCES_TABLE }],
      region: 'us-east-2',
    });
    client = new DynamoDBClient({
      region: twin.region,
      endpoint: twin.endpoint,
      credentials: twin.credentials,
      maxAttempts: 1,
    });
    store = new DynamoDbSilenceStore({ client, tableName: 'silences' });
  });

  afterAll(async () => {
    client.destroy();
    await twin.stop();
  });

  it('stores, lists per target, and removes a silence (true once, then false)', async () => {
    // Prepare
    const kept = silence();
    await store.put(kept);
    await store.put(silence({ target: 'other/default/vllm', id: 'elsewhere' }));

    // Act
    const listed = await store.list(TARGET);
    const removed = await store.delete(TARGET, kept.id);
    const removedAgain = await store.delete(TARGET, kept.id);

    // Assess
    expect(listed).toEqual([kept]);
    expect(removed).toBe(true);
    expect(removedAgain).toBe(false);
    expect(await store.list(TARGET)).toEqual([]);
  });

  it.each([
    {
      field: 'target',
      change: { target: 'no-slashes' },
      message: /target: "no-slashes" is not <cluster>\/<namespace>\/<deployment>/,
    },
    { field: 'reason', change: { reason: 'two\nlines' }, message: /reason: must be 1-500 characters on one line/ },
    { field: 'endsAtMs', change: { endsAtMs: T0 - 1 }, message: /endsAtMs: must be a time after startsAtMs/ },
    { field: 'id', change: { id: 'a b' }, message: /id: "a b" is not/ },
  ])('refuses a silence whose $field is wrong, naming it, and stores nothing', async ({ change, message }) => {
    // Act
    const put = store.put(silence({ id: 'bad', ...change }));

    // Assess
    await expect(put).rejects.toThrow(AlertSilenceInvalidError);
    await expect(put).rejects.toThrow(message);
    expect((await store.list(TARGET)).map((s) => s.id)).not.toContain('bad');
  });
});

describe('Function: activeSilence', () => {
  it('is the active silence that ends last; none before its start or from its end', () => {
    // Prepare
    const short = silence({ id: 'short', endsAtMs: T0 + 60_000 });
    const long = silence({ id: 'long', endsAtMs: T0 + 600_000 });

    // Assess
    expect(activeSilence([short, long], T0 + 1)?.id).toBe('long');
    expect(activeSilence([short, long], T0 - 1)).toBeNull();
    expect(activeSilence([short, long], T0 + 600_000)).toBeNull();
    expect(activeSilence([short], T0 + 60_000)).toBeNull();
  });
});
