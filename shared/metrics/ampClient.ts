/**
 * The MetricsSource adapter: PromQL over the Prometheus HTTP API, for Amazon Managed Service for Prometheus (AMP)
 * and for any plain Prometheus (the twin's). Requests are SigV4-signed inside the transport (service `aps`), as
 * KEDA's aws_sigv4.go does, so query code never sees credentials; Prometheus ignores the signature headers.
 */
import { setTimeout as sleepFor } from 'node:timers/promises';
import { Sha256 } from '@aws-crypto/sha256-js';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider, HttpRequest } from '@smithy/types';
import { type Clock, systemClock } from '../clock/index.js';
import type { InstantQueryOptions, InstantSample, MetricsSource, RangeQueryOptions, RangeSeries } from './types.js';
import {
  MetricsAbortedError,
  MetricsEmptyResultError,
  MetricsError,
  MetricsHttpError,
  MetricsInvalidOptionError,
  MetricsMalformedResponseError,
  MetricsNetworkError,
  MetricsNonFiniteValueError,
  MetricsRedirectRefusedError,
  MetricsResponseTooLargeError,
  MetricsSigningError,
  MetricsTimeoutError,
} from './errors.js';
import { guardSingleValue } from './answerGuard.js';
import { VALUE_DOMAIN, type ValueDomain } from './names.js';

/** The SigV4 signing name of Amazon Managed Service for Prometheus. */
export const AMP_SIGNING_SERVICE = 'aps';

export interface HttpMetricsSourceOptions {
  /** An AMP workspace URL (`https://aps-workspaces.<region>.amazonaws.com/workspaces/ws-.../`) or a Prometheus base URL. */
  endpoint: string;
  /** The AWS region used in the signature. */
  region: string;
  /** Credentials or a provider; default: the AWS SDK's default chain (env, SSO, IRSA, Pod Identity, ...). */
  credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  /** Per-attempt timeout. Default 10 000 ms. */
  timeoutMs?: number;
  /** Attempts per query, the first included. Default 3. */
  maxAttempts?: number;
  /** Backoff base: the n-th retry waits a random time in [0, min(maxDelayMs, baseDelayMs * 2^(n-1))]. Default 200 ms. */
  baseDelayMs?: number;
  /** Longest wait between attempts; a Retry-After asking for more ends the retries. Default 5 000 ms. */
  maxDelayMs?: number;
  fetch?: typeof globalThis.fetch;
  /** Waits `ms`, rejecting when `signal` aborts. Default: node:timers/promises setTimeout. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** A number in [0, 1) for the backoff jitter. Default Math.random. */
  random?: () => number;
  /** The signing date and the reference for HTTP-date Retry-After values. Default: the system clock. */
  clock?: Clock;
  /** Largest answer body read, in bytes; reading stops past it with MetricsResponseTooLargeError. Default 4 MiB. */
  maxResponseBytes?: number;
}

/**
 * maxResponseBytes: the catalog's and the alert rules' answers are a few KB (one series per target, Pod or GPU); 4 MiB
 * is a thousand times that, and parsing it stays far below the collector's 512 MB (a 20 MB answer grew it 1.7 GB).
 */
const DEFAULTS = {
  timeoutMs: 10_000,
  maxAttempts: 3,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  maxResponseBytes: 4 * 1024 * 1024,
} as const;
const KNOWN_OPTIONS: ReadonlySet<string> = new Set([
  'endpoint',
  'region',
  'credentials',
  'timeoutMs',
  'maxAttempts',
  'baseDelayMs',
  'maxDelayMs',
  'fetch',
  'sleep',
  'random',
  'clock',
  'maxResponseBytes',
]);
const SNIPPET_CHARS = 300;

/** Prometheus HTTP API envelope (https://prometheus.io/docs/prometheus/latest/querying/api/#format-overview). */
interface ApiData {
  resultType: unknown;
  result: unknown;
}

/** One request of the Prometheus HTTP API: GET sends `params` in the URL, POST as a form body. */
export interface PrometheusApiRequest {
  method: 'GET' | 'POST';
  /** Relative to the workspace URL, e.g. `api/v1/query` or `api/v1/rules`. */
  path: string;
  params: Record<string, string>;
  /** What errors name as their `query` (the PromQL text, or `GET api/v1/rules?type=alert`). */
  label: string;
  signal?: AbortSignal;
}

/**
 * The signed transport of the Prometheus HTTP API (AMP or plain Prometheus): SigV4 (service `aps`) inside the
 * transport, per-attempt timeouts, retries with full-jitter backoff, and named errors. It returns the envelope's
 * `data`; callers parse its shape. Shared by HttpMetricsSource and HttpAlertRulesSource (rulesClient.ts).
 */
export class PrometheusApiTransport {
  readonly #base: URL;
  readonly #signer: SignatureV4;
  readonly #fetch: typeof globalThis.fetch;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #random: () => number;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #maxAttempts: number;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #maxResponseBytes: number;

  constructor(options: HttpMetricsSourceOptions) {
    for (const key of Object.keys(options)) {
      if (!KNOWN_OPTIONS.has(key)) {
        throw new MetricsInvalidOptionError(key, 'unknown option', `one of ${[...KNOWN_OPTIONS].join(', ')}`);
      }
    }
    this.#base = parseEndpoint(options.endpoint);
    if (typeof options.region !== 'string' || !/^[a-z0-9-]+$/.test(options.region)) {
      throw new MetricsInvalidOptionError('region', got(options.region), 'an AWS region such as "us-east-2"');
    }
    this.#timeoutMs = positive('timeoutMs', options.timeoutMs ?? DEFAULTS.timeoutMs);
    this.#maxAttempts = options.maxAttempts ?? DEFAULTS.maxAttempts;
    if (!Number.isInteger(this.#maxAttempts) || this.#maxAttempts < 1) {
      throw new MetricsInvalidOptionError('maxAttempts', got(options.maxAttempts), 'an integer >= 1');
    }
    this.#baseDelayMs = nonNegative('baseDelayMs', options.baseDelayMs ?? DEFAULTS.baseDelayMs);
    this.#maxDelayMs = nonNegative('maxDelayMs', options.maxDelayMs ?? DEFAULTS.maxDelayMs);
    if (this.#maxDelayMs < this.#baseDelayMs) {
      throw new MetricsInvalidOptionError(
        'maxDelayMs',
        got(options.maxDelayMs),
        `a number >= baseDelayMs (${this.#baseDelayMs})`,
      );
    }
    this.#maxResponseBytes = options.maxResponseBytes ?? DEFAULTS.maxResponseBytes;
    if (!Number.isInteger(this.#maxResponseBytes) || this.#maxResponseBytes < 1) {
      throw new MetricsInvalidOptionError('maxResponseBytes', got(options.maxResponseBytes), 'an integer >= 1');
    }
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#sleep = options.sleep ?? ((ms, signal) => sleepFor(ms, undefined, { signal }));
    this.#random = options.random ?? Math.random;
    this.#clock = options.clock ?? systemClock;
    this.#signer = new SignatureV4({
      service: AMP_SIGNING_SERVICE,
      region: options.region,
      credentials: options.credentials ?? defaultProvider(),
      sha256: Sha256,
    });
  }

  /** Sends the request up to `maxAttempts` times; only retryable errors (429, 5xx, network, timeout) retry. */
  async send(request: PrometheusApiRequest): Promise<Record<string, unknown>> {
    const { label: query, signal } = request;
    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted === true) throw new MetricsAbortedError({ query, cause: signal.reason });
      try {
        return await this.#attempt(request);
      } catch (error) {
        if (!(error instanceof MetricsError) || !error.retryable || attempt >= this.#maxAttempts) throw error;
        const delayMs = this.#delayBeforeRetry(attempt, error);
        // The server asks for a longer pause than this client may wait: stop now, the error stays retryable.
        if (delayMs > this.#maxDelayMs) throw error;
        try {
          await this.#sleep(delayMs, signal);
        } catch (sleepError) {
          throw new MetricsAbortedError({ query, cause: sleepError });
        }
      }
    }
  }

  /**
   * Retry-After when the server sent one, else "full jitter" (AWS Architecture Blog, "Exponential Backoff And
   * Jitter", 2015): before the n-th retry, a uniform random delay in [0, min(maxDelay, base * 2^(n-1))].
   */
  #delayBeforeRetry(retry: number, error: MetricsError): number {
    if (error instanceof MetricsHttpError && error.retryAfterMs !== undefined) return error.retryAfterMs;
    const ceiling = Math.min(this.#maxDelayMs, this.#baseDelayMs * 2 ** (retry - 1));
    return Math.floor(this.#random() * ceiling);
  }

  /** Signs with the configured credentials; a credential failure becomes `MetricsSigningError`. */
  async #sign(request: HttpRequest, query: string): Promise<HttpRequest> {
    try {
      return await this.#signer.sign(request, { signingDate: new Date(this.#clock.now()) });
    } catch (error) {
      throw new MetricsSigningError({ query, cause: error });
    }
  }

  async #attempt(request: PrometheusApiRequest): Promise<Record<string, unknown>> {
    const { method, params, label: query, signal } = request;
    const url = new URL(request.path, this.#base);
    const post = method === 'POST';
    const body = post ? new URLSearchParams(params).toString() : undefined;
    if (!post) for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    const signed = await this.#sign(
      {
        method,
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port === '' ? {} : { port: Number(url.port) }),
        path: url.pathname,
        query: post ? {} : { ...params },
        headers: post ? { host: url.host, 'content-type': 'application/x-www-form-urlencoded' } : { host: url.host },
        ...(body === undefined ? {} : { body }),
      },
      query,
    );
    // fetch derives Host from the URL (the same value that was signed) and refuses to set it by hand.
    const headers = Object.fromEntries(
      Object.entries(signed.headers).filter(([name]) => name.toLowerCase() !== 'host'),
    );

    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const combined = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
    let status: number;
    let retryAfter: string | null;
    let text: string;
    try {
      // Never follow a redirect: fetch would send the SigV4-signed headers (the session token) to the new origin.
      const response = await this.#fetch(url, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        signal: combined,
        redirect: 'manual',
      });
      status = response.status;
      if ((status >= 300 && status <= 399) || response.type === 'opaqueredirect') {
        await response.body?.cancel().catch(() => undefined);
        throw new MetricsRedirectRefusedError(status, locationOrigin(response.headers.get('location'), url), { query });
      }
      retryAfter = response.headers.get('retry-after');
      text = await readCapped(response, this.#maxResponseBytes, query);
    } catch (error) {
      if (error instanceof MetricsRedirectRefusedError || error instanceof MetricsResponseTooLargeError) throw error;
      if (signal?.aborted === true) throw new MetricsAbortedError({ query, cause: signal.reason });
      if (timeout.aborted) throw new MetricsTimeoutError(this.#timeoutMs, { query, cause: error, url: redactUrl(url) });
      throw new MetricsNetworkError(redactUrl(url), { query, cause: error });
    }

    if (status < 200 || status > 299) throw httpError(status, text, retryAfter, this.#clock.now(), query);
    return parseEnvelope(text, query);
  }
}

/** A `MetricsSource` over HTTP: signed POSTs with timeouts, retries with full-jitter backoff, and named errors. */
export class HttpMetricsSource implements MetricsSource {
  readonly #transport: PrometheusApiTransport;

  constructor(options: HttpMetricsSourceOptions) {
    this.#transport = new PrometheusApiTransport(options);
  }

  /** Runs an instant query (`POST api/v1/query`); a scalar result becomes one sample with no labels. */
  async instant(query: string, options: InstantQueryOptions = {}): Promise<InstantSample[]> {
    const params: Record<string, string> = { query };
    if (options.timeMs !== undefined) params.time = toSeconds('timeMs', options.timeMs);
    const data = await this.#request('api/v1/query', params, query, options.signal);
    return parseInstantData(data, query);
  }

  /** Runs a range query (`POST api/v1/query_range`). */
  async range(query: string, options: RangeQueryOptions): Promise<RangeSeries[]> {
    const start = toSeconds('startMs', options.startMs);
    const end = toSeconds('endMs', options.endMs);
    if (options.endMs < options.startMs) {
      throw new MetricsInvalidOptionError(
        'endMs',
        got(options.endMs),
        `a time at or after startMs (${options.startMs})`,
      );
    }
    if (!Number.isFinite(options.stepSeconds) || options.stepSeconds <= 0) {
      throw new MetricsInvalidOptionError('stepSeconds', got(options.stepSeconds), 'a number of seconds > 0');
    }
    const params = { query, start, end, step: String(options.stepSeconds) };
    const data = await this.#request('api/v1/query_range', params, query, options.signal);
    return parseRangeData(data, query);
  }

  async #request(path: string, params: Record<string, string>, query: string, signal?: AbortSignal): Promise<ApiData> {
    const data = await this.#transport.send({
      method: 'POST',
      path,
      params,
      label: query,
      ...(signal === undefined ? {} : { signal }),
    });
    if (!('resultType' in data) || !('result' in data)) {
      throw new MetricsMalformedResponseError('data.resultType or data.result is missing', undefined, { query });
    }
    return { resultType: data.resultType, result: data.result };
  }
}

/**
 * Expects exactly one finite value in `domain` from an instant query (the KEDA scaler's rule) and returns it.
 * Default domain: >= 0 (every series this product reads is a count, rate, size or latency).
 */
export async function querySingleValue(
  source: MetricsSource,
  query: string,
  options: InstantQueryOptions & { domain?: ValueDomain } = {},
): Promise<number> {
  const { domain = VALUE_DOMAIN.nonNegative, ...queryOptions } = options;
  const samples = await source.instant(query, queryOptions);
  const [first] = samples;
  if (first === undefined) throw new MetricsEmptyResultError({ query });
  const value = guardSingleValue(samples, domain, query);
  if (value === undefined) throw new MetricsNonFiniteValueError(first.value, first.labels, { query });
  return value;
}

/**
 * Parses a Prometheus sample value. The API sends numbers as strings, including "NaN", "+Inf" and "-Inf"
 * (Go's strconv.FormatFloat), so `Number()` alone is not enough; returns undefined when unparsable.
 */
export function parsePrometheusValue(text: string): number | undefined {
  switch (text) {
    case 'NaN':
      return Number.NaN;
    case '+Inf':
    case 'Inf':
      return Number.POSITIVE_INFINITY;
    case '-Inf':
      return Number.NEGATIVE_INFINITY;
    default: {
      if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return undefined;
      return Number(text);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------

function parseEndpoint(endpoint: unknown): URL {
  let url: URL;
  try {
    url = new URL(String(endpoint));
  } catch (error) {
    throw new MetricsInvalidOptionError(
      'endpoint',
      got(endpoint),
      'an http(s) URL such as an AMP workspace URL',
      error,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new MetricsInvalidOptionError('endpoint', got(redactUrl(url)), 'an http(s) URL such as an AMP workspace URL');
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new MetricsInvalidOptionError(
      'endpoint',
      `got ${redactUrl(url)} with credentials, a query or a fragment`,
      'a base URL without credentials, query or fragment',
    );
  }
  // Relative resolution of `api/v1/query` keeps the workspace path only under a trailing slash.
  if (!url.pathname.endsWith('/')) url.pathname = `${url.pathname}/`;
  return url;
}

/**
 * Reads the body as text, stopping past `capBytes`: a Content-Length above the cap is refused before reading, and a
 * streamed body is cancelled as soon as it crosses the cap, so an oversized answer never sits in memory whole.
 */
async function readCapped(response: Response, capBytes: number, query: string): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > capBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new MetricsResponseTooLargeError(capBytes, { query });
  }
  if (response.body === null) return '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let bytes = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > capBytes) {
      await reader.cancel().catch(() => undefined);
      throw new MetricsResponseTooLargeError(capBytes, { query });
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}

/** The origin a redirect pointed to, for the error: never its path or query (they may carry tokens). */
function locationOrigin(location: string | null, base: URL): string {
  if (location === null) return 'none (no Location header)';
  try {
    return new URL(location, base).origin;
  } catch {
    return 'an unparsable Location';
  }
}

function got(value: unknown): string {
  return `got ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`;
}

function redactUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

function positive(field: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new MetricsInvalidOptionError(field, got(value), 'a number > 0');
  return value;
}

function nonNegative(field: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new MetricsInvalidOptionError(field, got(value), 'a number >= 0');
  return value;
}

/** Epoch ms to the API's seconds (decimals allowed). */
function toSeconds(field: string, ms: number): string {
  if (!Number.isFinite(ms)) throw new MetricsInvalidOptionError(field, got(ms), 'epoch milliseconds (a finite number)');
  return String(ms / 1000);
}

function snippet(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > SNIPPET_CHARS ? `${trimmed.slice(0, SNIPPET_CHARS)}...` : trimmed;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Builds the error for a non-2xx answer. Retryable: 429 (throttled) and 5xx (Prometheus answers 503 for its own
 * query timeouts and cancellations). Not retryable: other 4xx, among them 400 bad_data (a bad query) and 422.
 * AMP answers 422 when a query times out on its side; the same query would very likely time out again and be
 * billed for the samples it scanned each time, so it is not retried here; the next scheduled run tries afresh.
 */
function httpError(status: number, text: string, retryAfter: string | null, nowMs: number, query: string) {
  let errorType: string | undefined;
  let errorText: string | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed)) {
      if (typeof parsed.errorType === 'string') errorType = parsed.errorType;
      if (typeof parsed.error === 'string') errorText = parsed.error;
      else if (typeof parsed.message === 'string') errorText = parsed.message;
      else if (typeof parsed.Message === 'string') errorText = parsed.Message;
    }
  } catch {
    // Not JSON (a proxy's HTML page, plain text): keep the start of the body as the error text.
  }
  if (errorText === undefined && text.trim() !== '') errorText = snippet(text);
  const retryAfterMs = parseRetryAfter(retryAfter, nowMs);
  const retryable = status === 429 || status >= 500;
  return new MetricsHttpError(
    {
      status,
      ...(errorType === undefined ? {} : { errorType }),
      ...(errorText === undefined ? {} : { errorText }),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    },
    retryable,
    { query },
  );
}

/** Retry-After is delay-seconds or an HTTP-date (RFC 9110 section 10.2.3). */
function parseRetryAfter(header: string | null, nowMs: number): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const dateMs = Date.parse(value);
  return Number.isNaN(dateMs) ? undefined : Math.max(0, dateMs - nowMs);
}

/** Parses the API envelope and returns its `data` object (its shape is the caller's to check). */
export function parseEnvelope(text: string, query: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new MetricsMalformedResponseError('the body is not JSON', snippet(text), { query, cause: error });
  }
  if (!isRecord(parsed))
    throw new MetricsMalformedResponseError('the body is not a JSON object', snippet(text), { query });
  if (parsed.status !== 'success') {
    const detail = [parsed.errorType, parsed.error].filter((part) => typeof part === 'string').join(': ');
    throw new MetricsMalformedResponseError(
      `status is ${JSON.stringify(parsed.status)}, not "success"${detail === '' ? '' : ` (${detail})`}`,
      snippet(text),
      { query },
    );
  }
  const data = parsed.data;
  if (!isRecord(data)) {
    throw new MetricsMalformedResponseError('data is missing or not an object', snippet(text), { query });
  }
  return data;
}

function parseLabels(value: unknown, query: string): Record<string, string> {
  if (!isRecord(value))
    throw new MetricsMalformedResponseError('a series has no "metric" object', undefined, { query });
  const labels: Record<string, string> = {};
  for (const [name, labelValue] of Object.entries(value)) {
    if (typeof labelValue !== 'string') {
      throw new MetricsMalformedResponseError(`label ${JSON.stringify(name)} is not a string`, undefined, { query });
    }
    labels[name] = labelValue;
  }
  return labels;
}

/** Parses a `[<unix seconds>, "<value>"]` pair. */
function parsePoint(value: unknown, query: string): { timestampMs: number; value: number } {
  if (!Array.isArray(value) || value.length !== 2) {
    throw new MetricsMalformedResponseError(
      `a sample is not a [time, "value"] pair: ${JSON.stringify(value)}`,
      undefined,
      {
        query,
      },
    );
  }
  const [time, text] = value as [unknown, unknown];
  if (typeof time !== 'number' || !Number.isFinite(time)) {
    throw new MetricsMalformedResponseError(`a sample time is not a number: ${JSON.stringify(time)}`, undefined, {
      query,
    });
  }
  const parsed = typeof text === 'string' ? parsePrometheusValue(text) : undefined;
  if (parsed === undefined) {
    throw new MetricsMalformedResponseError(`a sample value is not a number: ${JSON.stringify(text)}`, undefined, {
      query,
    });
  }
  return { timestampMs: Math.round(time * 1000), value: parsed };
}

function parseInstantData(data: ApiData, query: string): InstantSample[] {
  if (data.resultType === 'scalar') {
    return [{ labels: {}, ...parsePoint(data.result, query) }];
  }
  if (data.resultType !== 'vector') {
    throw new MetricsMalformedResponseError(
      `resultType ${JSON.stringify(data.resultType)} where an instant vector or scalar was expected`,
      undefined,
      { query },
    );
  }
  if (!Array.isArray(data.result))
    throw new MetricsMalformedResponseError('data.result is not an array', undefined, { query });
  return data.result.map((item: unknown) => {
    if (!isRecord(item))
      throw new MetricsMalformedResponseError('a result item is not an object', undefined, { query });
    return { labels: parseLabels(item.metric, query), ...parsePoint(item.value, query) };
  });
}

function parseRangeData(data: ApiData, query: string): RangeSeries[] {
  if (data.resultType !== 'matrix') {
    throw new MetricsMalformedResponseError(
      `resultType ${JSON.stringify(data.resultType)} where a range matrix was expected`,
      undefined,
      { query },
    );
  }
  if (!Array.isArray(data.result))
    throw new MetricsMalformedResponseError('data.result is not an array', undefined, { query });
  return data.result.map((item: unknown) => {
    if (!isRecord(item) || !Array.isArray(item.values)) {
      throw new MetricsMalformedResponseError('a series has no "values" array', undefined, { query });
    }
    return {
      labels: parseLabels(item.metric, query),
      points: item.values.map((point: unknown) => parsePoint(point, query)),
    };
  });
}
