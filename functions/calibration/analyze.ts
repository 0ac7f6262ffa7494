import * as z from 'zod';
import { analyze as analyzeSteps } from '../../shared/calibration/analyze.js';
import type { CalibrationAnalysis } from '../../shared/calibration/types.js';
import type { CalibrationDeps } from './deps.js';
import { baseEventShape, parseEvent, stepsSchema } from './event.js';

const eventSchema = z.object({ ...baseEventShape, steps: stepsSchema });

/** Analyze: the saturation point, last stable rate, capacity and thresholds from the measured steps (→ `$.analysis`). */
export function analyze(deps: CalibrationDeps, event: unknown): CalibrationAnalysis {
  const { input, execution, steps } = parseEvent('Analyze', eventSchema, event);
  const analysis = analyzeSteps(steps, input);
  deps.logger.info('steps analysed', {
    execution: execution.name,
    saturation: analysis.saturation,
    lastStableRps: analysis.lastStableRps,
    capacityRps: analysis.capacityRps?.value ?? null,
  });
  return analysis;
}
