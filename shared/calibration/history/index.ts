/** The calibration history: one record per calibration, in DynamoDB. */
export { DynamoDbHistoryStore } from './DynamoDbHistoryStore.js';
export { lastCalibratedAlertThresholds } from './calibratedAlerts.js';
export { historyTargetKey } from './historyTargetKey.js';
export { CALIBRATION_HISTORY_TABLE } from './table.js';
export type { CalibrationHistoryStore, HistoryRecord, RollbackRecord } from './types.js';
