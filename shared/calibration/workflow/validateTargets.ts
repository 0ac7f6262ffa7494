import * as z from 'zod';
import { parseCalibrationBatchInput } from '../batchInput.js';
import { childExecutionName } from './names.js';
import type { BasePorts } from './ports.js';
import { executionSchema } from './state.js';
import type { CalibrationStep } from './step.js';

const event = z.object({ input: z.unknown(), execution: executionSchema });

/** One target of a many-target execution, as the Map state iterates over it. */
export interface BatchItem {
  index: number;
  /** The child execution's name (childExecutionName). */
  name: string;
  /** `<namespace>/<deployment> in <cluster> (<region>)`, for progress and the report. */
  target: string;
  /** The child execution's input: the entry as given, with the parent's mark (input.ts `batch`). */
  input: Record<string, unknown>;
}

/** `$.batch`: what the Map state reads (items, MaxConcurrencyPath). */
export interface BatchPlan {
  maxConcurrency: number;
  items: BatchItem[];
}

/**
 * ValidateTargets: a many-target input checked whole (batchInput.ts: every entry as ValidateInput would, no Deployment
 * twice, the run within the execution timeout) before any target starts, and laid out as the Map state's items, each
 * the input of one child execution of this same state machine.
 */
export function validateTargets(ports: BasePorts, { input, execution }: z.output<typeof event>): BatchPlan {
  const batch = parseCalibrationBatchInput(input);
  const items = batch.targets.map(({ parsed, given }, index) => ({
    index,
    name: childExecutionName(execution.name, index),
    target: `${parsed.target.namespace}/${parsed.target.deployment} in ${parsed.target.cluster} (${parsed.target.region})`,
    input: { ...given, batch: { executionArn: execution.id, index } },
  }));
  ports.logger.info('many-target calibration input accepted', {
    execution: execution.name,
    targets: items.map((item) => item.target),
    maxConcurrency: batch.maxConcurrency,
  });
  return { maxConcurrency: batch.maxConcurrency, items };
}

export const validateTargetsStep = {
  name: 'validateTargets',
  label: 'ValidateTargets',
  placeholder: 'ValidateTargetsFunctionArn',
  event,
  run: validateTargets,
} satisfies CalibrationStep<typeof event, BatchPlan, BasePorts>;
