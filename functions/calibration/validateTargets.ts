import { validateTargetsStep } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';

/** The ValidateTargets state's Lambda (many targets): shared/calibration/workflow/validateTargets.ts. */
export const handler = calibrationLambda(validateTargetsStep, () => ({}));
