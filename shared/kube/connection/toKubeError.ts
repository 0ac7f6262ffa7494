import {
  KubeAlreadyExistsError,
  KubeBadRequestError,
  KubeConflictError,
  KubeError,
  KubeForbiddenError,
  KubeInvalidError,
  KubeNotFoundError,
  KubeUnauthorizedError,
  KubeUnavailableError,
  type KubeErrorDetails,
  type KubeInvalidCause,
} from '../errors.js';
import { describeRef } from '../resources.js';
import type { ListRef, ObjectRef } from '../types.js';

/** The parts of client-node's `ApiException` the mapping reads (duck-typed: the class may be loaded twice). */
interface ApiExceptionLike {
  code: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A Kubernetes `Status` body, as far as the mapping reads it. */
interface StatusBody {
  kind?: string;
  message?: string;
  reason?: string;
  details?: { causes?: unknown; retryAfterSeconds?: number };
}

/** The longest piece of a non-Status body quoted in a message. */
const MAX_BODY_QUOTE = 200;

/**
 * Maps whatever a client-node call threw to a named `KubeError`: an `ApiException` by status (and `reason` for 409),
 * a failure to get any answer to `KubeUnavailableError`. A `KubeError` passes through.
 */
export function toKubeError(error: unknown, verb: string, ref: Partial<ObjectRef> | ListRef): KubeError {
  if (error instanceof KubeError) return error;
  const target = describeRef(ref);
  const refDetails: Partial<ObjectRef> = { ...ref };
  if (isApiException(error)) {
    const status = parseStatusBody(error.body);
    const details: KubeErrorDetails = {
      status: error.code,
      reason: status?.reason,
      ref: refDetails,
      verb,
      serverMessage: status?.message ?? quoteBody(error.body),
      cause: error,
    };
    switch (error.code) {
      case 400:
        return new KubeBadRequestError(target, details);
      case 401:
        return new KubeUnauthorizedError(target, details);
      case 403:
        return new KubeForbiddenError(target, details);
      case 404:
        return new KubeNotFoundError(target, details);
      case 409:
        return details.reason === 'AlreadyExists'
          ? new KubeAlreadyExistsError(target, details)
          : new KubeConflictError(target, details);
      case 422:
        return new KubeInvalidError(target, details, parseCauses(status?.details?.causes));
      case 429:
        return new KubeUnavailableError(target, details, retryAfterSeconds(error, status));
      default:
        if (error.code >= 500) return new KubeUnavailableError(target, details, retryAfterSeconds(error, status));
        return new KubeBadRequestError(target, details);
    }
  }
  // No HTTP answer: node-fetch's FetchError (ECONNREFUSED, ECONNRESET, ENOTFOUND, ...) or a socket timeout.
  if (isNetworkError(error)) {
    return new KubeUnavailableError(target, {
      ref: refDetails,
      verb,
      serverMessage: `no answer from the API server: ${(error as Error).message}`,
      cause: error,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new KubeError(`${verb} ${target}: ${message}`, false, { ref: refDetails, verb, cause: error });
}

function isApiException(error: unknown): error is ApiExceptionLike {
  return (
    error instanceof Error &&
    typeof (error as Partial<ApiExceptionLike>).code === 'number' &&
    'body' in error &&
    'headers' in error
  );
}

function isNetworkError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const e = error as Error & { type?: string; code?: string; errno?: string };
  return (
    e.name === 'FetchError' ||
    e.type === 'system' ||
    e.name === 'AbortError' ||
    (typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code))
  );
}

/** The body is a JSON text (client-node reads it as text) or already an object. */
function parseStatusBody(body: unknown): StatusBody | undefined {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const status = value as StatusBody;
  if (status.kind !== undefined && status.kind !== 'Status') return undefined;
  return status;
}

function quoteBody(body: unknown): string | undefined {
  if (typeof body !== 'string' || body.trim() === '') return undefined;
  const text = body.trim().replace(/\s+/g, ' ');
  return text.length > MAX_BODY_QUOTE ? `${text.slice(0, MAX_BODY_QUOTE)}...` : text;
}

function parseCauses(causes: unknown): KubeInvalidCause[] {
  if (!Array.isArray(causes)) return [];
  return causes
    .filter((c): c is Record<string, unknown> => typeof c === 'object' && c !== null)
    .map((c) => ({
      reason: typeof c.reason === 'string' ? c.reason : undefined,
      message: typeof c.message === 'string' ? c.message : undefined,
      field: typeof c.field === 'string' ? c.field : undefined,
    }));
}

function retryAfterSeconds(error: ApiExceptionLike, status: StatusBody | undefined): number | undefined {
  const header = error.headers?.['retry-after'];
  if (header !== undefined && /^\d+$/.test(header.trim())) return Number(header.trim());
  const fromBody = status?.details?.retryAfterSeconds;
  return typeof fromBody === 'number' && Number.isFinite(fromBody) ? fromBody : undefined;
}
