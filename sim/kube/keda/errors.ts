/**
 * Errors of the twin's KEDA emulation. Every class extends `KedaError`, sets `name`, and carries the field or object
 * it concerns. None is retryable by the caller: a bad ScaledObject needs a fix, and a failing trigger is retried by
 * the next poll (KEDA does the same: no retries inside one polling interval).
 */

/** Base class of every error raised by sim/kube/keda. */
export class KedaError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'KedaError';
  }
}

/** A trigger's metadata is missing a key or has a value KEDA would reject (threshold, metricType, ...). */
export class KedaInvalidTriggerError extends KedaError {
  /** The field path, e.g. `spec.triggers[0].metadata.threshold`. */
  readonly field: string;

  constructor(field: string, problem: string, accepted: string, options?: ErrorOptions) {
    super(`${field}: ${problem}; accepted: ${accepted}`, options);
    this.name = 'KedaInvalidTriggerError';
    this.field = field;
  }
}

/** A ScaledObject field outside the trigger list is invalid (replica bounds, behavior, scaleTargetRef). */
export class KedaInvalidScaledObjectError extends KedaError {
  readonly field: string;

  constructor(field: string, problem: string, accepted: string, options?: ErrorOptions) {
    super(`${field}: ${problem}; accepted: ${accepted}`, options);
    this.name = 'KedaInvalidScaledObjectError';
    this.field = field;
  }
}

/** The ScaledObject's scale target does not exist or cannot be scaled by the twin. */
export class KedaScaleTargetError extends KedaError {
  readonly namespace: string;
  readonly target: string;

  constructor(namespace: string, target: string, problem: string, options?: ErrorOptions) {
    super(`scale target ${namespace}/${target}: ${problem}`, options);
    this.name = 'KedaScaleTargetError';
    this.namespace = namespace;
    this.target = target;
  }
}

/** A trigger's query failed or gave an answer KEDA's Prometheus scaler rejects (empty, several series, NaN). */
export class KedaTriggerQueryError extends KedaError {
  /** The external metric name of the trigger, e.g. `s0-prometheus`. */
  readonly metricName: string;
  readonly query: string;

  constructor(metricName: string, query: string, problem: string, options?: ErrorOptions) {
    super(`${metricName}: ${problem}`, options);
    this.name = 'KedaTriggerQueryError';
    this.metricName = metricName;
    this.query = query;
  }
}

/** The HPA algorithm was given an input no HPA could have (a negative replica count, min above max, ...). */
export class KedaInvalidHpaInputError extends KedaError {
  readonly field: string;

  constructor(field: string, problem: string, accepted: string) {
    super(`${field}: ${problem}; accepted: ${accepted}`);
    this.name = 'KedaInvalidHpaInputError';
    this.field = field;
  }
}
