import { checkRolloutStep } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';
import { ampMetrics, eksCluster } from './ports.js';

/** The CheckRollout state's Lambda: shared/calibration/workflow/checkRollout.ts with cluster, metrics. */
export const handler = calibrationLambda(checkRolloutStep, (config) => ({
  cluster: eksCluster(config),
  metricsSource: ampMetrics(),
}));
