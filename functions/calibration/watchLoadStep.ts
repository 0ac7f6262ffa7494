import { watchLoadStepStep } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';
import { eksCluster, ampMetrics } from './ports.js';

/** The WatchLoadStep state's Lambda: shared/calibration/workflow/watchLoadStep.ts with cluster, metrics. */
export const handler = calibrationLambda(watchLoadStepStep, (config) => ({
  cluster: eksCluster(config),
  metricsSource: ampMetrics(),
}));
