import { analyzeStep } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';

/** The Analyze state's Lambda: shared/calibration/workflow/analyze.ts. */
export const handler = calibrationLambda(analyzeStep, () => ({}));
