import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoDBClient, PutItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { type DynamoDbTwin, startDynamoDbTwin } from '../../../sim/harness/index.js';
import { CalibrationDependencyUnavailableError } from '../errors.js';
import type { CalibrationReport, StepMeasurement, Thresholds } from '../types.js';
import { DynamoDbHistoryStore, REPORT_INLINE_LIMIT_BYTES } from './DynamoDbHistoryStore.js';
import {
  CalibrationHistoryConflictError,
  CalibrationHistoryCorruptError,
  CalibrationHistoryRecordInvalidError,
  CalibrationHistoryRequestError,
} from './errors.js';
import { historyTargetKey } from './historyTargetKey.js';
import { CALIBRATION_HISTORY_TABLE } from './table.js';
import type { HistoryRecord } from './types.js';

const TABLE = 'vllm-pilot-calibration-history';
const TARGET = historyTargetKey({ cluster: 'prod-use2', namespace: 'default', deployment: 'vllm-inference-app' });

const derived = <T>(value: T, reason = 'test') => ({ value, reason, formula: `${String(value)} (test)` });

const THRESHOLDS: Thresholds = {
  queueDepthPerPod: derived(27, 'a queue of 27 waits about 0.5 s at 54 req/s'),
  queueActivation: derived(1),
  p95LatencySeconds: derived(4.2),
  scaleIn: derived({ queueDepth: 0 as const, p95BelowSeconds: 2.5, forSeconds: 300 }),
};

function step(index: number, rateRps: number): StepMeasurement {
  return {
    index,
    rateRps,
    holdSeconds: 60,
    windowStart: '2026-03-02T10:00:00.000Z',
    windowEnd: '2026-03-02T10:01:00.000Z',
    k6: {
      executor: 'constant-arrival-rate',
      rate: rateRps,
      durationSeconds: 60,
      iterations: rateRps * 60,
      droppedIterations: 0,
      httpReqs: rateRps * 60,
      httpReqFailed: 0,
      iterationsRate: rateRps,
      httpReqDurationMs: { avg: 2100, min: 900, med: 2000, max: 4100, p90: 2400, p95: 2500, p99: 3100 },
    },
    amp: {
      queueMean: 0.4,
      queueMax: 3,
      queueSlopePerSecond: 0,
      p95E2eSeconds: 2.5,
      p95TtftSeconds: null,
      p95InterTokenSeconds: 0.021,
      kvCacheUsageMean: 0.31,
      kvCacheUsageMax: 0.52,
      preemptions: 0,
      completedRps: rateRps,
      pods: 1,
    },
    verdict: { saturated: false, reasons: [] },
  };
}

function record(finishedAt: string, executionName: string, overrides: Partial<HistoryRecord> = {}): HistoryRecord {
  const report: CalibrationReport = {
    version: 1,
    provenance: {
      executionId: `arn:aws:states:us-east-2:123456789012:execution:calibration:${executionName}`,
      executionName,
      startedAt: '2026-03-02T09:30:00.000Z',
      finishedAt,
      cluster: 'prod-use2',
      namespace: 'default',
      deployment: 'vllm-inference-app',
      model: 'ministral-8b',
      image: 'vllm/vllm-openai:v0.11.0',
      gpu: 'NVIDIA L40S',
      vllmArgs: ['--max-model-len', '8192'],
      podTemplateHash: '5d8f7c9b6',
      strategy: 'linear',
      requestShape: { promptTokens: 35, maxTokens: 100 },
    },
    steps: [step(0, 10), step(1, 20)],
    analysis: {
      saturation: { found: false, reason: 'no step saturated within the plan' },
      lastStableRps: 20,
      capacityRps: derived(20),
      thresholds: THRESHOLDS,
      notes: ['a lower bound: saturation was not reached'],
    },
    change: null,
  };
  return {
    targetKey: TARGET,
    finishedAt,
    executionName,
    report,
    thresholds: THRESHOLDS,
    previousThresholds: { queueDepthPerPod: '25', queueActivation: '1', p95LatencySeconds: '5' },
    podTemplateHash: '5d8f7c9b6',
    ...overrides,
  };
}

describe('Class: DynamoDbHistoryStore', () => {
  let twin: DynamoDbTwin;
  let client: DynamoDBClient;
  let store: DynamoDbHistoryStore;
  let tableIndex = 0;

  beforeAll(async () => {
    // One empty table per test, so tests do not see each other's records.
    const tables = Array.from({ length: 24 }, (_, i) => ({ TableName: `${TABLE}-${i}`, ...CALIBRATION_HISTORY_TABLE }));
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

  /** A store on a fresh, empty table. */
  function freshStore(): { store: DynamoDbHistoryStore; tableName: string } {
    const tableName = `${TABLE}-${tableIndex}`;
    tableIndex += 1;
    store = new DynamoDbHistoryStore({ client, tableName });
    return { store, tableName };
  }

  async function itemCount(tableName: string): Promise<number> {
    return (await client.send(new ScanCommand({ TableName: tableName, Select: 'COUNT' }))).Count ?? 0;
  }

  describe('Method: put / latest', () => {
    it('gives back the newest record exactly as it was put', async () => {
      // Prepare
      const { store } = freshStore();
      const older = record('2026-03-01T10:00:00.000Z', 'run-1');
      const newer = record('2026-03-02T10:00:00.000Z', 'run-2');

      // Act
      await store.put(newer);
      await store.put(older);
      const latest = await store.latest(TARGET);

      // Assess
      expect(latest).toEqual(newer);
    });

    it('has no latest record for a target never calibrated', async () => {
      // Prepare
      const { store } = freshStore();
      await store.put(record('2026-03-02T10:00:00.000Z', 'run-1'));

      // Act
      const latest = await store.latest('prod-use2/default/another-app');

      // Assess
      expect(latest).toBeUndefined();
    });

    it('treats a retried put of the same record as done, writing it once', async () => {
      // Prepare
      const { store, tableName } = freshStore();
      const first = record('2026-03-02T10:00:00.000Z', 'run-1');

      // Act: the same record again, built anew (other key order, as a retried Lambda would build it).
      await store.put(first);
      await store.put(Object.fromEntries(Object.entries(structuredClone(first)).reverse()) as unknown as HistoryRecord);

      // Assess
      expect(await itemCount(tableName)).toBe(1);
    });

    it('refuses a different record under the same key, keeping the first', async () => {
      // Prepare
      const { store } = freshStore();
      await store.put(record('2026-03-02T10:00:00.000Z', 'run-1'));

      // Act
      const act = store.put(record('2026-03-02T10:00:00.000Z', 'run-1', { podTemplateHash: 'other' }));

      // Assess
      await expect(act).rejects.toThrow(CalibrationHistoryConflictError);
      expect((await store.latest(TARGET))?.podTemplateHash).toBe('5d8f7c9b6');
    });

    it('stores a report too large for one DynamoDB attribute compressed, and reads it back whole', async () => {
      // Prepare: 3000 steps of about 600 bytes each.
      const { store } = freshStore();
      const big = record('2026-03-02T10:00:00.000Z', 'run-big');
      big.report.steps = Array.from({ length: 3000 }, (_, i) => step(i, 10 + i));
      expect(Buffer.byteLength(JSON.stringify(big.report))).toBeGreaterThan(REPORT_INLINE_LIMIT_BYTES);

      // Act
      await store.put(big);
      const latest = await store.latest(TARGET);

      // Assess
      expect(latest?.report.steps).toHaveLength(3000);
      expect(latest).toEqual(big);
    });

    it.each([
      {
        case: 'a target key with two parts',
        overrides: { targetKey: 'prod/vllm-app' },
        message:
          /^history record targetKey: "prod\/vllm-app" is not a target key; accepted: <cluster>\/<namespace>\/<deployment>/,
      },
      {
        case: 'a finishedAt without milliseconds',
        overrides: { finishedAt: '2026-03-02T10:00:00Z' },
        message: /^history record finishedAt: "2026-03-02T10:00:00Z" is not a canonical UTC time/,
      },
      {
        case: 'an execution name with "#"',
        overrides: { executionName: 'run#1' },
        message: /^history record executionName: "run#1" is not an execution name/,
      },
      {
        case: 'an empty Pod template hash',
        overrides: { podTemplateHash: '' },
        message: /^history record podTemplateHash/,
      },
    ])('refuses $case, naming the field', async ({ overrides, message }) => {
      // Prepare
      const { store } = freshStore();

      // Act
      const act = store.put(record('2026-03-02T10:00:00.000Z', 'run-1', overrides));

      // Assess
      await expect(act).rejects.toThrow(CalibrationHistoryRecordInvalidError);
      await expect(store.put(record('2026-03-02T10:00:00.000Z', 'run-1', overrides))).rejects.toThrow(message);
    });
  });

  describe('Method: list', () => {
    it("lists one target's records newest first, up to the limit", async () => {
      // Prepare
      const { store } = freshStore();
      for (let day = 1; day <= 5; day += 1) await store.put(record(`2026-03-0${day}T10:00:00.000Z`, `run-${day}`));
      await store.put({ ...record('2026-03-09T10:00:00.000Z', 'other'), targetKey: 'prod-use2/default/other-app' });

      // Act
      const three = await store.list(TARGET, 3);
      const all = await store.list(TARGET);

      // Assess
      expect(three.map((r) => r.executionName)).toEqual(['run-5', 'run-4', 'run-3']);
      expect(all.map((r) => r.executionName)).toEqual(['run-5', 'run-4', 'run-3', 'run-2', 'run-1']);
    });

    it.each([{ limit: 0 }, { limit: 2.5 }, { limit: 5000 }])('refuses a limit of $limit', async ({ limit }) => {
      // Act
      const act = freshStore().store.list(TARGET, limit);

      // Assess
      await expect(act).rejects.toThrow(
        /^history record limit: .* is not a record count; accepted: an integer from 1 to 1000/,
      );
    });
  });

  describe('failures', () => {
    it('names a stored item that is not a record', async () => {
      // Prepare: an item written by something else.
      const { store, tableName } = freshStore();
      await client.send(
        new PutItemCommand({
          TableName: tableName,
          Item: { pk: { S: TARGET }, sk: { S: '2026-03-02T10:00:00.000Z#manual' }, schemaVersion: { N: '1' } },
        }),
      );

      // Act
      const act = store.latest(TARGET);

      // Assess
      await expect(act).rejects.toThrow(CalibrationHistoryCorruptError);
      await expect(store.latest(TARGET)).rejects.toThrow(
        `the calibration history item ${TARGET} at 2026-03-02T10:00:00.000Z#manual cannot be read: attribute report is not a string`,
      );
    });

    it('reports a missing table as a request error that retrying will not fix', async () => {
      // Prepare
      const missing = new DynamoDbHistoryStore({ client, tableName: 'no-such-table' });

      // Act
      const act = missing.put(record('2026-03-02T10:00:00.000Z', 'run-1'));

      // Assess
      await expect(act).rejects.toThrow(CalibrationHistoryRequestError);
      await expect(missing.latest(TARGET)).rejects.toThrow(
        /^DynamoDB Query on table no-such-table failed: ResourceNotFoundException/,
      );
    });

    it('reports an unreachable DynamoDB as the retryable CalibrationDependencyUnavailableError', async () => {
      // Prepare: a twin that has stopped listening.
      const gone = await startDynamoDbTwin();
      await gone.stop();
      const unreachable = new DynamoDBClient({
        region: 'us-east-2',
        endpoint: gone.endpoint,
        credentials: gone.credentials,
        maxAttempts: 1,
      });
      const stranded = new DynamoDbHistoryStore({ client: unreachable, tableName: TABLE });

      // Act
      const act = stranded.latest(TARGET);

      // Assess
      await expect(act).rejects.toThrow(CalibrationDependencyUnavailableError);
      unreachable.destroy();
    });
  });
});
