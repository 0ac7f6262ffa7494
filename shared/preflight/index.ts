/** Preflight: the model of a check and its report, the settings, what the checks read, and the summary published. */
export { PreflightSettingsInvalidError } from './errors.js';
export { formatPreflightReport } from './format.js';
export {
  preflightNotification,
  worstStatus,
  type PreflightNotification,
  type PreflightSummary,
} from './notification.js';
export { DEFAULT_PREFLIGHT_SETTINGS, parsePreflightSettings } from './settings.js';
export {
  ALERTING_ENGINES,
  CHECK_IDS,
  CHECK_STATUSES,
  type AlertingEngine,
  type AmpRuleGroupsSource,
  type CheckId,
  type CheckResult,
  type CheckStatus,
  type EvaluatorHeartbeatSource,
  type PreflightReport,
  type PreflightSettings,
  type PreflightTarget,
} from './types.js';
// Drift detection compares a calibration with the live Pod template the same way check 8 does.
export { matchCalibration, type CalibrationMatch } from './calibrationMatch.js';
export { podTemplateOf } from './workload.js';
