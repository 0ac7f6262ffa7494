import { startLoadStepStep } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';
import { eksCluster } from './ports.js';

/** The StartLoadStep state's Lambda: shared/calibration/workflow/startLoadStep.ts with cluster. */
export const handler = calibrationLambda(startLoadStepStep, (config) => ({ cluster: eksCluster(config) }));
