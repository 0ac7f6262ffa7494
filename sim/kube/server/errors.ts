import { KubeApiError, type StatusCause } from '../errors.js';

/**
 * Errors of the twin's HTTP API server. They extend KubeApiError (sim/kube/errors.ts), so every one of them carries
 * the HTTP status and the `Status` body the real kube-apiserver sends in the same situation.
 */

/** 404 for a path or resource the server does not serve (an unknown resource, or a custom resource without its CRD). */
export class KubeApiResourceNotServedError extends KubeApiError {
  constructor(readonly path: string) {
    super(404, 'NotFound', 'the server could not find the requested resource', {});
    this.name = 'KubeApiResourceNotServedError';
  }
}

/** 413: the request body is larger than the server reads (the real server's limit is 3 MiB as well). */
export class KubeApiRequestEntityTooLargeError extends KubeApiError {
  constructor(readonly limitBytes: number) {
    super(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limitBytes}`);
    this.name = 'KubeApiRequestEntityTooLargeError';
  }
}

/** 422: an option of the request (DeleteOptions, a Scale) has a bad value; names the field and what is accepted. */
export class KubeApiInvalidOptionError extends KubeApiError {
  constructor(
    group: string,
    kind: string,
    name: string,
    readonly causes: StatusCause[],
  ) {
    const qualified = group ? `${kind}.${group}` : kind;
    super(
      422,
      'Invalid',
      `${qualified} "${name}" is invalid: ${causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)).join(', ')}`,
      { name, group, kind, causes },
    );
    this.name = 'KubeApiInvalidOptionError';
  }
}

/** 500: a bug or an unexpected failure inside the twin; the cause is kept for the log. */
export class KubeApiInternalError extends KubeApiError {
  constructor(message: string, options?: ErrorOptions) {
    super(500, 'InternalError', `Internal error occurred: ${message}`);
    this.name = 'KubeApiInternalError';
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** The API server could not start listening on 127.0.0.1. Retryable (a port or file descriptor may free up). */
export class KubeApiServerStartError extends KubeApiError {
  constructor(options?: ErrorOptions) {
    const reason = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super(500, 'InternalError', `the twin's Kubernetes API server could not start${reason}`);
    this.name = 'KubeApiServerStartError';
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** A kubeconfig could not be written (bad directory, permissions). Not retryable: fix the path. */
export class KubeconfigWriteError extends KubeApiError {
  constructor(
    readonly path: string,
    options?: ErrorOptions,
  ) {
    const reason = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super(500, 'InternalError', `could not write the kubeconfig ${path}${reason}`);
    this.name = 'KubeconfigWriteError';
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** A kubeconfig option is missing or malformed (the field, what was wrong, what is accepted). */
export class KubeconfigOptionError extends KubeApiError {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(400, 'BadRequest', `writeKubeconfig: ${field} ${problem}`);
    this.name = 'KubeconfigOptionError';
  }
}

/** The Pod proxy could not reach the Pod's server (not running yet, or the port is not served): 503 as the real one. */
export class KubeApiServiceUnavailableError extends KubeApiError {
  constructor(message: string) {
    super(503, 'ServiceUnavailable', message);
    this.name = 'KubeApiServiceUnavailableError';
  }
}

/**
 * An access entry EKS's CreateAccessEntry would refuse (InvalidParameterException), or a second one for the same
 * principal (ResourceInUseException): names the field and what is accepted. Not a KubeApiError: the EKS API refuses
 * it (sim/aws/eks.ts maps it to EKS's error types), no Kubernetes request is involved.
 */
export class EksAccessEntryInvalidError extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`access entry ${field}: ${problem}`);
    this.name = 'EksAccessEntryInvalidError';
  }
}
