import { cleanupStep } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';
import { eksCluster, silencesOf } from './ports.js';

/** The Cleanup and CleanupAfterFailure state's Lambda: shared/calibration/workflow/cleanup.ts with cluster. */
export const handler = calibrationLambda(cleanupStep, (config) => ({
  cluster: eksCluster(config),
  ...silencesOf(config),
}));
