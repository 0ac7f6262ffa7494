import type * as z from 'zod';
import type {
  AnyCalibrationStep,
  CalibrationFunction,
  CalibrationPorts,
  CalibrationStepName,
} from '../../shared/calibration/workflow/index.js';
import { CalibrationDependencyUnavailableError, CalibrationError } from '../../shared/calibration/index.js';
import type { LoggerPort } from '../../shared/log/index.js';
import { parseEvent } from '../shared/parseEvent.js';
import { CalibrationEventInvalidError } from './errors.js';

/** One calibration step bound to its ports: a state slice in, the slice to merge out. */
export type CalibrationTask = (event: unknown) => Promise<unknown>;

/**
 * The step bound to `ports`, as its Lambda runs it and as the local runner calls it: the event parsed with the step's
 * schema (CalibrationEventInvalidError naming every bad field), the step run, its errors kept by name (the state
 * machine's Catch matches them). A non-calibration error that says a retry may pass (an API server 5xx, S3 or
 * DynamoDB throttling, a network error) becomes CalibrationDependencyUnavailableError, which the state machine retries.
 */
export function bindStep<E extends z.ZodType, R, P extends { logger: LoggerPort }>(
  step: CalibrationFunction<E, R, P>,
  ports: P,
): CalibrationTask {
  return async (event: unknown) => {
    try {
      const parsed = parseEvent(step.event, event, (issues) => new CalibrationEventInvalidError(step.label, issues));
      return await step.run(ports, parsed);
    } catch (error) {
      const thrown = asStepFunctionsError(error, step.name);
      ports.logger.error(`${step.name} failed`, { error: (thrown as Error).name, message: (thrown as Error).message });
      throw thrown;
    }
  };
}

/** A transient failure (by the error's own `retryable` / `$retryable` flag) as the error the state machine retries. */
export function asStepFunctionsError(error: unknown, doing: string): unknown {
  if (!(error instanceof Error) || error instanceof CalibrationError) return error;
  const flagged = error as Error & { retryable?: unknown; $retryable?: unknown; $fault?: unknown };
  if (flagged.retryable === true || flagged.$retryable !== undefined || flagged.$fault === 'server')
    return new CalibrationDependencyUnavailableError(`${doing}: ${error.name}: ${error.message}`, { cause: error });
  return error;
}

/** Every step bound to the same ports (the local runner's table: all of them share one process). */
export function bindSteps(
  steps: Readonly<Record<CalibrationStepName, AnyCalibrationStep>>,
  ports: Partial<CalibrationPorts> & { logger: LoggerPort },
): Record<CalibrationStepName, CalibrationTask> {
  return Object.fromEntries(Object.entries(steps).map(([name, step]) => [name, bindStep(step, ports)])) as Record<
    CalibrationStepName,
    CalibrationTask
  >;
}
