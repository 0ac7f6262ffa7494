import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  AlertPipelineInputInvalidError,
  AlertStateCorruptError,
  AlertStateRequestError,
  AlertStateUnavailableError,
} from '../pipelineErrors.js';
import { ALERT_STATE_KEY } from '../state/index.js';
import type { EvaluatorHeartbeat, HeartbeatBeat, HeartbeatStore, HeartbeatTargetProblem } from './heartbeat.js';

/**
 * The heartbeat's item in the alert state table. Target names start with a letter or digit
 * (shared/config/targets.ts), so a partition key starting with "#" can never be a target's: the alert state store's
 * Query by target never sees this item, and it has no TTL.
 */
export const HEARTBEAT_KEY = { partition: '#heartbeat', sort: 'alert-evaluator' } as const;

const SCHEMA_VERSION = 1;
const TRANSIENT =
  /^(ProvisionedThroughputExceededException|ThrottlingException|RequestLimitExceeded|InternalServerError|ServiceUnavailable|TimeoutError)$/;
const NETWORK = /\b(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EAI_AGAIN)\b/;

export interface DynamoDbHeartbeatStoreOptions {
  /** A DynamoDB client for the table's region (or the twin's endpoint). */
  client: DynamoDBClient;
  /** The alert state table (ALERT_STATE_TABLE). */
  tableName: string;
}

/**
 * The evaluator's heartbeat in the alert state table: one item, written by every cycle with a condition that keeps
 * the latest cycle's (two overlapping invocations cannot move it back), read by preflight with a consistent GetItem.
 */
export class DynamoDbHeartbeatStore implements HeartbeatStore {
  readonly #documents: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(options: DynamoDbHeartbeatStoreOptions) {
    if (typeof options.tableName !== 'string' || options.tableName.trim() === '')
      throw new AlertPipelineInputInvalidError('tableName', 'is empty', 'the name of the alert state table');
    this.#documents = DynamoDBDocumentClient.from(options.client);
    this.#table = options.tableName;
  }

  /** One conditional UpdateItem: stored unless a later cycle is; `lastOkAtMs` moves only with an ok cycle. */
  async record(beat: HeartbeatBeat): Promise<'recorded' | 'stale'> {
    checkBeat(beat);
    const values: Record<string, unknown> = {
      ':v': SCHEMA_VERSION,
      ':at': beat.lastCycleAtMs,
      ':evaluationTimeMs': beat.evaluationTimeMs,
      ':intervalSeconds': beat.intervalSeconds,
      ':evaluatorId': beat.evaluatorId,
      ':targets': beat.targets,
      ':ok': beat.ok,
      ':failedTargets': JSON.stringify(beat.failedTargets),
      ':partialTargets': JSON.stringify(beat.partialTargets),
    };
    const set = [
      'schemaVersion = :v',
      'lastCycleAtMs = :at',
      'evaluationTimeMs = :evaluationTimeMs',
      'intervalSeconds = :intervalSeconds',
      'evaluatorId = :evaluatorId',
      'targets = :targets',
      '#ok = :ok',
      'failedTargets = :failedTargets',
      'partialTargets = :partialTargets',
      ...(beat.ok ? ['lastOkAtMs = :at'] : []),
    ];
    try {
      await this.#documents.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { [ALERT_STATE_KEY.partition]: HEARTBEAT_KEY.partition, [ALERT_STATE_KEY.sort]: HEARTBEAT_KEY.sort },
          UpdateExpression: `SET ${set.join(', ')}`,
          ConditionExpression: 'attribute_not_exists(lastCycleAtMs) OR lastCycleAtMs < :at',
          ExpressionAttributeNames: { '#ok': 'ok' },
          ExpressionAttributeValues: values,
        }),
      );
      return 'recorded';
    } catch (error) {
      if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return 'stale';
      throw this.#failure('UpdateItem', error);
    }
  }

  /** The heartbeat item (strongly consistent), or undefined when there is none. */
  async read(signal?: AbortSignal): Promise<EvaluatorHeartbeat | undefined> {
    let item: Record<string, unknown> | undefined;
    try {
      const output = await this.#documents.send(
        new GetCommand({
          TableName: this.#table,
          Key: { [ALERT_STATE_KEY.partition]: HEARTBEAT_KEY.partition, [ALERT_STATE_KEY.sort]: HEARTBEAT_KEY.sort },
          ConsistentRead: true,
        }),
        { abortSignal: signal },
      );
      item = output.Item;
    } catch (error) {
      throw this.#failure('GetItem', error);
    }
    return item === undefined ? undefined : fromItem(item);
  }

  #failure(operation: string, error: unknown): Error {
    const e = error as { name?: string; $fault?: string; $retryable?: unknown; message?: string };
    const transient =
      TRANSIENT.test(e.name ?? '') ||
      NETWORK.test(e.message ?? '') ||
      e.$fault === 'server' ||
      e.$retryable !== undefined;
    return transient
      ? new AlertStateUnavailableError(operation, this.#table, { cause: error })
      : new AlertStateRequestError(operation, this.#table, { cause: error });
  }
}

function checkBeat(beat: HeartbeatBeat): void {
  for (const field of ['lastCycleAtMs', 'evaluationTimeMs', 'intervalSeconds', 'targets'] as const)
    if (!Number.isFinite(beat[field]) || beat[field] < 0)
      throw new AlertPipelineInputInvalidError(field, `${String(beat[field])} is not valid`, 'a finite number >= 0');
  if (typeof beat.evaluatorId !== 'string' || beat.evaluatorId === '')
    throw new AlertPipelineInputInvalidError('evaluatorId', 'is empty', 'the Lambda request id');
}

function fromItem(item: Record<string, unknown>): EvaluatorHeartbeat {
  const corrupt = (problem: string) => new AlertStateCorruptError(HEARTBEAT_KEY.partition, HEARTBEAT_KEY.sort, problem);
  const number = (name: string): number => {
    const value = item[name];
    if (typeof value !== 'number' || !Number.isFinite(value)) throw corrupt(`attribute ${name} is not a number`);
    return value;
  };
  const problems = (name: string): HeartbeatTargetProblem[] => {
    const value = item[name];
    let parsed: unknown;
    try {
      parsed = JSON.parse(typeof value === 'string' ? value : '');
    } catch {
      throw corrupt(`attribute ${name} is not JSON`);
    }
    if (
      !Array.isArray(parsed) ||
      !parsed.every(
        (p: unknown) =>
          typeof (p as HeartbeatTargetProblem | null)?.target === 'string' &&
          typeof (p as HeartbeatTargetProblem).reason === 'string',
      )
    )
      throw corrupt(`attribute ${name} is not a list of {target, reason}`);
    return parsed as HeartbeatTargetProblem[];
  };
  if (item.schemaVersion !== SCHEMA_VERSION) throw corrupt(`schemaVersion ${String(item.schemaVersion)} is not 1`);
  if (typeof item.ok !== 'boolean') throw corrupt('attribute ok is not a boolean');
  if (typeof item.evaluatorId !== 'string') throw corrupt('attribute evaluatorId is not text');
  return {
    lastCycleAtMs: number('lastCycleAtMs'),
    evaluationTimeMs: number('evaluationTimeMs'),
    intervalSeconds: number('intervalSeconds'),
    evaluatorId: item.evaluatorId,
    targets: number('targets'),
    ok: item.ok,
    failedTargets: problems('failedTargets'),
    partialTargets: problems('partialTargets'),
    lastOkAtMs: item.lastOkAtMs === undefined ? null : number('lastOkAtMs'),
  };
}
