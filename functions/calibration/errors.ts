/**
 * Errors of the calibration's Lambda entries themselves. They extend the calibration's base class, so the state
 * machine's Catch sees one family; each sets `name` (Retry and Catch match on it). None is retryable. The errors of
 * the calibration's steps (rollout timeout, job failed, target busy, AMP unavailable, ...) are in
 * shared/calibration/errors.ts.
 */
import { CalibrationError } from '../../shared/calibration/index.js';

/** The state slice a function received is not what the state machine passes (a definition/step mismatch). */
export class CalibrationEventInvalidError extends CalibrationError {
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
