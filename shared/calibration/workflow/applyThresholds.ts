import type * as z from 'zod';
import { applyThresholdChange } from '../../keda/index.js';
import { CalibrationTargetNotFoundError } from '../errors.js';
import type { ThresholdChange } from '../types.js';
import type { BasePorts, CalibrationPorts } from './ports.js';
import type { CalibrationStep } from './step.js';
import { planChange, thresholdEventSchema as event } from './thresholdChange.js';

type Ports = BasePorts & Pick<CalibrationPorts, 'cluster'>;

/**
 * ApplyThresholds (scaledObject.apply true): writes the calibrated thresholds into the ScaledObject's triggers,
 * keeping the previous values in the change for rollback (→ `$.change`). Null when the analysis derived none.
 */
export async function applyThresholds(ports: Ports, parsed: z.output<typeof event>): Promise<ThresholdChange | null> {
  const cluster = await ports.cluster(parsed.input.target);
  const planned = await planChange(ports, cluster, parsed);
  if (planned.change === null) {
    // Deploy checked that the ScaledObject exists when apply is asked for: its disappearance is an error.
    if (planned.why === 'noScaledObject')
      throw new CalibrationTargetNotFoundError(`cannot apply the thresholds: ${planned.reason}`);
    ports.logger.warn('thresholds not applied', { execution: parsed.execution.name, reason: planned.reason });
    return null;
  }
  const applied = await applyThresholdChange(cluster, planned.change);
  ports.logger.info('thresholds applied', { execution: parsed.execution.name, diff: applied.diff });
  return applied;
}

export const applyThresholdsStep = {
  name: 'applyThresholds',
  label: 'ApplyThresholds',
  placeholder: 'ApplyThresholdsFunctionArn',
  event,
  run: applyThresholds,
} satisfies CalibrationStep<typeof event, ThresholdChange | null, Ports>;
