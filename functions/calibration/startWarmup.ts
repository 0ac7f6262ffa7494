import { startWarmupStep } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';
import { eksCluster } from './ports.js';

/** The StartWarmup state's Lambda: shared/calibration/workflow/startWarmup.ts with cluster. */
export const handler = calibrationLambda(startWarmupStep, (config) => ({ cluster: eksCluster(config) }));
