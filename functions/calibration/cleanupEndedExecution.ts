import { cleanupEndedExecutionFunction } from '../../shared/calibration/workflow/index.js';
import { calibrationLambda } from './lambda.js';
import { eksCluster, silencesOf } from './ports.js';

/**
 * The target of an EventBridge rule on the calibration state machine's ABORTED, TIMED_OUT and FAILED executions:
 * shared/calibration/workflow/cleanupEndedExecution.ts with the cluster (the rule: infra/serverless/stack.ts).
 */
export const handler = calibrationLambda(cleanupEndedExecutionFunction, (config) => ({
  cluster: eksCluster(config),
  ...silencesOf(config),
}));
