/**
 * Errors of the slack-notifier function. Every class extends `SlackNotifierError` and sets `name` (Lambda's error
 * metric, the async-invocation DLQ record and the logs see it). Configuration errors are `ConfigInvalidError`
 * (shared/config); Slack's own errors are in shared/slack/errors.ts and arrive here as causes.
 */

/** Base class of the errors raised by the slack-notifier handler itself. */
export class SlackNotifierError extends Error {
  readonly retryable: boolean;

  constructor(message: string, retryable: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SlackNotifierError';
    this.retryable = retryable;
  }
}

/** The invocation event is not an SNS event (it needs `Records[].Sns.MessageId` and `.Message`). */
export class SlackNotifierEventInvalidError extends SlackNotifierError {
  readonly issues: string[];

  constructor(issues: string[], options?: { cause?: unknown }) {
    super(
      `invalid event: ${issues.join('; ')}; accepted: an SNS event (Records[].Sns with MessageId and Message)`,
      false,
      options,
    );
    this.name = 'SlackNotifierEventInvalidError';
    this.issues = issues;
  }
}

/**
 * At least one alert did not reach Slack after the client's retries. Thrown so that Lambda's asynchronous retries
 * (and then the DLQ or on-failure destination) take the event; `retryable` is false when Slack refused the message.
 */
export class SlackNotifierDeliveryFailedError extends SlackNotifierError {
  /** The SNS MessageIds that were not delivered, with the reason. */
  readonly failures: Array<{ messageId: string; error: string }>;

  constructor(
    failures: Array<{ messageId: string; error: string; retryable: boolean }>,
    options?: { cause?: unknown },
  ) {
    super(
      `${failures.length} alert notification${failures.length === 1 ? '' : 's'} not delivered to Slack: ` +
        failures.map((f) => `${f.messageId}: ${f.error}`).join('; '),
      failures.some((f) => f.retryable),
      options,
    );
    this.name = 'SlackNotifierDeliveryFailedError';
    this.failures = failures.map(({ messageId, error }) => ({ messageId, error }));
  }
}
