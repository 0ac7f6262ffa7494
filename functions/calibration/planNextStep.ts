import * as z from 'zod';
import { STRATEGIES } from '../../shared/calibration/strategies/registry.js';
import type { CalibrationDeps } from './deps.js';
import { baseEventShape, parseEvent, stepsSchema, type PlanState } from './event.js';

const eventSchema = z.object({ ...baseEventShape, steps: stepsSchema });

/**
 * PlanNextStep: asks the input's strategy for the next step given the steps measured so far (→ `$.plan`). The Wait
 * durations are whole seconds (SecondsPath takes integers); no rest before the first step.
 */
export function planNextStep(deps: CalibrationDeps, event: unknown): PlanState {
  const { input, execution, steps } = parseEvent('PlanNextStep', eventSchema, event);
  // ValidateInput refused unknown strategy names, so the lookup cannot miss.
  const strategy = STRATEGIES[input.plan.strategy] as NonNullable<(typeof STRATEGIES)[string]>;
  const decision = strategy.next(steps, input.plan);
  const index = steps.length;
  deps.logger.info('next step planned', { execution: execution.name, strategy: strategy.name, index, ...decision });
  if (decision.done) return { done: true, reason: decision.reason, index };
  return {
    ...decision,
    index,
    holdWaitSeconds: Math.ceil(decision.holdSeconds),
    restWaitSeconds: index === 0 ? 0 : Math.ceil(decision.restSeconds),
  };
}
