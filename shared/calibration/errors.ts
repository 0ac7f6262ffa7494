/**
 * The calibration's errors. Step Functions matches Retry and Catch on the error's `name`, so each name is part of
 * the contract with statemachines/calibration.asl.json. `retryable` says whether the ASL retries it.
 */
export class CalibrationError extends Error {
  readonly retryable: boolean = false;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CalibrationError';
  }
}

/** One problem with the calibration input: the field path and what was wrong. */
export interface InputIssue {
  path: string;
  message: string;
}

/** The input was refused by ValidateInput, before any change to the cluster. */
export class CalibrationInputInvalidError extends CalibrationError {
  constructor(readonly issues: readonly InputIssue[]) {
    super(`calibration input is invalid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
    this.name = 'CalibrationInputInvalidError';
  }
}

/** The Deployment to adopt, or its ScaledObject, does not exist. */
export class CalibrationTargetNotFoundError extends CalibrationError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CalibrationTargetNotFoundError';
  }
}

/** The rollout did not finish in time (the bounded check + wait loop ran out). */
export class CalibrationRolloutTimeoutError extends CalibrationError {
  constructor(message: string) {
    super(message);
    this.name = 'CalibrationRolloutTimeoutError';
  }
}

/** A k6 Job (warmup or load step) failed. */
export class CalibrationJobFailedError extends CalibrationError {
  constructor(message: string) {
    super(message);
    this.name = 'CalibrationJobFailedError';
  }
}

/** A k6 Job did not finish in time. */
export class CalibrationJobTimeoutError extends CalibrationError {
  constructor(message: string) {
    super(message);
    this.name = 'CalibrationJobTimeoutError';
  }
}

/** The readiness gate did not open in time (Pods' metrics not in AMP, or first requests still slow). */
export class CalibrationReadinessTimeoutError extends CalibrationError {
  constructor(message: string) {
    super(message);
    this.name = 'CalibrationReadinessTimeoutError';
  }
}

/** AMP (or the cluster API) did not answer: transient, retried with backoff by the state machine. */
export class CalibrationDependencyUnavailableError extends CalibrationError {
  override readonly retryable = true;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CalibrationDependencyUnavailableError';
  }
}

/** The measured data cannot support an analysis (no step measured, metrics missing for the whole window). */
export class CalibrationMeasurementError extends CalibrationError {
  constructor(message: string) {
    super(message);
    this.name = 'CalibrationMeasurementError';
  }
}

/**
 * AMP held no sample of the target in a step's window: no vLLM series at all, or no queue samples (measure.ts). A
 * scrape gap across a whole window is the plainest step whose data cannot be trusted, so the workflow's MeasureStep
 * records it as the step's failed evidence (repeated once, then CalibrationStepEvidenceError) instead of ending the
 * run; it is a CalibrationMeasurementError wherever a step is measured outside the workflow.
 */
export class CalibrationWindowEmptyError extends CalibrationMeasurementError {
  constructor(message: string) {
    super(message);
    this.name = 'CalibrationWindowEmptyError';
  }
}

/**
 * AMP did not hold a step's whole window within `ingestion.timeoutSeconds`: the step is not judged on a partial
 * window (a partial window reads too few completions and looks saturated).
 */
export class CalibrationStepDataMissingError extends CalibrationError {
  constructor(message: string) {
    super(message);
    this.name = 'CalibrationStepDataMissingError';
  }
}

/** The target serves users (deploy.mode adopt) and the input does not allow calibrating it with them beside the test. */
export class CalibrationTargetServingError extends CalibrationError {
  constructor(message: string) {
    super(message);
    this.name = 'CalibrationTargetServingError';
  }
}

/**
 * The execution no longer holds its target: it was stopped (or timed out) and its cleanup already released the target
 * while this task was still running, as Step Functions lets a running task finish. Nothing more is created.
 */
export class CalibrationTargetReleasedError extends CalibrationError {
  constructor(deployment: string, executionLabel: string) {
    super(
      `Deployment ${deployment} is no longer held by execution ${JSON.stringify(executionLabel)} (its cleanup ran: ` +
        'the execution was stopped, timed out or failed), so this task creates nothing',
    );
    this.name = 'CalibrationTargetReleasedError';
  }
}

/** Another execution is calibrating the same Deployment (its marker annotation is on it). */
export class CalibrationTargetBusyError extends CalibrationError {
  constructor(
    readonly deployment: string,
    readonly otherExecution: string,
    annotation: string,
  ) {
    super(
      `Deployment ${deployment} is being calibrated by execution ${JSON.stringify(otherExecution)} (annotation ` +
        `${annotation}); wait for it to end: its cleanup, or the lease sweep for the stack's targets, releases the ` +
        'target; if that execution is gone and the target is still held, release it by hand (docs/calibration.md, ' +
        '"A stopped or timed-out run")',
    );
    this.name = 'CalibrationTargetBusyError';
  }
}

/**
 * deploy.mode shadow: the copy's Pod found no node with a free GPU within rollout.timeoutSeconds (the scheduler's
 * message says why). Production was not touched; the cleanup removes the copy.
 */
export class CalibrationShadowNoGpuError extends CalibrationError {
  constructor(message: string) {
    super(message);
    this.name = 'CalibrationShadowNoGpuError';
  }
}

/** deploy.mode shadow: a production Service would select the copy's Pods, so users would reach its saturation. */
export class CalibrationShadowExposedError extends CalibrationError {
  constructor(message: string) {
    super(message);
    this.name = 'CalibrationShadowExposedError';
  }
}

/** Nothing to roll back, or the execution to restore is not in the history. */
export class CalibrationRollbackNotFoundError extends CalibrationError {
  constructor(message: string) {
    super(message);
    this.name = 'CalibrationRollbackNotFoundError';
  }
}

/** The ScaledObject changed since the calibration wrote it: a rollback would overwrite someone's edit. */
export class CalibrationRollbackConflictError extends CalibrationError {
  constructor(message: string) {
    super(message);
    this.name = 'CalibrationRollbackConflictError';
  }
}

/**
 * A step failed its evidence checks twice at the same rate (shared/calibration/evidence.ts: AMP's samples did not
 * cover its window, its Pods changed or restarted, or AMP's completions disagreed with k6's): the run ends rather than
 * derive thresholds from data that cannot be trusted. Not retried; the Catch runs the cleanup.
 */
export class CalibrationStepEvidenceError extends CalibrationError {
  constructor(
    message: string,
    readonly reasons: readonly string[] = [],
  ) {
    super(message);
    this.name = 'CalibrationStepEvidenceError';
  }
}

/** Error names the state machine retries (transient). */
export const RETRYABLE_ERROR_NAMES = ['CalibrationDependencyUnavailableError'] as const;
