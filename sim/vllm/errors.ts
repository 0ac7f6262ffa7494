/** Base class of every error the vLLM twin throws, so callers can catch the module's errors as one kind. */
export class VllmTwinError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'VllmTwinError';
  }
}

/** An engine or replica setting (profile value or container-arg override) is out of range. */
export class VllmConfigInvalidError extends VllmTwinError {
  readonly field: string;
  readonly value: unknown;

  constructor(field: string, value: unknown, expected: string, options?: { cause?: unknown }) {
    super(`vLLM twin config: ${field} is ${JSON.stringify(value)}, expected ${expected}`, options);
    this.name = 'VllmConfigInvalidError';
    this.field = field;
    this.value = value;
  }
}

/**
 * A request the engine cannot take, with the HTTP status and OpenAI error type vLLM answers with, so the server
 * can map it without re-deciding.
 */
export class VllmRequestInvalidError extends VllmTwinError {
  readonly status: number;
  readonly type: string;
  readonly param: string | null;

  constructor(message: string, details: { status?: number; type?: string; param?: string | null; cause?: unknown }) {
    super(message, { cause: details.cause });
    this.name = 'VllmRequestInvalidError';
    this.status = details.status ?? 400;
    this.type = details.type ?? 'BadRequestError';
    this.param = details.param ?? null;
  }
}

/** The replica is still loading its model (the first `startup.modelLoadSeconds`); retry later. Retryable. */
export class VllmNotLoadedError extends VllmTwinError {
  readonly loadedAtMs: number;

  constructor(nowMs: number, loadedAtMs: number) {
    super(`vLLM twin: the model is still loading (ready in ${((loadedAtMs - nowMs) / 1000).toFixed(1)} s)`);
    this.name = 'VllmNotLoadedError';
    this.loadedAtMs = loadedAtMs;
  }
}

/** A capacity or latency measurement was asked for with an unusable shape or rate. */
export class VllmMeasurementInputError extends VllmTwinError {
  readonly field: string;

  constructor(field: string, value: unknown, expected: string) {
    super(`vLLM twin measurement: ${field} is ${JSON.stringify(value)}, expected ${expected}`);
    this.name = 'VllmMeasurementInputError';
    this.field = field;
  }
}
