/** Preflight: the model of a check and its report, the settings, and what the checks read about a target. */
export { PreflightSettingsInvalidError } from './errors.js';
export { formatPreflightReport } from './format.js';
export { DEFAULT_PREFLIGHT_SETTINGS, parsePreflightSettings } from './settings.js';
export {
  CHECK_IDS,
  CHECK_STATUSES,
  type CheckId,
  type CheckResult,
  type CheckStatus,
  type PreflightReport,
  type PreflightSettings,
  type PreflightTarget,
} from './types.js';
