/** Errors of the report stores. Every class extends ReportStoreError, sets `name` and says whether a retry can help. */
export class ReportStoreError extends Error {
  readonly retryable: boolean = false;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ReportStoreError';
  }
}

/** A report key that cannot be used: names the key, what was wrong and what is accepted. */
export class ReportKeyInvalidError extends ReportStoreError {
  constructor(
    readonly key: string,
    problem: string,
  ) {
    super(
      `report key ${JSON.stringify(key)} ${problem}; accepted: 1 to 1024 bytes of "/"-separated parts, no empty, "." ` +
        'or ".." part, no leading "/", no backslash or control characters, e.g. "calibration/prod/run-1/report.json"',
    );
    this.name = 'ReportKeyInvalidError';
  }
}

/** The write was refused for a reason a retry does not fix (access denied, no such bucket, a read-only folder). */
export class ReportWriteError extends ReportStoreError {
  constructor(
    readonly location: string,
    problem: string,
    options?: ErrorOptions,
  ) {
    super(`could not write the report to ${location}: ${problem}`, options);
    this.name = 'ReportWriteError';
  }
}

/** S3 (or the network) failed in a way that may pass: throttling, 5xx, no connection. */
export class ReportStoreUnavailableError extends ReportStoreError {
  override readonly retryable = true;

  constructor(
    readonly location: string,
    problem: string,
    options?: ErrorOptions,
  ) {
    super(`could not write the report to ${location}: ${problem}`, options);
    this.name = 'ReportStoreUnavailableError';
  }
}
