/** Drift: whether a target still is what its last calibration measured (its Pod template, its live capacity). */
export {
  checkDrift,
  DEFAULT_DRIFT_WINDOW_SECONDS,
  type DriftCheck,
  type DriftCheckOptions,
  type DriftPorts,
} from './checkDrift.js';
export {
  assessDrift,
  DRIFT_DEFAULTS,
  DRIFT_KINDS,
  type DriftAssessment,
  type DriftFinding,
  type DriftKind,
  type DriftThresholds,
} from './detect.js';
export { DriftDeploymentNotFoundError } from './errors.js';
export { formatDriftCheck } from './format.js';
export { readLiveEvidence, type LiveEvidence } from './evidence.js';
export { actOnDrift, driftExecutionPrefix, driftMessage, type CalibrationExecutions, type DriftAction } from './act.js';
export {
  describeWindow,
  DRIFT_MODES,
  driftSettingsSchema,
  inMaintenanceWindow,
  parseDriftSettings,
  type DriftMode,
  type DriftSettings,
} from './settings.js';
export { SfnCalibrationExecutions } from './sfnExecutions.js';
