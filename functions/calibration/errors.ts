/**
 * Errors of the calibration handlers themselves. They extend the calibration's base class, so the state machine's
 * Catch sees one family; each sets `name` (Retry and Catch match on it). None is retryable. The errors of the
 * calibration's steps (rollout timeout, job failed, AMP unavailable, ...) are in shared/calibration/errors.ts.
 */
import { CalibrationError } from '../../shared/calibration/errors.js';

/** Base class of the errors raised by functions/calibration. */
export class CalibrationHandlerError extends CalibrationError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CalibrationHandlerError';
  }
}

/** The state slice a handler received is not what the state machine passes (a definition/handler mismatch). */
export class CalibrationEventInvalidError extends CalibrationHandlerError {
  constructor(
    readonly handler: string,
    readonly issues: readonly string[],
  ) {
    super(
      `${handler}: invalid event: ${issues.join('; ')}; accepted: the Parameters of its state in ` +
        'statemachines/calibration.asl.json',
    );
    this.name = 'CalibrationEventInvalidError';
  }
}

/** Another execution is calibrating the same Deployment (its marker annotation is on it). */
export class CalibrationTargetBusyError extends CalibrationHandlerError {
  constructor(
    readonly deployment: string,
    readonly otherExecution: string,
    annotation: string,
  ) {
    super(
      `Deployment ${deployment} is being calibrated by execution ${JSON.stringify(otherExecution)} (annotation ` +
        `${annotation}); wait for it to finish, or remove the annotation if that execution is gone`,
    );
    this.name = 'CalibrationTargetBusyError';
  }
}
