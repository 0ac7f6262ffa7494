import { checkJobStep } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';
import { eksCluster } from './ports.js';

/** The CheckWarmup and CheckLoadJob state's Lambda: shared/calibration/workflow/checkJob.ts with cluster. */
export const handler = calibrationLambda(checkJobStep, (config) => ({ cluster: eksCluster(config) }));
