import { storeReportStep } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';
import { eksCluster, s3Reports, dynamoDbHistory } from './ports.js';

/** The StoreReport state's Lambda: shared/calibration/workflow/storeReport.ts with cluster, reports, history. */
export const handler = calibrationLambda(storeReportStep, (config) => ({
  cluster: eksCluster(config),
  reports: s3Reports(config),
  history: dynamoDbHistory(config),
}));
