import { deployStep } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';
import { eksCluster } from './ports.js';

/** The Deploy state's Lambda: shared/calibration/workflow/deploy.ts with cluster. */
export const handler = calibrationLambda(deployStep, (config) => ({ cluster: eksCluster(config) }));
