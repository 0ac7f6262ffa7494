/** Labels and annotations every generator shares, so selectors, cleanup and preflight checks agree on them. */

export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'vllm-eks-pilot' } as const;

/**
 * Karpenter's well-known Pod annotation: blocks consolidation of the node the Pod runs on, so a replica is not
 * interrupted while it serves (or a k6 Pod while it measures). Not `karpenter.sh/do-not-evict`, the pre-v1 name.
 */
export const DO_NOT_DISRUPT = { 'karpenter.sh/do-not-disrupt': 'true' } as const;

/**
 * The selector of a vLLM Deployment's Pods: `app: <name>`, as in the EKS guide (`kubectl get pods -l
 * app=vllm-inference-app`). A Deployment's selector cannot change after creation, so applying onto the guide's own
 * Deployment only works with the same selector.
 */
export function vllmSelectorLabels(name: string): Record<string, string> {
  return { app: name };
}

/** The labels of a vLLM replica's Pods (the selector plus the recommended `app.kubernetes.io/*` labels). */
export function vllmPodLabels(name: string): Record<string, string> {
  return { ...vllmSelectorLabels(name), 'app.kubernetes.io/name': 'vllm', 'app.kubernetes.io/instance': name };
}

/** The labels of the objects around one vLLM deployment (Deployment, Service, ServiceMonitor, ScaledObject). */
export function vllmObjectLabels(name: string): Record<string, string> {
  return { ...vllmPodLabels(name), ...MANAGED_BY };
}
