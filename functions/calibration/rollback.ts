import { rollbackFunction } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';
import { dynamoDbHistory, eksCluster } from './ports.js';

/**
 * The rollback Lambda, invoked directly (`aws lambda invoke --payload '{"target": {...}, "execution": "..."}'`):
 * shared/calibration/workflow/rollback.ts with the cluster and the history.
 */
export const handler = calibrationLambda(rollbackFunction, (config) => ({
  cluster: eksCluster(config),
  history: dynamoDbHistory(config),
}));
