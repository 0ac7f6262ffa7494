/**
 * Contracts of the twin's Kubernetes API server, shared by the server (sim/kube/server) and the controllers
 * (sim/kube/controllers). Controllers act on the object store in-process, as kube-controller-manager acts on etcd
 * through the API: same objects, same resourceVersion semantics, same events.
 */

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: Array<{
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
    blockOwnerDeletion?: boolean;
  }>;
  generateName?: string;
  finalizers?: string[];
  managedFields?: unknown[];
  /** The same open shape as the product's ObjectMeta (shared/kube/types.ts), so objects pass between them. */
  [field: string]: unknown;
}

/** Any Kubernetes object as stored and served (JSON). */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: unknown;
  status?: unknown;
  [field: string]: unknown;
}

/** The kinds the twin serves; the store is keyed by kind (unique across the served API groups). */
export const KINDS = {
  Namespace: 'Namespace',
  Pod: 'Pod',
  Service: 'Service',
  ConfigMap: 'ConfigMap',
  Event: 'Event',
  Node: 'Node',
  Deployment: 'Deployment',
  ReplicaSet: 'ReplicaSet',
  DaemonSet: 'DaemonSet',
  Job: 'Job',
  HorizontalPodAutoscaler: 'HorizontalPodAutoscaler',
  ScaledObject: 'ScaledObject',
  TriggerAuthentication: 'TriggerAuthentication',
  ServiceMonitor: 'ServiceMonitor',
  CustomResourceDefinition: 'CustomResourceDefinition',
  ClusterRole: 'ClusterRole',
  ClusterRoleBinding: 'ClusterRoleBinding',
  Role: 'Role',
  RoleBinding: 'RoleBinding',
} as const;
export type Kind = (typeof KINDS)[keyof typeof KINDS];

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';
export interface WatchEvent {
  type: WatchEventType;
  object: KubeObject;
}

/** A parsed label selector (`metadata.labels` matching), from matchLabels/matchExpressions or `?labelSelector=`. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }>;
}

/**
 * The in-process object store behind the API server. Every write validates the object (as the API server would),
 * bumps `resourceVersion` (one counter for the whole store, as etcd's revision), sets `uid` / `creationTimestamp` /
 * `generation` on create, bumps `generation` when `spec` changes, and notifies watchers. Errors are KubeApiError
 * subclasses carrying the HTTP status and a Kubernetes `Status` body (see sim/kube/errors.ts).
 */
export interface ObjectStore {
  get(kind: Kind, namespace: string | undefined, name: string): KubeObject | undefined;
  list(kind: Kind, options?: { namespace?: string; selector?: LabelSelector }): KubeObject[];
  /** Creates `object`; 409 AlreadyExists when the name is taken; 422 Invalid when validation fails. */
  create(object: KubeObject): KubeObject;
  /**
   * Replaces `object` (spec and metadata; status is kept unless `subresource` is 'status', which replaces only
   * status). A `metadata.resourceVersion` that is not the current one is 409 Conflict; absent means "unconditional".
   */
  update(object: KubeObject, options?: { subresource?: 'status' }): KubeObject;
  /**
   * Deletes and returns the object; 404 when absent. Dependents (ownerReferences) are garbage-collected unless the
   * propagation policy is Orphan; deleting a Namespace deletes what is in it.
   */
  delete(
    kind: Kind,
    namespace: string | undefined,
    name: string,
    options?: { propagationPolicy?: 'Background' | 'Foreground' | 'Orphan' },
  ): KubeObject;
  /** Calls `listener` for every later change of `kind` (all namespaces). Returns an unsubscribe function. */
  watch(kind: Kind, listener: (event: WatchEvent) => void): () => void;
}

/** Appends and reads Pod logs (per Pod, per container), served by `GET .../pods/NAME/log`. */
export interface PodLogStore {
  append(namespace: string, pod: string, line: string, container?: string): void;
  read(namespace: string, pod: string, options?: { container?: string; tailLines?: number }): string | undefined;
}
