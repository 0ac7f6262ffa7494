import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { AlertSilenceStoreError } from './errors.js';
import { checkSilence, SILENCE_KINDS, type Silence, type SilenceStore } from './silence.js';
import { SILENCE_KEY } from './table.js';

/** A day after a silence ends DynamoDB deletes it: long enough to see, in `alerts silences`, what was silenced. */
const KEPT_AFTER_END_SECONDS = 86_400;

/** The SilenceStore on a DynamoDB table (ALERT_SILENCES_TABLE). */
export class DynamoDbSilenceStore implements SilenceStore {
  readonly #documents: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(options: { client: DynamoDBClient; tableName: string }) {
    this.#documents = DynamoDBDocumentClient.from(options.client);
    this.#table = options.tableName;
  }

  async put(silence: Silence): Promise<void> {
    const s = checkSilence(silence);
    try {
      await this.#documents.send(
        new PutCommand({
          TableName: this.#table,
          Item: {
            [SILENCE_KEY.partition]: s.target,
            [SILENCE_KEY.sort]: s.id,
            kind: s.kind,
            reason: s.reason,
            createdBy: s.createdBy,
            startsAtMs: s.startsAtMs,
            endsAtMs: s.endsAtMs,
            [SILENCE_KEY.ttl]: Math.ceil(s.endsAtMs / 1000) + KEPT_AFTER_END_SECONDS,
          },
        }),
      );
    } catch (error) {
      throw new AlertSilenceStoreError(`storing silence ${s.id} of ${s.target} in ${this.#table}`, error);
    }
  }

  async list(target: string): Promise<Silence[]> {
    const silences: Silence[] = [];
    let start: Record<string, unknown> | undefined;
    try {
      do {
        const page = await this.#documents.send(
          new QueryCommand({
            TableName: this.#table,
            KeyConditionExpression: '#pk = :target',
            ExpressionAttributeNames: { '#pk': SILENCE_KEY.partition },
            ExpressionAttributeValues: { ':target': target },
            ...(start === undefined ? {} : { ExclusiveStartKey: start }),
          }),
        );
        for (const item of page.Items ?? []) {
          const silence = fromItem(item);
          // An item that is not a silence (hand-edited) is skipped: it must not mute anything.
          if (silence !== undefined) silences.push(silence);
        }
        start = page.LastEvaluatedKey;
      } while (start !== undefined);
    } catch (error) {
      throw new AlertSilenceStoreError(`reading the silences of ${target} from ${this.#table}`, error);
    }
    return silences;
  }

  async delete(target: string, id: string): Promise<boolean> {
    try {
      const result = await this.#documents.send(
        new DeleteCommand({
          TableName: this.#table,
          Key: { [SILENCE_KEY.partition]: target, [SILENCE_KEY.sort]: id },
          ReturnValues: 'ALL_OLD',
        }),
      );
      return result.Attributes !== undefined;
    } catch (error) {
      throw new AlertSilenceStoreError(`removing silence ${id} of ${target} from ${this.#table}`, error);
    }
  }
}

function fromItem(item: Record<string, unknown>): Silence | undefined {
  const { kind, reason, createdBy, startsAtMs, endsAtMs } = item;
  const target = item[SILENCE_KEY.partition];
  const id = item[SILENCE_KEY.sort];
  if (typeof target !== 'string' || typeof id !== 'string') return undefined;
  if (!(SILENCE_KINDS as readonly unknown[]).includes(kind)) return undefined;
  if (typeof reason !== 'string' || typeof startsAtMs !== 'number' || typeof endsAtMs !== 'number') return undefined;
  return {
    target,
    id,
    kind: kind as Silence['kind'],
    reason,
    createdBy: typeof createdBy === 'string' ? createdBy : '',
    startsAtMs,
    endsAtMs,
  };
}
