import type { IClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import type { IClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import * as z from 'zod';
import type { KubeObject } from '../types.js';
import { MANAGED_BY } from './labels.js';
import { parseInput } from './parseInput.js';

/** One RBAC rule and the reason the product needs it. */
export interface ControlPlaneRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  why: string;
}

/**
 * Exactly what the control plane's Lambdas do in a cluster, and nothing more (no `*`, no secrets, no watch: the
 * jobs poll). `update` is the PUT of updateWithRetry; `patch` is apply's and patchMerge's merge patch.
 */
export const CONTROL_PLANE_RULES: readonly ControlPlaneRule[] = [
  {
    apiGroups: ['apps'],
    resources: ['deployments'],
    verbs: ['get', 'list', 'create', 'patch', 'update', 'delete'],
    why: 'calibration deploys the vLLM Deployment under test and changes its args; preflight reads probes, annotations and args',
  },
  {
    apiGroups: ['apps'],
    resources: ['deployments/scale'],
    verbs: ['get', 'patch'],
    why: 'calibration pins one replica while it measures, then restores the count',
  },
  {
    apiGroups: ['apps'],
    resources: ['daemonsets'],
    verbs: ['get', 'list'],
    why: 'preflight checks that the DCGM exporter DaemonSet runs',
  },
  {
    apiGroups: [''],
    resources: ['services', 'configmaps'],
    verbs: ['get', 'list', 'create', 'patch', 'delete'],
    why: 'the vLLM Service and the k6 script ConfigMap',
  },
  {
    apiGroups: [''],
    resources: ['pods'],
    verbs: ['get', 'list'],
    why: 'readiness of the replicas and of the k6 Pods',
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
    why:
      "preflight reads a replica's /metrics through the API server when AMP has none of its series (check 1); " +
      "calibration reads the running k6 Pod's live metrics (k6's REST API, /v1/metrics) to end a saturated step early",
  },
  {
    apiGroups: [''],
    resources: ['nodes'],
    verbs: ['get', 'list'],
    why: 'preflight checks that GPU nodes exist and are allocatable',
  },
  {
    apiGroups: ['batch'],
    resources: ['jobs'],
    verbs: ['get', 'list', 'create', 'delete'],
    why: 'the k6 warmup and load Jobs: started, followed, and deleted with their Pods after the run',
  },
  {
    apiGroups: ['monitoring.coreos.com'],
    resources: ['servicemonitors'],
    verbs: ['get', 'list', 'create', 'patch', 'delete'],
    why: 'the ServiceMonitor that makes Prometheus scrape vLLM (preflight check 2)',
  },
  {
    apiGroups: ['keda.sh'],
    resources: ['scaledobjects'],
    verbs: ['get', 'list', 'create', 'patch', 'update', 'delete'],
    why: 'calibration writes measured thresholds into the ScaledObject (keeping the old ones for rollback)',
  },
  {
    apiGroups: ['keda.sh'],
    resources: ['triggerauthentications'],
    verbs: ['get', 'list', 'create', 'patch', 'delete'],
    why: 'the TriggerAuthentication that lets KEDA sign its AMP queries',
  },
  {
    apiGroups: ['autoscaling'],
    resources: ['horizontalpodautoscalers'],
    verbs: ['get', 'list'],
    why: 'the HPA KEDA manages: preflight and the scale-out/in check read its status, never write it',
  },
  {
    apiGroups: ['apiextensions.k8s.io'],
    resources: ['customresourcedefinitions'],
    verbs: ['get'],
    why: 'preflight checks that KEDA and the Prometheus operator are installed',
  },
];

export const controlPlaneRbacInputSchema = z.strictObject({
  /** The ClusterRole and ClusterRoleBinding name. */
  name: z.string().min(1).default('vllm-eks-pilot'),
  /**
   * The Kubernetes group the control plane's IAM role is mapped to (the EKS access entry's `kubernetesGroups`).
   */
  group: z.string().min(1).default('vllm-eks-pilot'),
});

export type ControlPlaneRbacInputSpec = z.input<typeof controlPlaneRbacInputSchema>;

/** The ClusterRole with CONTROL_PLANE_RULES and the ClusterRoleBinding that grants it to the group. */
export function controlPlaneRbac(spec: ControlPlaneRbacInputSpec = {}): KubeObject[] {
  const input = parseInput(controlPlaneRbacInputSchema, spec, 'rbac');
  const labels = { ...MANAGED_BY };
  const role: IClusterRole = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: input.name, labels },
    rules: CONTROL_PLANE_RULES.map(({ apiGroups, resources, verbs }) => ({
      apiGroups: [...apiGroups],
      resources: [...resources],
      verbs: [...verbs],
    })),
  };
  const binding: IClusterRoleBinding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: input.name, labels },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: input.name },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: input.group }],
  };
  return [role as KubeObject, binding as unknown as KubeObject];
}
