/**
 * Errors of the metrics module. Every class extends `MetricsError`, sets `name` (Step Functions `Retry`/`Catch`
 * match on it), says whether retrying can help, and carries the PromQL text it concerns, never credentials.
 */

export interface MetricsErrorOptions {
  /** The PromQL query the error concerns, when there is one. */
  query?: string;
  cause?: unknown;
}

/** Base class of every error raised by `shared/metrics`. */
export class MetricsError extends Error {
  /** True when the same request may succeed if sent again later (throttling, 5xx, network, timeout). */
  readonly retryable: boolean;
  readonly query: string | undefined;

  constructor(message: string, retryable: boolean, options: MetricsErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MetricsError';
    this.retryable = retryable;
    this.query = options.query;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Building PromQL (bad input: never retryable)

/** A label name that PromQL cannot express unquoted (`[a-zA-Z_][a-zA-Z0-9_]*`). */
export class PromqlInvalidLabelNameError extends MetricsError {
  readonly labelName: string;

  constructor(labelName: string, field: string) {
    super(
      `${field}: ${JSON.stringify(labelName)} is not a valid Prometheus label name; ` +
        'accepted: a letter or underscore followed by letters, digits or underscores ([a-zA-Z_][a-zA-Z0-9_]*)',
      false,
    );
    this.name = 'PromqlInvalidLabelNameError';
    this.labelName = labelName;
  }
}

/** A metric name that PromQL cannot express unquoted (`[a-zA-Z_:][a-zA-Z0-9_:]*`). */
export class PromqlInvalidMetricNameError extends MetricsError {
  readonly metricName: string;

  constructor(metricName: string) {
    super(`metric name ${JSON.stringify(metricName)} is not valid; accepted: [a-zA-Z_:][a-zA-Z0-9_:]*`, false);
    this.name = 'PromqlInvalidMetricNameError';
    this.metricName = metricName;
  }
}

/** A value that cannot be written as a PromQL argument (a bad duration, a quantile outside 0-1, ...). */
export class PromqlInvalidArgumentError extends MetricsError {
  readonly field: string;
  readonly value: unknown;

  constructor(field: string, value: unknown, accepted: string) {
    super(`${field}: ${JSON.stringify(value)} is not valid; accepted: ${accepted}`, false);
    this.name = 'PromqlInvalidArgumentError';
    this.field = field;
    this.value = value;
  }
}

/** A `Target` field that cannot become a label matcher (empty, or not valid Unicode). */
export class MetricsInvalidTargetError extends MetricsError {
  readonly field: string;

  constructor(field: string, problem: string, accepted: string) {
    super(`target.${field}: ${problem}; accepted: ${accepted}`, false);
    this.name = 'MetricsInvalidTargetError';
    this.field = field;
  }
}

/** Bad options given to the HTTP client or a query (a range whose end is before its start, ...). */
export class MetricsInvalidOptionError extends MetricsError {
  readonly field: string;

  /** `problem` says what was wrong (e.g. `got -1`), `accepted` what would be valid. */
  constructor(field: string, problem: string, accepted: string, cause?: unknown) {
    super(`${field}: ${problem}; accepted: ${accepted}`, false, { cause });
    this.name = 'MetricsInvalidOptionError';
    this.field = field;
  }
}

/** A catalog id that no entry has. */
export class MetricsUnknownCatalogEntryError extends MetricsError {
  readonly id: string;

  constructor(id: string, known: readonly string[]) {
    super(`catalog entry id ${JSON.stringify(id)} is unknown; accepted: ${known.join(', ')}`, false);
    this.name = 'MetricsUnknownCatalogEntryError';
    this.id = id;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Talking to Prometheus / AMP

export interface MetricsHttpErrorDetails {
  status: number;
  /** Prometheus's `errorType` (`bad_data`, `execution`, `timeout`, ...) when the body carried one. */
  errorType?: string;
  /** Prometheus's `error` text, or AMP's `message`, or the start of the body. */
  errorText?: string;
  /** The server's Retry-After, in milliseconds, when it sent one. */
  retryAfterMs?: number;
}

/** The server answered with a non-2xx status. 429 and 5xx are retryable; other 4xx (a bad query) are not. */
export class MetricsHttpError extends MetricsError {
  readonly status: number;
  readonly errorType: string | undefined;
  readonly errorText: string | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(details: MetricsHttpErrorDetails, retryable: boolean, options: MetricsErrorOptions = {}) {
    const kind = details.errorType === undefined ? '' : ` ${details.errorType}`;
    const text = details.errorText === undefined ? '' : `: ${details.errorText}`;
    super(`Prometheus query failed with HTTP ${details.status}${kind}${text}`, retryable, options);
    this.name = 'MetricsHttpError';
    this.status = details.status;
    this.errorType = details.errorType;
    this.errorText = details.errorText;
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** The request never got an HTTP answer (connection refused or reset, DNS failure, ...). Retryable. */
export class MetricsNetworkError extends MetricsError {
  readonly url: string;

  constructor(url: string, options: MetricsErrorOptions = {}) {
    const reason = options.cause instanceof Error ? `: ${describeCause(options.cause)}` : '';
    super(`could not reach ${url}${reason}`, true, options);
    this.name = 'MetricsNetworkError';
    this.url = url;
  }
}

/** No answer within the per-attempt timeout. Retryable (the next attempt may land on a healthy node). */
export class MetricsTimeoutError extends MetricsError {
  readonly timeoutMs: number;
  /** The URL asked (its query string left out), when known: the endpoint a VPC may lack. */
  readonly url: string | undefined;

  constructor(timeoutMs: number, options: MetricsErrorOptions & { url?: string } = {}) {
    super(
      `no answer from Prometheus within ${timeoutMs} ms${options.url === undefined ? '' : ` (${options.url})`}`,
      true,
      options,
    );
    this.name = 'MetricsTimeoutError';
    this.timeoutMs = timeoutMs;
    this.url = options.url;
  }
}

/** The request could not be signed, usually because no AWS credentials could be resolved. Not retryable. */
export class MetricsSigningError extends MetricsError {
  constructor(options: MetricsErrorOptions = {}) {
    const reason = options.cause instanceof Error ? `: ${options.cause.message}` : '';
    super(`could not SigV4-sign the request${reason}`, false, options);
    this.name = 'MetricsSigningError';
  }
}

/** The caller's AbortSignal fired (for example the Lambda deadline). Not retryable. */
export class MetricsAbortedError extends MetricsError {
  constructor(options: MetricsErrorOptions = {}) {
    super('the query was aborted by the caller', false, options);
    this.name = 'MetricsAbortedError';
  }
}

/** A 2xx answer that is not a usable Prometheus response (not JSON, status error, wrong resultType, bad value). */
export class MetricsMalformedResponseError extends MetricsError {
  readonly reason: string;
  /** The first characters of the body, for the logs. */
  readonly bodySnippet: string | undefined;

  constructor(reason: string, bodySnippet: string | undefined, options: MetricsErrorOptions = {}) {
    super(`malformed Prometheus response: ${reason}`, false, options);
    this.name = 'MetricsMalformedResponseError';
    this.reason = reason;
    this.bodySnippet = bodySnippet;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Answers that are well-formed but not what the caller needs (KEDA's prometheus_scaler.go treats each apart)

/** The query returned no series. */
export class MetricsEmptyResultError extends MetricsError {
  constructor(options: MetricsErrorOptions = {}) {
    super('the query returned no series', false, options);
    this.name = 'MetricsEmptyResultError';
  }
}

/** How many label sets an error names: enough to see what differs, short enough for one log line. */
const NAMED_SERIES = 3;

/** The query returned more series than the caller can use; names the first few label sets. */
export class MetricsMultipleSeriesError extends MetricsError {
  /** The label sets of the first returned series (at most a few). */
  readonly series: Array<Record<string, string>>;
  /** How many series the answer held. */
  readonly count: number;

  constructor(series: Array<Record<string, string>>, expected: string, options: MetricsErrorOptions = {}) {
    const named = series.slice(0, NAMED_SERIES);
    const more = series.length > named.length ? `, and ${series.length - named.length} more` : '';
    super(
      `expected ${expected}, got ${series.length} series: ${named.map((labels) => JSON.stringify(labels)).join(', ')}${more}`,
      false,
      options,
    );
    this.name = 'MetricsMultipleSeriesError';
    this.series = named;
    this.count = series.length;
  }
}

/** The query returned NaN, +Inf or -Inf where a finite number was needed. */
export class MetricsNonFiniteValueError extends MetricsError {
  readonly value: number;
  readonly labels: Record<string, string>;

  constructor(value: number, labels: Record<string, string>, options: MetricsErrorOptions = {}) {
    super(
      `the query returned a non-finite value (${formatNonFinite(value)}) for ${JSON.stringify(labels)}`,
      false,
      options,
    );
    this.name = 'MetricsNonFiniteValueError';
    this.value = value;
    this.labels = labels;
  }
}

/** A value outside its metric's domain (a negative count, rate or latency; a fraction above 1). Never published. */
export class MetricsValueOutOfDomainError extends MetricsError {
  readonly value: number;
  readonly domain: string;
  readonly labels: Record<string, string>;

  constructor(value: number, domain: string, labels: Record<string, string>, options: MetricsErrorOptions = {}) {
    super(`the query returned ${value} for ${JSON.stringify(labels)}, outside its domain (${domain})`, false, options);
    this.name = 'MetricsValueOutOfDomainError';
    this.value = value;
    this.domain = domain;
    this.labels = labels;
  }
}

/** The answer held more series than the caller accepts (e.g. alert instances of one rule). Not retryable. */
export class MetricsTooManySeriesError extends MetricsError {
  readonly count: number;
  readonly cap: number;

  constructor(count: number, cap: number, options: MetricsErrorOptions = {}) {
    super(`the query returned ${count} series, more than the cap of ${cap}`, false, options);
    this.name = 'MetricsTooManySeriesError';
    this.count = count;
    this.cap = cap;
  }
}

/** The answer's body is larger than the cap; reading stopped there. Not retryable (the same query grows the same). */
export class MetricsResponseTooLargeError extends MetricsError {
  readonly capBytes: number;

  constructor(capBytes: number, options: MetricsErrorOptions = {}) {
    super(
      `the answer exceeds the cap of ${capBytes} bytes; reading stopped (query: ${oneLine(options.query)})`,
      false,
      options,
    );
    this.name = 'MetricsResponseTooLargeError';
    this.capBytes = capBytes;
  }
}

/** The server answered with a redirect; it is refused so the SigV4-signed headers never go elsewhere. */
export class MetricsRedirectRefusedError extends MetricsError {
  readonly status: number;
  /** The origin the Location header pointed to (no path, no query), or `none` without a Location. */
  readonly locationOrigin: string;

  constructor(status: number, locationOrigin: string, options: MetricsErrorOptions = {}) {
    super(`Prometheus answered HTTP ${status} redirecting to ${locationOrigin}; redirects are refused`, false, options);
    this.name = 'MetricsRedirectRefusedError';
    this.status = status;
    this.locationOrigin = locationOrigin;
  }
}

/** A series lacks the label a per-Pod or per-GPU reading is keyed by (e.g. scrape config without `pod`). */
export class MetricsMissingLabelError extends MetricsError {
  readonly labelName: string;
  readonly labels: Record<string, string>;

  constructor(labelName: string, labels: Record<string, string>, options: MetricsErrorOptions = {}) {
    super(`a series has no ${JSON.stringify(labelName)} label: ${JSON.stringify(labels)}`, false, options);
    this.name = 'MetricsMissingLabelError';
    this.labelName = labelName;
    this.labels = labels;
  }
}

/** A query on one line, shortened: error messages stay one line. */
function oneLine(query: string | undefined): string {
  if (query === undefined) return 'unknown';
  const flat = query.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}...` : flat;
}

function formatNonFinite(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  return value > 0 ? '+Inf' : '-Inf';
}

/** Node's fetch hides the socket error under `cause`; surface it so the message says what happened. */
function describeCause(error: Error): string {
  const inner = error.cause instanceof Error ? ` (${error.cause.message})` : '';
  return `${error.message}${inner}`;
}
