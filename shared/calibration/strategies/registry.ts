import { adaptiveStrategy } from './adaptive.js';
import { linearStrategy } from './linear.js';
import type { CalibrationStrategy } from './types.js';

/** Every strategy, by the name the input's `plan.strategy` uses. Adding one: a file beside linear.ts and a line here. */
export const STRATEGIES: Readonly<Record<string, CalibrationStrategy>> = {
  [linearStrategy.name]: linearStrategy,
  [adaptiveStrategy.name]: adaptiveStrategy,
};

export const STRATEGY_NAMES: readonly string[] = Object.keys(STRATEGIES);
