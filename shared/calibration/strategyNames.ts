/**
 * The calibration strategies, by the name the input's `plan.strategy` uses. Each has a file in strategies/ and an
 * entry in its registry, which the compiler holds to this list.
 */
export const STRATEGY_NAMES = ['linear', 'adaptive'] as const;

export type StrategyName = (typeof STRATEGY_NAMES)[number];
