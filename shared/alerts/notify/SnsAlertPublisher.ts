import {
  PublishBatchCommand,
  type MessageAttributeValue,
  type PublishBatchRequestEntry,
  type SNSClient,
} from '@aws-sdk/client-sns';
import type { AlertGroup } from '../group.js';
import {
  ALERT_ATTRIBUTE_MISSING,
  ALERT_MESSAGE_ATTRIBUTES,
  ALERT_SUBJECT_MAX_LENGTH,
  type AlertMessage,
  type AlertMessageAttribute,
} from '../message.js';
import { AlertPipelineInputInvalidError, AlertPublishError, describeCause } from '../pipelineErrors.js';
import type { AlertPublisher, PublishOutcome } from '../publisher.js';

/**
 * SNS limits (API reference: Publish, PublishBatch, "Amazon SNS message attributes"): 10 entries per PublishBatch,
 * 256 KiB per message and per batch counting the body and every attribute's name, type and value, a Subject of 1 to
 * 100 printable ASCII characters, batch entry Ids of 1 to 80 of [A-Za-z0-9_-].
 */
export const SNS_LIMITS = {
  maxBatchEntries: 10,
  maxPayloadBytes: 262_144,
  maxSubjectLength: ALERT_SUBJECT_MAX_LENGTH,
} as const;

const TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/;
/** SNS error codes a later attempt can clear. */
const RETRYABLE_CODES = new Set(['Throttled', 'InternalError', 'KMSThrottling', 'ThrottlingException']);

export interface SnsAlertPublisherOptions {
  /** An SNS client for the topic's region (or the twin's endpoint). */
  client: SNSClient;
  topicArn: string;
}

interface Entry {
  /** Index in the group's items. */
  index: number;
  request: PublishBatchRequestEntry;
  bytes: number;
}

/**
 * Publishes alert messages to one SNS topic with PublishBatch, in chunks that respect SNS's entry and size limits.
 * Each message carries the MessageAttributes of ALERT_MESSAGE_ATTRIBUTES (String) for subscription filter policies.
 * A failed request fails every entry it carried; an entry SNS lists under `Failed` fails alone.
 */
export class SnsAlertPublisher implements AlertPublisher {
  readonly #client: SNSClient;
  readonly #topicArn: string;

  constructor(options: SnsAlertPublisherOptions) {
    if (typeof options.topicArn !== 'string' || !TOPIC_ARN.test(options.topicArn))
      throw new AlertPipelineInputInvalidError(
        'topicArn',
        `${JSON.stringify(options.topicArn)} is not an SNS topic ARN`,
        'arn:aws:sns:<region>:<12-digit account>:<topic name>',
      );
    this.#client = options.client;
    this.#topicArn = options.topicArn;
  }

  /** Sends the group's messages; the outcomes follow the order of `group.items`. */
  async publish(group: AlertGroup<AlertMessage>): Promise<PublishOutcome[]> {
    const outcomes = new Array<PublishOutcome>(group.items.length);
    const entries: Entry[] = [];
    group.items.forEach((message, index) => {
      const request = toEntry(message, `m${index}`);
      const bytes = payloadBytes(request);
      if (bytes > SNS_LIMITS.maxPayloadBytes)
        outcomes[index] = {
          ok: false,
          error: new AlertPublishError(
            'MessageTooLarge',
            `the ${message.alertname} message for ${message.fingerprint} is ${bytes} bytes with its attributes; SNS takes at most ${SNS_LIMITS.maxPayloadBytes}`,
            false,
            false,
          ),
        };
      else entries.push({ index, request, bytes });
    });
    for (const chunk of chunks(entries)) await this.#publishChunk(chunk, outcomes);
    return outcomes;
  }

  async #publishChunk(chunk: readonly Entry[], outcomes: PublishOutcome[]): Promise<void> {
    let response;
    try {
      response = await this.#client.send(
        new PublishBatchCommand({ TopicArn: this.#topicArn, PublishBatchRequestEntries: chunk.map((e) => e.request) }),
      );
    } catch (error) {
      const e = error as { name?: string; $fault?: string; $retryable?: unknown };
      const code = e.name ?? 'Error';
      const retryable = RETRYABLE_CODES.has(code) || e.$fault === 'server' || e.$retryable !== undefined;
      for (const entry of chunk)
        outcomes[entry.index] = {
          ok: false,
          error: new AlertPublishError(
            code,
            `SNS PublishBatch to ${this.#topicArn} failed: ${describeCause(error)}`,
            retryable,
            true,
            { cause: error },
          ),
        };
      return;
    }
    const byId = new Map(chunk.map((entry) => [entry.request.Id, entry]));
    for (const ok of response.Successful ?? []) {
      const entry = byId.get(ok.Id);
      if (entry === undefined || ok.MessageId === undefined) continue;
      outcomes[entry.index] = { ok: true, messageId: ok.MessageId };
      byId.delete(ok.Id);
    }
    for (const failed of response.Failed ?? []) {
      const entry = byId.get(failed.Id);
      if (entry === undefined) continue;
      const code = failed.Code ?? 'Unknown';
      outcomes[entry.index] = {
        ok: false,
        error: new AlertPublishError(
          code,
          `SNS refused entry ${failed.Id ?? '?'} of PublishBatch to ${this.#topicArn}: ${code}: ${failed.Message ?? ''}`,
          failed.SenderFault !== true || RETRYABLE_CODES.has(code),
          false,
        ),
      };
      byId.delete(failed.Id);
    }
    // SNS answers for every entry; one it left out did not demonstrably go out, so it counts as failed (and retried).
    for (const entry of byId.values())
      outcomes[entry.index] = {
        ok: false,
        error: new AlertPublishError(
          'NoResult',
          `SNS PublishBatch to ${this.#topicArn} reported nothing for entry ${entry.request.Id ?? '?'}`,
          true,
          false,
        ),
      };
  }
}

/**
 * The Subject e-mail subscribers see: `[FIRING] VLLMKVCacheFull prod-ministral`, printable ASCII, ≤ 100 characters.
 * AMP's Alertmanager builds the same one (`subject` in `export/ampAlertManagerDefinition.ts`).
 */
export function alertSubject(message: AlertMessage): string {
  const text = `[${message.status.toUpperCase()}] ${message.alertname} ${message.target}`
    .replace(/[^\x20-\x7e]/g, '?')
    .replace(/ {2,}/g, ' ')
    .trim();
  return text.length <= SNS_LIMITS.maxSubjectLength ? text : `${text.slice(0, SNS_LIMITS.maxSubjectLength - 3)}...`;
}

/**
 * The message's filter attributes, every one of ALERT_MESSAGE_ATTRIBUTES: a missing or empty label is
 * ALERT_ATTRIBUTE_MISSING (SNS refuses an empty value), as AMP's Alertmanager sends it, so that a filter policy
 * matches the same messages from either engine.
 */
export function alertMessageAttributes(message: AlertMessage): Record<string, MessageAttributeValue> {
  const values: Record<AlertMessageAttribute, string | undefined> = {
    severity: message.severity,
    status: message.status,
    alertname: message.alertname,
    target: message.target,
    cluster: message.labels.cluster,
    namespace: message.labels.namespace,
  };
  const attributes: Record<string, MessageAttributeValue> = {};
  for (const name of ALERT_MESSAGE_ATTRIBUTES) {
    const value = values[name];
    attributes[name] = {
      DataType: 'String',
      StringValue: value === undefined || value === '' ? ALERT_ATTRIBUTE_MISSING : value,
    };
  }
  return attributes;
}

function toEntry(message: AlertMessage, id: string): PublishBatchRequestEntry {
  return {
    Id: id,
    Message: JSON.stringify(message),
    Subject: alertSubject(message),
    MessageAttributes: alertMessageAttributes(message),
  };
}

/** As SNS counts toward the 256 KiB: the body plus each attribute's name, data type and value. */
function payloadBytes(entry: PublishBatchRequestEntry): number {
  let bytes = Buffer.byteLength(entry.Message ?? '');
  for (const [name, value] of Object.entries(entry.MessageAttributes ?? {}))
    bytes +=
      Buffer.byteLength(name) + Buffer.byteLength(value.DataType ?? '') + Buffer.byteLength(value.StringValue ?? '');
  return bytes;
}

/** Splits entries into batches of at most 10 entries and 256 KiB, keeping their order. */
function chunks(entries: readonly Entry[]): Entry[][] {
  const result: Entry[][] = [];
  let current: Entry[] = [];
  let bytes = 0;
  for (const entry of entries) {
    if (
      current.length === SNS_LIMITS.maxBatchEntries ||
      (current.length > 0 && bytes + entry.bytes > SNS_LIMITS.maxPayloadBytes)
    ) {
      result.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += entry.bytes;
  }
  if (current.length > 0) result.push(current);
  return result;
}
