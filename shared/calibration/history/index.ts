/** The calibration history: one record per calibration, in DynamoDB. */
export { DynamoDbHistoryStore } from './DynamoDbHistoryStore.js';
export { lastCalibratedAlertThresholds } from './calibratedAlerts.js';
export { historyTargetKey } from './historyTargetKey.js';
export { CALIBRATION_HISTORY_TABLE } from './table.js';
export {
  HISTORY_LIST_DEFAULT_LIMIT,
  HISTORY_LIST_MAX_LIMIT,
  type CalibrationHistoryStore,
  type HistoryRecord,
  type RollbackRecord,
} from './types.js';
