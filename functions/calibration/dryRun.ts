import type { ThresholdChange } from '../../shared/calibration/types.js';
import type { CalibrationDeps } from './deps.js';
import { parseEvent } from './event.js';
import { planChange, thresholdEventSchema } from './thresholdChange.js';

/**
 * DryRun (scaledObject.apply false): the change the thresholds would make, with its diff, written nowhere
 * (`applied: false`, → `$.change`). Null, with the reason logged, when there is nothing to change.
 */
export async function dryRun(deps: CalibrationDeps, event: unknown): Promise<ThresholdChange | null> {
  const parsed = parseEvent('DryRun', thresholdEventSchema, event);
  const cluster = await deps.cluster(parsed.input.target);
  const planned = await planChange(deps, cluster, parsed);
  deps.logger.info('dry run: thresholds not applied', {
    execution: parsed.execution.name,
    reason: planned.reason,
    diff: planned.change?.diff ?? null,
  });
  return planned.change;
}
