/**
 * Kubernetes: the ClusterClient port, the kinds the product works with, and reading Deployments, Pods, Services and
 * Jobs.
 */
export {
  K6MetricsInvalidError,
  KubeClusterLookupError,
  KubeClusterNotFoundError,
  KubeConflictError,
  KubeError,
  KubeForbiddenError,
  KubeInvalidError,
  KubeManifestInputError,
  KubeNotFoundError,
  KubeUnauthorizedError,
  KubeUnavailableError,
} from './errors.js';
export { ensureJob, jobCompletionMs, jobPhase, jobPod } from './jobs.js';
export {
  K6_CUSTOM_METRICS,
  K6_ENV,
  K6_EXECUTORS,
  K6_IMAGE,
  K6_METRICS,
  K6_REST,
  K6_SUMMARY_MARKER,
  k6MetricsDocumentSchema,
  k6SummarySchema,
  parseK6Metrics,
  type K6LiveMetrics,
  type K6MetricsDocument,
  type K6Summary,
} from './k6.js';
export { KINDS } from './kinds.js';
export {
  PROPAGATION_POLICIES,
  type ApplyResult,
  type ClusterClient,
  type KubeObject,
  type LabelSelectorInput,
  type ListRef,
  type ObjectRef,
  type PodProxyRef,
} from './types.js';
export {
  monitorSelects,
  monitorWatchesNamespace,
  serviceMonitorsSelecting,
  type ServiceMonitorSpec,
} from './serviceMonitors.js';
export { updateWithRetry } from './updateWithRetry.js';
export {
  containerStartMs,
  deploymentPods,
  nodeNameOf,
  podTemplateLabels,
  rolloutStatus,
  selectorSelects,
  servicesSelecting,
  specReplicas,
} from './workload.js';
