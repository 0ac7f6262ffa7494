import { storeBatchReportStep } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';
import { s3Reports } from './ports.js';

/** The StoreBatchReport state's Lambda (many targets): shared/calibration/workflow/storeBatchReport.ts with reports. */
export const handler = calibrationLambda(storeBatchReportStep, (config) => ({ reports: s3Reports(config) }));
