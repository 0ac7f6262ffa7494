import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { type DynamoDbTwin, startDynamoDbTwin } from '../../../sim/harness/index.js';
import {
  AlertPipelineInputInvalidError,
  AlertStateCorruptError,
  AlertStateRequestError,
  AlertStateUnavailableError,
} from '../pipelineErrors.js';
import { DynamoDbAlertStateStore } from './DynamoDbAlertStateStore.js';
import { FIXTURE_T0, FIXTURE_TARGET, fixtureInstance, fixtureState } from '../testing/fixtures.js';
import { ALERT_STATE_TABLE } from './table.js';
import { RESOLVED_RETENTION_SECONDS, type AlertState, type ClaimRequest } from '../alertState.js';

const TABLE = 'vllm-eks-pilot-alert-state';
const TABLES = 16;

describe('Class: DynamoDbAlertStateStore', () => {
  let twin: DynamoDbTwin;
  let client: DynamoDBClient;
  let tableIndex = 0;

  beforeAll(async () => {
    // One empty table per test, so tests do not see each other's records.
    const tables = Array.from({ length: TABLES }, (_, i) => ({ TableName: `${TABLE}-${i}`, ...ALERT_STATE_TABLE }));
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

  function freshStore(): { store: DynamoDbAlertStateStore; tableName: string } {
    const tableName = `${TABLE}-${tableIndex}`;
    tableIndex += 1;
    return { store: new DynamoDbAlertStateStore({ client, tableName }), tableName };
  }

  const instance = fixtureInstance();
  const firing = fixtureState(instance, FIXTURE_T0);
  const resolved: AlertState = { ...firing, status: 'resolved', endsAtMs: FIXTURE_T0 + 300_000, value: 0.99 };

  function claimRequest(overrides: Partial<ClaimRequest> = {}): ClaimRequest {
    return {
      state: firing,
      expectedVersion: null,
      claimId: 'evaluator-a/1',
      nowMs: FIXTURE_T0,
      claimUntilMs: FIXTURE_T0 + 60_000,
      ...overrides,
    };
  }

  describe('Method: claim', () => {
    it('creates an absent record with the state and the claim, and list reads it back exactly', async () => {
      // Prepare: labels with an empty value, no links.
      const { store } = freshStore();
      const state: AlertState = {
        ...firing,
        labels: { ...firing.labels, gpu: '' },
        runbookUrl: null,
        dashboardUrl: null,
      };

      // Act
      const claimed = await store.claim(claimRequest({ state }));
      const listed = await store.list(FIXTURE_TARGET.name);

      // Assess
      const expected = {
        ...state,
        lastNotification: null,
        claim: { id: 'evaluator-a/1', untilMs: FIXTURE_T0 + 60_000 },
        version: 1,
        expiresAt: null,
      };
      expect(claimed).toEqual(expected);
      expect(listed).toEqual([expected]);
    });

    it('lets exactly one of two evaluators claiming at the same moment win', async () => {
      // Prepare
      const { store } = freshStore();

      // Act
      const results = await Promise.all([
        store.claim(claimRequest({ claimId: 'evaluator-a/1' })),
        store.claim(claimRequest({ claimId: 'evaluator-b/1' })),
      ]);

      // Assess
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
      const [record] = await store.list(FIXTURE_TARGET.name);
      expect(record?.claim?.id).toBe(results.find((r) => r !== undefined)?.claim?.id);
    });

    it.each([
      { case: 'the record exists but the caller saw none', expectedVersion: null, nowMs: FIXTURE_T0 + 120_000 },
      { case: 'the caller read an older version', expectedVersion: 2, nowMs: FIXTURE_T0 + 120_000 },
      { case: "another evaluator's claim is still live", expectedVersion: 3, nowMs: FIXTURE_T0 + 59_999 },
    ])('refuses a claim when $case, leaving the record as it was', async ({ expectedVersion, nowMs }) => {
      // Prepare: a record at version 3 (claimed, released, claimed again by evaluator-a until T0 + 60 s).
      const { store } = freshStore();
      await store.claim(claimRequest());
      await store.release({ target: firing.target, fingerprint: firing.fingerprint, claimId: 'evaluator-a/1' });
      await store.claim(claimRequest({ expectedVersion: 2, claimId: 'evaluator-a/2' }));
      const before = await store.list(FIXTURE_TARGET.name);

      // Act
      const claimed = await store.claim(
        claimRequest({
          state: resolved,
          expectedVersion,
          claimId: 'evaluator-b/1',
          nowMs,
          claimUntilMs: nowMs + 60_000,
        }),
      );

      // Assess
      expect(claimed).toBeUndefined();
      expect(await store.list(FIXTURE_TARGET.name)).toEqual(before);
    });

    it('takes over an expired claim of a crashed evaluator', async () => {
      // Prepare
      const { store } = freshStore();
      const first = await store.claim(claimRequest({ claimId: 'crashed/1' }));

      // Act: at the claim's expiry.
      const taken = await store.claim(
        claimRequest({
          state: resolved,
          expectedVersion: first?.version ?? -1,
          claimId: 'evaluator-b/1',
          nowMs: FIXTURE_T0 + 60_000,
          claimUntilMs: FIXTURE_T0 + 120_000,
        }),
      );

      // Assess
      expect(taken).toMatchObject({ status: 'resolved', claim: { id: 'evaluator-b/1' }, version: 2 });
      // The crashed evaluator's late commit finds its claim gone.
      const late = await store.commit({
        target: firing.target,
        fingerprint: firing.fingerprint,
        claimId: 'crashed/1',
        notification: { status: 'firing', startsAtMs: FIXTURE_T0, atMs: FIXTURE_T0 + 61_000, reason: 'first' },
        expiresAt: null,
      });
      expect(late).toBeUndefined();
    });

    it.each([
      {
        case: 'a NaN value',
        state: { ...firing, value: Number.NaN },
        field: /^state\.value: NaN is not a finite number/,
      },
      { case: 'an empty target', state: { ...firing, target: '' }, field: /^state\.target: "" is empty/ },
      {
        case: 'a firing state with an end',
        state: { ...firing, endsAtMs: FIXTURE_T0 },
        field: /^state\.endsAtMs: is \d+ for status firing; accepted: null while firing/,
      },
    ])('refuses $case without writing', async ({ state, field }) => {
      // Prepare
      const { store } = freshStore();

      // Act
      const act = store.claim(claimRequest({ state }));

      // Assess
      await expect(act).rejects.toThrow(AlertPipelineInputInvalidError);
      await expect(act).rejects.toThrow(field);
      expect(await store.list(FIXTURE_TARGET.name)).toEqual([]);
    });
  });

  describe('Method: commit', () => {
    it('records the notification, drops the claim and keeps a firing record without a TTL', async () => {
      // Prepare
      const { store } = freshStore();
      await store.claim(claimRequest());

      // Act
      const committed = await store.commit({
        target: firing.target,
        fingerprint: firing.fingerprint,
        claimId: 'evaluator-a/1',
        notification: { status: 'firing', startsAtMs: FIXTURE_T0, atMs: FIXTURE_T0 + 400, reason: 'first' },
        expiresAt: null,
      });

      // Assess
      const expected = {
        ...firing,
        lastNotification: { status: 'firing', startsAtMs: FIXTURE_T0, atMs: FIXTURE_T0 + 400, reason: 'first' },
        claim: null,
        version: 2,
        expiresAt: null,
      };
      expect(committed).toEqual(expected);
      expect(await store.list(FIXTURE_TARGET.name)).toEqual([expected]);
    });

    it('sets the TTL of a resolved record, and a new incident clears it', async () => {
      // Prepare
      const { store } = freshStore();
      await store.claim(claimRequest({ state: resolved }));
      const expiresAt = Math.floor(FIXTURE_T0 / 1000) + RESOLVED_RETENTION_SECONDS;
      const committed = await store.commit({
        target: firing.target,
        fingerprint: firing.fingerprint,
        claimId: 'evaluator-a/1',
        notification: { status: 'resolved', startsAtMs: FIXTURE_T0, atMs: FIXTURE_T0 + 1, reason: 'resolved' },
        expiresAt,
      });

      // Act
      const incident = await store.claim(
        claimRequest({
          state: { ...firing, startsAtMs: FIXTURE_T0 + 600_000 },
          expectedVersion: committed?.version ?? -1,
          claimId: 'evaluator-a/2',
          nowMs: FIXTURE_T0 + 600_000,
          claimUntilMs: FIXTURE_T0 + 660_000,
        }),
      );

      // Assess
      expect(committed?.expiresAt).toBe(expiresAt);
      expect(incident).toMatchObject({ status: 'firing', startsAtMs: FIXTURE_T0 + 600_000, expiresAt: null });
      // The last notification stays: it says the previous incident's resolution went out.
      expect(incident?.lastNotification).toMatchObject({ status: 'resolved', startsAtMs: FIXTURE_T0 });
    });

    it('refuses a commit by a claim that is not the live one', async () => {
      // Prepare
      const { store } = freshStore();
      await store.claim(claimRequest());
      const before = await store.list(FIXTURE_TARGET.name);

      // Act
      const committed = await store.commit({
        target: firing.target,
        fingerprint: firing.fingerprint,
        claimId: 'evaluator-b/1',
        notification: { status: 'firing', startsAtMs: FIXTURE_T0, atMs: FIXTURE_T0, reason: 'first' },
        expiresAt: null,
      });

      // Assess
      expect(committed).toBeUndefined();
      expect(await store.list(FIXTURE_TARGET.name)).toEqual(before);
    });
  });

  describe('Method: release', () => {
    it('drops the claim and keeps the state it stored, so the next run sees an unsent change', async () => {
      // Prepare
      const { store } = freshStore();
      await store.claim(claimRequest());

      // Act
      const released = await store.release({
        target: firing.target,
        fingerprint: firing.fingerprint,
        claimId: 'evaluator-a/1',
      });
      const releasedAgain = await store.release({
        target: firing.target,
        fingerprint: firing.fingerprint,
        claimId: 'evaluator-a/1',
      });

      // Assess
      expect([released, releasedAgain]).toEqual([true, false]);
      expect(await store.list(FIXTURE_TARGET.name)).toEqual([
        { ...firing, lastNotification: null, claim: null, version: 2, expiresAt: null },
      ]);
    });
  });

  describe('Method: list', () => {
    it("returns only the target's records", async () => {
      // Prepare
      const { store } = freshStore();
      const other = fixtureState(fixtureInstance('pod-b', { target: 'staging', fingerprint: 'kv-pod-b' }), FIXTURE_T0);
      await store.claim(claimRequest());
      await store.claim(claimRequest({ state: other }));
      await store.claim(claimRequest({ state: { ...firing, fingerprint: 'kv-pod-c' } }));

      // Act
      const listed = await store.list(FIXTURE_TARGET.name);

      // Assess
      expect(listed.map((r) => r.fingerprint).sort()).toEqual(['kv-pod-c', firing.fingerprint]);
    });

    it('names the attribute of an item it cannot read', async () => {
      // Prepare: an item written by something else.
      const { store, tableName } = freshStore();
      await client.send(
        new PutItemCommand({
          TableName: tableName,
          Item: { pk: { S: FIXTURE_TARGET.name }, sk: { S: 'odd' }, schemaVersion: { N: '1' }, labels: { S: '{' } },
        }),
      );

      // Act
      const act = store.list(FIXTURE_TARGET.name);

      // Assess
      await expect(act).rejects.toThrow(AlertStateCorruptError);
      await expect(act).rejects.toThrow(/prod-ministral\/odd cannot be read: attribute labels is not JSON/);
    });
  });

  describe('Errors', () => {
    it('reports a missing table as a request error naming the table', async () => {
      // Prepare
      const store = new DynamoDbAlertStateStore({ client, tableName: 'no-such-table' });

      // Act
      const act = store.list(FIXTURE_TARGET.name);

      // Assess
      await expect(act).rejects.toThrow(AlertStateRequestError);
      await expect(act).rejects.toThrow(/DynamoDB Query on table no-such-table failed: ResourceNotFoundException/);
    });

    it('reports an unreachable DynamoDB as transient', async () => {
      // Prepare: a stopped twin's port answers nothing.
      const stopped = await startDynamoDbTwin({ region: 'us-east-2' });
      await stopped.stop();
      const offline = new DynamoDBClient({
        region: 'us-east-2',
        endpoint: stopped.endpoint,
        credentials: stopped.credentials,
        maxAttempts: 1,
      });
      const store = new DynamoDbAlertStateStore({ client: offline, tableName: TABLE });

      try {
        // Act
        const act = store.claim(claimRequest());

        // Assess
        await expect(act).rejects.toThrow(AlertStateUnavailableError);
        await expect(act).rejects.toMatchObject({ retryable: true });
      } finally {
        offline.destroy();
      }
    });
  });
});
