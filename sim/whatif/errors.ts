/**
 * Errors of the what-if replay. Each names the input (option, file, field or row) and what is accepted, so the CLI
 * prints it as one line. None is retryable: they all describe input that is wrong until someone changes it.
 */

/** Base of every what-if error. */
export class WhatIfError extends Error {
  override name = 'WhatIfError';
}

/** A trace (CSV) is missing, empty, or has a row that is not a time and a rate >= 0. */
export class WhatIfTraceInvalidError extends WhatIfError {
  override name = 'WhatIfTraceInvalidError';

  constructor(
    readonly source: string,
    readonly where: string,
    readonly problem: string,
    readonly expected: string,
    options?: ErrorOptions,
  ) {
    super(`${source}${where === '' ? '' : ` ${where}`}: ${problem}; expected ${expected}`, options);
  }
}

/**
 * A candidate ScaledObject the replay cannot run: no queue or latency trigger, a trigger it cannot compute. `expected`
 * is empty when `problem` already says what is accepted (a KEDA or calibration error passed on).
 */
export class WhatIfCandidateInvalidError extends WhatIfError {
  override name = 'WhatIfCandidateInvalidError';

  constructor(
    readonly candidate: string,
    readonly field: string,
    readonly problem: string,
    readonly expected: string,
    options?: ErrorOptions,
  ) {
    super(`--candidate ${candidate}: ${field}: ${problem}${expected === '' ? '' : `; expected ${expected}`}`, options);
  }
}

/** A replay parameter out of range (the SLO, the polling interval, an empty trace). */
export class WhatIfInputInvalidError extends WhatIfError {
  override name = 'WhatIfInputInvalidError';

  constructor(
    readonly field: string,
    readonly value: unknown,
    readonly expected: string,
  ) {
    super(`${field}: got ${JSON.stringify(value)}; expected ${expected}`);
  }
}

/**
 * The request rate read from AMP cannot be a trace: no series, several series, a NaN/±Inf or negative value, or a
 * gap in the samples. Never turned into a number (a gap is not a rate of 0).
 */
export class WhatIfAmpAnswerError extends WhatIfError {
  override name = 'WhatIfAmpAnswerError';

  constructor(
    readonly query: string,
    readonly problem: string,
  ) {
    super(`the request rate from AMP (${query}): ${problem}`);
  }
}
