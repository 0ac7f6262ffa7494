/** Base class of the k6 emulation's errors. */
export class K6Error extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'K6Error';
  }
}

/**
 * The k6 container's env or args cannot be run (a missing or malformed K6_* variable, an unsupported flag): the
 * emulation exits as k6 does on an invalid config (exit code 104), with this message in the Pod log.
 */
export class K6ConfigInvalidError extends K6Error {
  constructor(
    readonly field: string,
    readonly value: unknown,
    accepted: string,
  ) {
    super(
      `invalid k6 configuration: ${field} is ${value === undefined ? 'missing' : JSON.stringify(value)}; expected ${accepted}`,
    );
    this.name = 'K6ConfigInvalidError';
  }
}
