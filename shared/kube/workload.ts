/**
 * Reading a Deployment and what serves it (its Pods, their readiness, the Services in front of them), the way
 * kubectl reads them. The calibration and preflight both use these, so a Pod counts as Ready in one exactly when it
 * does in the other.
 */
import { KINDS } from './kinds.js';
import type { ClusterClient, KubeObject } from './types.js';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** The Deployment's Pod selector (`spec.selector.matchLabels`). */
export function podSelector(deployment: KubeObject): Record<string, string> {
  return (
    (deployment.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector?.matchLabels ??
    {}
  );
}

/** The labels of the Deployment's Pod template: what a Service selecting its Pods must match. */
export function podTemplateLabels(deployment: KubeObject): Record<string, string> {
  return (
    (deployment.spec as { template?: { metadata?: { labels?: Record<string, string> } } } | undefined)?.template
      ?.metadata?.labels ?? {}
  );
}

/** `spec.replicas`, which Kubernetes defaults to 1. */
export function specReplicas(deployment: KubeObject): number {
  const replicas = (deployment.spec as { replicas?: number } | undefined)?.replicas;
  return typeof replicas === 'number' ? replicas : 1;
}

/** Whether a rollout is finished (as `kubectl rollout status` decides), with the reason either way. */
export interface RolloutStatus {
  done: boolean;
  /** The rollout can no longer finish (Progressing=False, ProgressDeadlineExceeded). */
  stuck: boolean;
  reason: string;
}

/**
 * `kubectl rollout status` semantics (kubectl's DeploymentStatusViewer): the controller saw the latest generation,
 * every replica is updated, no old replica is left, and every replica is available.
 */
export function rolloutStatus(deployment: KubeObject): RolloutStatus {
  const status = (deployment.status ?? {}) as {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    conditions?: Condition[];
  };
  const desired = specReplicas(deployment);
  const generation = deployment.metadata.generation ?? 0;
  const progressing = status.conditions?.find((c) => c.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded')
    return { done: false, stuck: true, reason: progressing.message ?? 'the rollout exceeded its progress deadline' };
  if ((status.observedGeneration ?? 0) < generation)
    return { done: false, stuck: false, reason: `waiting for the controller to see generation ${generation}` };
  const updated = status.updatedReplicas ?? 0;
  const total = status.replicas ?? 0;
  const available = status.availableReplicas ?? 0;
  if (updated < desired) return { done: false, stuck: false, reason: `${updated} of ${desired} replicas updated` };
  if (total > updated)
    return { done: false, stuck: false, reason: `${total - updated} old replica(s) still terminating` };
  if (available < updated)
    return { done: false, stuck: false, reason: `${available} of ${updated} updated replicas available` };
  return { done: true, stuck: false, reason: `${available} of ${desired} replicas updated and available` };
}

/** Whether a Pod's Ready condition is True and it is not being deleted (a terminating Pod serves no new requests). */
export function isPodReady(pod: KubeObject): boolean {
  if (pod.metadata.deletionTimestamp !== undefined) return false;
  const conditions = (pod.status as { conditions?: Condition[] } | undefined)?.conditions;
  return (conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/**
 * The Deployment's Pods and those of them that are Ready. A Pod is the Deployment's when its selector selects it and
 * its name carries the Deployment's (`<deployment>-<template hash>-<suffix>`, as its ReplicaSets name them): a
 * selector another Deployment shares would otherwise count that Deployment's Pods too.
 */
export async function deploymentPods(
  cluster: Pick<ClusterClient, 'listPods'>,
  deployment: KubeObject,
): Promise<{ pods: KubeObject[]; ready: KubeObject[] }> {
  const pods = await cluster.listPods(deployment.metadata.namespace ?? 'default', podSelector(deployment));
  const own = pods
    .filter((pod) => pod.metadata.name.startsWith(`${deployment.metadata.name}-`))
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  return { pods: own, ready: own.filter(isPodReady) };
}

/** Equality selection as a Service selects Pods: every key of a non-empty selector has the same value in `labels`. */
export function selectorSelects(selector: Readonly<Record<string, string>>, labels: Readonly<Record<string, string>>) {
  const keys = Object.keys(selector);
  return keys.length > 0 && keys.every((key) => labels[key] === selector[key]);
}

/** The Services in the Deployment's namespace whose selector selects its Pods, by name. */
export async function servicesSelecting(
  cluster: Pick<ClusterClient, 'list'>,
  deployment: KubeObject,
): Promise<KubeObject[]> {
  const labels = podTemplateLabels(deployment);
  const services = await cluster.list({ ...KINDS.service, namespace: deployment.metadata.namespace ?? 'default' });
  return services
    .filter((service) =>
      selectorSelects((service.spec as { selector?: Record<string, string> } | undefined)?.selector ?? {}, labels),
    )
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}

/** The first container's start (epoch ms) from the Pod status, or undefined before it ran. */
export function containerStartMs(pod: KubeObject): number | undefined {
  const statuses =
    (
      pod.status as
        | {
            containerStatuses?: Array<{
              state?: { running?: { startedAt?: string }; terminated?: { startedAt?: string } };
            }>;
          }
        | undefined
    )?.containerStatuses ?? [];
  const state = statuses[0]?.state;
  const at = Date.parse(state?.running?.startedAt ?? state?.terminated?.startedAt ?? '');
  return Number.isFinite(at) ? at : undefined;
}

/** The node a Pod was scheduled to, if any. */
export function nodeNameOf(pod: KubeObject): string | undefined {
  return (pod.spec as { nodeName?: string } | undefined)?.nodeName;
}
