import { CalibrationError } from '../calibration/index.js';
import { THRESHOLD_TRIGGERS, type ThresholdTriggerKind } from './triggerKinds.js';

/**
 * Errors about a ScaledObject the calibration works on. They keep the calibration's names and base class: the state
 * machine's Catch and the failure notification show them as calibration errors.
 */

/** The trigger the calibration looks for is missing from the ScaledObject. */
export class CalibrationTriggerNotFoundError extends CalibrationError {
  constructor(
    readonly scaledObject: string,
    readonly trigger: ThresholdTriggerKind,
  ) {
    const { label, mentions } = THRESHOLD_TRIGGERS[trigger];
    super(
      `ScaledObject ${scaledObject} has no ${label} trigger; accepted: a prometheus trigger whose query mentions ` +
        `${mentions}`,
    );
    this.name = 'CalibrationTriggerNotFoundError';
  }
}

/** More than one trigger could be the one the calibration would change, so it changes none. */
export class CalibrationTriggerAmbiguousError extends CalibrationError {
  constructor(
    readonly scaledObject: string,
    readonly trigger: ThresholdTriggerKind,
    readonly indexes: readonly number[],
  ) {
    const { label, mentions } = THRESHOLD_TRIGGERS[trigger];
    super(
      `ScaledObject ${scaledObject} has ${indexes.length} triggers that could be the ${label} trigger ` +
        `(${indexes.map((i) => `spec.triggers[${i}]`).join(', ')}); accepted: exactly one prometheus trigger whose ` +
        `query mentions ${mentions}, and not the same trigger for both thresholds`,
    );
    this.name = 'CalibrationTriggerAmbiguousError';
  }
}

/** A derived threshold cannot be written as a KEDA threshold (not finite, or below what KEDA accepts). */
export class CalibrationThresholdInvalidError extends CalibrationError {
  constructor(
    readonly field: string,
    readonly value: number,
    accepted: string,
  ) {
    super(`${field}: ${value} cannot be written as a KEDA threshold; accepted: ${accepted}`);
    this.name = 'CalibrationThresholdInvalidError';
  }
}
