import { DescribeExecutionCommand, ExecutionDoesNotExist, SFNClient } from '@aws-sdk/client-sfn';
import {
  sweepLeasesFunction,
  type ExecutionStatus,
  type ExecutionStatusPort,
} from '../../shared/calibration/workflow/index.js';
import { parseTargets } from '../../shared/config/index.js';
import { calibrationLambda } from './lambda.js';
import { eksCluster, silencesOf } from './ports.js';

/**
 * The scheduled lease sweep: shared/calibration/workflow/sweepLeases.ts over the stack's TARGETS, asking Step
 * Functions (DescribeExecution) whether each holding execution still runs (its schedule: infra/serverless/stack.ts).
 */
export const handler = calibrationLambda(sweepLeasesFunction, (config) => {
  return {
    cluster: eksCluster(config),
    executions: stepFunctionsExecutions(new SFNClient({ region: config.region })),
    ...silencesOf(config),
    targets: parseTargets(process.env.TARGETS).map((t) => ({ ...t, region: config.region })),
  };
});

/** DescribeExecution's status; null when Step Functions does not know the execution (ran elsewhere, or expired). */
export function stepFunctionsExecutions(client: SFNClient): ExecutionStatusPort {
  return {
    async status(executionArn: string): Promise<ExecutionStatus> {
      try {
        const described = await client.send(new DescribeExecutionCommand({ executionArn }));
        return described.status ?? null;
      } catch (error) {
        if (error instanceof ExecutionDoesNotExist) return null;
        throw error;
      }
    },
  };
}
