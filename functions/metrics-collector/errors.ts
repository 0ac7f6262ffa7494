/**
 * Errors of the metrics-collector function. Every class extends `MetricsCollectorError` and sets `name` (the Lambda
 * error metric and the logs see it). Configuration errors are `ConfigInvalidError` (shared/config); a run in which every
 * target failed is `CollectorAllTargetsFailedError` (shared/collector).
 */

/** Base class of the errors raised by the metrics-collector handler itself. */
export class MetricsCollectorError extends Error {
  readonly retryable: boolean;

  constructor(message: string, retryable: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MetricsCollectorError';
    this.retryable = retryable;
  }
}

/** The invocation event is not an EventBridge scheduled event (it needs an ISO-8601 `time`). */
export class MetricsCollectorEventInvalidError extends MetricsCollectorError {
  readonly issues: string[];

  constructor(issues: string[], options?: { cause?: unknown }) {
    super(
      `invalid event: ${issues.join('; ')}; accepted: an EventBridge scheduled event with an ISO-8601 "time"`,
      false,
      options,
    );
    this.name = 'MetricsCollectorEventInvalidError';
    this.issues = issues;
  }
}
