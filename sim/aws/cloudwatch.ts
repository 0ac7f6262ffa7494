import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { type Clock, systemClock } from '../../shared/clock/index.js';
import {
  dimensionNameProblem,
  dimensionValueProblem,
  metricNameProblem,
  namespaceProblem,
  PUT_METRIC_DATA_LIMITS,
  unitProblem,
  valueProblem,
} from '../../shared/cloudwatch/index.js';
import {
  actionsFor,
  ALARM_STATES,
  type AlarmState,
  AlarmDefinitionError,
  alarmNotification,
  evaluateAlarm,
  parsePutMetricAlarm,
  type TwinAlarm,
} from './cloudwatchAlarms.js';

/** A datum as the twin stored it. */
export interface RecordedDatum {
  namespace: string;
  metricName: string;
  unit: string | undefined;
  value: number;
  /** The datum's own Timestamp in epoch ms (the receive time when the request had none). */
  timestampMs: number;
  dimensions: Record<string, string>;
  /** When the twin received it, epoch ms. */
  receivedAtMs: number;
}

/** One PutMetricData request as the twin saw it, accepted or not. */
export interface RecordedRequest {
  receivedAtMs: number;
  status: number;
  /** The AWS error code sent back (`InvalidParameterValue`, ...), when the request was refused. */
  errorCode: string | undefined;
  datums: number;
  gzip: boolean;
  /** Body bytes on the wire and once decoded. */
  wireBytes: number;
  bodyBytes: number;
}

/** An alarm that changed state at one evaluation. */
export interface AlarmTransition {
  alarmName: string;
  from: AlarmState;
  to: AlarmState;
  reason: string;
  atMs: number;
  /** The SNS topics the change was published to (the actions of the new state). */
  notified: string[];
  /** Actions that could not be run, with the error. */
  failedActions: string[];
}

export interface CloudWatchTwinOptions {
  /** One line per request, for the demo and debugging. */
  log?: (line: string) => void;
  /** Region the twin claims to be (clients sign for it; the twin does not check signatures). */
  region?: string;
  /** The account in alarm ARNs and alarm messages; default 000000000000. */
  accountId?: string;
  /** Source of receive times and of "now" when alarms are evaluated. */
  clock?: Clock;
  /**
   * How often the twin evaluates every alarm (CloudWatch: every minute); 0 = only when `evaluateAlarms` is called.
   * Default 60 000 ms.
   */
  alarmEvaluationIntervalMs?: number;
  /** Runs an alarm's SNS action: publishes the alarm message to the topic (the twin wires the twin's SNS). */
  publishAlarm?: (topicArn: string, subject: string, message: string) => Promise<void>;
}

export interface CloudWatchTwin {
  /** `http://127.0.0.1:<port>`: give it to `CloudWatchClient({ endpoint })`. */
  endpoint: string;
  region: string;
  datums(): RecordedDatum[];
  requests(): RecordedRequest[];
  clear(): void;
  /** The next `n` PutMetricData requests fail with `status` (500: InternalServiceFault; 400/429: Throttling). */
  failNextRequests(n: number, status?: number): void;
  /** The alarms PutMetricAlarm defined, with their state. */
  alarms(): TwinAlarm[];
  /** Evaluates every alarm now (the clock's now), runs the actions of the states entered, returns the changes. */
  evaluateAlarms(): Promise<AlarmTransition[]>;
  stop(): Promise<void>;
}

const SERVICE_TARGET = 'GraniteServiceVersion20100801';
const JSON_CONTENT_TYPE = 'application/x-amz-json-1.0';

/**
 * How CloudWatch's JSON protocol reports errors: the error shape in `__type` and, because the service is
 * awsQueryCompatible, the legacy query error code in the `x-amzn-query-error` header (the SDK reads both).
 */
const AWS_ERRORS = {
  InvalidParameterValue: { shape: 'InvalidParameterValueException', status: 400, type: 'Sender' },
  MissingParameter: { shape: 'MissingRequiredParameterException', status: 400, type: 'Sender' },
  InvalidParameterCombination: { shape: 'InvalidParameterCombinationException', status: 400, type: 'Sender' },
  Throttling: { shape: 'ThrottlingException', status: 400, type: 'Sender' },
  InternalServiceError: { shape: 'InternalServiceFault', status: 500, type: 'Receiver' },
  MissingAuthenticationToken: { shape: 'MissingAuthenticationTokenException', status: 403, type: 'Sender' },
  UnknownOperation: { shape: 'UnknownOperationException', status: 400, type: 'Sender' },
  Serialization: { shape: 'SerializationException', status: 400, type: 'Sender' },
  RequestEntityTooLarge: { shape: 'RequestEntityTooLargeException', status: 413, type: 'Sender' },
} as const;

type AwsErrorCode = keyof typeof AWS_ERRORS;

class TwinRequestError extends Error {
  constructor(
    readonly code: AwsErrorCode,
    message: string,
    readonly status: number = AWS_ERRORS[code].status,
  ) {
    super(message);
    this.name = 'TwinRequestError';
  }
}

/** The operations the twin serves (X-Amz-Target `GraniteServiceVersion20100801.<operation>`). */
const OPERATIONS = ['PutMetricData', 'PutMetricAlarm', 'DescribeAlarms', 'DeleteAlarms'] as const;
type Operation = (typeof OPERATIONS)[number];

/**
 * Starts the twin's CloudWatch endpoint on 127.0.0.1 (a free port). It speaks what the real SDK sends
 * (AWS JSON 1.0, gzip or not), requires an Authorization header without checking the signature, validates like
 * CloudWatch and records the datums. `GET /_twin/datums` returns them as JSON; `DELETE /_twin/datums` clears them.
 * Metric alarms (PutMetricAlarm, DescribeAlarms, DeleteAlarms) are evaluated over the recorded datums with
 * CloudWatch's semantics (cloudwatchAlarms.ts), and a change of state publishes the alarm message to the state's SNS
 * actions through `publishAlarm`.
 */
export async function startCloudWatchTwin(options: CloudWatchTwinOptions = {}): Promise<CloudWatchTwin> {
  const clock = options.clock ?? systemClock;
  const region = options.region ?? 'us-east-1';
  const log = options.log;
  let recorded: RecordedDatum[] = [];
  let requests: RecordedRequest[] = [];
  let failuresLeft = 0;
  let failureStatus = 500;
  const accountId = options.accountId ?? '000000000000';
  const alarms = new Map<string, TwinAlarm>();
  let evaluating: Promise<AlarmTransition[]> = Promise.resolve([]);

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const wire = Buffer.concat(chunks);
      try {
        route(req, res, wire);
      } catch (error) {
        sendJson(res, 500, { message: error instanceof Error ? error.message : String(error) });
      }
    });
  });

  function route(req: IncomingMessage, res: ServerResponse, wire: Buffer): void {
    const path = new URL(req.url ?? '/', 'http://twin').pathname;
    if (path === '/_twin/datums') {
      if (req.method === 'GET') return sendJson(res, 200, { datums: recorded });
      if (req.method === 'DELETE') {
        recorded = [];
        return sendJson(res, 200, { cleared: true });
      }
    }
    if (req.method === 'POST' && path === '/') {
      const target = req.headers['x-amz-target'];
      const operation = typeof target === 'string' ? target.replace(`${SERVICE_TARGET}.`, '') : '';
      if (operation === 'PutMetricData' || !(OPERATIONS as readonly string[]).includes(operation))
        return putMetricData(req, res, wire);
      return alarmOperation(operation as Exclude<Operation, 'PutMetricData'>, req, res, wire);
    }
    sendJson(res, 404, { message: `the CloudWatch twin has no route ${req.method ?? ''} ${path}` });
  }

  function alarmOperation(
    operation: Exclude<Operation, 'PutMetricData'>,
    req: IncomingMessage,
    res: ServerResponse,
    wire: Buffer,
  ): void {
    try {
      const input = parseJson(decodeBody(req, wire, operation));
      if (!isObject(input)) throw new TwinRequestError('Serialization', 'body must be a JSON object');
      res.setHeader('x-amzn-requestid', randomUUID());
      if (operation === 'PutMetricAlarm') {
        putMetricAlarm(input);
        sendJson(res, 200, {}, JSON_CONTENT_TYPE);
      } else if (operation === 'DescribeAlarms') sendJson(res, 200, describeAlarms(input), JSON_CONTENT_TYPE);
      else {
        const names = Array.isArray(input.AlarmNames) ? input.AlarmNames : [];
        for (const name of names) if (typeof name === 'string') alarms.delete(name);
        sendJson(res, 200, {}, JSON_CONTENT_TYPE);
      }
      log?.(`cloudwatch twin: ${operation} -> 200`);
    } catch (error) {
      const refused = error instanceof AlarmDefinitionError ? new TwinRequestError(error.code, error.message) : error;
      if (!(refused instanceof TwinRequestError)) throw error;
      sendAwsError(res, refused);
      log?.(`cloudwatch twin: ${operation} -> ${refused.status} ${refused.code}: ${refused.message}`);
    }
  }

  /** Creates or replaces an alarm; a new alarm (or one whose definition changed) starts in INSUFFICIENT_DATA. */
  function putMetricAlarm(input: Record<string, unknown>): void {
    const definition = parsePutMetricAlarm(input);
    const nowMs = clock.now();
    const previous = alarms.get(definition.alarmName);
    alarms.set(definition.alarmName, {
      ...definition,
      alarmArn: `arn:aws:cloudwatch:${region}:${accountId}:alarm:${definition.alarmName}`,
      configurationUpdatedAtMs: nowMs,
      // PutMetricAlarm on an existing alarm keeps its state until the next evaluation, as CloudWatch does.
      state: previous?.state ?? ALARM_STATES.insufficientData,
      stateReason: previous?.stateReason ?? 'Unchecked: Initial alarm creation',
      stateReasonData: previous?.stateReasonData,
      stateUpdatedAtMs: previous?.stateUpdatedAtMs ?? nowMs,
    });
  }

  function describeAlarms(input: Record<string, unknown>): Record<string, unknown> {
    const names = Array.isArray(input.AlarmNames) ? (input.AlarmNames as unknown[]) : undefined;
    const prefix = typeof input.AlarmNamePrefix === 'string' ? input.AlarmNamePrefix : undefined;
    const state = typeof input.StateValue === 'string' ? input.StateValue : undefined;
    if (names !== undefined && prefix !== undefined)
      throw new TwinRequestError(
        'InvalidParameterCombination',
        'AlarmNames and AlarmNamePrefix cannot be specified together.',
      );
    const selected = [...alarms.values()]
      .filter((a) => names === undefined || names.includes(a.alarmName))
      .filter((a) => prefix === undefined || a.alarmName.startsWith(prefix))
      .filter((a) => state === undefined || a.state === state)
      .sort((a, b) => a.alarmName.localeCompare(b.alarmName));
    return { MetricAlarms: selected.map(toMetricAlarm), CompositeAlarms: [] };
  }

  async function evaluateAll(): Promise<AlarmTransition[]> {
    const nowMs = clock.now();
    const transitions: AlarmTransition[] = [];
    for (const alarm of alarms.values()) {
      const verdict = evaluateAlarm(alarm, recorded, nowMs);
      if (!verdict.change) continue;
      const from = alarm.state;
      alarm.stateReason = verdict.reason;
      alarm.stateReasonData = verdict.reasonData;
      if (verdict.state === from) continue;
      alarm.state = verdict.state;
      alarm.stateUpdatedAtMs = nowMs;
      const transition: AlarmTransition = {
        alarmName: alarm.alarmName,
        from,
        to: verdict.state,
        reason: verdict.reason,
        atMs: nowMs,
        notified: [],
        failedActions: [],
      };
      log?.(`cloudwatch twin: alarm ${alarm.alarmName} ${from} -> ${verdict.state}: ${verdict.reason}`);
      const { subject, message } = alarmNotification(alarm, from, { accountId, region });
      for (const topicArn of actionsFor(alarm)) {
        try {
          if (options.publishAlarm === undefined) throw new Error('the twin has no SNS to publish alarms to');
          await options.publishAlarm(topicArn, subject, message);
          transition.notified.push(topicArn);
        } catch (error) {
          transition.failedActions.push(`${topicArn}: ${(error as Error).message}`);
        }
      }
      transitions.push(transition);
    }
    return transitions;
  }

  /** One evaluation at a time: the timer's and a caller's never interleave. */
  const evaluateAlarms = (): Promise<AlarmTransition[]> => {
    evaluating = evaluating.catch(() => []).then(evaluateAll);
    return evaluating;
  };
  const intervalMs = options.alarmEvaluationIntervalMs ?? 60_000;
  const timer =
    intervalMs > 0 ? setInterval(() => void evaluateAlarms().catch(() => undefined), intervalMs) : undefined;
  timer?.unref();

  function putMetricData(req: IncomingMessage, res: ServerResponse, wire: Buffer): void {
    const receivedAtMs = clock.now();
    const gzip = req.headers['content-encoding'] === 'gzip';
    const entry: RecordedRequest = {
      receivedAtMs,
      status: 200,
      errorCode: undefined,
      datums: 0,
      gzip,
      wireBytes: wire.length,
      bodyBytes: wire.length,
    };
    requests.push(entry);
    try {
      const body = decodeBody(req, wire, 'PutMetricData');
      entry.bodyBytes = body.length;
      if (failuresLeft > 0) {
        failuresLeft -= 1;
        throw failureStatus >= 500
          ? new TwinRequestError('InternalServiceError', 'injected failure (twin failNextRequests)', failureStatus)
          : new TwinRequestError('Throttling', 'Rate exceeded (twin failNextRequests)', failureStatus);
      }
      const datums = parsePutMetricData(parseJson(body), receivedAtMs);
      entry.datums = datums.length;
      recorded.push(...datums);
      res.setHeader('x-amzn-requestid', randomUUID());
      sendJson(res, 200, {}, JSON_CONTENT_TYPE);
      log?.(`cloudwatch twin: PutMetricData ${datums.length} datums${gzip ? ' (gzip)' : ''} -> 200`);
    } catch (error) {
      if (!(error instanceof TwinRequestError)) throw error;
      entry.status = error.status;
      entry.errorCode = error.code;
      sendAwsError(res, error);
      log?.(`cloudwatch twin: PutMetricData -> ${error.status} ${error.code}: ${error.message}`);
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    region,
    datums: () => recorded.map((datum) => ({ ...datum, dimensions: { ...datum.dimensions } })),
    requests: () => requests.map((request) => ({ ...request })),
    clear: () => {
      recorded = [];
      requests = [];
    },
    alarms: () => [...alarms.values()].map((alarm) => structuredClone(alarm)),
    evaluateAlarms,
    failNextRequests: (n, status = 500) => {
      if (!Number.isInteger(n) || n < 0) throw new RangeError(`failNextRequests: n must be an integer >= 0, got ${n}`);
      if (!Number.isInteger(status) || status < 400 || status > 599)
        throw new RangeError(`failNextRequests: status must be an HTTP error status (400-599), got ${status}`);
      failuresLeft = n;
      failureStatus = status;
    },
    stop: () =>
      new Promise<void>((resolve, reject) => {
        clearInterval(timer);
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive sockets from the SDK's agent would hold close() open.
        server.closeAllConnections();
      }),
  };
}

function decodeBody(req: IncomingMessage, wire: Buffer, operation: Operation): Buffer {
  if (!req.headers.authorization)
    throw new TwinRequestError('MissingAuthenticationToken', 'Missing Authentication Token (no Authorization header)');
  const target = req.headers['x-amz-target'];
  if (target !== `${SERVICE_TARGET}.${operation}`)
    throw new TwinRequestError(
      'UnknownOperation',
      `the twin implements only ${OPERATIONS.map((o) => `${SERVICE_TARGET}.${o}`).join(', ')}, got X-Amz-Target ${JSON.stringify(target ?? null)}`,
    );
  const contentType = req.headers['content-type'] ?? '';
  if (!contentType.startsWith(JSON_CONTENT_TYPE))
    throw new TwinRequestError(
      'Serialization',
      `Content-Type must be ${JSON_CONTENT_TYPE}, got ${JSON.stringify(contentType)}`,
    );
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding !== 'gzip' && encoding !== 'identity')
    throw new TwinRequestError('Serialization', `unsupported Content-Encoding ${JSON.stringify(encoding)}`);
  const limit = PUT_METRIC_DATA_LIMITS.hardMaxRequestBytes;
  let body = wire;
  if (encoding === 'gzip') {
    try {
      // maxOutputLength stops a small gzip bomb from expanding without bound.
      body = gunzipSync(wire, { maxOutputLength: limit + 1 });
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
        throw new TwinRequestError('RequestEntityTooLarge', `request body exceeds ${limit} bytes once decompressed`);
      throw new TwinRequestError('Serialization', `body is not valid gzip: ${(error as Error).message}`);
    }
  }
  if (body.length > limit)
    throw new TwinRequestError(
      'RequestEntityTooLarge',
      `request body is ${body.length} bytes; at most ${limit} are accepted`,
    );
  return body;
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new TwinRequestError('Serialization', `body is not valid JSON: ${(error as Error).message}`);
  }
}

function parsePutMetricData(input: unknown, receivedAtMs: number): RecordedDatum[] {
  if (!isObject(input)) throw new TwinRequestError('Serialization', 'body must be a JSON object');
  const namespace = input.Namespace;
  if (namespace === undefined || namespace === null)
    throw new TwinRequestError('MissingParameter', 'The parameter Namespace is required.');
  if (typeof namespace !== 'string') throw new TwinRequestError('Serialization', 'Namespace must be a string');
  const nsProblem = namespaceProblem(namespace);
  if (nsProblem !== undefined)
    throw new TwinRequestError(
      'InvalidParameterValue',
      `The value ${namespace} for parameter Namespace is invalid: it ${nsProblem}.`,
    );

  const metricData = input.MetricData;
  if (metricData === undefined || metricData === null || (Array.isArray(metricData) && metricData.length === 0))
    throw new TwinRequestError('MissingParameter', 'The parameter MetricData is required.');
  if (!Array.isArray(metricData)) throw new TwinRequestError('Serialization', 'MetricData must be a list');
  if (metricData.length > PUT_METRIC_DATA_LIMITS.maxDatumsPerRequest)
    throw new TwinRequestError(
      'InvalidParameterValue',
      `The collection MetricData must not have a size greater than ${PUT_METRIC_DATA_LIMITS.maxDatumsPerRequest}.`,
    );
  return metricData.map((datum, index) => parseDatum(namespace, datum, `MetricData.member.${index + 1}`, receivedAtMs));
}

function parseDatum(namespace: string, datum: unknown, at: string, receivedAtMs: number): RecordedDatum {
  if (!isObject(datum)) throw new TwinRequestError('Serialization', `${at} must be an object`);
  const metricName = datum.MetricName;
  if (metricName === undefined || metricName === null)
    throw new TwinRequestError('MissingParameter', `The parameter ${at}.MetricName is required.`);
  if (typeof metricName !== 'string') throw new TwinRequestError('Serialization', `${at}.MetricName must be a string`);
  invalidIf(metricNameProblem(metricName), `${at}.MetricName`, metricName);

  if (datum.Values !== undefined || datum.StatisticValues !== undefined || datum.Counts !== undefined)
    throw new TwinRequestError(
      'InvalidParameterValue',
      `${at}: the twin records only single Value datums (no Values, Counts or StatisticValues)`,
    );
  if (datum.Value === undefined || datum.Value === null)
    throw new TwinRequestError(
      'InvalidParameterCombination',
      `At least one of the parameters ${at}.Value or ${at}.StatisticValues must be specified.`,
    );
  // Smithy JSON sends non-finite doubles as the strings "NaN", "Infinity", "-Infinity".
  const value = typeof datum.Value === 'string' ? nonFinite(datum.Value) : datum.Value;
  if (typeof value !== 'number') throw new TwinRequestError('Serialization', `${at}.Value must be a number`);
  invalidIf(valueProblem(value), `${at}.Value`, String(value));

  const unit = datum.Unit;
  if (unit !== undefined && unit !== null) {
    if (typeof unit !== 'string') throw new TwinRequestError('Serialization', `${at}.Unit must be a string`);
    invalidIf(unitProblem(unit), `${at}.Unit`, unit);
  }

  let timestampMs = receivedAtMs;
  if (datum.Timestamp !== undefined && datum.Timestamp !== null) {
    // JSON 1.0 timestamps are epoch seconds (fractional for milliseconds); accept ISO text too.
    const parsed =
      typeof datum.Timestamp === 'number'
        ? datum.Timestamp * 1000
        : typeof datum.Timestamp === 'string'
          ? Date.parse(datum.Timestamp)
          : NaN;
    if (!Number.isFinite(parsed))
      throw new TwinRequestError('InvalidParameterValue', `The value for parameter ${at}.Timestamp is invalid.`);
    timestampMs = Math.round(parsed);
  }

  const dimensions: Record<string, string> = {};
  const list = datum.Dimensions ?? [];
  if (!Array.isArray(list)) throw new TwinRequestError('Serialization', `${at}.Dimensions must be a list`);
  if (list.length > PUT_METRIC_DATA_LIMITS.maxDimensionsPerDatum)
    throw new TwinRequestError(
      'InvalidParameterValue',
      `The collection ${at}.Dimensions must not have a size greater than ${PUT_METRIC_DATA_LIMITS.maxDimensionsPerDatum}.`,
    );
  list.forEach((dimension: unknown, index) => {
    const dimAt = `${at}.Dimensions.member.${index + 1}`;
    if (!isObject(dimension) || typeof dimension.Name !== 'string' || typeof dimension.Value !== 'string')
      throw new TwinRequestError(
        'MissingParameter',
        `The parameters ${dimAt}.Name and ${dimAt}.Value are required strings.`,
      );
    invalidIf(dimensionNameProblem(dimension.Name), `${dimAt}.Name`, dimension.Name);
    invalidIf(dimensionValueProblem(dimension.Value), `${dimAt}.Value`, dimension.Value);
    if (dimension.Name in dimensions)
      throw new TwinRequestError(
        'InvalidParameterValue',
        `The collection ${at}.Dimensions must not have duplicate names (${dimension.Name}).`,
      );
    dimensions[dimension.Name] = dimension.Value;
  });

  return {
    namespace,
    metricName,
    unit: typeof unit === 'string' ? unit : undefined,
    value,
    timestampMs,
    dimensions,
    receivedAtMs,
  };
}

/** An alarm as DescribeAlarms returns it (AWS JSON 1.0: timestamps in epoch seconds). */
function toMetricAlarm(alarm: TwinAlarm): Record<string, unknown> {
  return {
    AlarmName: alarm.alarmName,
    AlarmArn: alarm.alarmArn,
    ...(alarm.alarmDescription === undefined ? {} : { AlarmDescription: alarm.alarmDescription }),
    AlarmConfigurationUpdatedTimestamp: alarm.configurationUpdatedAtMs / 1000,
    ActionsEnabled: alarm.actionsEnabled,
    OKActions: alarm.okActions,
    AlarmActions: alarm.alarmActions,
    InsufficientDataActions: alarm.insufficientDataActions,
    StateValue: alarm.state,
    StateReason: alarm.stateReason,
    ...(alarm.stateReasonData === undefined ? {} : { StateReasonData: alarm.stateReasonData }),
    StateUpdatedTimestamp: alarm.stateUpdatedAtMs / 1000,
    StateTransitionedTimestamp: alarm.stateUpdatedAtMs / 1000,
    MetricName: alarm.metricName,
    Namespace: alarm.namespace,
    Statistic: alarm.statistic,
    Dimensions: Object.entries(alarm.dimensions).map(([Name, Value]) => ({ Name, Value })),
    Period: alarm.periodSeconds,
    ...(alarm.unit === undefined ? {} : { Unit: alarm.unit }),
    EvaluationPeriods: alarm.evaluationPeriods,
    DatapointsToAlarm: alarm.datapointsToAlarm,
    Threshold: alarm.threshold,
    ComparisonOperator: alarm.comparisonOperator,
    TreatMissingData: alarm.treatMissingData,
  };
}

function invalidIf(problem: string | undefined, parameter: string, value: string): void {
  if (problem === undefined) return;
  const shown = value.length > 80 ? `${value.slice(0, 77)}...` : value;
  throw new TwinRequestError(
    'InvalidParameterValue',
    `The value ${shown} for parameter ${parameter} is invalid: ${problem}.`,
  );
}

function nonFinite(text: string): number | string {
  if (text === 'NaN') return NaN;
  if (text === 'Infinity') return Infinity;
  if (text === '-Infinity') return -Infinity;
  return text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sendAwsError(res: ServerResponse, error: TwinRequestError): void {
  const { shape, type } = AWS_ERRORS[error.code];
  res.setHeader('x-amzn-query-error', `${error.code};${type}`);
  res.setHeader('x-amzn-requestid', randomUUID());
  sendJson(
    res,
    error.status,
    { __type: `com.amazonaws.cloudwatch#${shape}`, message: error.message },
    JSON_CONTENT_TYPE,
  );
}

function sendJson(res: ServerResponse, status: number, body: unknown, contentType = 'application/json'): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
