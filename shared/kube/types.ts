/**
 * The ClusterClient port: the Kubernetes operations the calibration and preflight jobs need, typed on plain JSON
 * objects. The adapter (KubeClusterClient) talks to EKS or to the twin's API server over HTTP; tests may hand the
 * jobs any other implementation.
 */

/** The metadata fields the product reads or writes; any other field passes through untouched. */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [field: string]: unknown;
}

/** Any Kubernetes object as JSON: `{ apiVersion, kind, metadata, ... }`. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: unknown;
  status?: unknown;
  [field: string]: unknown;
}

/** Names one object: `namespace` is left out for cluster-scoped kinds (ClusterRole, Namespace, Node, ...). */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** Equality-based label selector: `{ app: 'x' }` or the text form `app=x,tier!=db`. */
export type LabelSelectorInput = string | Record<string, string>;

/** Names a collection: every object of a kind, in one namespace or (when `namespace` is absent) in all of them. */
export interface ListRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  labelSelector?: LabelSelectorInput;
}

/** How dependents (ReplicaSets, Pods, Job Pods) are garbage-collected when their owner is deleted. */
export const PROPAGATION_POLICIES = {
  background: 'Background',
  foreground: 'Foreground',
  orphan: 'Orphan',
} as const;
export type PropagationPolicy = (typeof PROPAGATION_POLICIES)[keyof typeof PROPAGATION_POLICIES];

/** What `apply` did, in kubectl's words: so a caller can log why nothing rolled out. */
export const APPLY_ACTIONS = { created: 'created', configured: 'configured', unchanged: 'unchanged' } as const;
export type ApplyAction = (typeof APPLY_ACTIONS)[keyof typeof APPLY_ACTIONS];

export interface ApplyResult<T extends KubeObject = KubeObject> {
  action: ApplyAction;
  /** The object as the server stored it. */
  object: T;
}

export interface PodLogOptions {
  /** Needed when the Pod has more than one container. */
  container?: string;
  /** Only the last N lines. */
  tailLines?: number;
}

/** A Pod's HTTP endpoint reached through the API server's proxy (RBAC `pods/proxy` get). */
export interface PodProxyRef {
  namespace: string;
  pod: string;
  /** The container port: its number or its name (`8000`, `http`). */
  port: string | number;
  /** The path on the Pod's server, starting with `/` (`/metrics`). */
  path: string;
}

export interface UpdateWithRetryOptions {
  /** Attempts including the first; a Conflict on the last one is thrown. Default 5. */
  maxAttempts?: number;
}

/**
 * Returns the desired object given the live one (it may also change `current` in place and return nothing).
 * Returning an object equal to `current` skips the write.
 */
export type Mutation<T extends KubeObject> = (current: T) => T | void;

/** The Kubernetes operations of the product. Errors are `KubeError` subclasses (shared/kube/errors.ts). */
export interface ClusterClient {
  /** Creates `object`, or merge-patches the live one to it when it exists. */
  apply<T extends KubeObject>(object: T): Promise<ApplyResult<T>>;
  /** The live object, or `undefined` when there is none (the only call where 404 is not an error). */
  get<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined>;
  /** The objects of a kind, filtered by namespace and labels. */
  list<T extends KubeObject = KubeObject>(ref: ListRef): Promise<T[]>;
  /** An RFC 7386 JSON merge patch (`null` deletes a field; lists are replaced whole). */
  patchMerge<T extends KubeObject = KubeObject>(ref: ObjectRef, patch: Record<string, unknown>): Promise<T>;
  /** PUT: replaces the object; a stale `metadata.resourceVersion` fails with `KubeConflictError`. */
  replace<T extends KubeObject>(object: T): Promise<T>;
  /** Deletes the object; resolves `false` when it was already gone. */
  delete(ref: ObjectRef, options?: { propagationPolicy?: PropagationPolicy }): Promise<boolean>;
  /** Sets a Deployment's replicas through its `scale` subresource (what `kubectl scale` does). */
  scale(deployment: { namespace: string; name: string }, replicas: number): Promise<void>;
  /** The Pod's log as text. */
  readPodLog(namespace: string, pod: string, options?: PodLogOptions): Promise<string>;
  /** The Pods of a namespace matching the selector. */
  listPods(namespace: string, labelSelector?: LabelSelectorInput): Promise<KubeObject[]>;
  /**
   * GET `/api/v1/namespaces/{ns}/pods/{pod}:{port}/proxy{path}`: what the Pod's server answers, as text. Lets a check
   * read a replica's `/metrics` from outside the cluster network.
   */
  proxyGet(ref: PodProxyRef, options?: { signal?: AbortSignal }): Promise<string>;
  /** GET, mutate, PUT with the read resourceVersion; on Conflict re-read and try again (bounded). */
  updateWithRetry<T extends KubeObject = KubeObject>(
    ref: ObjectRef,
    mutate: Mutation<T>,
    options?: UpdateWithRetryOptions,
  ): Promise<T>;
}
