import type { ClusterClient, KubeObject } from '../kube/index.js';
import type { ThresholdChange, Thresholds } from '../calibration/index.js';
import { CalibrationThresholdInvalidError } from './errors.js';
import { THRESHOLD_TRIGGERS, type ThresholdTriggerKind } from './triggerKinds.js';
import { findTriggers, type ScaledObjectTriggers } from './triggers.js';
import { refOfScaledObject, scaledObjectName, type ScaledObjectRef } from './kinds.js';
import { updateScaledObject } from './update.js';

/** Reading and writing the calibrated thresholds of a KEDA ScaledObject's queue-depth and p95-latency triggers. */

/** The thresholds as KEDA strings: the queue values as integers, the latency in seconds to 0.1 s. */
export function formatKedaThresholds(thresholds: Thresholds): ThresholdChange['next'] {
  const queue = Math.round(thresholds.queueDepthPerPod.value);
  if (!Number.isFinite(queue) || queue < 1)
    throw new CalibrationThresholdInvalidError(
      'thresholds.queueDepthPerPod',
      thresholds.queueDepthPerPod.value,
      'a finite number that rounds to an integer >= 1 (waiting requests per Pod)',
    );
  const activation = Math.round(thresholds.queueActivation.value);
  if (!Number.isFinite(activation) || activation < 0)
    throw new CalibrationThresholdInvalidError(
      'thresholds.queueActivation',
      thresholds.queueActivation.value,
      'a finite number that rounds to an integer >= 0 (waiting requests)',
    );
  const latency = Math.round(thresholds.p95LatencySeconds.value * 10) / 10;
  if (!Number.isFinite(latency) || latency < 0.1)
    throw new CalibrationThresholdInvalidError(
      'thresholds.p95LatencySeconds',
      thresholds.p95LatencySeconds.value,
      'a finite number of seconds that rounds to at least 0.1',
    );
  return { queueDepthPerPod: String(queue), queueActivation: String(activation), p95LatencySeconds: String(latency) };
}

/**
 * What applying `thresholds` would change (`applied: false`): the live values (null where a field is absent), the
 * new ones as KEDA strings, and a unified-diff-like text of the changed lines, each hunk naming its trigger. The
 * diff is empty when nothing would change.
 */
export function planThresholdChange(scaledObject: KubeObject, thresholds: Thresholds): ThresholdChange {
  const triggers = findTriggers(scaledObject);
  const next = formatKedaThresholds(thresholds);
  const previous = {
    queueDepthPerPod: triggers.queueDepth.metadata.threshold ?? null,
    queueActivation: triggers.queueDepth.metadata.activationThreshold ?? null,
    p95LatencySeconds: triggers.p95Latency.metadata.threshold ?? null,
  };
  return {
    scaledObject: refOfScaledObject(scaledObject),
    previous,
    next,
    diff: renderDiff(scaledObjectName(scaledObject), triggers, previous, next),
    applied: false,
  };
}

/**
 * Writes `change.next` into the live ScaledObject's triggers (found again on every attempt) with read-modify-write:
 * a Conflict re-reads and re-applies. Applying the same change twice writes nothing the second time.
 */
export async function applyThresholdChange(cluster: ClusterClient, change: ThresholdChange): Promise<ThresholdChange> {
  await writeThresholds(cluster, change.scaledObject, change.next, 'apply the thresholds to');
  return { ...change, applied: true };
}

/** Puts `change.previous` back (a field that was absent is removed again); idempotent like applyThresholdChange. */
export async function rollbackThresholdChange(
  cluster: ClusterClient,
  change: ThresholdChange,
): Promise<ThresholdChange> {
  await writeThresholds(cluster, change.scaledObject, change.previous, 'roll the thresholds back on');
  return { ...change, applied: false };
}

/** The three threshold values as KEDA strings; null where the field is absent. */
export type ThresholdValues = ThresholdChange['previous'];

/** The live ScaledObject's threshold values (null where absent). */
export function liveThresholdValues(scaledObject: KubeObject): ThresholdValues {
  const triggers = findTriggers(scaledObject);
  return {
    queueDepthPerPod: triggers.queueDepth.metadata.threshold ?? null,
    queueActivation: triggers.queueDepth.metadata.activationThreshold ?? null,
    p95LatencySeconds: triggers.p95Latency.metadata.threshold ?? null,
  };
}

/** The diff from the live values to `values` (empty when equal), in the format of planThresholdChange's. */
export function thresholdValuesDiff(scaledObject: KubeObject, values: ThresholdValues, label: string): string {
  const triggers = findTriggers(scaledObject);
  return renderDiff(scaledObjectName(scaledObject), triggers, liveThresholdValues(scaledObject), values, label);
}

/** Writes `values` into the live ScaledObject (a null removes the field); read-modify-write, idempotent. */
export async function writeThresholdValues(
  cluster: ClusterClient,
  ref: ScaledObjectRef,
  values: ThresholdValues,
): Promise<void> {
  await writeThresholds(cluster, ref, values, 'roll the thresholds back on');
}

// ---------------------------------------------------------------------------------------------------------------

async function writeThresholds(
  cluster: ClusterClient,
  ref: ScaledObjectRef,
  values: ThresholdValues,
  verb: string,
): Promise<void> {
  await updateScaledObject(cluster, ref, verb, (live) => {
    const triggers = findTriggers(live);
    const list = (live.spec as { triggers: Array<{ metadata: Record<string, string> }> }).triggers;
    setField(list[triggers.queueDepth.index]?.metadata, 'threshold', values.queueDepthPerPod);
    setField(list[triggers.queueDepth.index]?.metadata, 'activationThreshold', values.queueActivation);
    setField(list[triggers.p95Latency.index]?.metadata, 'threshold', values.p95LatencySeconds);
  });
}

function setField(metadata: Record<string, string> | undefined, key: string, value: string | null): void {
  if (metadata === undefined) return;
  if (value === null) delete metadata[key];
  else metadata[key] = value;
}

function renderDiff(
  who: string,
  triggers: ScaledObjectTriggers,
  previous: ThresholdValues,
  next: ThresholdValues,
  label = 'calibrated',
): string {
  const hunks: string[] = [];
  const hunk = (kind: ThresholdTriggerKind, fields: Array<[string, string | null, string | null]>) => {
    const changed = fields.filter(([, before, after]) => before !== after);
    if (changed.length === 0) return;
    const trigger = triggers[kind];
    const named = trigger.name === undefined ? '' : ` "${trigger.name}"`;
    const { label, mentions } = THRESHOLD_TRIGGERS[kind];
    hunks.push(`@@ spec.triggers[${trigger.index}]${named}: ${label} (${mentions}) @@`);
    for (const [key, before, after] of changed) {
      if (before !== null) hunks.push(`- ${key}: ${JSON.stringify(before)}`);
      if (after !== null) hunks.push(`+ ${key}: ${JSON.stringify(after)}`);
    }
  };
  hunk('queueDepth', [
    ['threshold', previous.queueDepthPerPod, next.queueDepthPerPod],
    ['activationThreshold', previous.queueActivation, next.queueActivation],
  ]);
  hunk('p95Latency', [['threshold', previous.p95LatencySeconds, next.p95LatencySeconds]]);
  if (hunks.length === 0) return '';
  return [`--- ${who} (live)`, `+++ ${who} (${label})`, ...hunks].join('\n');
}
