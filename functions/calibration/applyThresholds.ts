import { CalibrationTargetNotFoundError } from '../../shared/calibration/errors.js';
import { applyThresholdChange } from '../../shared/calibration/scaledObjectThresholds.js';
import type { ThresholdChange } from '../../shared/calibration/types.js';
import type { CalibrationDeps } from './deps.js';
import { parseEvent } from './event.js';
import { planChange, thresholdEventSchema } from './thresholdChange.js';

/**
 * ApplyThresholds (scaledObject.apply true): writes the calibrated thresholds into the ScaledObject's triggers,
 * keeping the previous values in the change for rollback (→ `$.change`). Null when the analysis derived none.
 */
export async function applyThresholds(deps: CalibrationDeps, event: unknown): Promise<ThresholdChange | null> {
  const parsed = parseEvent('ApplyThresholds', thresholdEventSchema, event);
  const cluster = await deps.cluster(parsed.input.target);
  const planned = await planChange(deps, cluster, parsed);
  if (planned.change === null) {
    // Deploy checked that the ScaledObject exists when apply is asked for: its disappearance is an error.
    if (planned.why === 'noScaledObject')
      throw new CalibrationTargetNotFoundError(`cannot apply the thresholds: ${planned.reason}`);
    deps.logger.warn('thresholds not applied', { execution: parsed.execution.name, reason: planned.reason });
    return null;
  }
  const applied = await applyThresholdChange(cluster, planned.change);
  deps.logger.info('thresholds applied', { execution: parsed.execution.name, diff: applied.diff });
  return applied;
}
