/**
 * Calibration: the input, the measurement of a step, the saturation verdict, the analysis and its thresholds, the
 * report, the chart and the provenance.
 */
export {
  CalibrationDependencyUnavailableError,
  CalibrationError,
  CalibrationInputInvalidError,
  CalibrationJobFailedError,
  CalibrationRollbackConflictError,
  CalibrationRollbackNotFoundError,
  CalibrationTargetNotFoundError,
} from './errors.js';
export {
  calibrationInputSchema,
  calibrationRequestSchema,
  parseCalibrationInput,
  parseCalibrationRequest,
  requestMixOf,
  type CalibrationInput,
  type CalibrationPlan,
  type CalibrationRequest,
} from './input.js';
export {
  BATCH_BOUNDS,
  batchWorstCaseDuration,
  isBatchInput,
  parseCalibrationBatchInput,
  targetIdentity,
  type CalibrationBatchInput,
} from './batchInput.js';
export { gpuCount, podTemplateHash, vllmContainer, type TemplateContainer } from './provenance.js';
export { argsOf, maxNumSeqsOf, parseVllmArgs } from './engineArgs.js';
export { renderSummaryText } from './report.js';
export { niceScale, renderChartSvg } from './chart.js';
export { fmt, pct } from './format.js';
export { calibrationTarget, stepQueries, type StepQueries } from './stepQueries.js';
export { measuredDeployment, shadowDeploymentName } from './measuredDeployment.js';
export { STRATEGY_NAMES, type StrategyName } from './strategyNames.js';
export type { CalibrationReport, StepEndingKind, StepMeasurement, ThresholdChange, Thresholds } from './types.js';
export { evidenceHeld } from './evidence.js';
export { SATURATION_RULES } from './rules.js';
