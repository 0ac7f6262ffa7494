/**
 * The kinds the product works with: their REST resource name (plural) and scope. Knowing them avoids one discovery
 * round trip per API group (cold Lambdas) and gives error messages kubectl's names (`deployments.apps`). Kinds not
 * listed are looked up through API discovery.
 */
import { KubeInvalidArgumentError } from './errors.js';
import type { LabelSelectorInput, ListRef, ObjectRef } from './types.js';

export interface KnownResource {
  /** REST resource name (`deployments`). */
  plural: string;
  namespaced: boolean;
}

/** Keyed by `<group>/<Kind>` (group `` for the core API); versions do not change a kind's plural or scope. */
const KNOWN: Readonly<Record<string, KnownResource>> = {
  '/Namespace': { plural: 'namespaces', namespaced: false },
  '/Node': { plural: 'nodes', namespaced: false },
  '/Pod': { plural: 'pods', namespaced: true },
  '/Service': { plural: 'services', namespaced: true },
  '/ConfigMap': { plural: 'configmaps', namespaced: true },
  '/Secret': { plural: 'secrets', namespaced: true },
  '/ServiceAccount': { plural: 'serviceaccounts', namespaced: true },
  '/Event': { plural: 'events', namespaced: true },
  'apps/Deployment': { plural: 'deployments', namespaced: true },
  'apps/ReplicaSet': { plural: 'replicasets', namespaced: true },
  'apps/DaemonSet': { plural: 'daemonsets', namespaced: true },
  'apps/StatefulSet': { plural: 'statefulsets', namespaced: true },
  'batch/Job': { plural: 'jobs', namespaced: true },
  'autoscaling/HorizontalPodAutoscaler': { plural: 'horizontalpodautoscalers', namespaced: true },
  'keda.sh/ScaledObject': { plural: 'scaledobjects', namespaced: true },
  'keda.sh/TriggerAuthentication': { plural: 'triggerauthentications', namespaced: true },
  'keda.sh/ClusterTriggerAuthentication': { plural: 'clustertriggerauthentications', namespaced: false },
  'monitoring.coreos.com/ServiceMonitor': { plural: 'servicemonitors', namespaced: true },
  'monitoring.coreos.com/PodMonitor': { plural: 'podmonitors', namespaced: true },
  'monitoring.coreos.com/PrometheusRule': { plural: 'prometheusrules', namespaced: true },
  'rbac.authorization.k8s.io/ClusterRole': { plural: 'clusterroles', namespaced: false },
  'rbac.authorization.k8s.io/ClusterRoleBinding': { plural: 'clusterrolebindings', namespaced: false },
  'rbac.authorization.k8s.io/Role': { plural: 'roles', namespaced: true },
  'rbac.authorization.k8s.io/RoleBinding': { plural: 'rolebindings', namespaced: true },
  'apiextensions.k8s.io/CustomResourceDefinition': { plural: 'customresourcedefinitions', namespaced: false },
  'karpenter.sh/NodePool': { plural: 'nodepools', namespaced: false },
};

/** The API group of an apiVersion: `apps/v1` → `apps`, `v1` → `` (core). */
export function apiGroup(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

/** The plural and scope of a kind the product knows, or `undefined`. */
export function knownResource(apiVersion: string, kind: string): KnownResource | undefined {
  return KNOWN[`${apiGroup(apiVersion)}/${kind}`];
}

/**
 * How kubectl names an object in messages: `deployments.apps default/vllm-app`, `pods default/p`,
 * `clusterroles.rbac.authorization.k8s.io vllm-eks-pilot`; a collection has no name.
 */
export function describeRef(ref: Partial<ObjectRef> | ListRef): string {
  const apiVersion = ref.apiVersion ?? 'v1';
  const kind = ref.kind ?? 'unknown';
  const group = apiGroup(apiVersion);
  const plural = knownResource(apiVersion, kind)?.plural ?? `${kind.toLowerCase()}s`;
  const resource = group === '' ? plural : `${plural}.${group}`;
  const name = 'name' in ref && typeof ref.name === 'string' ? ref.name : undefined;
  const where = [ref.namespace, name].filter((part) => part !== undefined && part !== '').join('/');
  return where === '' ? resource : `${resource} ${where}`;
}

/** A label key: optional DNS-subdomain prefix and `/`, then a name of at most 63 characters. */
const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
/** A label value: empty, or at most 63 alphanumerics, `-`, `_`, `.`, starting and ending alphanumeric. */
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/**
 * Renders an equality selector as the `labelSelector` query text (`a=x,b=y`, keys sorted). Text is passed through:
 * it may use every operator the API server knows (`!=`, `in (...)`, `!key`).
 */
export function formatLabelSelector(selector: LabelSelectorInput | undefined): string | undefined {
  if (selector === undefined) return undefined;
  if (typeof selector === 'string') return selector === '' ? undefined : selector;
  const keys = Object.keys(selector).sort();
  if (keys.length === 0) return undefined;
  return keys
    .map((key) => {
      const value = selector[key] ?? '';
      if (!LABEL_KEY.test(key))
        throw new KubeInvalidArgumentError(
          `labelSelector key ${JSON.stringify(key)}`,
          'is not a valid label key',
          'an optional DNS prefix and "/", then 1-63 alphanumerics, "-", "_" or "."',
        );
      if (!LABEL_VALUE.test(value))
        throw new KubeInvalidArgumentError(
          `labelSelector[${JSON.stringify(key)}]`,
          `${JSON.stringify(value)} is not a valid label value`,
          'up to 63 alphanumerics, "-", "_" or ".", starting and ending with an alphanumeric',
        );
      return `${key}=${value}`;
    })
    .join(',');
}
