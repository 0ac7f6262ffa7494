import { CalibrationError } from '../errors.js';

/**
 * Errors of the calibration history. They extend CalibrationError so the state machine can match them by name; a
 * transient DynamoDB failure is CalibrationDependencyUnavailableError instead (the one name the ASL retries).
 */
export class CalibrationHistoryError extends CalibrationError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CalibrationHistoryError';
  }
}

/** A record (or a key or limit) that cannot be stored or asked for: names the field, what was wrong, what is accepted. */
export class CalibrationHistoryRecordInvalidError extends CalibrationHistoryError {
  constructor(
    readonly field: string,
    problem: string,
    accepted: string,
  ) {
    super(`history record ${field}: ${problem}; accepted: ${accepted}`);
    this.name = 'CalibrationHistoryRecordInvalidError';
  }
}

/** Another record already sits under the same key (same target, time and execution) and differs from this one. */
export class CalibrationHistoryConflictError extends CalibrationHistoryError {
  constructor(
    readonly targetKey: string,
    readonly sortKey: string,
  ) {
    super(
      `the calibration history already holds a different record for ${targetKey} at ${sortKey}; a retried task ` +
        'must write the same record',
    );
    this.name = 'CalibrationHistoryConflictError';
  }
}

/** A stored item cannot be read back as a record (written by something else, or damaged). */
export class CalibrationHistoryCorruptError extends CalibrationHistoryError {
  constructor(
    readonly targetKey: string,
    readonly sortKey: string,
    problem: string,
    options?: ErrorOptions,
  ) {
    super(`the calibration history item ${targetKey} at ${sortKey} cannot be read: ${problem}`, options);
    this.name = 'CalibrationHistoryCorruptError';
  }
}

/** DynamoDB refused the request for a reason retrying will not fix (no such table, access denied, validation). */
export class CalibrationHistoryRequestError extends CalibrationHistoryError {
  constructor(
    readonly operation: string,
    readonly tableName: string,
    options: ErrorOptions & { cause: unknown },
  ) {
    // Duck-typed: an SDK error may come from another realm, where `instanceof Error` is false.
    const cause = options.cause as { name?: unknown; message?: unknown } | null | undefined;
    const name = typeof cause?.name === 'string' ? cause.name : 'Error';
    const message = typeof cause?.message === 'string' ? cause.message : JSON.stringify(options.cause);
    super(`DynamoDB ${operation} on table ${tableName} failed: ${name}: ${message}`, options);
    this.name = 'CalibrationHistoryRequestError';
  }
}
