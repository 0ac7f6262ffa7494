import * as z from 'zod';
import { attemptOf, checkStepEvidence } from '../evidence.js';
import { CalibrationWindowEmptyError } from '../errors.js';
import { emptyWindowStep, measureStep as measure, type StepWindow } from '../measure.js';
import type { K6Summary } from '../../kube/index.js';
import type { StepMeasurement } from '../types.js';
import { readJobSummary } from './k6Jobs.js';
import type { BasePorts, CalibrationPorts } from './ports.js';
import { baseEventShape, loadStateSchema, stepDataStateSchema, stepsSchema, watchStateSchema } from './state.js';
import type { CalibrationStep } from './step.js';
import { earlyWindow, heldWindow } from './stepWindow.js';

type Ports = BasePorts & Pick<CalibrationPorts, 'cluster' | 'metricsSource'>;
const event = z.object({
  ...baseEventShape,
  load: loadStateSchema,
  watch: watchStateSchema.nullable(),
  stepData: stepDataStateSchema.nullable(),
  steps: stepsSchema,
});

/**
 * MeasureStep: measures the step's window in AMP (→ `$.steps`, with this step's measurement replacing any earlier one
 * of the same index, so a retry does not add it twice) and records how the step ended and how long AMP took to hold
 * the window (AwaitStepData looked before: the window is complete in AMP).
 * - Held: the k6 summary from the Job's Pod log; the window starts when the load did (shared/calibration/workflow/
 *   stepWindow.ts) and lasts the hold.
 * - Ended early by WatchLoadStep: the Job was stopped, so there is no k6 summary (null); the window runs from the
 *   load's start to the end of what the decision saw.
 * Then the step's evidence (shared/calibration/evidence.ts: AMP covered the window, the same warm Pods served it, AMP
 * agrees with k6) is recorded on it: PlanNextStep repeats a step whose evidence failed, and Analyze ignores it. A window
 * AMP held no sample of at all fails its evidence too (CalibrationWindowEmptyError's reason first), never the run.
 */
export async function measureStep(
  ports: Ports,
  { input, execution, load, watch, stepData, steps }: z.output<typeof event>,
): Promise<StepMeasurement[]> {
  const early = earlyWindow(load, watch);
  const source = { source: ports.metricsSource(input.target) };
  let summary: K6Summary | null = null;
  let window = early;
  if (window === null) {
    const finished = await readJobSummary(await ports.cluster(input.target), load.job);
    summary = finished.summary;
    window = heldWindow(load, watch, finished.pod);
  }
  const { startMs, endMs, ending } = window;
  const stepWindow: StepWindow = {
    index: load.index,
    rateRps: load.rateRps,
    // Recorded only when the target's users offered part of the rate: otherwise k6 offered all of it.
    ...(load.backgroundRps > 0 ? { k6RateRps: load.k6RateRps } : {}),
    holdSeconds: (endMs - startMs) / 1000,
    startMs,
    endMs,
    ...(load.maxNumSeqs === undefined ? {} : { maxNumSeqs: load.maxNumSeqs }),
  };
  // A window AMP holds no sample of (a scrape gap across all of it) is failed evidence, not the end of the run: the
  // step is repeated like any other it cannot trust (its reason first among the evidence's).
  let empty: string | null = null;
  let measured: StepMeasurement;
  try {
    measured = await measure(source, input, stepWindow, summary, ending);
  } catch (error) {
    if (!(error instanceof CalibrationWindowEmptyError)) throw error;
    empty = error.message;
    measured = emptyWindowStep(stepWindow, summary, empty, ending);
  }
  const ingestion =
    stepData?.job === load.job.name && stepData.status === 'in'
      ? { waitedSeconds: stepData.waitedSeconds, looks: stepData.looks, reason: stepData.reason }
      : undefined;
  // Before the step is judged: can its data be trusted? (evidence.ts; PlanNextStep repeats a step that fails, once.)
  const earlier = steps.filter((step) => step.index !== load.index);
  const evidence = await checkStepEvidence(
    { source: source.source, cluster: await ports.cluster(input.target) },
    input,
    measured,
    {
      window: { startMs, endMs },
      nowMs: ports.clock.now(),
      ...(load.servedBy === undefined ? {} : { servedBy: load.servedBy }),
      namespace: load.job.namespace,
      backgroundRps: load.backgroundRps,
      k6RateRps: load.k6RateRps,
      requestTimeoutSeconds: input.request.timeoutSeconds,
      attempt: attemptOf(load.rateRps, earlier),
    },
  );
  const measurement: StepMeasurement = {
    ...measured,
    ...(ingestion === undefined ? {} : { ingestion }),
    evidence:
      empty === null ? evidence : { ok: false, reasons: [empty, ...evidence.reasons], attempt: evidence.attempt },
  };
  ports.logger.info('step measured', {
    execution: execution.name,
    index: load.index,
    rateRps: load.rateRps,
    ending: measurement.ending?.kind,
    saturated: measurement.verdict.saturated,
    reasons: measurement.verdict.reasons,
    ingestion: ingestion?.reason,
    evidence: measurement.evidence?.ok === true ? 'held' : measurement.evidence?.reasons,
  });
  return [...earlier, measurement].sort((a, b) => a.index - b.index);
}

export const measureStepStep = {
  name: 'measureStep',
  label: 'MeasureStep',
  placeholder: 'MeasureStepFunctionArn',
  event,
  run: measureStep,
} satisfies CalibrationStep<typeof event, StepMeasurement[], Ports>;
