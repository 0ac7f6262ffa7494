import { deployStep } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';
import { eksCluster, ampMetrics, silencesOf } from './ports.js';

/** The Deploy state's Lambda: shared/calibration/workflow/deploy.ts with cluster, metrics (the target's own traffic). */
export const handler = calibrationLambda(deployStep, (config) => ({
  cluster: eksCluster(config),
  metricsSource: ampMetrics(),
  ...silencesOf(config),
}));
