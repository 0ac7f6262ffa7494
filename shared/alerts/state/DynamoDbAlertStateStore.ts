import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { NOTIFY_REASONS } from '../message.js';
import {
  AlertPipelineInputInvalidError,
  AlertStateCorruptError,
  AlertStateRequestError,
  AlertStateUnavailableError,
} from '../pipelineErrors.js';
import { ALERT_NAMES, ALERT_STATUSES, SEVERITIES } from '../types.js';
import { ALERT_STATE_KEY } from './table.js';
import type {
  AlertState,
  AlertStateRecord,
  AlertStateStore,
  ClaimRequest,
  CommitRequest,
  ReleaseRequest,
  SentNotification,
} from '../alertState.js';

export interface DynamoDbAlertStateStoreOptions {
  /** A DynamoDB client for the table's region (or the twin's endpoint); the store wraps it for documents. */
  client: DynamoDBClient;
  tableName: string;
}

const SCHEMA_VERSION = 1;
const UNITS = ['requests', 'seconds', 'ratio', 'per-second'] as const;

/** Item attributes besides the keys (pk = target, sk = fingerprint, expiresAt = TTL). */
const ATTR = {
  schemaVersion: 'schemaVersion',
  alertname: 'alertname',
  severity: 'severity',
  // JSON text: label values may be empty strings, which some DynamoDB versions refuse in a map.
  labels: 'labels',
  value: 'value',
  threshold: 'threshold',
  unit: 'unit',
  forSeconds: 'forSeconds',
  summary: 'summary',
  description: 'description',
  runbook: 'runbook',
  runbookUrl: 'runbookUrl',
  dashboardUrl: 'dashboardUrl',
  status: 'status',
  startsAtMs: 'startsAtMs',
  endsAtMs: 'endsAtMs',
  lastNotification: 'lastNotification',
  claimId: 'claimId',
  claimUntilMs: 'claimUntilMs',
  version: 'version',
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
const NETWORK_ERROR_PATTERN = /\b(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EAI_AGAIN)\b/;

type Item = Record<string, unknown>;

/**
 * The alert state in DynamoDB (table: ALERT_STATE_TABLE). Every write is an UpdateItem with a condition, so the
 * claim → publish → commit protocol holds with several evaluators at once; a lost condition is an answer (false or
 * undefined), not an error.
 */
export class DynamoDbAlertStateStore implements AlertStateStore {
  readonly #documents: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(options: DynamoDbAlertStateStoreOptions) {
    if (typeof options.tableName !== 'string' || options.tableName.trim() === '')
      throw new AlertPipelineInputInvalidError('tableName', 'is empty', 'the name of the alert state table');
    this.#documents = DynamoDBDocumentClient.from(options.client);
    this.#table = options.tableName;
  }

  /** Every record of `target`, read with strong consistency so that a claim just written is seen. */
  async list(target: string): Promise<AlertStateRecord[]> {
    requireText('target', target);
    const records: AlertStateRecord[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.#call('Query', () =>
        this.#documents.send(
          new QueryCommand({
            TableName: this.#table,
            KeyConditionExpression: '#pk = :pk',
            ExpressionAttributeNames: { '#pk': ALERT_STATE_KEY.partition },
            ExpressionAttributeValues: { ':pk': target },
            ConsistentRead: true,
            ...(startKey ? { ExclusiveStartKey: startKey } : {}),
          }),
        ),
      );
      for (const item of page.Items ?? []) records.push(fromItem(item));
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    return records;
  }

  /** Stores the state and the claim in one conditional UpdateItem; undefined when the condition failed. */
  async claim(request: ClaimRequest): Promise<AlertStateRecord | undefined> {
    const { state, expectedVersion } = request;
    checkState(state);
    requireText('claimId', request.claimId);
    if (expectedVersion !== null && (!Number.isInteger(expectedVersion) || expectedVersion < 1))
      throw new AlertPipelineInputInvalidError(
        'expectedVersion',
        `${String(expectedVersion)} is not a version`,
        'null (no record yet) or the integer version read from the store',
      );
    if (!(request.claimUntilMs > request.nowMs))
      throw new AlertPipelineInputInvalidError(
        'claimUntilMs',
        `${request.claimUntilMs} is not after nowMs ${request.nowMs}`,
        'a time after nowMs',
      );

    const fields: Record<string, unknown> = {
      [ATTR.schemaVersion]: SCHEMA_VERSION,
      [ATTR.alertname]: state.alertname,
      [ATTR.severity]: state.severity,
      [ATTR.labels]: JSON.stringify(state.labels),
      [ATTR.value]: state.value,
      [ATTR.threshold]: state.threshold,
      [ATTR.unit]: state.unit,
      [ATTR.forSeconds]: state.forSeconds,
      [ATTR.summary]: state.summary,
      [ATTR.description]: state.description,
      [ATTR.runbook]: state.runbook,
      [ATTR.runbookUrl]: state.runbookUrl,
      [ATTR.dashboardUrl]: state.dashboardUrl,
      [ATTR.status]: state.status,
      [ATTR.startsAtMs]: state.startsAtMs,
      [ATTR.endsAtMs]: state.endsAtMs,
      [ATTR.claimId]: request.claimId,
      [ATTR.claimUntilMs]: request.claimUntilMs,
      [ATTR.version]: (expectedVersion ?? 0) + 1,
    };
    const names: Record<string, string> = { '#ttl': ALERT_STATE_KEY.ttl };
    const values: Record<string, unknown> = {};
    const sets = Object.entries(fields).map(([name, value], index) => {
      names[`#f${index}`] = name;
      values[`:f${index}`] = value;
      return `#f${index} = :f${index}`;
    });
    let condition = 'attribute_not_exists(#pk)';
    if (expectedVersion === null) names['#pk'] = ALERT_STATE_KEY.partition;
    else {
      names['#version'] = ATTR.version;
      names['#claimUntil'] = ATTR.claimUntilMs;
      values[':expected'] = expectedVersion;
      values[':now'] = request.nowMs;
      condition = '#version = :expected AND (attribute_not_exists(#claimUntil) OR #claimUntil <= :now)';
    }
    return this.#conditionalUpdate('UpdateItem (claim)', state.target, state.fingerprint, {
      UpdateExpression: `SET ${sets.join(', ')} REMOVE #ttl`,
      ConditionExpression: condition,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    });
  }

  /** Records the notification and drops the claim, conditional on the claim id; undefined when the claim was lost. */
  async commit(request: CommitRequest): Promise<AlertStateRecord | undefined> {
    requireText('target', request.target);
    requireText('fingerprint', request.fingerprint);
    requireText('claimId', request.claimId);
    checkNotification(request.notification);
    if (request.expiresAt !== null && !Number.isInteger(request.expiresAt))
      throw new AlertPipelineInputInvalidError(
        'expiresAt',
        `${String(request.expiresAt)} is not epoch seconds`,
        'null or an integer (epoch seconds)',
      );
    const ttl = request.expiresAt === null ? { remove: ', #ttl', set: '' } : { remove: '', set: ', #ttl = :ttl' };
    return this.#conditionalUpdate('UpdateItem (commit)', request.target, request.fingerprint, {
      UpdateExpression: `SET #last = :last, #version = #version + :one${ttl.set} REMOVE #claimId, #claimUntil${ttl.remove}`,
      ConditionExpression: '#claimId = :claimId',
      ExpressionAttributeNames: {
        '#last': ATTR.lastNotification,
        '#version': ATTR.version,
        '#claimId': ATTR.claimId,
        '#claimUntil': ATTR.claimUntilMs,
        '#ttl': ALERT_STATE_KEY.ttl,
      },
      ExpressionAttributeValues: {
        ':last': { ...request.notification },
        ':one': 1,
        ':claimId': request.claimId,
        ...(request.expiresAt === null ? {} : { ':ttl': request.expiresAt }),
      },
    });
  }

  /** Drops the claim, keeping the state it stored; false when the claim was no longer ours. */
  async release(request: ReleaseRequest): Promise<boolean> {
    requireText('target', request.target);
    requireText('fingerprint', request.fingerprint);
    requireText('claimId', request.claimId);
    const record = await this.#conditionalUpdate('UpdateItem (release)', request.target, request.fingerprint, {
      UpdateExpression: 'SET #version = #version + :one REMOVE #claimId, #claimUntil',
      ConditionExpression: '#claimId = :claimId',
      ExpressionAttributeNames: {
        '#version': ATTR.version,
        '#claimId': ATTR.claimId,
        '#claimUntil': ATTR.claimUntilMs,
      },
      ExpressionAttributeValues: { ':one': 1, ':claimId': request.claimId },
    });
    return record !== undefined;
  }

  async #conditionalUpdate(
    operation: string,
    target: string,
    fingerprint: string,
    update: {
      UpdateExpression: string;
      ConditionExpression: string;
      ExpressionAttributeNames: Record<string, string>;
      ExpressionAttributeValues: Record<string, unknown>;
    },
  ): Promise<AlertStateRecord | undefined> {
    try {
      const result = await this.#documents.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { [ALERT_STATE_KEY.partition]: target, [ALERT_STATE_KEY.sort]: fingerprint },
          ReturnValues: 'ALL_NEW',
          ...update,
        }),
      );
      if (result.Attributes === undefined)
        throw new AlertStateCorruptError(target, fingerprint, `${operation} returned no attributes`);
      return fromItem(result.Attributes);
    } catch (error) {
      // Another evaluator won the race (or the claim expired and was taken): an answer, not a failure.
      if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return undefined;
      if (error instanceof AlertStateCorruptError) throw error;
      throw this.#failure(operation, error);
    }
  }

  async #call<T>(operation: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw this.#failure(operation, error);
    }
  }

  #failure(operation: string, error: unknown): Error {
    const e = error as { name?: string; $fault?: string; $retryable?: unknown; message?: string };
    const transient =
      TRANSIENT_ERROR_NAMES.has(e.name ?? '') ||
      NETWORK_ERROR_PATTERN.test(e.message ?? '') ||
      e.$fault === 'server' ||
      e.$retryable !== undefined;
    return transient
      ? new AlertStateUnavailableError(operation, this.#table, { cause: error })
      : new AlertStateRequestError(operation, this.#table, { cause: error });
  }
}

function requireText(field: string, value: unknown): void {
  if (typeof value !== 'string' || value === '')
    throw new AlertPipelineInputInvalidError(
      field,
      `${JSON.stringify(value)} is empty or not text`,
      'a non-empty string',
    );
}

function requireFinite(field: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new AlertPipelineInputInvalidError(
      field,
      `${String(value)} is not a finite number`,
      'a finite number (DynamoDB stores no NaN or Infinity)',
    );
}

/** Refuses a state DynamoDB would refuse or that could not be read back, naming the field. */
function checkState(state: AlertState): void {
  requireText('state.target', state.target);
  requireText('state.fingerprint', state.fingerprint);
  requireFinite('state.value', state.value);
  requireFinite('state.threshold', state.threshold);
  requireFinite('state.forSeconds', state.forSeconds);
  requireFinite('state.startsAtMs', state.startsAtMs);
  if (state.endsAtMs !== null) requireFinite('state.endsAtMs', state.endsAtMs);
  if ((state.status === 'resolved') !== (state.endsAtMs !== null))
    throw new AlertPipelineInputInvalidError(
      'state.endsAtMs',
      `is ${String(state.endsAtMs)} for status ${state.status}`,
      'null while firing, the resolution time once resolved',
    );
}

function checkNotification(notification: SentNotification): void {
  if (!ALERT_STATUSES.includes(notification.status))
    throw new AlertPipelineInputInvalidError(
      'notification.status',
      JSON.stringify(notification.status),
      ALERT_STATUSES.join(' | '),
    );
  if (!NOTIFY_REASONS.includes(notification.reason))
    throw new AlertPipelineInputInvalidError(
      'notification.reason',
      JSON.stringify(notification.reason),
      NOTIFY_REASONS.join(' | '),
    );
  requireFinite('notification.startsAtMs', notification.startsAtMs);
  requireFinite('notification.atMs', notification.atMs);
}

/** Reads an item back; throws AlertStateCorruptError naming the attribute that is wrong. */
function fromItem(item: Item): AlertStateRecord {
  const target = String(item[ALERT_STATE_KEY.partition]);
  const fingerprint = String(item[ALERT_STATE_KEY.sort]);
  const corrupt = (problem: string) => new AlertStateCorruptError(target, fingerprint, problem);
  const text = (name: string): string => {
    const value = item[name];
    if (typeof value !== 'string') throw corrupt(`attribute ${name} is not a string`);
    return value;
  };
  const optionalText = (name: string): string | null => {
    const value = item[name];
    if (value === undefined || value === null) return null;
    if (typeof value !== 'string') throw corrupt(`attribute ${name} is not a string`);
    return value;
  };
  const number = (source: Item, name: string): number => {
    const value = source[name];
    if (typeof value !== 'number' || !Number.isFinite(value)) throw corrupt(`attribute ${name} is not a number`);
    return value;
  };
  const optionalNumber = (name: string): number | null =>
    item[name] === undefined || item[name] === null ? null : number(item, name);
  const oneOf = <T extends string>(source: Item, name: string, allowed: readonly T[]): T => {
    const value = source[name];
    if (!allowed.includes(value as T)) throw corrupt(`attribute ${name} is ${JSON.stringify(value)}`);
    return value as T;
  };

  if (item[ATTR.schemaVersion] !== SCHEMA_VERSION)
    throw corrupt(`schemaVersion is ${JSON.stringify(item[ATTR.schemaVersion])}; this version reads ${SCHEMA_VERSION}`);
  let labels: unknown;
  try {
    labels = JSON.parse(text(ATTR.labels));
  } catch (error) {
    if (error instanceof AlertStateCorruptError) throw error;
    throw corrupt(`attribute ${ATTR.labels} is not JSON`);
  }
  if (
    typeof labels !== 'object' ||
    labels === null ||
    Array.isArray(labels) ||
    Object.values(labels).some((v) => typeof v !== 'string')
  )
    throw corrupt(`attribute ${ATTR.labels} is not a map of strings`);

  let lastNotification: SentNotification | null = null;
  const last = item[ATTR.lastNotification];
  if (last !== undefined && last !== null) {
    if (typeof last !== 'object') throw corrupt(`attribute ${ATTR.lastNotification} is not a map`);
    const sent = last as Item;
    lastNotification = {
      status: oneOf(sent, 'status', ALERT_STATUSES),
      startsAtMs: number(sent, 'startsAtMs'),
      atMs: number(sent, 'atMs'),
      reason: oneOf(sent, 'reason', NOTIFY_REASONS),
    };
  }
  const claimId = optionalText(ATTR.claimId);
  const claimUntilMs = optionalNumber(ATTR.claimUntilMs);

  return {
    target,
    fingerprint,
    alertname: oneOf(item, ATTR.alertname, ALERT_NAMES),
    severity: oneOf(item, ATTR.severity, SEVERITIES),
    labels: labels as Record<string, string>,
    value: number(item, ATTR.value),
    threshold: number(item, ATTR.threshold),
    unit: oneOf(item, ATTR.unit, UNITS),
    forSeconds: number(item, ATTR.forSeconds),
    summary: text(ATTR.summary),
    description: text(ATTR.description),
    runbook: text(ATTR.runbook),
    runbookUrl: optionalText(ATTR.runbookUrl),
    dashboardUrl: optionalText(ATTR.dashboardUrl),
    status: oneOf(item, ATTR.status, ALERT_STATUSES),
    startsAtMs: number(item, ATTR.startsAtMs),
    endsAtMs: optionalNumber(ATTR.endsAtMs),
    lastNotification,
    claim: claimId === null || claimUntilMs === null ? null : { id: claimId, untilMs: claimUntilMs },
    version: number(item, ATTR.version),
    expiresAt: optionalNumber(ALERT_STATE_KEY.ttl),
  };
}
