import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from '../../shared/clock/clock.js';

/**
 * The twin's SNS endpoint. @aws-sdk/client-sns 3.1164 speaks the AWS Query protocol (runtimeConfig.shared.js:
 * `AwsQueryProtocol`, version 2010-03-31): a form-encoded POST with `Action=...`, answered with XML. The twin decodes
 * CreateTopic, Publish and PublishBatch as SNS does, validates like SNS, records every accepted message, and hands it
 * to in-process subscribers after answering (SNS delivers asynchronously too).
 *
 * Limits and messages follow the SNS API reference (Publish, PublishBatch, "Amazon SNS message attributes"):
 * 256 KiB per message and per batch (body + attribute names, types and values), 10 entries per batch, 10 message
 * attributes, Subject up to 100 printable ASCII characters, batch entry Ids of up to 80 of [A-Za-z0-9_-].
 */

/** A message attribute as recorded: the data type and the value (base64 text for Binary). */
export interface RecordedAttribute {
  dataType: string;
  value: string;
}

/** One accepted message. */
export interface RecordedMessage {
  messageId: string;
  topicArn: string;
  message: string;
  subject: string | undefined;
  attributes: Record<string, RecordedAttribute>;
  /** `json` when the message carries one body per protocol. */
  messageStructure: string | undefined;
  messageGroupId: string | undefined;
  messageDeduplicationId: string | undefined;
  /** The request that carried it, and the batch entry Id for PublishBatch. */
  action: 'Publish' | 'PublishBatch';
  batchEntryId: string | undefined;
  /** FIFO topics: the sequence number SNS assigns. */
  sequenceNumber: string | undefined;
  receivedAtMs: number;
}

/** A local subscriber; what it throws is logged (SNS would retry delivery, the twin does not). */
export type SnsSubscriber = (message: RecordedMessage) => void | Promise<void>;

export interface SnsTwinOptions {
  /** The region in topic ARNs. */
  region: string;
  /** The account in topic ARNs; default 000000000000. */
  accountId?: string;
  /** Source of receive times. */
  clock?: Clock;
  /** One line per request and per failed delivery. */
  log?: (line: string) => void;
}

export interface SnsTwin {
  /** `http://127.0.0.1:<port>`: give it to `SNSClient({ endpoint })`. */
  endpoint: string;
  region: string;
  accountId: string;
  /** Creates the topic (idempotent, as CreateTopic) and returns its ARN. */
  createTopic(name: string): string;
  /** The ARNs of the topics that exist. */
  topics(): string[];
  /** Accepted messages in arrival order, of one topic or of all. */
  messages(topicArn?: string): RecordedMessage[];
  /** Delivers every later message of `topicArn` to `handler`; returns the unsubscribe function. */
  subscribe(topicArn: string, handler: SnsSubscriber): () => void;
  /** Resolves when every delivery started so far has finished. */
  flush(): Promise<void>;
  /** Forgets recorded messages (topics and subscribers stay). */
  clear(): void;
  /** The next `n` requests fail with `status` (500: InternalError; 429: Throttled). */
  failNextRequests(n: number, status?: number): void;
  stop(): Promise<void>;
}

const XML_NAMESPACE = 'http://sns.amazonaws.com/doc/2010-03-31/';
const MAX_MESSAGE_BYTES = 262_144;
const MAX_BATCH_ENTRIES = 10;
const MAX_ATTRIBUTES = 10;
const TOPIC_NAME = /^[A-Za-z0-9_-]{1,256}$/;
const FIFO_TOPIC_NAME = /^[A-Za-z0-9_-]{1,251}\.fifo$/;
const BATCH_ENTRY_ID = /^[A-Za-z0-9_-]{1,80}$/;

/**
 * SNS's errors as the SDK knows them: the query error code (`awsQueryError` in the SDK's schemas), its HTTP status,
 * and whether the sender or SNS is at fault.
 */
const SNS_ERRORS = {
  InvalidParameter: { status: 400, type: 'Sender' },
  ParameterValueInvalid: { status: 400, type: 'Sender' },
  NotFound: { status: 404, type: 'Sender' },
  EmptyBatchRequest: { status: 400, type: 'Sender' },
  TooManyEntriesInBatchRequest: { status: 400, type: 'Sender' },
  BatchEntryIdsNotDistinct: { status: 400, type: 'Sender' },
  InvalidBatchEntryId: { status: 400, type: 'Sender' },
  BatchRequestTooLong: { status: 400, type: 'Sender' },
  InvalidAction: { status: 400, type: 'Sender' },
  MissingAuthenticationToken: { status: 403, type: 'Sender' },
  Throttled: { status: 429, type: 'Sender' },
  InternalError: { status: 500, type: 'Receiver' },
} as const;

type SnsErrorCode = keyof typeof SNS_ERRORS;

/** A request SNS would refuse: the code the SDK maps to an exception, and SNS's message. */
class SnsTwinRequestError extends Error {
  constructor(
    readonly code: SnsErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SnsTwinRequestError';
  }
}

/**
 * Starts the twin's SNS endpoint on 127.0.0.1 (a free port). It requires an Authorization header without checking
 * the signature. `GET /_twin/messages[?topicArn=...]` returns the recorded messages as JSON (for the CLI);
 * `DELETE /_twin/messages` forgets them.
 */
export async function startSnsTwin(options: SnsTwinOptions): Promise<SnsTwin> {
  const clock = options.clock ?? systemClock;
  const region = options.region;
  const accountId = options.accountId ?? '000000000000';
  const log = options.log;
  const topics = new Set<string>();
  const subscribers = new Map<string, Set<SnsSubscriber>>();
  const deliveries = new Set<Promise<void>>();
  let recorded: RecordedMessage[] = [];
  let sequence = 0n;
  let failuresLeft = 0;
  let failureStatus = 500;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        route(req, res, Buffer.concat(chunks).toString('utf8'));
      } catch (error) {
        sendXmlError(res, 'InternalError', error instanceof Error ? error.message : String(error));
      }
    });
  });

  function arnOf(name: string): string {
    return `arn:aws:sns:${region}:${accountId}:${name}`;
  }

  function createTopic(name: string): string {
    if (!TOPIC_NAME.test(name) && !FIFO_TOPIC_NAME.test(name))
      throw new SnsTwinRequestError(
        'InvalidParameter',
        'Invalid parameter: Topic Name (1 to 256 of A-Z, a-z, 0-9, "_" and "-"; a FIFO topic ends with ".fifo")',
      );
    const arn = arnOf(name);
    topics.add(arn);
    return arn;
  }

  function route(req: IncomingMessage, res: ServerResponse, body: string): void {
    const url = new URL(req.url ?? '/', 'http://twin');
    if (url.pathname === '/_twin/messages') {
      if (req.method === 'GET') {
        const topicArn = url.searchParams.get('topicArn') ?? undefined;
        return sendJson(res, 200, { messages: messagesOf(topicArn) });
      }
      if (req.method === 'DELETE') {
        recorded = [];
        return sendJson(res, 200, { cleared: true });
      }
    }
    if (url.pathname === '/_twin/topics' && req.method === 'GET') return sendJson(res, 200, { topics: [...topics] });
    if (url.pathname !== '/' || (req.method !== 'POST' && req.method !== 'GET'))
      return sendJson(res, 404, { message: `the SNS twin has no route ${req.method ?? ''} ${url.pathname}` });

    // The query protocol: parameters in the form body (POST) or in the query string (GET).
    const params = new URLSearchParams(url.search);
    for (const [key, value] of new URLSearchParams(body)) params.set(key, value);
    const action = params.get('Action') ?? '';
    try {
      if (!req.headers.authorization)
        throw new SnsTwinRequestError('MissingAuthenticationToken', 'Request is missing Authentication Token');
      if (failuresLeft > 0) {
        failuresLeft -= 1;
        throw failureStatus === 429
          ? new SnsTwinRequestError('Throttled', 'Rate exceeded (twin failNextRequests)')
          : new SnsTwinRequestError('InternalError', 'injected failure (twin failNextRequests)');
      }
      switch (action) {
        case 'CreateTopic':
          return respondCreateTopic(res, params);
        case 'Publish':
          return respondPublish(res, params);
        case 'PublishBatch':
          return respondPublishBatch(res, params);
        default:
          throw new SnsTwinRequestError(
            'InvalidAction',
            `The action ${action || '(none)'} is not valid for this endpoint (the twin implements CreateTopic, Publish, PublishBatch)`,
          );
      }
    } catch (error) {
      if (!(error instanceof SnsTwinRequestError)) throw error;
      log?.(`sns twin: ${action || '?'} -> ${SNS_ERRORS[error.code].status} ${error.code}: ${error.message}`);
      sendXmlError(res, error.code, error.message);
    }
  }

  function respondCreateTopic(res: ServerResponse, params: URLSearchParams): void {
    const name = params.get('Name');
    if (name === null) throw new SnsTwinRequestError('InvalidParameter', 'Invalid parameter: Name');
    const arn = createTopic(name);
    log?.(`sns twin: CreateTopic ${name} -> ${arn}`);
    sendXml(res, 'CreateTopic', `<TopicArn>${xml(arn)}</TopicArn>`);
  }

  function respondPublish(res: ServerResponse, params: URLSearchParams): void {
    const topicArn = requireTopic(params.get('TopicArn') ?? params.get('TargetArn'));
    const message = checkMessage(topicArn, readEntry(params, ''), 'Publish', undefined);
    accept(message);
    log?.(`sns twin: Publish ${topicArn} -> ${message.messageId}`);
    sendXml(
      res,
      'Publish',
      `<MessageId>${message.messageId}</MessageId>` +
        (message.sequenceNumber === undefined ? '' : `<SequenceNumber>${message.sequenceNumber}</SequenceNumber>`),
    );
  }

  function respondPublishBatch(res: ServerResponse, params: URLSearchParams): void {
    const topicArn = requireTopic(params.get('TopicArn'));
    const prefixes = memberPrefixes(params, 'PublishBatchRequestEntries.member.');
    if (prefixes.length === 0)
      throw new SnsTwinRequestError('EmptyBatchRequest', "The batch request doesn't contain any entries.");
    if (prefixes.length > MAX_BATCH_ENTRIES)
      throw new SnsTwinRequestError(
        'TooManyEntriesInBatchRequest',
        `The batch request contains more entries than permissible (at most ${MAX_BATCH_ENTRIES}).`,
      );
    const entries = prefixes.map((prefix) => ({
      id: params.get(`${prefix}Id`) ?? '',
      fields: readEntry(params, prefix),
    }));
    const ids = entries.map((entry) => entry.id);
    if (new Set(ids).size !== ids.length)
      throw new SnsTwinRequestError(
        'BatchEntryIdsNotDistinct',
        'Two or more batch entries in the request have the same Id.',
      );
    const badId = ids.find((id) => !BATCH_ENTRY_ID.test(id));
    if (badId !== undefined)
      throw new SnsTwinRequestError(
        'InvalidBatchEntryId',
        `The Id of a batch entry in a batch request doesn't abide by the specification: ${JSON.stringify(badId)} (1 to 80 of A-Z, a-z, 0-9, "_" and "-").`,
      );
    const total = entries.reduce((sum, entry) => sum + payloadBytes(entry.fields), 0);
    if (total > MAX_MESSAGE_BYTES)
      throw new SnsTwinRequestError(
        'BatchRequestTooLong',
        `The length of all the messages put together is more than the limit (${total} > ${MAX_MESSAGE_BYTES} bytes).`,
      );
    const successful: string[] = [];
    const failed: string[] = [];
    for (const entry of entries) {
      try {
        const message = checkMessage(topicArn, entry.fields, 'PublishBatch', entry.id);
        accept(message);
        successful.push(
          `<member><Id>${xml(entry.id)}</Id><MessageId>${message.messageId}</MessageId>` +
            (message.sequenceNumber === undefined ? '' : `<SequenceNumber>${message.sequenceNumber}</SequenceNumber>`) +
            '</member>',
        );
      } catch (error) {
        if (!(error instanceof SnsTwinRequestError)) throw error;
        failed.push(
          `<member><Id>${xml(entry.id)}</Id><Code>${error.code}</Code><Message>${xml(error.message)}</Message>` +
            `<SenderFault>${SNS_ERRORS[error.code].type === 'Sender'}</SenderFault></member>`,
        );
      }
    }
    log?.(`sns twin: PublishBatch ${topicArn} -> ${successful.length} published, ${failed.length} failed`);
    sendXml(res, 'PublishBatch', `<Successful>${successful.join('')}</Successful><Failed>${failed.join('')}</Failed>`);
  }

  function requireTopic(arn: string | null): string {
    if (arn === null || arn === '')
      throw new SnsTwinRequestError(
        'InvalidParameter',
        'Invalid parameter: TopicArn or TargetArn Reason: no value for required parameter',
      );
    if (!topics.has(arn)) throw new SnsTwinRequestError('NotFound', 'Topic does not exist');
    return arn;
  }

  /** Validates one message as SNS does and builds its record (not yet accepted). */
  function checkMessage(
    topicArn: string,
    fields: EntryFields,
    action: RecordedMessage['action'],
    batchEntryId: string | undefined,
  ): RecordedMessage {
    if (fields.message === undefined || fields.message === '')
      throw new SnsTwinRequestError('InvalidParameter', 'Invalid parameter: Empty message');
    const bytes = payloadBytes(fields);
    if (bytes > MAX_MESSAGE_BYTES)
      throw new SnsTwinRequestError(
        'InvalidParameter',
        `Invalid parameter: Message too long (${bytes} bytes with attributes; at most ${MAX_MESSAGE_BYTES})`,
      );
    if (fields.subject !== undefined && !/^[\x20-\x7e]{1,100}$/.test(fields.subject))
      throw new SnsTwinRequestError(
        'InvalidParameter',
        'Invalid parameter: Subject (1 to 100 printable ASCII characters, no line breaks)',
      );
    if (fields.messageStructure !== undefined) {
      if (fields.messageStructure !== 'json')
        throw new SnsTwinRequestError('InvalidParameter', 'Invalid parameter: MessageStructure (accepted: json)');
      let parsed: unknown;
      try {
        parsed = JSON.parse(fields.message);
      } catch {
        parsed = undefined;
      }
      if (
        typeof parsed !== 'object' ||
        parsed === null ||
        typeof (parsed as { default?: unknown }).default !== 'string'
      )
        throw new SnsTwinRequestError(
          'InvalidParameter',
          'Invalid parameter: Message Structure - No default entry in JSON message body',
        );
    }
    const attributes = checkAttributes(fields.attributes);
    const fifo = topicArn.endsWith('.fifo');
    if (fifo && fields.messageGroupId === undefined)
      throw new SnsTwinRequestError(
        'InvalidParameter',
        'Invalid parameter: The MessageGroupId parameter is required for FIFO topics',
      );
    return {
      messageId: randomUUID(),
      topicArn,
      message: fields.message,
      subject: fields.subject,
      attributes,
      messageStructure: fields.messageStructure,
      messageGroupId: fields.messageGroupId,
      messageDeduplicationId: fields.messageDeduplicationId,
      action,
      batchEntryId,
      sequenceNumber: fifo ? nextSequenceNumber() : undefined,
      receivedAtMs: clock.now(),
    };
  }

  function nextSequenceNumber(): string {
    sequence += 1n;
    return (10_000_000_000_000_000_000n + sequence).toString();
  }

  function accept(message: RecordedMessage): void {
    recorded.push(message);
    for (const handler of subscribers.get(message.topicArn) ?? []) {
      // After the response, as SNS delivers: a slow subscriber never delays Publish.
      const delivery = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => handler(structuredClone(message)))
        .catch((error: unknown) =>
          log?.(
            `sns twin: delivery of ${message.messageId} to a subscriber of ${message.topicArn} failed: ${error instanceof Error ? error.message : String(error)}`,
          ),
        )
        .finally(() => deliveries.delete(delivery));
      deliveries.add(delivery);
    }
  }

  function messagesOf(topicArn: string | undefined): RecordedMessage[] {
    return recorded
      .filter((message) => topicArn === undefined || message.topicArn === topicArn)
      .map((message) => structuredClone(message));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    region,
    accountId,
    createTopic: (name) => {
      try {
        return createTopic(name);
      } catch (error) {
        throw new RangeError(`createTopic: ${(error as Error).message}`);
      }
    },
    topics: () => [...topics],
    messages: messagesOf,
    subscribe: (topicArn, handler) => {
      if (!topics.has(topicArn)) throw new RangeError(`subscribe: no topic ${topicArn}; create it first`);
      const set = subscribers.get(topicArn) ?? new Set<SnsSubscriber>();
      set.add(handler);
      subscribers.set(topicArn, set);
      return () => {
        set.delete(handler);
      };
    },
    flush: async () => {
      while (deliveries.size > 0) await Promise.all([...deliveries]);
    },
    clear: () => {
      recorded = [];
    },
    failNextRequests: (n, status = 500) => {
      if (!Number.isInteger(n) || n < 0) throw new RangeError(`failNextRequests: n must be an integer >= 0, got ${n}`);
      if (status !== 500 && status !== 429)
        throw new RangeError(`failNextRequests: status must be 500 (InternalError) or 429 (Throttled), got ${status}`);
      failuresLeft = n;
      failureStatus = status;
    },
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive sockets from the SDK's agent would hold close() open.
        server.closeAllConnections();
      }),
  };
}

/** The fields of one message: Publish's top level (prefix ``) or one PublishBatch entry (`...member.N.`). */
interface EntryFields {
  message: string | undefined;
  subject: string | undefined;
  messageStructure: string | undefined;
  messageGroupId: string | undefined;
  messageDeduplicationId: string | undefined;
  /** Name → data type and value, as sent (checked later). */
  attributes: Array<{ name: string; dataType: string | undefined; stringValue?: string; binaryValue?: string }>;
}

function readEntry(params: URLSearchParams, prefix: string): EntryFields {
  const get = (name: string) => params.get(`${prefix}${name}`) ?? undefined;
  const attributes = memberPrefixes(params, `${prefix}MessageAttributes.entry.`).map((entry) => {
    const stringValue = params.get(`${entry}Value.StringValue`);
    const binaryValue = params.get(`${entry}Value.BinaryValue`);
    return {
      name: params.get(`${entry}Name`) ?? '',
      dataType: params.get(`${entry}Value.DataType`) ?? undefined,
      ...(stringValue === null ? {} : { stringValue }),
      ...(binaryValue === null ? {} : { binaryValue }),
    };
  });
  return {
    message: get('Message'),
    subject: get('Subject'),
    messageStructure: get('MessageStructure'),
    messageGroupId: get('MessageGroupId'),
    messageDeduplicationId: get('MessageDeduplicationId'),
    attributes,
  };
}

/** The distinct `<base><N>.` prefixes present, in N order (query lists and maps are 1-based). */
function memberPrefixes(params: URLSearchParams, base: string): string[] {
  const indexes = new Set<number>();
  for (const key of params.keys()) {
    if (!key.startsWith(base)) continue;
    const index = Number(key.slice(base.length).split('.')[0]);
    if (Number.isInteger(index) && index > 0) indexes.add(index);
  }
  return [...indexes].sort((a, b) => a - b).map((index) => `${base}${index}.`);
}

/** SNS counts the body and every attribute's name, type and value towards the 256 KiB. */
function payloadBytes(fields: EntryFields): number {
  let bytes = Buffer.byteLength(fields.message ?? '');
  for (const attribute of fields.attributes) {
    bytes += Buffer.byteLength(attribute.name) + Buffer.byteLength(attribute.dataType ?? '');
    bytes += Buffer.byteLength(attribute.stringValue ?? '');
    if (attribute.binaryValue !== undefined) bytes += Buffer.from(attribute.binaryValue, 'base64').length;
  }
  return bytes;
}

const ATTRIBUTE_NAME = /^[A-Za-z0-9_.-]{1,256}$/;

/** Checks message attributes as SNS does ("Amazon SNS message attributes": names, types, values). */
function checkAttributes(attributes: EntryFields['attributes']): Record<string, RecordedAttribute> {
  if (attributes.length > MAX_ATTRIBUTES)
    throw new SnsTwinRequestError(
      'ParameterValueInvalid',
      `Number of message attributes [${attributes.length}] exceeds the allowed maximum [${MAX_ATTRIBUTES}].`,
    );
  const result: Record<string, RecordedAttribute> = {};
  for (const attribute of attributes) {
    const { name, dataType } = attribute;
    const refuse = (problem: string) =>
      new SnsTwinRequestError('ParameterValueInvalid', `The message attribute '${name}' ${problem}`);
    if (
      !ATTRIBUTE_NAME.test(name) ||
      name.startsWith('.') ||
      name.endsWith('.') ||
      name.includes('..') ||
      /^(aws\.|amazon\.)/i.test(name)
    )
      throw refuse(
        'has an invalid name (1 to 256 of A-Z, a-z, 0-9, "_", "-" and "."; no leading, trailing or double "."; not starting with AWS. or Amazon.)',
      );
    if (name in result) throw refuse('is given more than once');
    if (dataType === undefined || dataType === '') throw refuse('must contain non-empty message attribute type.');
    const base = dataType.split('.')[0];
    if (base !== 'String' && base !== 'Number' && base !== 'Binary')
      throw refuse(
        'has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String.',
      );
    if (base === 'Binary') {
      if (attribute.binaryValue === undefined || attribute.binaryValue === '')
        throw refuse('must contain non-empty message attribute value for message attribute type Binary.');
      result[name] = { dataType, value: attribute.binaryValue };
      continue;
    }
    const value = attribute.stringValue;
    if (value === undefined || value === '')
      throw refuse(`must contain non-empty message attribute value for message attribute type ${base}.`);
    if (base === 'Number' && !/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(value))
      throw refuse(`has an invalid value ${JSON.stringify(value)} for message attribute type Number.`);
    if (dataType === 'String.Array') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        parsed = undefined;
      }
      if (!Array.isArray(parsed))
        throw refuse('has an invalid value for message attribute type String.Array (a JSON array).');
    }
    result[name] = { dataType, value };
  }
  return result;
}

function sendXml(res: ServerResponse, action: string, result: string): void {
  const body =
    `<${action}Response xmlns="${XML_NAMESPACE}"><${action}Result>${result}</${action}Result>` +
    `<ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></${action}Response>`;
  res.writeHead(200, { 'content-type': 'text/xml', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function sendXmlError(res: ServerResponse, code: SnsErrorCode, message: string): void {
  const { status, type } = SNS_ERRORS[code];
  const body =
    `<ErrorResponse xmlns="${XML_NAMESPACE}"><Error><Type>${type}</Type><Code>${code}</Code>` +
    `<Message>${xml(message)}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`;
  res.writeHead(status, { 'content-type': 'text/xml', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function xml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}
