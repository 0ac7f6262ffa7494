import * as z from 'zod';
import { STRATEGIES } from '../strategies/index.js';
import type { BasePorts } from './ports.js';
import { baseEventShape, stepsSchema, type PlanState } from './state.js';
import type { CalibrationStep } from './step.js';

const event = z.object({ ...baseEventShape, steps: stepsSchema });

/**
 * PlanNextStep: asks the input's strategy for the next step given the steps measured so far (→ `$.plan`). The Wait
 * durations are whole seconds (SecondsPath takes integers); no rest before the first step.
 */
export function planNextStep(ports: BasePorts, { input, execution, steps }: z.output<typeof event>): PlanState {
  // ValidateInput refused unknown strategy names, so the lookup cannot miss.
  const strategy = STRATEGIES[input.plan.strategy];
  const decision = strategy.next(steps, input.plan);
  const index = steps.length;
  ports.logger.info('next step planned', { execution: execution.name, strategy: strategy.name, index, ...decision });
  if (decision.done) return { done: true, reason: decision.reason, index };
  return {
    ...decision,
    index,
    holdWaitSeconds: Math.ceil(decision.holdSeconds),
    restWaitSeconds: index === 0 ? 0 : Math.ceil(decision.restSeconds),
  };
}

export const planNextStepStep = {
  name: 'planNextStep',
  label: 'PlanNextStep',
  placeholder: 'PlanNextStepFunctionArn',
  event,
  run: planNextStep,
} satisfies CalibrationStep<typeof event, PlanState, BasePorts>;
