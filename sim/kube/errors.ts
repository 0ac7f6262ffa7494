import { qualifiedResource, type ResourceInfo } from './resources.js';

/** A field-level problem, as in a Status body's `details.causes`. */
export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

/** The Kubernetes `Status` object returned with every error. */
export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: string;
  details?: { name?: string; group?: string; kind?: string; causes?: StatusCause[] };
  code: number;
}

/** Base class of the twin API server's errors: each carries the HTTP status and the Status body a real server sends. */
export class KubeApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusBody['details'],
  ) {
    super(message);
    this.name = 'KubeApiError';
  }

  toStatus(): StatusBody {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

function detailsOf(info: ResourceInfo, name?: string): StatusBody['details'] {
  return { ...(name !== undefined ? { name } : {}), group: info.group, kind: info.plural };
}

/** 404 `deployments.apps "x" not found`. */
export class KubeApiNotFoundError extends KubeApiError {
  constructor(info: ResourceInfo, name: string) {
    super(404, 'NotFound', `${qualifiedResource(info)} "${name}" not found`, detailsOf(info, name));
    this.name = 'KubeApiNotFoundError';
  }
}

/** 409 AlreadyExists on create. */
export class KubeApiAlreadyExistsError extends KubeApiError {
  constructor(info: ResourceInfo, name: string) {
    super(409, 'AlreadyExists', `${qualifiedResource(info)} "${name}" already exists`, detailsOf(info, name));
    this.name = 'KubeApiAlreadyExistsError';
  }
}

/** 409 Conflict on an update with a stale resourceVersion. */
export class KubeApiConflictError extends KubeApiError {
  constructor(info: ResourceInfo, name: string) {
    super(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualifiedResource(info)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      detailsOf(info, name),
    );
    this.name = 'KubeApiConflictError';
  }
}

/** 422 Invalid, with one cause per bad field. */
export class KubeApiInvalidError extends KubeApiError {
  constructor(
    info: ResourceInfo,
    name: string,
    readonly causes: StatusCause[],
  ) {
    const qualifiedKind = info.group === '' ? info.kind : `${info.kind}.${info.group}`;
    super(
      422,
      'Invalid',
      `${qualifiedKind} "${name}" is invalid: ${causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)).join(', ')}`,
      { ...detailsOf(info, name), kind: info.kind, causes },
    );
    this.name = 'KubeApiInvalidError';
  }
}

/** 400 BadRequest: a malformed body or parameter. */
export class KubeApiBadRequestError extends KubeApiError {
  constructor(message: string) {
    super(400, 'BadRequest', message);
    this.name = 'KubeApiBadRequestError';
  }
}

/** 401 Unauthorized: no token, or one the server does not accept. */
export class KubeApiUnauthorizedError extends KubeApiError {
  constructor(message = 'Unauthorized') {
    super(401, 'Unauthorized', message);
    this.name = 'KubeApiUnauthorizedError';
  }
}

/** 403 Forbidden: the user may not do this (e.g. a read-only token writing). */
export class KubeApiForbiddenError extends KubeApiError {
  constructor(
    info: ResourceInfo | undefined,
    name: string | undefined,
    user: string,
    verb: string,
    namespace?: string,
    /** `scale`, `status`, `log`: named in the message as the real server does (`resource "deployments/scale"`). */
    subresource?: string,
  ) {
    const what = info ? qualifiedResource(info) : 'the resource';
    const scope = namespace ? ` in the namespace "${namespace}"` : ' at the cluster scope';
    const resource = `${info?.plural ?? ''}${subresource ? `/${subresource}` : ''}`;
    super(
      403,
      'Forbidden',
      `${what}${name ? ` "${name}"` : ''} is forbidden: User "${user}" cannot ${verb} resource "${resource}" in API group "${info?.group ?? ''}"${scope}`,
      info ? detailsOf(info, name) : undefined,
    );
    this.name = 'KubeApiForbiddenError';
  }
}

/** 405 MethodNotAllowed. */
export class KubeApiMethodNotAllowedError extends KubeApiError {
  constructor(message = 'the server does not allow this method on the requested resource') {
    super(405, 'MethodNotAllowed', message);
    this.name = 'KubeApiMethodNotAllowedError';
  }
}

/** 415: the PATCH content type is not one this resource accepts (strategic merge on a custom resource, say). */
export class KubeApiUnsupportedMediaTypeError extends KubeApiError {
  constructor(
    readonly contentType: string,
    readonly accepted: readonly string[],
  ) {
    super(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    );
    this.name = 'KubeApiUnsupportedMediaTypeError';
  }
}

/** 422: a patch is well formed but cannot be applied to the object (a JSON-patch `test` failed, a path is missing). */
export class KubeApiPatchNotApplicableError extends KubeApiError {
  constructor(message: string) {
    super(422, 'Invalid', message);
    this.name = 'KubeApiPatchNotApplicableError';
  }
}
