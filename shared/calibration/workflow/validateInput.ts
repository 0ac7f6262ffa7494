import * as z from 'zod';
import { parseCalibrationInput, type CalibrationInput } from '../input.js';
import type { BasePorts } from './ports.js';
import { executionSchema } from './state.js';
import type { CalibrationStep } from './step.js';

const event = z.object({ input: z.unknown(), execution: executionSchema });

/**
 * ValidateInput: the execution input, parsed with every default filled in (→ `$.input`). A bad field throws
 * CalibrationInputInvalidError naming it, before anything touches the cluster.
 */
export function validateInput(ports: BasePorts, { input, execution }: z.output<typeof event>): CalibrationInput {
  const parsed = parseCalibrationInput(input);
  ports.logger.info('calibration input accepted', {
    execution: execution.name,
    target: `${parsed.target.namespace}/${parsed.target.deployment}`,
    strategy: parsed.plan.strategy,
    rates: parsed.plan.rates,
    apply: parsed.scaledObject.apply,
  });
  return parsed;
}

export const validateInputStep = {
  name: 'validateInput',
  label: 'ValidateInput',
  placeholder: 'ValidateInputFunctionArn',
  event,
  run: validateInput,
} satisfies CalibrationStep<typeof event, CalibrationInput, BasePorts>;
