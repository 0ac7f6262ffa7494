import type { ClusterClient, KubeObject } from '../kube/index.js';
import type { ThresholdChange, Thresholds } from '../calibration/index.js';
import { CalibrationThresholdInvalidError } from './errors.js';
import { THRESHOLD_TRIGGERS, type ThresholdTriggerKind } from './triggerKinds.js';
import { type FoundTrigger, findTriggers, type ScaledObjectTriggers } from './triggers.js';
import { refOfScaledObject, scaledObjectName, type ScaledObjectRef } from './kinds.js';
import { TRIGGER_METRIC_TYPES } from './scaledObjectManifest.js';
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
  return {
    queueDepthPerPod: String(queue),
    queueActivation: String(activation),
    p95LatencySeconds: String(latency),
    // The calibrated latency threshold is a p95 to hold, not a per-Pod share: compared as a whole (TRIGGER_METRIC_TYPES).
    p95LatencyMetricType: TRIGGER_METRIC_TYPES.p95Latency,
  };
}

/** The threshold values as KEDA strings; null where the field is absent, undefined where it is not managed. */
export type ThresholdValues = ThresholdChange['previous'];
type ThresholdKey = keyof ThresholdValues;

/**
 * Every field the calibration writes: which of the two triggers, where in it (its metadata, or the trigger itself
 * for `metricType`), and the ThresholdValues key that holds it. One table for reading, writing, diffs and GitOps.
 */
const THRESHOLD_FIELDS: ReadonlyArray<{
  key: ThresholdKey;
  trigger: ThresholdTriggerKind;
  field: string;
  place: 'metadata' | 'trigger';
}> = [
  { key: 'queueDepthPerPod', trigger: 'queueDepth', field: 'threshold', place: 'metadata' },
  { key: 'queueActivation', trigger: 'queueDepth', field: 'activationThreshold', place: 'metadata' },
  { key: 'p95LatencySeconds', trigger: 'p95Latency', field: 'threshold', place: 'metadata' },
  { key: 'p95LatencyMetricType', trigger: 'p95Latency', field: 'metricType', place: 'trigger' },
];

/** One field the calibration writes, located in a ScaledObject: the trigger's index and the JSON path below it. */
export interface LocatedThresholdField {
  key: ThresholdKey;
  index: number;
  /** `metadata/threshold` or `metricType`. */
  path: string;
}

/** Where each field is in `scaledObject` (its triggers found by query). */
export function locateThresholdFields(scaledObject: KubeObject): LocatedThresholdField[] {
  const triggers = findTriggers(scaledObject);
  return THRESHOLD_FIELDS.map(({ key, trigger, field, place }) => ({
    key,
    index: triggers[trigger].index,
    path: place === 'metadata' ? `metadata/${field}` : field,
  }));
}

/** The object that holds the field at `path` of `trigger` (the trigger, or its metadata), and the field's key. */
export function triggerFieldHolder(
  trigger: Record<string, unknown>,
  path: string,
): { holder: Record<string, unknown> | undefined; key: string } {
  const [first, second] = path.split('/') as [string, string | undefined];
  if (second === undefined) return { holder: trigger, key: first };
  const holder = trigger[first];
  return {
    holder: typeof holder === 'object' && holder !== null ? (holder as Record<string, unknown>) : undefined,
    key: second,
  };
}

/** Sets (or, for null, removes) the field at `path` of `trigger`; undefined leaves it alone. */
export function setTriggerField(
  trigger: Record<string, unknown> | undefined,
  path: string,
  value: string | null | undefined,
): void {
  if (trigger === undefined || value === undefined) return;
  const { holder, key } = triggerFieldHolder(trigger, path);
  if (holder === undefined) return;
  if (value === null) delete holder[key];
  else holder[key] = value;
}

function fieldOf(found: FoundTrigger, field: string, place: 'metadata' | 'trigger'): string | null {
  return (place === 'metadata' ? found.metadata[field] : found.metricType) ?? null;
}

/**
 * What applying `thresholds` would change (`applied: false`): the live values (null where a field is absent), the
 * new ones as KEDA strings, and a unified-diff-like text of the changed lines, each hunk naming its trigger. The
 * diff is empty when nothing would change.
 */
export function planThresholdChange(scaledObject: KubeObject, thresholds: Thresholds): ThresholdChange {
  const triggers = findTriggers(scaledObject);
  const next = formatKedaThresholds(thresholds);
  const previous = liveThresholdValues(scaledObject);
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

/** The live ScaledObject's values of every field the calibration writes (null where absent). */
export function liveThresholdValues(scaledObject: KubeObject): Required<ThresholdValues> {
  const triggers = findTriggers(scaledObject);
  const values = Object.fromEntries(
    THRESHOLD_FIELDS.map(({ key, trigger, field, place }) => [key, fieldOf(triggers[trigger], field, place)]),
  );
  return values as Required<ThresholdValues>;
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
    const list = (live.spec as { triggers: Array<Record<string, unknown>> }).triggers;
    for (const { key, index, path } of locateThresholdFields(live)) setTriggerField(list[index], path, values[key]);
  });
}

function renderDiff(
  who: string,
  triggers: ScaledObjectTriggers,
  previous: ThresholdValues,
  next: ThresholdValues,
  label = 'calibrated',
): string {
  const hunks: string[] = [];
  const hunk = (kind: ThresholdTriggerKind) => {
    // A field `next` does not manage (undefined) is not changed.
    const changed = THRESHOLD_FIELDS.filter((f) => f.trigger === kind && next[f.key] !== undefined)
      .map(({ key, field }): [string, string | null, string | null] => [
        field,
        previous[key] ?? null,
        next[key] ?? null,
      ])
      .filter(([, before, after]) => before !== after);
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
  hunk('queueDepth');
  hunk('p95Latency');
  if (hunks.length === 0) return '';
  return [`--- ${who} (live)`, `+++ ${who} (${label})`, ...hunks].join('\n');
}
