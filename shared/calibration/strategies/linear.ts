import type { StepMeasurement, StrategyDecision } from '../types.js';
import type { CalibrationPlan } from '../input.js';
import type { CalibrationStrategy } from './types.js';

/**
 * The AWS guide's plan ("Identify scaling metric thresholds for AI inference"): constant-rate steps at 10, 20, ...
 * 70 requests/s, each held 60 s with 30 s of rest between them (all overridable in the input). With
 * `stopAtSaturation` (the default) it ends after the first saturated step: the steps above it only add overload and
 * GPU time, and the saturated step already gives the capacity (its completion rate).
 */
export const linearStrategy: CalibrationStrategy = {
  name: 'linear',
  description: "the guide's plan: fixed rates in order (default 10 to 70 by 10), 60 s hold, 30 s rest",
  next(steps: readonly StepMeasurement[], plan: CalibrationPlan): StrategyDecision {
    const saturated = steps.find((s) => s.verdict.saturated);
    if (saturated && plan.stopAtSaturation) {
      return { done: true, reason: `step ${saturated.index + 1} at ${saturated.rateRps} req/s saturated` };
    }
    const rate = plan.rates[steps.length];
    if (rate === undefined) {
      return { done: true, reason: `all ${plan.rates.length} planned rates were measured` };
    }
    return {
      done: false,
      rateRps: rate,
      holdSeconds: plan.holdSeconds,
      restSeconds: plan.restSeconds,
      reason: `planned step ${steps.length + 1} of ${plan.rates.length}`,
    };
  },
};
