import type { AlertCycleSummary } from '../../shared/alerts/index.js';

/**
 * Errors of the alert-evaluator function. Every class extends `AlertEvaluatorError` and sets `name` (the Lambda error
 * log and the Errors metric see it). Configuration errors are `ConfigInvalidError` (shared/config).
 */

/** Base class of the errors raised by the alert-evaluator handler itself. */
export class AlertEvaluatorError extends Error {
  /** True when running again later may succeed. */
  readonly retryable: boolean;

  constructor(message: string, retryable: boolean, options?: ErrorOptions) {
    super(message, options);
    this.name = 'AlertEvaluatorError';
    this.retryable = retryable;
  }
}

/** The invocation event is not an EventBridge scheduled event (it needs an ISO-8601 `time`). */
export class AlertEvaluatorEventInvalidError extends AlertEvaluatorError {
  constructor(readonly issues: readonly string[]) {
    super(
      `invalid event: ${issues.join('; ')}; accepted: an EventBridge scheduled event with an ISO-8601 "time"`,
      false,
    );
    this.name = 'AlertEvaluatorEventInvalidError';
  }
}

/**
 * No target could be evaluated and notified in any cycle of the invocation: the whole run failed (AMP, DynamoDB or SNS
 * down). Thrown so the Lambda Errors metric fires and EventBridge retries; re-running a cycle is safe (the state
 * makes it send each notification once). Carries the summary with every reason (the last cycle's state).
 */
export class AlertEvaluatorAllTargetsFailedError extends AlertEvaluatorError {
  constructor(
    readonly summary: AlertCycleSummary,
    readonly cycles = 1,
  ) {
    const reasons = summary.targets
      .map((t) => `${t.target}: ${[...t.problems, ...t.ruleFailures, ...t.failed][0] ?? 'failed'}`)
      .join('; ');
    const where = cycles > 1 ? ` in each of the ${cycles} cycles` : '';
    super(`every target failed${where} (${summary.targets.length}): ${reasons}`, true);
    this.name = 'AlertEvaluatorAllTargetsFailedError';
  }
}
