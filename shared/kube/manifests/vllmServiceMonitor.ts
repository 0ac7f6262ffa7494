import type { IServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import type { KubeObject } from '../types.js';
import { vllmObjectLabels, vllmSelectorLabels } from './labels.js';
import { VLLM_CONTAINER } from './vllmDeployment.js';
import { parseVllmDeploymentInput, type VllmDeploymentInputSpec } from './vllmInput.js';

/** Scrape settings of the EKS guide's ServiceMonitor (kube-prometheus-stack scrapes every 30 s). */
export const VLLM_SCRAPE = { path: '/metrics', interval: '30s' } as const;

/**
 * The ServiceMonitor that makes Prometheus scrape the vLLM Service's `http` port (named like the Deployment, as in
 * the guide). Without it there are no vLLM metrics, so no calibration, alerts or KEDA scaling.
 */
export function vllmServiceMonitor(spec: VllmDeploymentInputSpec): KubeObject {
  const input = parseVllmDeploymentInput(spec);
  const monitor: IServiceMonitor = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: {
      name: input.name,
      namespace: input.namespace,
      labels: { ...input.monitorLabels, ...vllmObjectLabels(input.name) },
    },
    spec: {
      selector: { matchLabels: vllmSelectorLabels(input.name) },
      namespaceSelector: { matchNames: [input.namespace] },
      endpoints: [{ port: VLLM_CONTAINER.portName, path: VLLM_SCRAPE.path, interval: VLLM_SCRAPE.interval }],
    },
  };
  return monitor as KubeObject;
}
