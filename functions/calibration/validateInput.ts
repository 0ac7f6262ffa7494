import * as z from 'zod';
import { parseCalibrationInput, type CalibrationInput } from '../../shared/calibration/input.js';
import type { CalibrationDeps } from './deps.js';
import { executionSchema, parseEvent } from './event.js';

const eventSchema = z.object({ input: z.unknown(), execution: executionSchema });

/**
 * ValidateInput: the execution input, parsed with every default filled in (→ `$.input`). A bad field throws
 * CalibrationInputInvalidError naming it, before anything touches the cluster.
 */
export function validateInput(deps: CalibrationDeps, event: unknown): CalibrationInput {
  const { input, execution } = parseEvent('ValidateInput', eventSchema, event);
  const parsed = parseCalibrationInput(input);
  deps.logger.info('calibration input accepted', {
    execution: execution.name,
    target: `${parsed.target.namespace}/${parsed.target.deployment}`,
    strategy: parsed.plan.strategy,
    rates: parsed.plan.rates,
    apply: parsed.scaledObject.apply,
  });
  return parsed;
}
