import { KINDS, type Kind } from './types.js';

/** How a kind is served: its API group and version, plural resource name, scope, and subresources. */
export interface ResourceInfo {
  kind: Kind;
  /** '' for the core group. */
  group: string;
  version: string;
  /** Plural, lower case: the path segment (`deployments`). */
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames?: string[];
  /** Has a `/status` subresource: plain updates keep status, status updates keep everything else. */
  status: boolean;
  /** Has a `/scale` subresource. */
  scale?: boolean;
  verbs: string[];
}

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** The REST subset the twin serves, one entry per kind. */
export const RESOURCES: Readonly<Record<Kind, ResourceInfo>> = {
  Namespace: r(KINDS.Namespace, '', 'v1', 'namespaces', false, { shortNames: ['ns'], status: true }),
  Pod: r(KINDS.Pod, '', 'v1', 'pods', true, { shortNames: ['po'], status: true }),
  Service: r(KINDS.Service, '', 'v1', 'services', true, { shortNames: ['svc'], status: true }),
  ConfigMap: r(KINDS.ConfigMap, '', 'v1', 'configmaps', true, { shortNames: ['cm'] }),
  Event: r(KINDS.Event, '', 'v1', 'events', true, { shortNames: ['ev'] }),
  Node: r(KINDS.Node, '', 'v1', 'nodes', false, { shortNames: ['no'], status: true }),
  Deployment: r(KINDS.Deployment, 'apps', 'v1', 'deployments', true, {
    shortNames: ['deploy'],
    status: true,
    scale: true,
  }),
  ReplicaSet: r(KINDS.ReplicaSet, 'apps', 'v1', 'replicasets', true, { shortNames: ['rs'], status: true, scale: true }),
  DaemonSet: r(KINDS.DaemonSet, 'apps', 'v1', 'daemonsets', true, { shortNames: ['ds'], status: true }),
  Job: r(KINDS.Job, 'batch', 'v1', 'jobs', true, { status: true }),
  HorizontalPodAutoscaler: r(KINDS.HorizontalPodAutoscaler, 'autoscaling', 'v2', 'horizontalpodautoscalers', true, {
    shortNames: ['hpa'],
    status: true,
  }),
  ScaledObject: r(KINDS.ScaledObject, 'keda.sh', 'v1alpha1', 'scaledobjects', true, {
    shortNames: ['so'],
    status: true,
  }),
  TriggerAuthentication: r(KINDS.TriggerAuthentication, 'keda.sh', 'v1alpha1', 'triggerauthentications', true, {
    shortNames: ['ta', 'triggerauth'],
  }),
  ServiceMonitor: r(KINDS.ServiceMonitor, 'monitoring.coreos.com', 'v1', 'servicemonitors', true, {
    shortNames: ['smon'],
  }),
  CustomResourceDefinition: r(
    KINDS.CustomResourceDefinition,
    'apiextensions.k8s.io',
    'v1',
    'customresourcedefinitions',
    false,
    { shortNames: ['crd', 'crds'], status: true },
  ),
  ClusterRole: r(KINDS.ClusterRole, 'rbac.authorization.k8s.io', 'v1', 'clusterroles', false, {}),
  ClusterRoleBinding: r(KINDS.ClusterRoleBinding, 'rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', false, {}),
  Role: r(KINDS.Role, 'rbac.authorization.k8s.io', 'v1', 'roles', true, {}),
  RoleBinding: r(KINDS.RoleBinding, 'rbac.authorization.k8s.io', 'v1', 'rolebindings', true, {}),
};

/** Kinds served only while their CRD exists (KEDA may be "not installed" in a profile). */
export const CRD_KINDS: ReadonlySet<Kind> = new Set([
  KINDS.ScaledObject,
  KINDS.TriggerAuthentication,
  KINDS.ServiceMonitor,
]);

/** `apps/v1`, or `v1` for the core group. */
export function apiVersionOf(info: ResourceInfo): string {
  return info.group === '' ? info.version : `${info.group}/${info.version}`;
}

/** `deployments.apps`, or `pods` for the core group: how Kubernetes names a resource in messages. */
export function qualifiedResource(info: ResourceInfo): string {
  return info.group === '' ? info.plural : `${info.plural}.${info.group}`;
}

/** The resource info of a kind, or undefined for a kind the twin does not serve. */
export function resourceOfKind(kind: string): ResourceInfo | undefined {
  return (RESOURCES as Record<string, ResourceInfo | undefined>)[kind];
}

function r(
  kind: Kind,
  group: string,
  version: string,
  plural: string,
  namespaced: boolean,
  extra: { shortNames?: string[]; status?: boolean; scale?: boolean },
): ResourceInfo {
  return {
    kind,
    group,
    version,
    plural,
    singular: kind.toLowerCase(),
    namespaced,
    ...(extra.shortNames ? { shortNames: extra.shortNames } : {}),
    status: extra.status ?? false,
    ...(extra.scale ? { scale: true } : {}),
    verbs: ALL_VERBS,
  };
}
