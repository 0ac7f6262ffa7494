import type { KubeObject } from '../kube/index.js';
import { CalibrationTriggerAmbiguousError, CalibrationTriggerNotFoundError } from './errors.js';
import { scaledObjectName } from './kinds.js';
import { THRESHOLD_TRIGGERS, type ThresholdTriggerKind } from './triggerKinds.js';

/**
 * The two triggers the calibration sets, found by what their queries ask for, not by position: a ScaledObject the
 * calibration adopts may list them in another order, or have more triggers.
 */

/** One of the two triggers the calibration sets. */
export interface FoundTrigger {
  /** Its position in `spec.triggers`. */
  index: number;
  /** The trigger's `name`, when it has one. */
  name: string | undefined;
  query: string;
  /** The trigger's `metricType` as written (KEDA reads a missing one as AverageValue). */
  metricType: string | undefined;
  /** The trigger's metadata as written (KEDA reads every value as a string). */
  metadata: Record<string, string>;
}

export interface ScaledObjectTriggers {
  queueDepth: FoundTrigger;
  p95Latency: FoundTrigger;
}

/** Finds the queue-depth and p95-latency triggers by their queries; throws a named error when either is missing. */
export function findTriggers(scaledObject: KubeObject): ScaledObjectTriggers {
  const who = scaledObjectName(scaledObject);
  const triggers = (scaledObject.spec as { triggers?: unknown } | undefined)?.triggers;
  const list = Array.isArray(triggers) ? (triggers as unknown[]) : [];
  const found = {} as ScaledObjectTriggers;
  for (const kind of Object.keys(THRESHOLD_TRIGGERS) as ThresholdTriggerKind[]) {
    const matches = list.flatMap((trigger, index) => {
      const candidate = asPrometheusTrigger(trigger, index);
      return candidate && THRESHOLD_TRIGGERS[kind].pattern.test(candidate.query) ? [candidate] : [];
    });
    const [only, ...others] = matches;
    if (only === undefined) throw new CalibrationTriggerNotFoundError(who, kind);
    if (others.length > 0)
      throw new CalibrationTriggerAmbiguousError(
        who,
        kind,
        matches.map((m) => m.index),
      );
    found[kind] = only;
  }
  if (found.queueDepth.index === found.p95Latency.index)
    throw new CalibrationTriggerAmbiguousError(who, 'p95Latency', [found.p95Latency.index]);
  return found;
}

function asPrometheusTrigger(trigger: unknown, index: number): FoundTrigger | undefined {
  if (typeof trigger !== 'object' || trigger === null) return undefined;
  const { type, name, metadata, metricType } = trigger as {
    type?: unknown;
    name?: unknown;
    metadata?: unknown;
    metricType?: unknown;
  };
  if (type !== 'prometheus' || typeof metadata !== 'object' || metadata === null) return undefined;
  const query = (metadata as { query?: unknown }).query;
  if (typeof query !== 'string') return undefined;
  return {
    index,
    name: typeof name === 'string' && name !== '' ? name : undefined,
    query,
    metricType: typeof metricType === 'string' ? metricType : undefined,
    metadata: { ...(metadata as Record<string, string>) },
  };
}
