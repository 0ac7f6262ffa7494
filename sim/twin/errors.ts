/** Base class of the twin's errors. */
export class TwinError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TwinError';
  }
}

/** The state file is missing, unreadable, invalid, or was written by a twin that has stopped. */
export class TwinStateFileError extends TwinError {
  constructor(
    readonly path: string,
    reason: string,
    options?: ErrorOptions,
  ) {
    super(`twin state file ${path}: ${reason}`, options);
    this.name = 'TwinStateFileError';
  }
}

/** The twin did not become ready (a replica did not load, Prometheus did not scrape every target). */
export class TwinStartError extends TwinError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TwinStartError';
  }
}
