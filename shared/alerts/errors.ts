/** The base of every alerting error, so a caller can catch the module's errors as one. */
export class AlertError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'AlertError';
  }
}

/**
 * The query of one rule failed for one target (AMP unreachable, throttled, a bad answer). The evaluator records it
 * in `failures` and goes on with the other rules; `retryable` comes from the metrics error when there is one.
 */
export class AlertQueryFailedError extends AlertError {
  readonly alertname: string;
  readonly target: string;
  readonly query: string | undefined;
  readonly retryable: boolean;

  constructor(alertname: string, target: string, query: string | undefined, options: { cause: unknown }) {
    const reason = options.cause instanceof Error ? options.cause.message : String(options.cause);
    super(
      `${alertname} for target ${target}: ${query === undefined ? 'building' : 'running'} the query failed: ${reason}`,
      {
        cause: options.cause,
      },
    );
    this.name = 'AlertQueryFailedError';
    this.alertname = alertname;
    this.target = target;
    this.query = query;
    const retryable = (options.cause as { retryable?: unknown } | undefined)?.retryable;
    this.retryable = typeof retryable === 'boolean' ? retryable : false;
  }
}

/** Export options that cannot produce a valid rule file (a name too long for AMP, an invalid manifest). Not retryable. */
export class AlertExportInvalidError extends AlertError {
  readonly retryable = false;
  /** What was wrong, e.g. `namespace`, `topicArn`, `rules[2]`. */
  readonly field: string;

  constructor(field: string, problem: string, options?: { cause?: unknown }) {
    super(`${field}: ${problem}`, options);
    this.name = 'AlertExportInvalidError';
    this.field = field;
  }
}
