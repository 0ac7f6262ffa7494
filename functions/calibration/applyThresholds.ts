import { applyThresholdsStep } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';
import { eksCluster } from './ports.js';

/** The ApplyThresholds state's Lambda: shared/calibration/workflow/applyThresholds.ts with cluster. */
export const handler = calibrationLambda(applyThresholdsStep, (config) => ({ cluster: eksCluster(config) }));
