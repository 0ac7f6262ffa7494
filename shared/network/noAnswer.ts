import { EndpointUnansweredError, NO_ANSWER_KINDS, type NoAnswerKind } from './errors.js';

/** A request that got no HTTP answer: where it went (when known), how it failed, and how long it waited. */
export interface NoAnswer {
  /** `host` or `host:port`; undefined when no link of the error names it. */
  host: string | undefined;
  kind: NoAnswerKind;
  waitedMs: number | undefined;
}

/** Node's system error codes of a connection that never carried an answer (libuv, getaddrinfo). */
const CODE_KINDS: Readonly<Record<string, NoAnswerKind>> = {
  ETIMEDOUT: NO_ANSWER_KINDS.timeout,
  ESOCKETTIMEDOUT: NO_ANSWER_KINDS.timeout,
  ECONNREFUSED: NO_ANSWER_KINDS.refused,
  EHOSTUNREACH: NO_ANSWER_KINDS.unreachable,
  ENETUNREACH: NO_ANSWER_KINDS.unreachable,
  ENOTFOUND: NO_ANSWER_KINDS.unresolved,
  EAI_AGAIN: NO_ANSWER_KINDS.unresolved,
};

/**
 * The wait a timeout message states: @smithy/node-http-handler's "... within the configured timeout of 3000 ms" and
 * "... exceeded the configured 10000 ms requestTimeout", "... timed out after 10000 ms", this module's agents.
 */
const WAITED_IN_MESSAGE = /(?:within|after|of|configured) (\d+) ?ms\b/;
/** node-fetch's FetchError: "request to https://host/path failed, reason: ...". */
const URL_IN_MESSAGE = /\brequest to (\S+) failed\b/;
/** An abort the caller asked for (a deadline guard): not a missing answer, whatever its cause says. */
const ABORTED = /Abort|Deadline/;
/** How many causes deep an error is searched (wrappers of wrappers, never a cycle). */
const MAX_DEPTH = 8;

/**
 * Finds, in `error` and its causes, a request that got no answer (a timeout, a refused connection, no route, a name
 * that does not resolve), with the host and the time waited when a link names them. Undefined for anything else:
 * an HTTP error status (the endpoint answered), or an abort the caller asked for.
 */
export function findNoAnswer(error: unknown): NoAnswer | undefined {
  let kind: NoAnswerKind | undefined;
  let host: string | undefined;
  let waitedMs: number | undefined;
  let link: unknown = error;
  for (let depth = 0; depth < MAX_DEPTH && link instanceof Error; depth += 1) {
    if (ABORTED.test(link.name)) return undefined;
    if (link instanceof EndpointUnansweredError)
      return { host: link.host, kind: link.kind, waitedMs: link.waitedMs ?? waitedMs };
    const e = link as Error & { code?: unknown; timeoutMs?: unknown; $metadata?: { httpStatusCode?: number } };
    // An answer with a status is an answer: the endpoint is reachable.
    if (e.$metadata?.httpStatusCode !== undefined) return undefined;
    kind ??= kindOf(e);
    host ??= hostOf(e);
    if (waitedMs === undefined && typeof e.timeoutMs === 'number') waitedMs = e.timeoutMs;
    if (waitedMs === undefined && kind === NO_ANSWER_KINDS.timeout) {
      const stated = WAITED_IN_MESSAGE.exec(e.message);
      if (stated !== null) waitedMs = Number(stated[1]);
    }
    link = e.cause;
  }
  return kind === undefined ? undefined : { host, kind, waitedMs };
}

function kindOf(error: Error & { code?: unknown }): NoAnswerKind | undefined {
  if (typeof error.code === 'string' && error.code in CODE_KINDS) return CODE_KINDS[error.code];
  // The SDK's handler (connection and request timeouts), fetch's AbortSignal.timeout, shared/metrics' timeout.
  if (error.name === 'TimeoutError' || error.name === 'MetricsTimeoutError') return NO_ANSWER_KINDS.timeout;
  return undefined;
}

function hostOf(
  error: Error & { url?: unknown; hostname?: unknown; address?: unknown; port?: unknown },
): string | undefined {
  if (typeof error.url === 'string') return hostOfUrl(error.url);
  const inMessage = URL_IN_MESSAGE.exec(error.message);
  if (inMessage !== null) return hostOfUrl(inMessage[1] ?? '');
  if (typeof error.hostname === 'string') return error.hostname;
  if (typeof error.address === 'string')
    return typeof error.port === 'number' ? `${error.address}:${error.port}` : error.address;
  return undefined;
}

function hostOfUrl(url: string): string | undefined {
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}
