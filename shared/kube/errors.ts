/**
 * Errors of the kube module. Every class extends `KubeError`, sets `name` (Step Functions `Retry`/`Catch` match on
 * it), says whether retrying can help, and names the object it concerns (`deployments.apps default/vllm-app`)
 * together with the API server's own message. None carries a token or credentials.
 */
import type { ObjectRef } from './types.js';

export interface KubeErrorDetails {
  /** The HTTP status, when the API server answered. */
  status?: number;
  /** The `reason` of the server's Status body (`NotFound`, `AlreadyExists`, `Conflict`, `Invalid`, ...). */
  reason?: string;
  /** The object or collection the request was about. */
  ref?: Partial<ObjectRef>;
  /** What the client was doing: get, list, create, patch, replace, delete, scale, read log. */
  verb?: string;
  /** The server's message (Status.message), or the start of a non-Status body. */
  serverMessage?: string;
  cause?: unknown;
}

/** Base class of every error raised by `shared/kube`. */
export class KubeError extends Error {
  /** True when sending the same request again later may succeed (5xx, 429, network, conflict). */
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly reason: string | undefined;
  readonly ref: Partial<ObjectRef> | undefined;
  readonly verb: string | undefined;
  readonly serverMessage: string | undefined;

  constructor(message: string, retryable: boolean, details: KubeErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'KubeError';
    this.retryable = retryable;
    this.status = details.status;
    this.reason = details.reason;
    this.ref = details.ref;
    this.verb = details.verb;
    this.serverMessage = details.serverMessage;
  }
}

/**
 * `<verb> <resource> <namespace>/<name>: <server message> (HTTP <status> <reason>)`, e.g.
 * `get deployments.apps default/vllm-app: deployments.apps "vllm-app" not found (HTTP 404 NotFound)`.
 */
export function describeKubeFailure(target: string, details: KubeErrorDetails, fallback: string): string {
  const verb = details.verb === undefined ? '' : `${details.verb} `;
  const status =
    details.status === undefined ? '' : ` (HTTP ${details.status}${details.reason ? ` ${details.reason}` : ''})`;
  return `${verb}${target}: ${details.serverMessage || fallback}${status}`;
}

/** 404: the object (or its kind) does not exist. */
export class KubeNotFoundError extends KubeError {
  constructor(target: string, details: KubeErrorDetails) {
    super(describeKubeFailure(target, details, 'not found'), false, details);
    this.name = 'KubeNotFoundError';
  }
}

/** 409 AlreadyExists: create of a name that is taken. */
export class KubeAlreadyExistsError extends KubeError {
  constructor(target: string, details: KubeErrorDetails) {
    super(describeKubeFailure(target, details, 'already exists'), false, details);
    this.name = 'KubeAlreadyExistsError';
  }
}

/**
 * 409 Conflict: the object changed since it was read (stale resourceVersion). Retryable: re-reading and applying the
 * change again succeeds, which is what `updateWithRetry` (client-go's RetryOnConflict) does.
 */
export class KubeConflictError extends KubeError {
  constructor(target: string, details: KubeErrorDetails) {
    super(describeKubeFailure(target, details, 'the object has been modified'), true, details);
    this.name = 'KubeConflictError';
  }
}

/** 403: the identity is authenticated but RBAC does not allow the verb on the resource. */
export class KubeForbiddenError extends KubeError {
  constructor(target: string, details: KubeErrorDetails) {
    super(describeKubeFailure(target, details, 'forbidden'), false, details);
    this.name = 'KubeForbiddenError';
  }
}

/** 401: the token was refused (no EKS access entry for the role, expired or malformed token). */
export class KubeUnauthorizedError extends KubeError {
  constructor(target: string, details: KubeErrorDetails) {
    super(describeKubeFailure(target, details, 'Unauthorized: the API server refused the credentials'), false, details);
    this.name = 'KubeUnauthorizedError';
  }
}

/** One field-level problem of a 422 Invalid answer (`Status.details.causes[]`). */
export interface KubeInvalidCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** 422: the object failed validation; `causes` lists the fields the server named. */
export class KubeInvalidError extends KubeError {
  readonly causes: KubeInvalidCause[];

  constructor(target: string, details: KubeErrorDetails, causes: KubeInvalidCause[]) {
    const listed = causes
      .map((c) => [c.field, c.message].filter((part) => part !== undefined && part !== '').join(': '))
      .filter((text) => text !== '');
    const server = details.serverMessage ?? 'the object is invalid';
    // The server's message usually repeats the causes; add them only when it does not.
    const extra = listed.length > 0 && !listed.every((text) => server.includes(text)) ? ` [${listed.join('; ')}]` : '';
    super(describeKubeFailure(target, { ...details, serverMessage: `${server}${extra}` }, server), false, details);
    this.name = 'KubeInvalidError';
    this.causes = causes;
  }
}

/** 400 and any other 4xx the product does not expect (a malformed request: a bug, not a state of the cluster). */
export class KubeBadRequestError extends KubeError {
  constructor(target: string, details: KubeErrorDetails) {
    super(describeKubeFailure(target, details, 'the request was refused'), false, details);
    this.name = 'KubeBadRequestError';
  }
}

/** 5xx, 429 or no answer at all (connection refused, reset, DNS): try again later. */
export class KubeUnavailableError extends KubeError {
  /** The server's Retry-After (header or Status.details.retryAfterSeconds), in seconds, when it sent one. */
  readonly retryAfterSeconds: number | undefined;

  constructor(target: string, details: KubeErrorDetails, retryAfterSeconds?: number) {
    super(describeKubeFailure(target, details, 'the API server is unavailable'), true, details);
    this.name = 'KubeUnavailableError';
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** An EKS bearer token could not be made (usually: no AWS credentials could be resolved). */
export class KubeTokenError extends KubeError {
  readonly clusterName: string;

  constructor(clusterName: string, cause: unknown) {
    const reason = cause instanceof Error ? `: ${cause.message}` : '';
    super(`could not create an EKS token for cluster ${clusterName}${reason}`, false, { cause });
    this.name = 'KubeTokenError';
    this.clusterName = clusterName;
  }
}

/** A string that is not an EKS token (`k8s-aws-v1.` + base64url of a presigned STS GetCallerIdentity URL). */
export class KubeTokenFormatError extends KubeError {
  constructor(problem: string) {
    super(`not an EKS token: ${problem}`, false);
    this.name = 'KubeTokenFormatError';
  }
}

/** eks:DescribeCluster found no cluster of that name in the region. */
export class KubeClusterNotFoundError extends KubeError {
  readonly clusterName: string;
  readonly region: string;

  constructor(clusterName: string, region: string, cause?: unknown) {
    super(`EKS cluster ${clusterName} was not found in ${region} (eks:DescribeCluster)`, false, { cause });
    this.name = 'KubeClusterNotFoundError';
    this.clusterName = clusterName;
    this.region = region;
  }
}

/** eks:DescribeCluster failed, or the cluster has no endpoint yet (not ACTIVE). */
export class KubeClusterLookupError extends KubeError {
  readonly clusterName: string;

  constructor(clusterName: string, problem: string, retryable: boolean, cause?: unknown) {
    super(`EKS cluster ${clusterName}: ${problem}`, retryable, { cause });
    this.name = 'KubeClusterLookupError';
    this.clusterName = clusterName;
  }
}

/** One problem of a manifest input: where (`maxModelLen`, `tolerations[0].key`) and what. */
export interface KubeInputIssue {
  path: string;
  message: string;
}

/** A manifest generator's input failed validation; `issues` names every bad field. */
export class KubeManifestInputError extends KubeError {
  /** Which input: `deployment`, `scaledobject`, ... */
  readonly manifest: string;
  readonly issues: KubeInputIssue[];

  constructor(manifest: string, issues: KubeInputIssue[]) {
    super(
      `invalid ${manifest} input: ${issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ')}`,
      false,
    );
    this.name = 'KubeManifestInputError';
    this.manifest = manifest;
    this.issues = issues;
  }
}

/** Bad arguments given to a ClusterClient call (an empty name, replicas < 0, ...): a bug in the caller. */
export class KubeInvalidArgumentError extends KubeError {
  readonly field: string;

  constructor(field: string, problem: string, accepted: string) {
    super(`${field}: ${problem}; accepted: ${accepted}`, false);
    this.name = 'KubeInvalidArgumentError';
    this.field = field;
  }
}

/**
 * k6's REST API (`GET /v1/metrics`) answered something the product cannot read: not JSON, not the JSON:API document
 * k6 serves, or a metric of the wrong type. Not retryable as such: the next look reads again.
 */
export class K6MetricsInvalidError extends KubeError {
  /** Where in the answer: `body`, `data[3].attributes.sample.value`, `vus`. */
  readonly field: string;

  constructor(field: string, problem: string, accepted: string, cause?: unknown) {
    super(`k6 /v1/metrics: ${field} ${problem}; accepted: ${accepted}`, false, { cause });
    this.name = 'K6MetricsInvalidError';
    this.field = field;
  }
}
