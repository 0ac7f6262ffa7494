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

/** A fault request the twin cannot carry out as given: `field` names what is wrong. */
export class TwinFaultInvalidError extends TwinError {
  constructor(
    readonly field: string,
    readonly problem: string,
    options?: ErrorOptions,
  ) {
    super(`fault: ${field}: ${problem}`, options);
    this.name = 'TwinFaultInvalidError';
  }
}

/** The Pod named in a fault request is not a running vLLM Pod (or none is Ready); `pods` lists the ones there are. */
export class TwinFaultPodNotFoundError extends TwinError {
  constructor(
    readonly pod: string | undefined,
    readonly pods: readonly string[],
  ) {
    const known = pods.length === 0 ? 'there is none' : `the Pods are ${pods.join(', ')}`;
    super(
      pod === undefined
        ? `fault: no vLLM Pod is Ready to take a fault (${known})`
        : `fault: pod ${JSON.stringify(pod)} is not a running vLLM Pod (${known})`,
    );
    this.name = 'TwinFaultPodNotFoundError';
  }
}
