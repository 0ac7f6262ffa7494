/** Base class of every error the GPU/container exporter twin throws, so callers can catch the module as a whole. */
export class DcgmTwinError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DcgmTwinError';
  }
}

/** A GPU, Pod or fault description given to the exporter twin is invalid. Not retryable: fix the input. */
export class DcgmConfigError extends DcgmTwinError {
  /** The offending field, e.g. `gpu.memoryMiB` or `fault.framebufferUsedMiB`. */
  readonly field: string;
  readonly value: unknown;

  constructor(field: string, value: unknown, problem: string, options?: ErrorOptions) {
    super(`${field}: ${problem} (got ${JSON.stringify(value)})`, options);
    this.name = 'DcgmConfigError';
    this.field = field;
    this.value = value;
  }
}

/** The node agent's HTTP server could not start listening. Retryable (a port or resource may free up). */
export class NodeAgentStartError extends DcgmTwinError {
  readonly node: string;

  constructor(node: string, options?: ErrorOptions) {
    const reason = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super(`node agent for ${node} could not start${reason}`, options);
    this.name = 'NodeAgentStartError';
    this.node = node;
  }
}
