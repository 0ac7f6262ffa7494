import type { CalibrationReport, ThresholdChange, Thresholds } from '../types.js';

/**
 * The calibration history: one record per finished calibration of a deployment, newest first. A later run reads the
 * latest record to compare or to roll back; the record carries what a rollback needs.
 */

/** One finished calibration. */
export interface HistoryRecord {
  /** `<cluster>/<namespace>/<deployment>` (historyTargetKey). */
  targetKey: string;
  /** When the calibration finished: ISO 8601 in UTC with milliseconds, as `Date.prototype.toISOString` writes it. */
  finishedAt: string;
  /** The Step Functions execution name (unique per run). */
  executionName: string;
  report: CalibrationReport;
  /** The thresholds the calibration derived; null when it could derive none. */
  thresholds: Thresholds | null;
  /** The ScaledObject's values before the change (for rollback); null when no change was planned. */
  previousThresholds: ThresholdChange['previous'] | null;
  /** The Deployment's Pod template hash the calibration measured (Provenance.podTemplateHash). */
  podTemplateHash: string;
  /**
   * Set on a rollback's record (`vllm-pilot calibrate rollback`): what it undid and restored. Its `report` is the
   * report of the calibration whose thresholds it restored, or of the one it undid when it restored the values from
   * before that one; `thresholds` is null then (the live values are not a calibration's).
   */
  rollback?: RollbackRecord;
}

/** What a rollback changed in the ScaledObject. */
export interface RollbackRecord {
  /** The execution whose written thresholds were replaced. */
  undid: string;
  /** The execution whose thresholds were restored; null: the values from before `undid` wrote its own. */
  restoredFrom: string | null;
  /** The ScaledObject's values before the rollback (what `undid` wrote) and after it (null: the field removed). */
  before: ThresholdChange['previous'];
  after: ThresholdChange['previous'];
  diff: string;
}

/** The history store port; adapters: DynamoDbHistoryStore (AWS and the twin's dynalite). */
export interface CalibrationHistoryStore {
  /** Writes the record once: putting the same record again (a retried task) succeeds without a second write. */
  put(record: HistoryRecord): Promise<void>;
  /** The newest record of the target, or undefined when it has none. */
  latest(targetKey: string): Promise<HistoryRecord | undefined>;
  /** The target's records, newest first, at most `limit` (default HISTORY_LIST_DEFAULT_LIMIT). */
  list(targetKey: string, limit?: number): Promise<HistoryRecord[]>;
}

export const HISTORY_LIST_DEFAULT_LIMIT = 20;
export const HISTORY_LIST_MAX_LIMIT = 1000;
