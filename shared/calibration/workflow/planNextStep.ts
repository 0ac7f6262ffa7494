import * as z from 'zod';
import { CalibrationStepEvidenceError } from '../errors.js';
import { evidenceHeld, sameRate } from '../evidence.js';
import { fmt } from '../format.js';
import { EVIDENCE_RULES } from '../rules.js';
import { STRATEGIES } from '../strategies/index.js';
import type { StepMeasurement, StrategyDecision } from '../types.js';
import type { BasePorts } from './ports.js';
import { baseEventShape, stepsSchema, type PlanState } from './state.js';
import type { CalibrationStep } from './step.js';

const event = z.object({ ...baseEventShape, steps: stepsSchema });

/**
 * PlanNextStep: asks the input's strategy for the next step given the steps measured so far whose evidence held
 * (→ `$.plan`). A step is evidence, or it is repeated (shared/calibration/evidence.ts): when the newest step failed its
 * checks for the first time at its rate, the same rate is planned again (a new index); when that rate had failed
 * before, CalibrationStepEvidenceError ends the run (its Catch cleans up). The Wait durations are whole seconds
 * (SecondsPath takes integers); no rest before the first step.
 */
export function planNextStep(ports: BasePorts, { input, execution, steps }: z.output<typeof event>): PlanState {
  // ValidateInput refused unknown strategy names, so the lookup cannot miss.
  const strategy = STRATEGIES[input.plan.strategy];
  const index = steps.length;
  const repeat = repeatOf(steps, input.plan);
  const decision = repeat ?? strategy.next(steps.filter(evidenceHeld), input.plan);
  ports.logger.info('next step planned', { execution: execution.name, strategy: strategy.name, index, ...decision });
  if (decision.done) return { done: true, reason: decision.reason, index };
  return {
    ...decision,
    index,
    holdWaitSeconds: Math.ceil(decision.holdSeconds),
    restWaitSeconds: index === 0 ? 0 : Math.ceil(decision.restSeconds),
  };
}

/**
 * The repeat of the newest step when its evidence failed: the same rate and planned hold, once
 * (EVIDENCE_RULES.attemptsPerRate in all); null when it held. Throws CalibrationStepEvidenceError when the rate's
 * tries are used up.
 */
function repeatOf(
  steps: readonly StepMeasurement[],
  plan: { holdSeconds: number; restSeconds: number },
): Extract<StrategyDecision, { done: false }> | null {
  const newest = [...steps].sort((a, b) => a.index - b.index)[steps.length - 1];
  if (newest === undefined || evidenceHeld(newest)) return null;
  const failed = steps.filter((step) => sameRate(step.rateRps, newest.rateRps) && !evidenceHeld(step));
  const reasons = newest.evidence?.reasons ?? [];
  const label = `step ${newest.index + 1} (${fmt(newest.rateRps)} req/s)`;
  if (failed.length >= EVIDENCE_RULES.attemptsPerRate)
    throw new CalibrationStepEvidenceError(
      `${label} failed its evidence checks ${failed.length} times (steps ` +
        `${failed.map((step) => step.index + 1).join(', ')}), so no threshold is derived from it: ` +
        `${reasons.join('; ')}`,
      reasons,
    );
  return {
    done: false,
    rateRps: newest.rateRps,
    holdSeconds: newest.ending?.plannedHoldSeconds ?? newest.holdSeconds ?? plan.holdSeconds,
    restSeconds: plan.restSeconds,
    reason: `repeating step ${newest.index + 1}: ${reasons.join('; ')}`,
  };
}

export const planNextStepStep = {
  name: 'planNextStep',
  label: 'PlanNextStep',
  placeholder: 'PlanNextStepFunctionArn',
  event,
  run: planNextStep,
} satisfies CalibrationStep<typeof event, PlanState, BasePorts>;
