/**
 * Errors of the alert-installer function. Every class extends `AlertInstallerError` and sets `name` (the Lambda error
 * log and the Errors metric see it). Configuration errors are `ConfigInvalidError` (shared/config); what AMP refused
 * is an `AmpAlertingError` (shared/alerts/amp).
 */

/** Base class of the errors raised by the alert-installer handler itself. */
export class AlertInstallerError extends Error {
  /** True when running again later may succeed. */
  readonly retryable: boolean;

  constructor(message: string, retryable: boolean, options?: ErrorOptions) {
    super(message, options);
    this.name = 'AlertInstallerError';
    this.retryable = retryable;
  }
}

/** The event is neither a CloudFormation custom resource request nor an EventBridge scheduled event. */
export class AlertInstallerEventInvalidError extends AlertInstallerError {
  constructor(readonly issues: readonly string[]) {
    super(
      `invalid event: ${issues.join('; ')}; accepted: a CloudFormation custom resource request ` +
        '(RequestType, ResponseURL, StackId, RequestId, LogicalResourceId) or an EventBridge scheduled event ("time")',
      false,
    );
    this.name = 'AlertInstallerEventInvalidError';
  }
}

/**
 * CloudFormation's pre-signed response URL refused the response or could not be reached. Thrown so Lambda's
 * asynchronous retries run the (idempotent) request again and answer; otherwise the stack would wait an hour.
 */
export class CustomResourceResponseError extends AlertInstallerError {
  constructor(detail: string, options?: ErrorOptions) {
    super(`the CloudFormation response was not delivered: ${detail}`, true, options);
    this.name = 'CustomResourceResponseError';
  }
}
