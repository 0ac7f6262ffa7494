/**
 * Errors of the preflight function. Every class extends `PreflightFunctionError` and sets `name` (the Lambda error
 * metric and the logs see it). Configuration errors are `ConfigInvalidError` (shared/config).
 */

/** Base class of the errors raised by the preflight handler itself. */
export class PreflightFunctionError extends Error {
  /** True when running again later may succeed. */
  readonly retryable: boolean;

  constructor(message: string, retryable: boolean, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PreflightFunctionError';
    this.retryable = retryable;
  }
}

/** The invocation event is neither an EventBridge scheduled event nor `{ "targets": [...] }`. */
export class PreflightEventInvalidError extends PreflightFunctionError {
  constructor(readonly issues: readonly string[]) {
    super(
      `invalid event: ${issues.join('; ')}; accepted: an EventBridge scheduled event (checks every target), or ` +
        '{ "targets": ["<target name>", ...] } (empty or absent: every target)',
      false,
    );
    this.name = 'PreflightEventInvalidError';
  }
}

/** The event names a target the function is not configured with. */
export class PreflightTargetUnknownError extends PreflightFunctionError {
  constructor(
    readonly unknown: readonly string[],
    readonly known: readonly string[],
  ) {
    super(
      `unknown target${unknown.length === 1 ? '' : 's'} ${unknown.map((n) => JSON.stringify(n)).join(', ')}; ` +
        `accepted: ${known.map((n) => JSON.stringify(n)).join(', ')} (the names in TARGETS)`,
      false,
    );
    this.name = 'PreflightTargetUnknownError';
  }
}

/**
 * A check failed and the summary could not be published to the preflight topic. Thrown so the Lambda Errors metric
 * fires; running again is safe (a run publishes at most one message).
 */
export class PreflightPublishError extends PreflightFunctionError {
  constructor(
    readonly topicArn: string,
    options: { cause: unknown },
  ) {
    super(
      `could not publish the preflight summary to ${topicArn}: ${options.cause instanceof Error ? `${options.cause.name}: ${options.cause.message}` : String(options.cause)}`,
      true,
      options,
    );
    this.name = 'PreflightPublishError';
  }
}
