/**
 * Alerts: the model of an alert and its notification, the decisions (first, repeat, resolved), the message on the
 * topic, and the cycle that claims, publishes and commits them.
 */
export type { AlertStateStore } from './alertState.js';
export { AlertExportInvalidError } from './errors.js';
export {
  formatAlertValue,
  formatDurationSeconds,
  goFormatFloat,
  humanize,
  humanizeDuration,
  humanizePercentage,
} from './format.js';
export { alertConditionLookbackSeconds, resolutionFor } from './heldFor.js';
export {
  ALERT_MESSAGE_ATTRIBUTES,
  ALERT_MESSAGE_VERSION,
  alertMessageSchema,
  type AlertMessage,
  type NotifyReason,
} from './message.js';
export type { AlertPublisher } from './publisher.js';
export {
  TARGET_CYCLE_STATUS,
  mergeAlertCycleSummaries,
  runAlertCycle,
  summarizeAlertCycle,
  type AlertCycleResult,
  type AlertCycleSummary,
  type TargetCycleResult,
} from './runAlertCycle.js';
export {
  ALERT_NAMES,
  type AlertName,
  type AlertSettings,
  type AlertStatus,
  type Severity,
  type TargetEvaluation,
  type ThresholdOrigin,
} from './types.js';
