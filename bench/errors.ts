/** Base class of the benchmark's errors. */
export class BenchError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'BenchError';
  }
}

/** A command-line argument of `npm run bench` is unknown or has a bad value. */
export class BenchUsageError extends BenchError {
  constructor(
    readonly argument: string,
    problem: string,
    accepted: string,
    options?: ErrorOptions,
  ) {
    super(`${argument}: ${problem}; accepted: ${accepted}`, options);
    this.name = 'BenchUsageError';
  }
}
