/**
 * The calibration state machine's steps: one file per state, each a function of its ports and its state slice, listed
 * in CALIBRATION_STEPS.
 */
export { analyzeStep } from './analyze.js';
export { applyThresholdsStep } from './applyThresholds.js';
export { awaitStepDataStep } from './awaitStepData.js';
export { checkJobStep } from './checkJob.js';
export { checkRolloutStep } from './checkRollout.js';
export { cleanupStep } from './cleanup.js';
export { deployStep } from './deploy.js';
export { dryRunStep } from './dryRun.js';
export { measureStepStep } from './measureStep.js';
export { CALIBRATION_ANNOTATIONS, EXECUTION_LABEL, executionNames } from './names.js';
export { executionFailure } from './outcome.js';
export { planNextStepStep } from './planNextStep.js';
export type { BasePorts, CalibrationPorts, CalibrationTarget } from './ports.js';
export { readinessGateStep } from './readinessGate.js';
export { CALIBRATION_STEPS, type CalibrationStepName } from './registry.js';
export { startLoadStepStep } from './startLoadStep.js';
export { startWarmupStep } from './startWarmup.js';
export type { AnyCalibrationStep, CalibrationStep } from './step.js';
export { storeReportStep, type StoredReport } from './storeReport.js';
export { validateInputStep } from './validateInput.js';
export { watchLoadStepStep } from './watchLoadStep.js';
