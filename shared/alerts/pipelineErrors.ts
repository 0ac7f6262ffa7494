import { AlertError } from './errors.js';

/**
 * Errors of the notification pipeline (state store, decisions, messages, publishing). Every class extends
 * `AlertPipelineError` (itself an `AlertError`) and sets `name`. `retryable` says whether running the same work again
 * later may succeed (a throttled DynamoDB or SNS call) or not (a malformed record, a refused request).
 */
export class AlertPipelineError extends AlertError {
  readonly retryable: boolean;

  constructor(message: string, retryable: boolean, options?: ErrorOptions) {
    super(message, options);
    this.name = 'AlertPipelineError';
    this.retryable = retryable;
  }
}

/** A value given to the pipeline (a store request, a publisher option) is not usable: names the field and what is accepted. */
export class AlertPipelineInputInvalidError extends AlertPipelineError {
  constructor(
    readonly field: string,
    problem: string,
    accepted: string,
  ) {
    super(`${field}: ${problem}; accepted: ${accepted}`, false);
    this.name = 'AlertPipelineInputInvalidError';
  }
}

/** An evaluation cannot be compared with the stored state (two instances with one fingerprint, another target's instance). */
export class AlertEvaluationInvalidError extends AlertPipelineError {
  constructor(
    readonly target: string,
    problem: string,
  ) {
    super(`the evaluation of target ${target} is inconsistent: ${problem}`, false);
    this.name = 'AlertEvaluationInvalidError';
  }
}

/** DynamoDB (or the network to it) failed in a way a later run can clear: throttling, a 5xx, no answer. */
export class AlertStateUnavailableError extends AlertPipelineError {
  constructor(
    readonly operation: string,
    readonly tableName: string,
    options: ErrorOptions & { cause: unknown },
  ) {
    super(
      `DynamoDB ${operation} on table ${tableName} failed (transient): ${describeCause(options.cause)}`,
      true,
      options,
    );
    this.name = 'AlertStateUnavailableError';
  }
}

/** DynamoDB refused the request for a reason retrying will not fix (no such table, access denied, validation). */
export class AlertStateRequestError extends AlertPipelineError {
  constructor(
    readonly operation: string,
    readonly tableName: string,
    options: ErrorOptions & { cause: unknown },
  ) {
    super(`DynamoDB ${operation} on table ${tableName} failed: ${describeCause(options.cause)}`, false, options);
    this.name = 'AlertStateRequestError';
  }
}

/** A stored alert state item cannot be read back (written by something else, or damaged). */
export class AlertStateCorruptError extends AlertPipelineError {
  constructor(
    readonly target: string,
    readonly fingerprint: string,
    problem: string,
  ) {
    super(`the alert state item ${target}/${fingerprint} cannot be read: ${problem}`, false);
    this.name = 'AlertStateCorruptError';
  }
}

/** A decision does not make a valid v1 alert message; `issues` name the fields. */
export class AlertMessageInvalidError extends AlertPipelineError {
  constructor(
    readonly fingerprint: string,
    readonly issues: readonly string[],
  ) {
    super(`the alert message for ${fingerprint} is not a valid v1 message: ${issues.join('; ')}`, false);
    this.name = 'AlertMessageInvalidError';
  }
}

/**
 * SNS did not accept a message. `code` is SNS's error code (or `MessageTooLarge` when the message was never sent);
 * `batchLevel` is true when the whole PublishBatch request failed.
 */
export class AlertPublishError extends AlertPipelineError {
  constructor(
    readonly code: string,
    message: string,
    retryable: boolean,
    readonly batchLevel: boolean,
    options?: ErrorOptions,
  ) {
    super(message, retryable, options);
    this.name = 'AlertPublishError';
  }
}

/** Duck-typed: an SDK error may come from another realm, where `instanceof Error` is false. */
export function describeCause(cause: unknown): string {
  const error = cause as { name?: unknown; message?: unknown } | null | undefined;
  const name = typeof error?.name === 'string' ? error.name : 'Error';
  const message = typeof error?.message === 'string' ? error.message : JSON.stringify(cause);
  return `${name}: ${message}`;
}
