import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, systemClock } from '../../shared/clock/index.js';

/**
 * The twin's SNS endpoint. @aws-sdk/client-sns 3.1164 speaks the AWS Query protocol (runtimeConfig.shared.js:
 * `AwsQueryProtocol`, version 2010-03-31): a form-encoded POST with `Action=...`, answered with XML. The twin decodes
 * CreateTopic, Publish and PublishBatch as SNS does, validates like SNS, records every accepted message, and hands it
 * to in-process subscribers after answering (SNS delivers asynchronously too).
 *
 * Limits and messages follow the SNS API reference (Publish, PublishBatch, "Amazon SNS message attributes"):
 * 256 KiB per message and per batch (body + attribute names, types and values), 10 entries per batch, 10 message
 * attributes, a Subject of UTF-8 text without line breaks or control characters up to 100 characters (Publish: "Subjects
 * must be UTF-8 text with no line breaks or control characters"), batch entry Ids of up to 80 of [A-Za-z0-9_-].
 *
 * Local subscriptions may carry a filter policy, matched as SNS matches them (Amazon SNS developer guide, "Amazon
 * SNS message filtering": subscription filter policies, string / numeric value matching, key matching, filter policy
 * constraints): see `checkFilterPolicy` and `filterPolicyMatches` below.
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
export type SnsSubscriber = (message: RecordedMessage, subscription: SnsSubscription) => void | Promise<void>;

/** Where a filter policy looks: the message attributes (SNS's default) or the JSON message body. */
export const FILTER_POLICY_SCOPES = ['MessageAttributes', 'MessageBody'] as const;
export type FilterPolicyScope = (typeof FILTER_POLICY_SCOPES)[number];

/** A subscription's options, as the SNS Subscribe attributes `FilterPolicy` and `FilterPolicyScope` give them. */
export interface SubscribeOptions {
  /** Only messages that match are delivered (a JSON object, as SNS's FilterPolicy attribute after parsing). */
  filterPolicy?: object;
  /** Default `MessageAttributes`. */
  filterPolicyScope?: FilterPolicyScope;
}

/** One local subscription, as `subscriptions()` lists it. */
export interface SnsSubscription {
  /** `<topic ARN>:<uuid>`, the shape of an SNS subscription ARN. */
  subscriptionArn: string;
  topicArn: string;
  filterPolicy: object | undefined;
  filterPolicyScope: FilterPolicyScope;
}

/** Ends a subscription; carries the subscription's ARN. */
export type SnsUnsubscribe = (() => void) & { subscriptionArn: string };

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
  /**
   * Delivers every later message of `topicArn` that matches the filter policy (all of them without one) to
   * `handler`; returns the unsubscribe function. An invalid policy throws SnsFilterPolicyInvalidError.
   */
  subscribe(topicArn: string, handler: SnsSubscriber, options?: SubscribeOptions): SnsUnsubscribe;
  /** The live subscriptions, in the order they were made. */
  subscriptions(): SnsSubscription[];
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
/** UTF-8 text (an Alertmanager subject may carry any label value) without control characters, 1-100 characters. */
const SUBJECT = /^[^\p{Cc}]{1,100}$/u;

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
  const subscribers = new Map<string, { subscription: SnsSubscription; handler: SnsSubscriber }>();
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
    if (fields.subject !== undefined && !SUBJECT.test(fields.subject))
      throw new SnsTwinRequestError(
        'InvalidParameter',
        'Invalid parameter: Subject (1 to 100 characters of UTF-8 text, no line breaks or control characters)',
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
    for (const { subscription, handler } of subscribers.values()) {
      if (subscription.topicArn !== message.topicArn) continue;
      if (!filterPolicyMatches(subscription.filterPolicy, subscription.filterPolicyScope, message)) continue;
      // After the response, as SNS delivers: a slow subscriber never delays Publish.
      const delivery = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => handler(structuredClone(message), structuredClone(subscription)))
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
    subscribe: (topicArn, handler, subscribeOptions = {}) => {
      if (!topics.has(topicArn)) throw new RangeError(`subscribe: no topic ${topicArn}; create it first`);
      const scope = subscribeOptions.filterPolicyScope ?? 'MessageAttributes';
      if (!(FILTER_POLICY_SCOPES as readonly string[]).includes(scope))
        throw new SnsFilterPolicyInvalidError(
          'FilterPolicyScope',
          `${JSON.stringify(scope)} is not one of ${FILTER_POLICY_SCOPES.join(', ')}`,
        );
      const filterPolicy = subscribeOptions.filterPolicy;
      if (filterPolicy !== undefined) checkFilterPolicy(filterPolicy, scope);
      const subscription: SnsSubscription = {
        subscriptionArn: `${topicArn}:${randomUUID()}`,
        topicArn,
        // A copy, so that a caller changing its object later does not change what this subscription matches.
        filterPolicy: filterPolicy === undefined ? undefined : structuredClone(filterPolicy),
        filterPolicyScope: scope,
      };
      subscribers.set(subscription.subscriptionArn, { subscription, handler });
      log?.(
        `sns twin: subscribed ${subscription.subscriptionArn}${filterPolicy === undefined ? '' : ` with filter policy ${JSON.stringify(filterPolicy)} (${scope})`}`,
      );
      return Object.assign(
        () => {
          subscribers.delete(subscription.subscriptionArn);
        },
        { subscriptionArn: subscription.subscriptionArn },
      );
    },
    subscriptions: () => [...subscribers.values()].map(({ subscription }) => structuredClone(subscription)),
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

/**
 * A filter policy SNS would refuse (the Subscribe / SetSubscriptionAttributes error `InvalidParameter`, "Invalid
 * parameter: FilterPolicy: ..."). `key` is the policy key (a dotted path in a MessageBody policy) that is wrong.
 */
export class SnsFilterPolicyInvalidError extends Error {
  readonly code = 'InvalidParameter';

  constructor(
    readonly key: string,
    readonly reason: string,
  ) {
    super(`Invalid parameter: FilterPolicy: "${key}": ${reason}`);
    this.name = 'SnsFilterPolicyInvalidError';
  }
}

/** The constraints of "Filter policy constraints in Amazon SNS". */
const FILTER_POLICY_LIMITS = {
  /** At most five keys (leaf keys, in a MessageBody policy). */
  keys: 5,
  /** The product of the lengths of every value array. */
  combinations: 150,
  /** Numeric matching works from -10^9 to 10^9, with five digits after the decimal point. */
  numericMagnitude: 1e9,
  numericPrecision: 1e-5,
} as const;

const MATCH_OPERATORS = ['anything-but', 'prefix', 'suffix', 'equals-ignore-case', 'exists', 'numeric'] as const;
const NUMERIC_OPERATORS = ['=', '<', '<=', '>', '>='] as const;

/**
 * Checks a filter policy as SNS does on Subscribe; throws SnsFilterPolicyInvalidError naming the key. Leaves are
 * non-empty arrays of strings, numbers, booleans, null, or one-operator objects (`anything-but`, `prefix`, `suffix`,
 * `equals-ignore-case`, `exists`, `numeric`); only a MessageBody policy may nest objects.
 */
export function checkFilterPolicy(policy: unknown, scope: FilterPolicyScope = 'MessageAttributes'): void {
  if (typeof policy !== 'object' || policy === null || Array.isArray(policy))
    throw new SnsFilterPolicyInvalidError('(policy)', 'the filter policy must be a JSON object');
  const leaves: Array<{ key: string; values: unknown[] }> = [];
  const walk = (node: object, path: string[]): void => {
    for (const [name, value] of Object.entries(node) as Array<[string, unknown]>) {
      const key = [...path, name].join('.');
      if (name.startsWith('$'))
        throw new SnsFilterPolicyInvalidError(key, 'the twin does not implement the $or operator');
      if (Array.isArray(value)) {
        leaves.push({ key, values: value });
      } else if (typeof value === 'object' && value !== null) {
        if (scope === 'MessageAttributes')
          throw new SnsFilterPolicyInvalidError(
            key,
            'nested policies are accepted only with FilterPolicyScope MessageBody; a MessageAttributes policy maps each attribute name to an array',
          );
        walk(value, [...path, name]);
      } else {
        throw new SnsFilterPolicyInvalidError(
          key,
          `must be an array of values (got ${JSON.stringify(value)}); write ${JSON.stringify({ [name]: [value] })}`,
        );
      }
    }
  };
  walk(policy, []);
  if (leaves.length > FILTER_POLICY_LIMITS.keys)
    throw new SnsFilterPolicyInvalidError(
      leaves[FILTER_POLICY_LIMITS.keys]?.key ?? '(policy)',
      `a filter policy can have at most ${FILTER_POLICY_LIMITS.keys} keys (it has ${leaves.length})`,
    );
  let combinations = 1;
  for (const { key, values } of leaves) {
    if (values.length === 0) throw new SnsFilterPolicyInvalidError(key, 'empty arrays are not allowed');
    for (const value of values) checkPolicyValue(key, value);
    combinations *= values.length;
  }
  if (combinations > FILTER_POLICY_LIMITS.combinations)
    throw new SnsFilterPolicyInvalidError(
      leaves[leaves.length - 1]?.key ?? '(policy)',
      `the policy has ${combinations} combinations of values (the product of the array lengths); at most ${FILTER_POLICY_LIMITS.combinations}`,
    );
}

function checkPolicyValue(key: string, value: unknown): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') return checkPolicyNumber(key, value);
  const refuse = (reason: string) => new SnsFilterPolicyInvalidError(key, reason);
  if (typeof value !== 'object' || Array.isArray(value))
    throw refuse(`${JSON.stringify(value)} is not a string, number, boolean, null or match object`);
  const entries = Object.entries(value);
  const [operator, operand] = entries[0] ?? [];
  if (entries.length !== 1 || operator === undefined)
    throw refuse(
      `a match object has exactly one operator (${MATCH_OPERATORS.join(', ')}); got ${JSON.stringify(value)}`,
    );
  switch (operator) {
    case 'prefix':
    case 'suffix':
    case 'equals-ignore-case':
      if (typeof operand !== 'string' || operand === '') throw refuse(`${operator} takes a non-empty string`);
      return;
    case 'exists':
      if (typeof operand !== 'boolean') throw refuse('exists takes true or false');
      return;
    case 'numeric':
      return checkNumericCondition(key, operand);
    case 'anything-but': {
      if (typeof operand === 'string') return;
      if (typeof operand === 'number') return checkPolicyNumber(key, operand);
      if (Array.isArray(operand)) {
        if (operand.length === 0) throw refuse('anything-but takes a non-empty list');
        const allStrings = operand.every((item) => typeof item === 'string');
        const allNumbers = operand.every((item) => typeof item === 'number');
        if (!allStrings && !allNumbers) throw refuse('the anything-but list must hold only strings or only numbers');
        if (allNumbers) for (const item of operand) checkPolicyNumber(key, Number(item));
        return;
      }
      if (typeof operand === 'object' && operand !== null) {
        const inner = Object.entries(operand as Record<string, unknown>);
        const [innerOperator, innerOperand] = inner[0] ?? [];
        if (
          inner.length === 1 &&
          (innerOperator === 'prefix' || innerOperator === 'suffix') &&
          typeof innerOperand === 'string' &&
          innerOperand !== ''
        )
          return;
      }
      throw refuse(
        'anything-but takes a string, a number, a list of strings or of numbers, or {"prefix": ...} / {"suffix": ...}',
      );
    }
    default:
      throw refuse(`unrecognized match type ${operator} (accepted: ${MATCH_OPERATORS.join(', ')})`);
  }
}

function checkPolicyNumber(key: string, value: number): void {
  if (!Number.isFinite(value) || Math.abs(value) > FILTER_POLICY_LIMITS.numericMagnitude)
    throw new SnsFilterPolicyInvalidError(key, `${value} is outside the numeric range -1e9 to 1e9`);
}

/** `[op, n]` or a range `[">" | ">=", low, "<" | "<=", high]` with low < high. */
function checkNumericCondition(key: string, operand: unknown): void {
  const refuse = () =>
    new SnsFilterPolicyInvalidError(
      key,
      `numeric takes [op, number] with op one of ${NUMERIC_OPERATORS.join(' ')}, or a range such as [">", 0, "<=", 150]; got ${JSON.stringify(operand)}`,
    );
  if (!Array.isArray(operand)) throw refuse();
  const isOperator = (op: unknown): op is (typeof NUMERIC_OPERATORS)[number] =>
    (NUMERIC_OPERATORS as readonly unknown[]).includes(op);
  if (operand.length === 2) {
    const [op, n] = operand as unknown[];
    if (!isOperator(op) || typeof n !== 'number') throw refuse();
    return checkPolicyNumber(key, n);
  }
  if (operand.length === 4) {
    const [lowOp, low, highOp, high] = operand as unknown[];
    if (
      (lowOp !== '>' && lowOp !== '>=') ||
      (highOp !== '<' && highOp !== '<=') ||
      typeof low !== 'number' ||
      typeof high !== 'number' ||
      !(low < high)
    )
      throw refuse();
    checkPolicyNumber(key, low);
    return checkPolicyNumber(key, high);
  }
  throw refuse();
}

/**
 * Does the message match the policy? Keys are AND-ed, the values of one key OR-ed; a message that lacks a key's
 * attribute (or body property) matches only `{"exists": false}` on it. In the MessageAttributes scope only String,
 * String.Array and Number attributes take part, and a message without any attribute matches no policy key (SNS:
 * "exists: false only matches if at least one attribute is present"). A MessageBody policy needs a JSON object body.
 */
export function filterPolicyMatches(
  policy: object | undefined,
  scope: FilterPolicyScope,
  message: Pick<RecordedMessage, 'message' | 'attributes'>,
): boolean {
  if (policy === undefined || Object.keys(policy).length === 0) return true;
  if (scope === 'MessageAttributes') {
    const attributes = Object.entries(message.attributes);
    if (attributes.length === 0) return false;
    return Object.entries(policy).every(([name, conditions]) =>
      leafMatches(conditions as unknown[], attributeValues(message.attributes[name])),
    );
  }
  let body: unknown;
  try {
    body = JSON.parse(message.message);
  } catch {
    return false;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  return bodyMatches(policy, body);
}

function bodyMatches(policy: object, node: object): boolean {
  return (Object.entries(policy) as Array<[string, unknown]>).every(([name, conditions]) => {
    const present = Object.prototype.hasOwnProperty.call(node, name);
    const value: unknown = present ? (node as Record<string, unknown>)[name] : undefined;
    if (!Array.isArray(conditions)) {
      // A nested policy object: the property must be an object that matches it.
      return (
        typeof value === 'object' && value !== null && !Array.isArray(value) && bodyMatches(conditions as object, value)
      );
    }
    if (!present || value === undefined) return leafMatches(conditions, undefined);
    return leafMatches(conditions, Array.isArray(value) ? value : [value]);
  });
}

/** The values an attribute offers to matching; undefined when it is absent or of a type SNS does not compare. */
function attributeValues(attribute: RecordedAttribute | undefined): unknown[] | undefined {
  if (attribute === undefined) return undefined;
  const base = attribute.dataType.split('.')[0];
  if (attribute.dataType === 'String.Array') {
    try {
      const parsed: unknown = JSON.parse(attribute.value);
      return Array.isArray(parsed) ? parsed : undefined;
    } catch {
      return undefined;
    }
  }
  if (base === 'String') return [attribute.value];
  if (base === 'Number') return [Number(attribute.value)];
  return undefined;
}

/** One key: at least one condition matches (for value conditions: at least one of the values). */
function leafMatches(conditions: readonly unknown[], values: readonly unknown[] | undefined): boolean {
  return conditions.some((condition) => {
    if (typeof condition === 'object' && condition !== null && 'exists' in condition) {
      const present = values !== undefined && values.some((value) => value !== null);
      return (condition as { exists: boolean }).exists ? present : values === undefined;
    }
    if (values === undefined) return false;
    return values.some((value) => valueMatches(condition, value));
  });
}

function valueMatches(condition: unknown, value: unknown): boolean {
  if (condition === null || typeof condition === 'boolean') return value === condition;
  if (typeof condition === 'string') return value === condition;
  if (typeof condition === 'number') return typeof value === 'number' && numbersEqual(value, condition);
  const [operator, operand] = Object.entries(condition as object)[0] ?? [];
  const text = typeof value === 'string' ? value : undefined;
  switch (operator) {
    case 'prefix':
      return text !== undefined && text.startsWith(operand as string);
    case 'suffix':
      return text !== undefined && text.endsWith(operand as string);
    case 'equals-ignore-case':
      return text !== undefined && text.toLowerCase() === (operand as string).toLowerCase();
    case 'numeric':
      return typeof value === 'number' && numericMatches(operand as unknown[], value);
    case 'anything-but':
      return anythingButMatches(operand, value);
    default:
      return false;
  }
}

function anythingButMatches(operand: unknown, value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (typeof operand === 'object' && operand !== null && !Array.isArray(operand)) {
    const [operator, text] = Object.entries(operand)[0] ?? [];
    if (typeof value !== 'string') return true;
    return operator === 'prefix' ? !value.startsWith(text as string) : !value.endsWith(text as string);
  }
  const excluded = Array.isArray(operand) ? (operand as unknown[]) : [operand];
  return !excluded.some((item) =>
    typeof item === 'number' && typeof value === 'number' ? numbersEqual(item, value) : item === value,
  );
}

function numericMatches(operand: readonly unknown[], value: number): boolean {
  for (let i = 0; i + 1 < operand.length; i += 2) {
    const op = operand[i];
    const bound = operand[i + 1] as number;
    const ok =
      op === '='
        ? numbersEqual(value, bound)
        : op === '<'
          ? value < bound
          : op === '<='
            ? value <= bound
            : op === '>'
              ? value > bound
              : value >= bound;
    if (!ok) return false;
  }
  return true;
}

/** SNS compares numbers with five digits after the decimal point. */
function numbersEqual(a: number, b: number): boolean {
  return Math.abs(a - b) < FILTER_POLICY_LIMITS.numericPrecision / 2;
}
