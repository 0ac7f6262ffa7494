import * as z from 'zod';
import { analyze as analyzeSteps } from '../analyze.js';
import type { CalibrationAnalysis } from '../types.js';
import type { BasePorts } from './ports.js';
import { baseEventShape, stepsSchema } from './state.js';
import type { CalibrationStep } from './step.js';

const event = z.object({ ...baseEventShape, steps: stepsSchema });

/** Analyze: the saturation point, last stable rate, capacity and thresholds from the measured steps (→ `$.analysis`). */
export function analyze(ports: BasePorts, { input, execution, steps }: z.output<typeof event>): CalibrationAnalysis {
  const analysis = analyzeSteps(steps, input);
  ports.logger.info('steps analysed', {
    execution: execution.name,
    saturation: analysis.saturation,
    lastStableRps: analysis.lastStableRps,
    capacityRps: analysis.capacityRps?.value ?? null,
  });
  return analysis;
}

export const analyzeStep = {
  name: 'analyze',
  label: 'Analyze',
  placeholder: 'AnalyzeFunctionArn',
  event,
  run: analyze,
} satisfies CalibrationStep<typeof event, CalibrationAnalysis, BasePorts>;
