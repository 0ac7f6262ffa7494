import * as z from 'zod';
import { containerStartMs } from '../../kube/index.js';
import { measureStep as measure } from '../measure.js';
import type { StepEnding, StepMeasurement } from '../types.js';
import { readJobSummary } from './k6Jobs.js';
import type { BasePorts, CalibrationPorts } from './ports.js';
import { baseEventShape, loadStateSchema, stepsSchema, watchStateSchema } from './state.js';
import type { CalibrationStep } from './step.js';

type Ports = BasePorts & Pick<CalibrationPorts, 'cluster' | 'metricsSource'>;
const event = z.object({
  ...baseEventShape,
  load: loadStateSchema,
  watch: watchStateSchema.nullable(),
  steps: stepsSchema,
});

/**
 * MeasureStep: measures the step's window in AMP (→ `$.steps`, with this step's measurement replacing any earlier one
 * of the same index, so a retry does not add it twice) and records how the step ended.
 * - Held: the k6 summary from the Job's Pod log; the window starts when the load did (the later of the Job's creation,
 *   to the millisecond, and the k6 container's start, to the second) and lasts the hold.
 * - Ended early by WatchLoadStep: the Job was stopped, so there is no k6 summary (null); the window runs from the
 *   load's start to the latest queue sample the decision saw.
 */
export async function measureStep(
  ports: Ports,
  { input, execution, load, watch, steps }: z.output<typeof event>,
): Promise<StepMeasurement[]> {
  const early = watch?.job === load.job.name && watch.status === 'ended' ? watch : null;
  let measurement: StepMeasurement;
  const window = { index: load.index, rateRps: load.rateRps };
  const source = { source: ports.metricsSource(input.target) };
  if (early?.ending && early.loadStartMs !== null && early.windowEndMs !== null) {
    const startMs = early.loadStartMs;
    const endMs = early.windowEndMs;
    const ending: StepEnding = early.ending;
    measurement = await measure(
      source,
      input,
      { ...window, holdSeconds: (endMs - startMs) / 1000, startMs, endMs },
      null,
      ending,
    );
  } else {
    const cluster = await ports.cluster(input.target);
    const { summary, pod } = await readJobSummary(cluster, load.job);
    const startMs = Math.max(load.job.createdAtMs, containerStartMs(pod) ?? load.job.createdAtMs);
    const endMs = startMs + load.holdSeconds * 1000;
    const ending: StepEnding = {
      kind: 'held',
      reason:
        watch?.job === load.job.name ? watch.reason : `held the planned ${load.holdSeconds} s (no look was recorded)`,
      heldSeconds: load.holdSeconds,
      plannedHoldSeconds: load.holdSeconds,
    };
    measurement = await measure(
      source,
      input,
      { ...window, holdSeconds: load.holdSeconds, startMs, endMs },
      summary,
      ending,
    );
  }
  ports.logger.info('step measured', {
    execution: execution.name,
    index: load.index,
    rateRps: load.rateRps,
    ending: measurement.ending?.kind,
    saturated: measurement.verdict.saturated,
    reasons: measurement.verdict.reasons,
  });
  return [...steps.filter((step) => step.index !== load.index), measurement].sort((a, b) => a.index - b.index);
}

export const measureStepStep = {
  name: 'measureStep',
  label: 'MeasureStep',
  placeholder: 'MeasureStepFunctionArn',
  event,
  run: measureStep,
} satisfies CalibrationStep<typeof event, StepMeasurement[], Ports>;
