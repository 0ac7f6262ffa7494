import type { IClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import type { IClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import type { IRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import type { IRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import * as z from 'zod';
import type { KubeObject } from '../types.js';
import { MANAGED_BY } from './labels.js';
import { parseInput } from './parseInput.js';
import { dns1123Label } from './vllmInput.js';

/** One RBAC rule and the reason the product needs it. */
export interface ControlPlaneRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  why: string;
}

/**
 * What the read-only functions read, cluster-wide (targets live in any namespace; the DCGM DaemonSet, the
 * ServiceMonitors and the dashboard ConfigMaps in namespaces of their own): the preflight checks
 * (shared/preflight) and the drift detector (shared/drift). The metrics collector reads AMP only and needs none.
 * Only get and list: the functions poll, never watch; no Secrets.
 */
export const READ_ONLY_RULES: readonly ControlPlaneRule[] = [
  {
    apiGroups: ['apps'],
    resources: ['deployments'],
    verbs: ['get'],
    why: "preflight reads the target's probes, annotations and vLLM args; the drift detector its Pod template",
  },
  {
    apiGroups: ['apps'],
    resources: ['daemonsets'],
    verbs: ['list'],
    why: 'preflight finds the DCGM exporter DaemonSet in any namespace (check 3)',
  },
  {
    apiGroups: [''],
    resources: ['pods'],
    verbs: ['list'],
    why: "preflight finds the target's Ready replicas (checks 1, 9)",
  },
  {
    apiGroups: [''],
    resources: ['pods/proxy'],
    verbs: ['get'],
    why: "preflight reads a replica's /metrics through the API server when AMP has none of its series (check 1)",
  },
  {
    apiGroups: [''],
    resources: ['services'],
    verbs: ['get', 'list'],
    why: 'preflight finds the Service in front of the target, by name or by selector (check 2)',
  },
  {
    apiGroups: [''],
    resources: ['configmaps'],
    verbs: ['list'],
    why: "preflight lists the ConfigMaps with Grafana's dashboard label (check 4; the label is a server-side filter)",
  },
  {
    apiGroups: ['monitoring.coreos.com'],
    resources: ['servicemonitors'],
    verbs: ['list'],
    why: 'preflight finds the ServiceMonitor that scrapes the target, in any namespace (check 2)',
  },
  {
    apiGroups: ['keda.sh'],
    resources: ['scaledobjects'],
    verbs: ['list'],
    why: "preflight finds the ScaledObject of the target's Deployment (check 7)",
  },
  {
    apiGroups: ['apiextensions.k8s.io'],
    resources: ['customresourcedefinitions'],
    verbs: ['get'],
    why: 'preflight checks that KEDA and the Prometheus operator are installed (checks 2, 7)',
  },
];

/**
 * What calibration writes, in each namespace of its targets only (a Role per namespace): the Deployment under test
 * or its shadow copy, the Service and ServiceMonitor in front of it, the k6 script and Jobs, the ScaledObject's
 * thresholds. `apply` is a GET, then a create or a JSON merge patch; `update` is updateWithRetry's PUT. No Secrets.
 */
export const CALIBRATION_NAMESPACED_RULES: readonly ControlPlaneRule[] = [
  {
    apiGroups: ['apps'],
    resources: ['deployments'],
    verbs: ['get', 'list', 'create', 'patch', 'delete'],
    why: 'deploys the vLLM Deployment under test (or its shadow copy, deleted after the run) and marks it with the run',
  },
  {
    apiGroups: ['apps'],
    resources: ['deployments/scale'],
    verbs: ['patch'],
    why: 'pins the replicas under test while it measures, then restores the count',
  },
  {
    apiGroups: [''],
    resources: ['services', 'configmaps'],
    verbs: ['get', 'list', 'create', 'patch', 'delete'],
    why: "the vLLM Service (and the copy's), and the k6 script ConfigMap, deleted after the run",
  },
  {
    apiGroups: [''],
    resources: ['pods'],
    verbs: ['list'],
    why: 'readiness of the replicas and finding the k6 Pods',
  },
  {
    apiGroups: [''],
    resources: ['pods/log'],
    verbs: ['get'],
    why: 'the k6 summary line is read from the k6 Pod log',
  },
  {
    apiGroups: [''],
    resources: ['pods/proxy'],
    verbs: ['get'],
    why: "reads the running k6 Pod's live metrics (k6's REST API, /v1/metrics) to end a saturated step early",
  },
  {
    apiGroups: ['batch'],
    resources: ['jobs'],
    verbs: ['get', 'list', 'create', 'patch', 'delete'],
    why: 'the k6 warmup and load Jobs: started, followed, deleted with their Pods after the run (patch: apply after a lost create race)',
  },
  {
    apiGroups: ['monitoring.coreos.com'],
    resources: ['servicemonitors'],
    verbs: ['get', 'list', 'create', 'patch', 'delete'],
    why: "the ServiceMonitor that makes Prometheus scrape vLLM (deploy mode apply) and the shadow copy's",
  },
  {
    apiGroups: ['keda.sh'],
    resources: ['scaledobjects'],
    verbs: ['get', 'patch', 'update'],
    why: 'pauses KEDA during the run and writes the measured thresholds (keeping the old ones for rollback)',
  },
];

/** What calibration reads outside its namespaces: read-only, cluster-scoped or all-namespaces reads. */
export const CALIBRATION_CLUSTER_RULES: readonly ControlPlaneRule[] = [
  {
    apiGroups: [''],
    resources: ['nodes'],
    verbs: ['get'],
    why: "the report's provenance names the GPU node the replica ran on (its instance type and GPU)",
  },
  {
    apiGroups: ['monitoring.coreos.com'],
    resources: ['servicemonitors'],
    verbs: ['list'],
    why: 'finds the ServiceMonitors that scrape the target, which may live in a monitoring namespace',
  },
];

/** Every rule set, by the role that carries it (for docs and tests). */
export const CONTROL_PLANE_RULES = {
  read: READ_ONLY_RULES,
  calibration: CALIBRATION_NAMESPACED_RULES,
  calibrationCluster: CALIBRATION_CLUSTER_RULES,
} as const;

/**
 * The Kubernetes groups the EKS access entries map the functions' IAM roles to (`--kubernetes-groups`): preflight and
 * the drift detector read; the calibration functions write in their targets' namespaces.
 */
export const RBAC_GROUPS = {
  read: 'vllm-eks-pilot-read',
  calibration: 'vllm-eks-pilot-calibration',
} as const;

/** The namespaces of the generated infra file, when none are given: the guide's target runs in `default`. */
export const DEFAULT_RBAC_NAMESPACES: readonly string[] = ['default'];

export const controlPlaneRbacInputSchema = z.strictObject({
  /** The prefix of every role and binding name. */
  name: dns1123Label('the prefix of the role and binding names').default('vllm-eks-pilot'),
  /** The namespaces the calibration targets: one Role and RoleBinding in each. `a,b` or a list. */
  namespaces: z
    .preprocess(
      (value) => (typeof value === 'string' ? value.split(',').map((part) => part.trim()) : value),
      z
        .array(dns1123Label('a namespace of a calibration target'), { error: 'must be a list of namespaces (a,b)' })
        .min(1, { error: 'must name at least one namespace' }),
    )
    .default([...DEFAULT_RBAC_NAMESPACES]),
  /** The group of the read-only functions' access entries. */
  readGroup: z.string().min(1).default(RBAC_GROUPS.read),
  /** The group of the calibration functions' access entries. */
  calibrationGroup: z.string().min(1).default(RBAC_GROUPS.calibration),
});

export type ControlPlaneRbacInputSpec = z.input<typeof controlPlaneRbacInputSchema>;

const RBAC_API = 'rbac.authorization.k8s.io';

function rulesOf(rules: readonly ControlPlaneRule[]) {
  return rules.map(({ apiGroups, resources, verbs }) => ({
    apiGroups: [...apiGroups],
    resources: [...resources],
    verbs: [...verbs],
  }));
}

/**
 * The control plane's RBAC, one grant per kind of function: the read-only ClusterRole bound to `readGroup`; for
 * calibration a read-only ClusterRole (CALIBRATION_CLUSTER_RULES) bound to `calibrationGroup`, and a Role and
 * RoleBinding with CALIBRATION_NAMESPACED_RULES in each of `namespaces`, so it can write nowhere else.
 */
export function controlPlaneRbac(spec: ControlPlaneRbacInputSpec = {}): KubeObject[] {
  const input = parseInput(controlPlaneRbacInputSchema, spec, 'rbac');
  const labels = { ...MANAGED_BY };
  const group = (name: string) => [{ apiGroup: RBAC_API, kind: 'Group', name }];
  const clusterGrant = (name: string, rules: readonly ControlPlaneRule[], subject: string): KubeObject[] => {
    const role: IClusterRole = {
      apiVersion: `${RBAC_API}/v1`,
      kind: 'ClusterRole',
      metadata: { name, labels },
      rules: rulesOf(rules),
    };
    const binding: IClusterRoleBinding = {
      apiVersion: `${RBAC_API}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name, labels },
      roleRef: { apiGroup: RBAC_API, kind: 'ClusterRole', name },
      subjects: group(subject),
    };
    return [role as KubeObject, binding as unknown as KubeObject];
  };
  const calibration = `${input.name}-calibration`;
  const namespaced = [...new Set(input.namespaces)].flatMap((namespace): KubeObject[] => {
    const role: IRole = {
      apiVersion: `${RBAC_API}/v1`,
      kind: 'Role',
      metadata: { name: calibration, namespace, labels },
      rules: rulesOf(CALIBRATION_NAMESPACED_RULES),
    };
    const binding: IRoleBinding = {
      apiVersion: `${RBAC_API}/v1`,
      kind: 'RoleBinding',
      metadata: { name: calibration, namespace, labels },
      roleRef: { apiGroup: RBAC_API, kind: 'Role', name: calibration },
      subjects: group(input.calibrationGroup),
    };
    return [role as KubeObject, binding as unknown as KubeObject];
  });
  return [
    ...clusterGrant(`${input.name}-read`, READ_ONLY_RULES, input.readGroup),
    ...clusterGrant(`${calibration}-cluster`, CALIBRATION_CLUSTER_RULES, input.calibrationGroup),
    ...namespaced,
  ];
}
