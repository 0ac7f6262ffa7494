/**
 * The product's Kubernetes manifests: vLLM Deployment, Service and ServiceMonitor, the k6 Jobs and script, the
 * control-plane RBAC.
 */
export {
  CALIBRATION_CLUSTER_RULES,
  CALIBRATION_NAMESPACED_RULES,
  CONTROL_PLANE_RULES,
  controlPlaneRbac,
  type ControlPlaneRbacInputSpec,
  type ControlPlaneRule,
  DEFAULT_RBAC_NAMESPACES,
  RBAC_GROUPS,
  READ_ONLY_RULES,
} from './controlPlaneRbac.js';
export { K6_RESOURCE_DEFAULTS, k6PodSettingsSchema, type K6PodSettings, type K6PodSettingsSpec } from './k6Job.js';
export { k6LoadJob, type K6LoadJobInputSpec } from './k6LoadJob.js';
export { k6ScriptConfigMap } from './k6ScriptConfigMap.js';
export { k6WarmupJob } from './k6WarmupJob.js';
export { DO_NOT_DISRUPT, MANAGED_BY, vllmObjectLabels } from './labels.js';
export { parseInput } from './parseInput.js';
export { vllmDeployment } from './vllmDeployment.js';
export {
  VLLM_DEFAULTS,
  defaultServiceName,
  dns1123Label,
  integer,
  requiredString,
  type VllmDeploymentInputSpec,
} from './vllmInput.js';
export { vllmService, vllmServiceUrl } from './vllmService.js';
export { VLLM_SCRAPE, vllmServiceMonitor } from './vllmServiceMonitor.js';
export { WARMUP_ANNOTATION, WARMUP_DONE_FILE, WARMUP_REQUEST } from './warmup.js';
