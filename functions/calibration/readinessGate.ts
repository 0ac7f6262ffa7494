import { readinessGateStep } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';
import { eksCluster, ampMetrics } from './ports.js';

/** The ReadinessGate state's Lambda: shared/calibration/workflow/readinessGate.ts with cluster, metrics. */
export const handler = calibrationLambda(readinessGateStep, (config) => ({
  cluster: eksCluster(config),
  metricsSource: ampMetrics(),
}));
