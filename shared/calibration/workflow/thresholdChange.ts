import * as z from 'zod';
import { KEDA_KINDS, planThresholdChange } from '../../keda/index.js';
import type { ClusterClient } from '../../kube/index.js';
import type { CalibrationAnalysis, ThresholdChange } from '../types.js';
import type { BasePorts } from './ports.js';
import { baseEventShape, deploymentStateSchema } from './state.js';

/** The event of ApplyThresholds and DryRun. */
export const thresholdEventSchema = z.object({
  ...baseEventShape,
  deployment: deploymentStateSchema,
  analysis: z.looseObject({ thresholds: z.unknown() }).transform((a) => a as unknown as CalibrationAnalysis),
});
export type ThresholdEvent = z.output<typeof thresholdEventSchema>;

/**
 * The change the analysis asks of the Deployment's ScaledObject, or null with the reason when there is none to make
 * (no ScaledObject, or no thresholds because even the first step saturated).
 */
export async function planChange(
  ports: BasePorts,
  cluster: ClusterClient,
  event: ThresholdEvent,
): Promise<PlannedChange> {
  const { deployment, analysis } = event;
  if (analysis.thresholds === null)
    return {
      change: null,
      why: 'noThresholds',
      reason: 'the analysis derived no thresholds (see its notes): nothing to change',
    };
  if (deployment.scaledObject === null)
    return {
      change: null,
      why: 'noScaledObject',
      reason: `Deployment ${deployment.namespace}/${deployment.name} has no ScaledObject`,
    };
  const live = await cluster.get({ ...KEDA_KINDS.scaledObject, ...deployment.scaledObject });
  if (live === undefined)
    return {
      change: null,
      why: 'noScaledObject',
      reason: `ScaledObject ${deployment.scaledObject.namespace}/${deployment.scaledObject.name} is gone`,
    };
  ports.logger.info('threshold change planned', { execution: event.execution.name });
  return {
    change: planThresholdChange(live, analysis.thresholds),
    why: 'planned',
    reason: 'planned from the analysis',
  };
}

/** A planned change, or why there is none. */
export type PlannedChange =
  | { change: ThresholdChange; why: 'planned'; reason: string }
  | { change: null; why: 'noThresholds' | 'noScaledObject'; reason: string };
