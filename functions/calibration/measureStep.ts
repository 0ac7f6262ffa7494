import { measureStepStep } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';
import { eksCluster, ampMetrics } from './ports.js';

/** The MeasureStep state's Lambda: shared/calibration/workflow/measureStep.ts with cluster, metrics. */
export const handler = calibrationLambda(measureStepStep, (config) => ({
  cluster: eksCluster(config),
  metricsSource: ampMetrics(),
}));
