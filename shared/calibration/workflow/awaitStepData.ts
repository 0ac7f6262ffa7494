import * as z from 'zod';
import { lookForWindowData } from '../windowData.js';
import type { BasePorts, CalibrationPorts } from './ports.js';
import { baseEventShape, loadStateSchema, stepDataStateSchema, watchStateSchema, type StepDataState } from './state.js';
import type { CalibrationStep } from './step.js';
import { stepWindow } from './stepWindow.js';

type Ports = BasePorts & Pick<CalibrationPorts, 'cluster' | 'metricsSource'>;
const event = z.object({
  ...baseEventShape,
  load: loadStateSchema,
  watch: watchStateSchema.nullable(),
  previous: stepDataStateSchema.nullable(),
});

/**
 * AwaitStepData: one look at whether AMP holds the step's whole window (→ `$.stepData`), between the step's end and
 * MeasureStep. `in` → MeasureStep; `waiting` → the state machine waits `waitSeconds` and looks again. Bounded by
 * `ingestion.timeoutSeconds` from the first look (CalibrationStepDataMissingError): a step is never judged on a
 * partial window (shared/calibration/windowData.ts).
 */
export async function awaitStepData(
  ports: Ports,
  { input, execution, load, watch, previous }: z.output<typeof event>,
): Promise<StepDataState> {
  const cluster = await ports.cluster(input.target);
  const window = await stepWindow(cluster, load, watch);
  const nowMs = ports.clock.now();
  const same = previous?.job === load.job.name ? previous : null;
  const firstLookMs = same?.firstLookMs ?? nowMs;
  const looks = (same?.looks ?? 0) + 1;
  const look = await lookForWindowData(ports.metricsSource(input.target), input, {
    windowEndMs: window.endMs,
    nowMs,
    firstLookMs,
    timeoutSeconds: input.ingestion.timeoutSeconds,
    stepLabel: `step ${load.index + 1} (${load.rateRps} req/s)`,
  });
  const state: StepDataState = {
    job: load.job.name,
    status: look.status,
    reason: look.reason,
    windowEndMs: window.endMs,
    latestSampleMs: look.latestSampleMs,
    waitedSeconds: look.waitedSeconds,
    looks,
    firstLookMs,
    waitSeconds: Math.max(1, Math.ceil(input.ingestion.pollSeconds)),
  };
  ports.logger.info('step data in AMP', { execution: execution.name, index: load.index, ...state });
  return state;
}

export const awaitStepDataStep = {
  name: 'awaitStepData',
  label: 'AwaitStepData',
  placeholder: 'AwaitStepDataFunctionArn',
  event,
  run: awaitStepData,
} satisfies CalibrationStep<typeof event, StepDataState, Ports>;
