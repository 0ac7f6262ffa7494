import type { KubeObject, ObjectMeta } from '../types.js';

/** Kubernetes timestamps are RFC 3339 with second precision (`2024-05-12T10:00:00Z`). */
export function kubeTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** `namespace/name` (or `name` for cluster-scoped objects): the key of a work queue item. */
export function keyOf(meta: Pick<ObjectMeta, 'name' | 'namespace'>): string {
  return meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name;
}

/** Splits a `namespace/name` key. */
export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const slash = key.indexOf('/');
  return slash < 0
    ? { namespace: undefined, name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

type OwnerReference = NonNullable<ObjectMeta['ownerReferences']>[number];

/** The ownerReference a controller puts on what it creates (controller: true, as kube-controller-manager does). */
export function controllerRef(owner: KubeObject): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid as string,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The controlling owner of `object`, if any. */
export function controllerOf(object: KubeObject): OwnerReference | undefined {
  return object.metadata.ownerReferences?.find((ref) => ref.controller === true);
}

/** Whether `object` is controlled by the object with `uid`. */
export function isControlledBy(object: KubeObject, uid: string | undefined): boolean {
  return uid !== undefined && controllerOf(object)?.uid === uid;
}

/** A status condition as the built-in kinds carry them. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastUpdateTime?: string;
  lastProbeTime?: string | null;
}

/**
 * Sets `next` in `conditions` the way Kubernetes' SetCondition helpers do: an unchanged status and reason keeps the
 * existing condition (and its times); a changed reason keeps lastTransitionTime; a changed status moves it to now.
 * `withUpdateTime` adds lastUpdateTime (Deployments have it, Pods and Jobs do not).
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  next: Omit<Condition, 'lastTransitionTime' | 'lastUpdateTime'>,
  nowIso: string,
  options: { withUpdateTime?: boolean; touch?: boolean } = {},
): Condition[] {
  const list = [...(conditions ?? [])];
  const index = list.findIndex((c) => c.type === next.type);
  const current = index >= 0 ? list[index] : undefined;
  if (current && current.status === next.status && current.reason === next.reason && !options.touch) {
    if (current.message === next.message) return list;
  }
  const transition = current && current.status === next.status ? (current.lastTransitionTime ?? nowIso) : nowIso;
  const updated: Condition = {
    type: next.type,
    status: next.status,
    ...('lastProbeTime' in next ? { lastProbeTime: next.lastProbeTime } : {}),
    ...(options.withUpdateTime ? { lastUpdateTime: nowIso } : {}),
    lastTransitionTime: transition,
    ...(next.reason !== undefined ? { reason: next.reason } : {}),
    ...(next.message !== undefined ? { message: next.message } : {}),
  };
  if (index >= 0) list[index] = updated;
  else list.push(updated);
  return list;
}

/** The condition of `type` in a status, if present. */
export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** A number field of unknown JSON, or `fallback`. */
export function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

/** Reads a nested field of unknown JSON without casts at every step. */
export function field<T = unknown>(value: unknown, ...path: string[]): T | undefined {
  let current: unknown = value;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current as T | undefined;
}
