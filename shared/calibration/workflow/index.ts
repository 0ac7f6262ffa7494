/**
 * The calibration state machine's steps: one file per state, each a function of its ports and its state slice, listed
 * in CALIBRATION_STEPS.
 */
export { analyzeStep } from './analyze.js';
export { applyThresholdsStep } from './applyThresholds.js';
export { awaitStepDataStep } from './awaitStepData.js';
export { checkJobStep } from './checkJob.js';
export { checkRolloutStep } from './checkRollout.js';
export { cleanupStep, releaseTarget, type CleanupResult } from './cleanup.js';
export {
  cleanupEndedExecution,
  cleanupEndedExecutionFunction,
  ENDED_WITHOUT_CLEANUP,
  type EndedExecutionCleanup,
} from './cleanupEndedExecution.js';
export { parseLease, type CalibrationLease } from './calibrationLease.js';
export { deployStep } from './deploy.js';
export { dryRunStep } from './dryRun.js';
export { measureStepStep } from './measureStep.js';
export {
  CALIBRATION_ANNOTATIONS,
  childExecutionName,
  EXECUTION_LABEL,
  EXECUTION_TIMEOUT_SECONDS,
  executionNames,
} from './names.js';
export { SHADOW_LABEL } from './shadow.js';
export { causeMessage, executionFailure } from './outcome.js';
export { planNextStepStep } from './planNextStep.js';
export { defaultReportPrefix, type BasePorts, type CalibrationPorts, type CalibrationTarget } from './ports.js';
export { readinessGateStep } from './readinessGate.js';
export { rollback, rollbackFunction, type RollbackInput, type RollbackResult } from './rollback.js';
export { CALIBRATION_STEPS, type CalibrationStepName } from './registry.js';
export { startLoadStepStep } from './startLoadStep.js';
export { startWarmupStep } from './startWarmup.js';
export type { AnyCalibrationStep, CalibrationFunction, CalibrationStep } from './step.js';
export { REPORT_FILES, storeReportStep, type StoredReport } from './storeReport.js';
export {
  sweepLeases,
  sweepLeasesFunction,
  type ExecutionStatus,
  type ExecutionStatusPort,
  type SweepDecision,
  type SweepPorts,
  type SweepTarget,
} from './sweepLeases.js';
export { validateInputStep } from './validateInput.js';
export { validateTargetsStep, type BatchItem, type BatchPlan } from './validateTargets.js';
export { BATCH_REPORT_FILE, storeBatchReportStep, type StoredBatchReport } from './storeBatchReport.js';
export {
  buildBatchReport,
  childFailure,
  renderBatchSummary,
  type BatchItemResult,
  type BatchReport,
  type BatchStatus,
  type BatchTargetReport,
} from './batchReport.js';
export { watchLoadStepStep } from './watchLoadStep.js';
