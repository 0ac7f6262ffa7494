/**
 * The alert rules (one file each, one registry), their inhibitions, their settings per target, and their evaluation
 * against AMP.
 */
export { MAX_INSTANCES_PER_RULE, evaluateTarget, failedEvaluation } from './evaluate.js';
export { ALERT_INHIBITIONS, equalOn, inhibitorOf, type AlertInhibition, type FiringAlert } from '../inhibitions.js';
export { ALERT_RULES, ruleByName, runbookUrl } from './registry.js';
export { withCalibratedThresholds, type CalibratedAlertThresholds } from './calibrated.js';
export { GENERIC_SCOPE, alertScopeForTarget } from './scope.js';
export {
  DEFAULT_ALERT_SETTINGS,
  DEFAULT_KEEP_FIRING_FOR_SECONDS,
  DEFAULT_REPEAT_INTERVAL_SECONDS,
  defaultKeepFiringFor,
  parseAlertSettings,
  parseAlertTargets,
  parseDurationSeconds,
  type AlertSettingsInput,
  type AlertTarget,
} from './settings.js';
export type { ExportableAlertRule } from './text.js';
