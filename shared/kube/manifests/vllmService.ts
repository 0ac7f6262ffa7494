import type { IService } from 'kubernetes-models/v1/Service';
import type { KubeObject } from '../types.js';
import { vllmObjectLabels, vllmSelectorLabels } from './labels.js';
import { VLLM_CONTAINER } from './vllmDeployment.js';
import {
  defaultServiceName,
  parseVllmDeploymentInput,
  VLLM_DEFAULTS,
  type VllmDeploymentInputSpec,
} from './vllmInput.js';

/** The ClusterIP Service in front of the vLLM Pods: port `http` (8000 by default) to the container's `http` port. */
export function vllmService(spec: VllmDeploymentInputSpec): KubeObject {
  const input = parseVllmDeploymentInput(spec);
  const service: IService = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: input.serviceName, namespace: input.namespace, labels: vllmObjectLabels(input.name) },
    spec: {
      type: 'ClusterIP',
      selector: vllmSelectorLabels(input.name),
      ports: [
        { name: VLLM_CONTAINER.portName, port: input.port, targetPort: VLLM_CONTAINER.portName, protocol: 'TCP' },
      ],
    },
  };
  return service as KubeObject;
}

/**
 * The in-cluster URL of the Service, as the k6 Jobs reach it: `http://<service>.<namespace>.svc:<port>`. Takes only
 * the naming fields of the vLLM input (the model is not needed to name the Service).
 */
export function vllmServiceUrl(
  spec: Pick<VllmDeploymentInputSpec, 'name' | 'namespace' | 'port' | 'serviceName'> = {},
): string {
  const name = spec.name ?? VLLM_DEFAULTS.name;
  const service = spec.serviceName ?? defaultServiceName(name);
  return `http://${service}.${spec.namespace ?? VLLM_DEFAULTS.namespace}.svc:${spec.port ?? VLLM_DEFAULTS.port}`;
}
