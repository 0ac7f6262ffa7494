import { z } from 'zod';
import { measureStep as measure } from '../../shared/calibration/measure.js';
import type { StepMeasurement } from '../../shared/calibration/types.js';
import type { CalibrationDeps } from './deps.js';
import { baseEventShape, loadStateSchema, parseEvent, stepsSchema } from './event.js';
import { readJobSummary } from './jobSummary.js';
import { containerStartMs } from './kube.js';

const eventSchema = z.object({ ...baseEventShape, load: loadStateSchema, steps: stepsSchema });

/**
 * MeasureStep: reads the k6 summary from the step Job's Pod log and measures the hold window in AMP (→ `$.steps`, with
 * this step's measurement replacing any earlier one of the same index, so a retry does not add it twice). The window
 * starts when the load did: the later of the Job's creation (to the millisecond) and the k6 container's start (to
 * the second), and lasts the hold.
 */
export async function measureStep(deps: CalibrationDeps, event: unknown): Promise<StepMeasurement[]> {
  const { input, execution, load, steps } = parseEvent('MeasureStep', eventSchema, event);
  const cluster = await deps.cluster(input.target);
  const { summary, pod } = await readJobSummary(cluster, load.job);
  const startMs = Math.max(load.job.createdAtMs, containerStartMs(pod) ?? load.job.createdAtMs);
  const endMs = startMs + load.holdSeconds * 1000;
  const measurement = await measure(
    { source: deps.metricsSource(input.target) },
    input,
    { index: load.index, rateRps: load.rateRps, holdSeconds: load.holdSeconds, startMs, endMs },
    summary,
  );
  deps.logger.info('step measured', {
    execution: execution.name,
    index: load.index,
    rateRps: load.rateRps,
    saturated: measurement.verdict.saturated,
    reasons: measurement.verdict.reasons,
  });
  return [...steps.filter((step) => step.index !== load.index), measurement].sort((a, b) => a.index - b.index);
}
