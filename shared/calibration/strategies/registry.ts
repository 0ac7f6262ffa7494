import type { StrategyName } from '../strategyNames.js';
import { adaptiveStrategy } from './adaptive.js';
import { linearStrategy } from './linear.js';
import type { CalibrationStrategy } from './types.js';

/**
 * Every strategy, by the name the input's `plan.strategy` uses. Adding one: a file beside linear.ts, its name in
 * ../strategyNames.ts and a line here (the compiler refuses a name without a strategy).
 */
export const STRATEGIES: Readonly<Record<StrategyName, CalibrationStrategy>> = {
  linear: linearStrategy,
  adaptive: adaptiveStrategy,
};
