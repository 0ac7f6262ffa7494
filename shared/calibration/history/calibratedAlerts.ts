import type { CalibratedAlertThresholds } from '../../alerts/rules/index.js';
import { historyTargetKey } from './historyTargetKey.js';
import type { CalibrationHistoryStore } from './types.js';

/** How many of a target's newest records are searched for derived alert thresholds. */
const SEARCH_DEPTH = 5;

/**
 * The alert thresholds the target's newest calibration derived, or undefined when none did (no calibration yet, or
 * only ones from before alert thresholds were derived). A rollback record holds the report whose thresholds it
 * restored, so after a rollback the alerts follow the restored calibration too; the calibration is named by that
 * report's provenance.
 */
export async function lastCalibratedAlertThresholds(
  history: CalibrationHistoryStore,
  target: { cluster: string; namespace: string; deployment: string },
): Promise<CalibratedAlertThresholds | undefined> {
  const records = await history.list(historyTargetKey(target), SEARCH_DEPTH);
  const record = records.find((r) => r.report.analysis.alerts !== undefined);
  const alerts = record?.report.analysis.alerts;
  if (record === undefined || alerts === undefined || alerts === null) return undefined;
  const { provenance } = record.report;
  return { execution: provenance.executionName, finishedAt: provenance.finishedAt, thresholds: { ...alerts } };
}
