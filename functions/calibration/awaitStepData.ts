import { awaitStepDataStep } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';
import { eksCluster, ampMetrics } from './ports.js';

/** The AwaitStepData state's Lambda: shared/calibration/workflow/awaitStepData.ts with cluster, metrics. */
export const handler = calibrationLambda(awaitStepDataStep, (config) => ({
  cluster: eksCluster(config),
  metricsSource: ampMetrics(),
}));
