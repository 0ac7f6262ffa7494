import { gunzipSync, gzipSync } from 'node:zlib';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { CalibrationDependencyUnavailableError } from '../errors.js';
import {
  CalibrationHistoryConflictError,
  CalibrationHistoryCorruptError,
  CalibrationHistoryRecordInvalidError,
  CalibrationHistoryRequestError,
} from './errors.js';
import { assertTargetKey } from './historyTargetKey.js';
import { HISTORY_KEY, historySortKey } from './table.js';
import {
  HISTORY_LIST_DEFAULT_LIMIT,
  HISTORY_LIST_MAX_LIMIT,
  type CalibrationHistoryStore,
  type HistoryRecord,
} from './types.js';

export interface DynamoDbHistoryStoreOptions {
  /** A DynamoDB client for the table's region (or the twin's endpoint); the store wraps it for documents. */
  client: DynamoDBClient;
  tableName: string;
}

/**
 * DynamoDB limits an item to 400 KB. A report is stored as JSON text up to this size and gzip-compressed above it;
 * the margin leaves room for the other attributes.
 */
export const REPORT_INLINE_LIMIT_BYTES = 300_000;
const ITEM_LIMIT_BYTES = 390_000;
const SCHEMA_VERSION = 1;

/** Item attributes besides the keys. */
const ATTR = {
  schemaVersion: 'schemaVersion',
  targetKey: 'targetKey',
  finishedAt: 'finishedAt',
  executionName: 'executionName',
  podTemplateHash: 'podTemplateHash',
  thresholds: 'thresholds',
  previousThresholds: 'previousThresholds',
  report: 'report',
  reportGzip: 'reportGzip',
  rollback: 'rollback',
} as const;

/** Errors DynamoDB (or the network) gives that a later retry can clear. */
const TRANSIENT_ERROR_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
]);
/** Node's codes for a request that got no answer. */
const NETWORK_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN']);
const NETWORK_ERROR_PATTERN = new RegExp(`\\b(${[...NETWORK_ERROR_CODES].join('|')})\\b`);

type Item = Record<string, unknown>;

/**
 * The calibration history in DynamoDB (table: CALIBRATION_HISTORY_TABLE). Payloads (report, thresholds) are stored
 * as JSON text, so any report round-trips exactly and DynamoDB's type rules (no NaN, no empty sets) never refuse one.
 */
export class DynamoDbHistoryStore implements CalibrationHistoryStore {
  readonly #documents: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(options: DynamoDbHistoryStoreOptions) {
    if (options.tableName.trim() === '')
      throw new CalibrationHistoryRecordInvalidError('tableName', 'is empty', 'the name of the history table');
    this.#documents = DynamoDBDocumentClient.from(options.client);
    this.#table = options.tableName;
  }

  /** Writes the record with `attribute_not_exists(pk)`; an identical record already there counts as written. */
  async put(record: HistoryRecord): Promise<void> {
    const item = toItem(record);
    try {
      await this.#documents.send(
        new PutCommand({
          TableName: this.#table,
          Item: item,
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': HISTORY_KEY.partition },
        }),
      );
      return;
    } catch (error) {
      if ((error as { name?: string }).name !== 'ConditionalCheckFailedException')
        throw this.#failure('PutItem', error);
    }
    // A retried task (or a double delivery) wrote first: fine when it wrote the same record.
    const key = { [HISTORY_KEY.partition]: item[HISTORY_KEY.partition], [HISTORY_KEY.sort]: item[HISTORY_KEY.sort] };
    const stored = await this.#call('GetItem', () =>
      this.#documents.send(new GetCommand({ TableName: this.#table, Key: key, ConsistentRead: true })),
    );
    const sortKey = String(item[HISTORY_KEY.sort]);
    if (stored.Item === undefined) throw new CalibrationHistoryConflictError(record.targetKey, sortKey);
    if (canonicalJson(fromItem(stored.Item)) !== canonicalJson(record))
      throw new CalibrationHistoryConflictError(record.targetKey, sortKey);
  }

  /** The newest record of `targetKey` (a strongly consistent read, so a record just written is seen). */
  async latest(targetKey: string): Promise<HistoryRecord | undefined> {
    const [first] = await this.#query(targetKey, 1);
    return first;
  }

  /** Up to `limit` records of `targetKey`, newest first. */
  async list(targetKey: string, limit: number = HISTORY_LIST_DEFAULT_LIMIT): Promise<HistoryRecord[]> {
    if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_LIST_MAX_LIMIT)
      throw new CalibrationHistoryRecordInvalidError(
        'limit',
        `${limit} is not a record count`,
        `an integer from 1 to ${HISTORY_LIST_MAX_LIMIT}`,
      );
    return this.#query(targetKey, limit);
  }

  async #query(targetKey: string, limit: number): Promise<HistoryRecord[]> {
    assertTargetKey(targetKey);
    const records: HistoryRecord[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.#call('Query', () =>
        this.#documents.send(
          new QueryCommand({
            TableName: this.#table,
            KeyConditionExpression: '#pk = :pk',
            ExpressionAttributeNames: { '#pk': HISTORY_KEY.partition },
            ExpressionAttributeValues: { ':pk': targetKey },
            ScanIndexForward: false,
            ConsistentRead: true,
            Limit: limit - records.length,
            ...(startKey ? { ExclusiveStartKey: startKey } : {}),
          }),
        ),
      );
      for (const item of page.Items ?? []) records.push(fromItem(item));
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined && records.length < limit);
    return records;
  }

  async #call<T>(operation: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw this.#failure(operation, error);
    }
  }

  #failure(operation: string, error: unknown): Error {
    const e = error as { name?: string; code?: string; $fault?: string; $retryable?: unknown };
    const transient =
      TRANSIENT_ERROR_NAMES.has(e.name ?? '') ||
      NETWORK_ERROR_CODES.has(e.code ?? '') ||
      // The SDK re-wraps an error from another realm (a VM context) as text: the code is then only in the message.
      NETWORK_ERROR_PATTERN.test((error as Error).message ?? '') ||
      e.$fault === 'server' ||
      e.$retryable !== undefined;
    if (transient)
      return new CalibrationDependencyUnavailableError(
        `DynamoDB ${operation} on table ${this.#table} failed: ${(error as Error).message}`,
        { cause: error },
      );
    return new CalibrationHistoryRequestError(operation, this.#table, { cause: error });
  }
}

/** Checks the record and lays it out as an item. */
function toItem(record: HistoryRecord): Item {
  assertTargetKey(record.targetKey);
  if (typeof record.finishedAt !== 'string' || !isCanonicalIso(record.finishedAt))
    throw new CalibrationHistoryRecordInvalidError(
      'finishedAt',
      `${JSON.stringify(record.finishedAt)} is not a canonical UTC time`,
      'an ISO 8601 time as Date.prototype.toISOString writes it, e.g. "2026-03-02T10:15:00.000Z"',
    );
  if (typeof record.executionName !== 'string' || !/^[^#\s]{1,80}$/.test(record.executionName))
    throw new CalibrationHistoryRecordInvalidError(
      'executionName',
      `${JSON.stringify(record.executionName)} is not an execution name`,
      '1 to 80 characters without spaces or "#" (a Step Functions execution name)',
    );
  if (typeof record.podTemplateHash !== 'string' || record.podTemplateHash === '')
    throw new CalibrationHistoryRecordInvalidError(
      'podTemplateHash',
      `${JSON.stringify(record.podTemplateHash)} is empty`,
      'the hash of the Deployment’s Pod template',
    );
  const reportJson = JSON.stringify(record.report);
  const reportBytes = Buffer.byteLength(reportJson);
  const report =
    reportBytes <= REPORT_INLINE_LIMIT_BYTES
      ? { [ATTR.report]: reportJson }
      : { [ATTR.reportGzip]: new Uint8Array(gzipSync(reportJson)) };
  const item: Item = {
    [HISTORY_KEY.partition]: record.targetKey,
    [HISTORY_KEY.sort]: historySortKey(record.finishedAt, record.executionName),
    [ATTR.schemaVersion]: SCHEMA_VERSION,
    [ATTR.targetKey]: record.targetKey,
    [ATTR.finishedAt]: record.finishedAt,
    [ATTR.executionName]: record.executionName,
    [ATTR.podTemplateHash]: record.podTemplateHash,
    [ATTR.thresholds]: JSON.stringify(record.thresholds),
    [ATTR.previousThresholds]: JSON.stringify(record.previousThresholds),
    ...(record.rollback === undefined ? {} : { [ATTR.rollback]: JSON.stringify(record.rollback) }),
    ...report,
  };
  const gzipped = item[ATTR.reportGzip] as Uint8Array | undefined;
  if (gzipped !== undefined && gzipped.byteLength > ITEM_LIMIT_BYTES)
    throw new CalibrationHistoryRecordInvalidError(
      'report',
      `is ${reportBytes} bytes of JSON, still ${gzipped.byteLength} bytes compressed`,
      `a report that compresses below ${ITEM_LIMIT_BYTES} bytes (DynamoDB's item limit is 400 KB)`,
    );
  return item;
}

/** Reads an item back; throws CalibrationHistoryCorruptError naming the attribute that is wrong. */
function fromItem(item: Item): HistoryRecord {
  const targetKey = String(item[HISTORY_KEY.partition]);
  const sortKey = String(item[HISTORY_KEY.sort]);
  const corrupt = (problem: string, cause?: unknown) =>
    new CalibrationHistoryCorruptError(targetKey, sortKey, problem, cause === undefined ? undefined : { cause });
  const text = (name: string): string => {
    const value = item[name];
    if (typeof value !== 'string') throw corrupt(`attribute ${name} is not a string`);
    return value;
  };
  const json = (name: string, value: string): unknown => {
    try {
      return JSON.parse(value);
    } catch (error) {
      throw corrupt(`attribute ${name} is not valid JSON`, error);
    }
  };
  if (item[ATTR.schemaVersion] !== SCHEMA_VERSION)
    throw corrupt(`schemaVersion is ${JSON.stringify(item[ATTR.schemaVersion])}; this version reads ${SCHEMA_VERSION}`);
  let reportJson: string;
  const gzipped = item[ATTR.reportGzip];
  if (gzipped instanceof Uint8Array) {
    try {
      reportJson = gunzipSync(gzipped).toString('utf8');
    } catch (error) {
      throw corrupt(`attribute ${ATTR.reportGzip} is not gzip`, error);
    }
  } else {
    reportJson = text(ATTR.report);
  }
  return {
    targetKey: text(ATTR.targetKey),
    finishedAt: text(ATTR.finishedAt),
    executionName: text(ATTR.executionName),
    report: json(ATTR.report, reportJson) as HistoryRecord['report'],
    thresholds: json(ATTR.thresholds, text(ATTR.thresholds)) as HistoryRecord['thresholds'],
    previousThresholds: json(
      ATTR.previousThresholds,
      text(ATTR.previousThresholds),
    ) as HistoryRecord['previousThresholds'],
    podTemplateHash: text(ATTR.podTemplateHash),
    ...(item[ATTR.rollback] === undefined
      ? {}
      : { rollback: json(ATTR.rollback, text(ATTR.rollback)) as NonNullable<HistoryRecord['rollback']> }),
  };
}

function isCanonicalIso(value: string): boolean {
  const ms = Date.parse(value);
  return Number.isFinite(ms) && new Date(ms).toISOString() === value;
}

/** JSON with sorted keys: two records are the same when this matches, whatever order their fields were built in. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, field: unknown) =>
    typeof field === 'object' && field !== null && !Array.isArray(field)
      ? Object.fromEntries(Object.entries(field).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : field,
  );
}
