import type { StepMeasurement, StrategyDecision } from '../types.js';
import type { CalibrationPlan } from '../input.js';

/**
 * A calibration strategy: a pure function from the steps measured so far to the next load step, or to "done" with
 * the reason. The state machine loops over it (PlanNextStep), so every strategy runs through the same workflow.
 */
export interface CalibrationStrategy {
  name: string;
  description: string;
  next(steps: readonly StepMeasurement[], plan: CalibrationPlan): StrategyDecision;
}
