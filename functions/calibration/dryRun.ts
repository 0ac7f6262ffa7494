import { dryRunStep } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';
import { eksCluster } from './ports.js';

/** The DryRun state's Lambda: shared/calibration/workflow/dryRun.ts with cluster. */
export const handler = calibrationLambda(dryRunStep, (config) => ({ cluster: eksCluster(config) }));
