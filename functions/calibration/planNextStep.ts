import { planNextStepStep } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';

/** The PlanNextStep state's Lambda: shared/calibration/workflow/planNextStep.ts. */
export const handler = calibrationLambda(planNextStepStep, () => ({}));
