import type * as z from 'zod';
import type { ThresholdChange } from '../types.js';
import type { BasePorts, CalibrationPorts } from './ports.js';
import type { CalibrationStep } from './step.js';
import { planChange, thresholdEventSchema as event } from './thresholdChange.js';

type Ports = BasePorts & Pick<CalibrationPorts, 'cluster'>;

/**
 * DryRun (scaledObject.apply false): the change the thresholds would make, with its diff, written nowhere
 * (`applied: false`, → `$.change`). Null, with the reason logged, when there is nothing to change.
 */
export async function dryRun(ports: Ports, parsed: z.output<typeof event>): Promise<ThresholdChange | null> {
  const cluster = await ports.cluster(parsed.input.target);
  const planned = await planChange(ports, cluster, parsed);
  ports.logger.info('dry run: thresholds not applied', {
    execution: parsed.execution.name,
    reason: planned.reason,
    diff: planned.change?.diff ?? null,
  });
  return planned.change;
}

export const dryRunStep = {
  name: 'dryRun',
  label: 'DryRun',
  placeholder: 'DryRunFunctionArn',
  event,
  run: dryRun,
} satisfies CalibrationStep<typeof event, ThresholdChange | null, Ports>;
