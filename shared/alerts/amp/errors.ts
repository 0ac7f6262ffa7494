import { AlertError } from '../errors.js';
import { describeAmpResource, type AmpAlertingResource, type AmpResourceStatus } from './AmpAlertingControlPlane.js';

/**
 * Errors of AMP alerting (the installer and its client-amp adapter). Every class extends `AmpAlertingError`, sets
 * `name` and says whether running again later may succeed (`retryable`).
 */

/** Base class of the errors of shared/alerts/amp. */
export class AmpAlertingError extends AlertError {
  readonly retryable: boolean;

  constructor(message: string, retryable: boolean, options?: ErrorOptions) {
    super(message, options);
    this.name = 'AmpAlertingError';
    this.retryable = retryable;
  }
}

/**
 * A client-amp call failed (access denied, validation, throttling, AMP or the network down). Retryable when AMP
 * throttled or failed on its side, or the request timed out; not for access or validation errors.
 */
export class AmpRequestError extends AmpAlertingError {
  readonly operation: string;
  readonly resource: string;

  constructor(operation: string, resource: AmpAlertingResource, retryable: boolean, options: { cause: unknown }) {
    const cause = options.cause as { name?: unknown; message?: unknown } | undefined;
    const what = typeof cause?.name === 'string' ? `${cause.name}: ` : '';
    const message = typeof cause?.message === 'string' ? cause.message : String(options.cause);
    super(`${operation} (${describeAmpResource(resource)}) failed: ${what}${message}`, retryable, options);
    this.name = 'AmpRequestError';
    this.operation = operation;
    this.resource = describeAmpResource(resource);
  }
}

/** AMP answered with something the API does not promise (no data, an unknown status code). */
export class AmpAnswerInvalidError extends AmpAlertingError {
  constructor(operation: string, resource: AmpAlertingResource, problem: string) {
    super(`${operation} (${describeAmpResource(resource)}): ${problem}`, false);
    this.name = 'AmpAnswerInvalidError';
  }
}

/**
 * AMP refused the rules or the Alertmanager definition: the status became CREATION_FAILED or UPDATE_FAILED.
 * `statusReason` is AMP's own words (a YAML or PromQL error, a receiver it does not accept). Not retryable: the same
 * data fails the same way.
 */
export class AmpResourceFailedError extends AmpAlertingError {
  readonly resource: string;
  readonly statusCode: string;
  readonly statusReason: string | undefined;

  constructor(resource: AmpAlertingResource, status: AmpResourceStatus) {
    super(`${describeAmpResource(resource)} is ${status.code}: ${status.reason ?? 'AMP gave no statusReason'}`, false);
    this.name = 'AmpResourceFailedError';
    this.resource = describeAmpResource(resource);
    this.statusCode = status.code;
    this.statusReason = status.reason;
  }
}

/**
 * The resource did not become ACTIVE with the desired data in time (or the invocation's deadline came first). Carries
 * the last status seen, with its reason. Retryable: AMP may only be slow.
 */
export class AmpResourceWaitTimeoutError extends AmpAlertingError {
  readonly resource: string;
  readonly waitedMs: number;
  readonly lastStatus: AmpResourceStatus | null;

  constructor(
    resource: AmpAlertingResource,
    waitedMs: number,
    lastStatus: AmpResourceStatus | null,
    detail: string,
    options?: ErrorOptions,
  ) {
    const last =
      lastStatus === null
        ? 'not found'
        : `${lastStatus.code}${lastStatus.reason === undefined ? '' : ` (${lastStatus.reason})`}`;
    super(
      `${describeAmpResource(resource)} not ACTIVE with the desired data after ${Math.round(waitedMs / 1000)} s ` +
        `(${detail}); last status: ${last}`,
      true,
      options,
    );
    this.name = 'AmpResourceWaitTimeoutError';
    this.resource = describeAmpResource(resource);
    this.waitedMs = waitedMs;
    this.lastStatus = lastStatus;
  }
}

/** Both resources failed: each error, in one message. Retryable only when every one of them is. */
export class AmpAlertingInstallFailedError extends AmpAlertingError {
  readonly errors: readonly AmpAlertingError[];

  constructor(errors: readonly AmpAlertingError[]) {
    super(
      `AMP alerting not installed: ${errors.map((error) => `${error.name}: ${error.message}`).join('; ')}`,
      errors.every((error) => error.retryable),
    );
    this.name = 'AmpAlertingInstallFailedError';
    this.errors = errors;
  }
}
