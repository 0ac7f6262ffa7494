/**
 * KEDA: ScaledObjects and their triggers, pausing autoscaling, the calibrated thresholds, and the ScaledObject and
 * TriggerAuthentication manifests.
 */
export { KEDA_KINDS, KEDA_PAUSED_REPLICAS_ANNOTATION } from './kinds.js';
export { pauseScaledObject, resumeScaledObject, type ScaledObjectResume } from './pause.js';
export {
  GUIDE_SCALING,
  SCALED_OBJECT_TRIGGERS,
  scaledObject,
  scaledObjectQueries,
  TRIGGER_METRIC_TYPES,
  type ScaledObjectInputSpec,
} from './scaledObjectManifest.js';
export {
  applyThresholdChange,
  formatKedaThresholds,
  liveThresholdValues,
  planThresholdChange,
  thresholdValuesDiff,
  writeThresholdValues,
  type ThresholdValues,
} from './thresholds.js';
export { ampTriggerAuthentication } from './triggerAuthenticationManifest.js';
export { findTriggers } from './triggers.js';
export { GITOPS_FILES, gitOpsFiles, type GitOpsFiles } from './gitops.js';
