import { validateInputStep } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';

/** The ValidateInput state's Lambda: shared/calibration/workflow/validateInput.ts. */
export const handler = calibrationLambda(validateInputStep, () => ({}));
