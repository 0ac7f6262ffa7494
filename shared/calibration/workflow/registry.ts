import { analyzeStep } from './analyze.js';
import { awaitStepDataStep } from './awaitStepData.js';
import { applyThresholdsStep } from './applyThresholds.js';
import { checkJobStep } from './checkJob.js';
import { checkRolloutStep } from './checkRollout.js';
import { cleanupStep } from './cleanup.js';
import { deployStep } from './deploy.js';
import { dryRunStep } from './dryRun.js';
import { measureStepStep } from './measureStep.js';
import { planNextStepStep } from './planNextStep.js';
import { readinessGateStep } from './readinessGate.js';
import { startLoadStepStep } from './startLoadStep.js';
import { startWarmupStep } from './startWarmup.js';
import { storeBatchReportStep } from './storeBatchReport.js';
import { storeReportStep } from './storeReport.js';
import { validateInputStep } from './validateInput.js';
import { validateTargetsStep } from './validateTargets.js';
import { watchLoadStepStep } from './watchLoadStep.js';

/**
 * Every step of the calibration state machine, by function name, in the order the state machine first uses them
 * (CheckJob serves CheckWarmup and CheckLoadJob; Cleanup both cleanups). The stack makes one Lambda of each
 * (functions/calibration/<name>.ts), and the local runner binds the same steps to the twin's ports.
 */
export const CALIBRATION_STEPS = {
  validateInput: validateInputStep,
  deploy: deployStep,
  checkRollout: checkRolloutStep,
  startWarmup: startWarmupStep,
  checkJob: checkJobStep,
  readinessGate: readinessGateStep,
  planNextStep: planNextStepStep,
  startLoadStep: startLoadStepStep,
  watchLoadStep: watchLoadStepStep,
  awaitStepData: awaitStepDataStep,
  measureStep: measureStepStep,
  analyze: analyzeStep,
  applyThresholds: applyThresholdsStep,
  dryRun: dryRunStep,
  storeReport: storeReportStep,
  cleanup: cleanupStep,
  // A many-target execution: its list checked and laid out, then the combined report once every child has ended.
  validateTargets: validateTargetsStep,
  storeBatchReport: storeBatchReportStep,
} as const;

export type CalibrationStepName = keyof typeof CALIBRATION_STEPS;

export const CALIBRATION_STEP_NAMES = Object.keys(CALIBRATION_STEPS) as CalibrationStepName[];
