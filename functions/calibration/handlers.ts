import type { SNSClient } from '@aws-sdk/client-sns';
import { CalibrationDependencyUnavailableError, CalibrationError } from '../../shared/calibration/errors.js';
import { handlersByResource } from '../../shared/workflow/localHandlers.js';
import { SNS_PUBLISH_RESOURCE, snsPublishHandler } from '../../shared/workflow/snsPublish.js';
import type { AslDefinition, LocalTaskHandler } from '../../shared/workflow/types.js';
import { analyze } from './analyze.js';
import { applyThresholds } from './applyThresholds.js';
import { checkJob } from './checkJob.js';
import { checkRollout } from './checkRollout.js';
import { cleanup } from './cleanup.js';
import type { CalibrationDeps } from './deps.js';
import { deploy } from './deploy.js';
import { dryRun } from './dryRun.js';
import { measureStep } from './measureStep.js';
import { planNextStep } from './planNextStep.js';
import { readinessGate } from './readinessGate.js';
import { startLoadStep } from './startLoadStep.js';
import { startWarmup } from './startWarmup.js';
import { storeReport } from './storeReport.js';
import { validateInput } from './validateInput.js';
import { watchLoadStep } from './watchLoadStep.js';

/**
 * Every calibration function, by its handler name, with the `${...FunctionArn}` placeholder its Task states use in
 * statemachines/calibration.asl.json (CheckJob serves CheckWarmup and CheckLoadJob; Cleanup both cleanups).
 */
export const CALIBRATION_FUNCTIONS = {
  validateInput: { placeholder: 'ValidateInputFunctionArn', run: validateInput },
  deploy: { placeholder: 'DeployFunctionArn', run: deploy },
  checkRollout: { placeholder: 'CheckRolloutFunctionArn', run: checkRollout },
  startWarmup: { placeholder: 'StartWarmupFunctionArn', run: startWarmup },
  checkJob: { placeholder: 'CheckJobFunctionArn', run: checkJob },
  readinessGate: { placeholder: 'ReadinessGateFunctionArn', run: readinessGate },
  planNextStep: { placeholder: 'PlanNextStepFunctionArn', run: planNextStep },
  startLoadStep: { placeholder: 'StartLoadStepFunctionArn', run: startLoadStep },
  watchLoadStep: { placeholder: 'WatchLoadStepFunctionArn', run: watchLoadStep },
  measureStep: { placeholder: 'MeasureStepFunctionArn', run: measureStep },
  analyze: { placeholder: 'AnalyzeFunctionArn', run: analyze },
  applyThresholds: { placeholder: 'ApplyThresholdsFunctionArn', run: applyThresholds },
  dryRun: { placeholder: 'DryRunFunctionArn', run: dryRun },
  storeReport: { placeholder: 'StoreReportFunctionArn', run: storeReport },
  cleanup: { placeholder: 'CleanupFunctionArn', run: cleanup },
} as const;

export type CalibrationFunctionName = keyof typeof CALIBRATION_FUNCTIONS;

/** One calibration function bound to its ports: a state slice in, the slice to merge out. */
export type CalibrationHandler = (event: unknown) => Promise<unknown>;
export type CalibrationHandlers = Record<CalibrationFunctionName, CalibrationHandler>;

/**
 * The calibration's handlers bound to `deps`. Errors keep their names (the state machine's Catch matches them);
 * a non-calibration error that says a retry may pass (an API server 5xx, S3 or DynamoDB throttling, a network error)
 * becomes CalibrationDependencyUnavailableError, which the state machine retries with backoff.
 */
export function createCalibrationHandlers(deps: CalibrationDeps): CalibrationHandlers {
  const bound = {} as CalibrationHandlers;
  for (const name of Object.keys(CALIBRATION_FUNCTIONS) as CalibrationFunctionName[]) {
    const run = CALIBRATION_FUNCTIONS[name].run as (deps: CalibrationDeps, event: unknown) => unknown;
    bound[name] = async (event: unknown) => {
      try {
        return await run(deps, event);
      } catch (error) {
        const thrown = asStepFunctionsError(error, name);
        deps.logger.error(`${name} failed`, { error: (thrown as Error).name, message: (thrown as Error).message });
        throw thrown;
      }
    };
  }
  return bound;
}

/** A transient failure (by the error's own `retryable` / `$retryable` flag) as the error the state machine retries. */
export function asStepFunctionsError(error: unknown, doing: string): unknown {
  if (!(error instanceof Error) || error instanceof CalibrationError) return error;
  const flagged = error as Error & { retryable?: unknown; $retryable?: unknown; $fault?: unknown };
  if (flagged.retryable === true || flagged.$retryable !== undefined || flagged.$fault === 'server')
    return new CalibrationDependencyUnavailableError(`${doing}: ${error.name}: ${error.message}`, { cause: error });
  return error;
}

/**
 * The local runner's table (state name → handler) for the calibration definition: each Lambda Task state gets the
 * handler its `${...FunctionArn}` names, and the SNS Notify states publish through `sns` (the twin's endpoint
 * locally), so a local run sends the same messages as AWS.
 */
export function calibrationLocalHandlers(
  definition: AslDefinition,
  handlers: CalibrationHandlers,
  sns: SNSClient,
): Record<string, LocalTaskHandler> {
  const byResource: Record<string, LocalTaskHandler> = { [SNS_PUBLISH_RESOURCE]: snsPublishHandler(sns) };
  for (const name of Object.keys(CALIBRATION_FUNCTIONS) as CalibrationFunctionName[])
    byResource[CALIBRATION_FUNCTIONS[name].placeholder] = handlers[name];
  return handlersByResource(definition, byResource);
}
