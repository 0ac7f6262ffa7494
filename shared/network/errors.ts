/**
 * Errors of shared/network. Every class extends `NetworkError` and sets `name`, so a log line or a preflight reason
 * names it; the original error is kept as `cause`.
 */

/**
 * How a request got no answer: nothing within the wait (a dropped SYN, a server that never replies), refused, no
 * route to the host, or a host name that does not resolve.
 */
export const NO_ANSWER_KINDS = {
  timeout: 'timeout',
  refused: 'refused',
  unreachable: 'unreachable',
  unresolved: 'unresolved',
} as const;
export type NoAnswerKind = (typeof NO_ANSWER_KINDS)[keyof typeof NO_ANSWER_KINDS];

/** Base class of the errors raised by shared/network. */
export class NetworkError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NetworkError';
  }
}

/**
 * A request to `host` got no HTTP answer at all (timed out, refused, or the name did not resolve) after `waitedMs`.
 * Retryable: the next run may find the network path (a VPC endpoint, a security group rule) in place.
 */
export class EndpointUnansweredError extends NetworkError {
  readonly retryable = true;
  readonly host: string;
  readonly kind: NoAnswerKind;
  readonly waitedMs: number | undefined;

  constructor(host: string, kind: NoAnswerKind, waitedMs: number | undefined, options: { cause?: unknown } = {}) {
    const cause = options.cause instanceof Error ? `: ${options.cause.name}: ${options.cause.message}` : '';
    super(`${host} ${describeNoAnswer(kind, waitedMs)}${cause}`, options);
    this.name = 'EndpointUnansweredError';
    this.host = host;
    this.kind = kind;
    this.waitedMs = waitedMs;
  }
}

/** "did not answer within 10 s", "refused the connection", "could not be resolved". */
export function describeNoAnswer(kind: NoAnswerKind, waitedMs: number | undefined): string {
  switch (kind) {
    case NO_ANSWER_KINDS.timeout:
      return waitedMs === undefined ? 'did not answer' : `did not answer within ${formatSeconds(waitedMs)}`;
    case NO_ANSWER_KINDS.refused:
      return 'refused the connection';
    case NO_ANSWER_KINDS.unreachable:
      return 'could not be reached (no route to it)';
    case NO_ANSWER_KINDS.unresolved:
      return 'could not be resolved (DNS)';
  }
}

/** 10 000 ms → "10 s", 2 500 ms → "2.5 s": seconds, one decimal at most. */
export function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
