import { KubeError, KubeNotFoundError } from '../kube/errors.js';
import type { ClusterClient, KubeObject, ObjectRef } from '../kube/types.js';
import { VLLM } from '../metrics/names.js';
import {
  CalibrationDependencyUnavailableError,
  CalibrationError,
  CalibrationInputInvalidError,
  CalibrationTargetNotFoundError,
} from './errors.js';
import type { ThresholdChange, Thresholds } from './types.js';

/**
 * Reading and writing the calibrated thresholds of a KEDA ScaledObject, and pausing KEDA while the calibration
 * measures one replica. The triggers are found by what their queries ask for, not by position: a ScaledObject the
 * calibration adopts may list them in another order, or have more triggers.
 */

/** The ScaledObject the calibration works on. */
export interface ScaledObjectRef {
  namespace: string;
  name: string;
}

/** One of the two triggers the calibration sets. */
export interface FoundTrigger {
  /** Its position in `spec.triggers`. */
  index: number;
  /** The trigger's `name`, when it has one. */
  name: string | undefined;
  query: string;
  /** The trigger's metadata as written (KEDA reads every value as a string). */
  metadata: Record<string, string>;
}

export interface ScaledObjectTriggers {
  queueDepth: FoundTrigger;
  p95Latency: FoundTrigger;
}

/** What identifies each trigger: the vLLM series its query reads. */
export const THRESHOLD_TRIGGERS = {
  queueDepth: {
    label: 'queue depth',
    mentions: VLLM.numRequestsWaiting,
    // Not `vllm:num_requests_waiting_by_reason`, a different series.
    pattern: new RegExp(`${escapeRegExp(VLLM.numRequestsWaiting)}(?![A-Za-z0-9_:])`),
  },
  p95Latency: {
    label: 'p95 latency',
    mentions: VLLM.e2eRequestLatency.replace(/^vllm:/, ''),
    // Also matches a recording rule or the `_bucket` series.
    pattern: new RegExp(escapeRegExp(VLLM.e2eRequestLatency.replace(/^vllm:/, ''))),
  },
} as const;

export type ThresholdTriggerKind = keyof typeof THRESHOLD_TRIGGERS;

/** KEDA's annotation that scales the target to a count and stops autoscaling (KEDA v2.20, "Pause autoscaling"). */
export const KEDA_PAUSED_REPLICAS_ANNOTATION = 'autoscaling.keda.sh/paused-replicas';

/**
 * Where a pause by the calibration records what it replaced: the user's own paused-replicas value, or `""` when there
 * was none. It lives on the ScaledObject so that a retried pause does not mistake the calibration's own pause for
 * the user's, and so that a resume needs nothing but the object.
 */
export const PAUSE_RECORD_ANNOTATION = 'vllm-eks-pilot/paused-replicas-before';

/** The trigger the calibration looks for is missing from the ScaledObject. */
export class CalibrationTriggerNotFoundError extends CalibrationError {
  constructor(
    readonly scaledObject: string,
    readonly trigger: ThresholdTriggerKind,
  ) {
    const { label, mentions } = THRESHOLD_TRIGGERS[trigger];
    super(
      `ScaledObject ${scaledObject} has no ${label} trigger; accepted: a prometheus trigger whose query mentions ` +
        `${mentions}`,
    );
    this.name = 'CalibrationTriggerNotFoundError';
  }
}

/** More than one trigger could be the one the calibration would change, so it changes none. */
export class CalibrationTriggerAmbiguousError extends CalibrationError {
  constructor(
    readonly scaledObject: string,
    readonly trigger: ThresholdTriggerKind,
    readonly indexes: readonly number[],
  ) {
    const { label, mentions } = THRESHOLD_TRIGGERS[trigger];
    super(
      `ScaledObject ${scaledObject} has ${indexes.length} triggers that could be the ${label} trigger ` +
        `(${indexes.map((i) => `spec.triggers[${i}]`).join(', ')}); accepted: exactly one prometheus trigger whose ` +
        `query mentions ${mentions}, and not the same trigger for both thresholds`,
    );
    this.name = 'CalibrationTriggerAmbiguousError';
  }
}

/** A derived threshold cannot be written as a KEDA threshold (not finite, or below what KEDA accepts). */
export class CalibrationThresholdInvalidError extends CalibrationError {
  constructor(
    readonly field: string,
    readonly value: number,
    accepted: string,
  ) {
    super(`${field}: ${value} cannot be written as a KEDA threshold; accepted: ${accepted}`);
    this.name = 'CalibrationThresholdInvalidError';
  }
}

/** Finds the queue-depth and p95-latency triggers by their queries; throws a named error when either is missing. */
export function findTriggers(scaledObject: KubeObject): ScaledObjectTriggers {
  const who = nameOf(scaledObject);
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
    scaledObject: refOf(scaledObject),
    previous,
    next,
    diff: renderDiff(nameOf(scaledObject), triggers, previous, next),
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

/** What a pause did. */
export interface ScaledObjectPause {
  scaledObject: ScaledObjectRef;
  /** The paused-replicas value now set. */
  pausedReplicas: string;
  /** The user's own paused-replicas value that the pause replaced; null when the user had none. */
  previousPausedReplicas: string | null;
}

/**
 * Pauses KEDA at `replicas` (the `paused-replicas` annotation) and records what it replaced, so that
 * resumeScaledObject gives a user's own pause back. Calling it again (a retried task) keeps the first record.
 */
export async function pauseScaledObject(
  cluster: ClusterClient,
  ref: ScaledObjectRef,
  replicas: number,
): Promise<ScaledObjectPause> {
  if (!Number.isInteger(replicas) || replicas < 0)
    throw new CalibrationInputInvalidError([
      { path: 'replicas', message: `${replicas} is not a replica count; accepted: an integer >= 0` },
    ]);
  let previous: string | null = null;
  await update(cluster, ref, 'pause', (live) => {
    const annotations = { ...(live.metadata.annotations ?? {}) };
    const record = annotations[PAUSE_RECORD_ANNOTATION];
    if (record === undefined) {
      previous = annotations[KEDA_PAUSED_REPLICAS_ANNOTATION] ?? null;
      annotations[PAUSE_RECORD_ANNOTATION] = previous ?? '';
    } else {
      previous = record === '' ? null : record;
    }
    annotations[KEDA_PAUSED_REPLICAS_ANNOTATION] = String(replicas);
    live.metadata.annotations = annotations;
  });
  return { scaledObject: { ...ref }, pausedReplicas: String(replicas), previousPausedReplicas: previous };
}

/** What a resume did, with the reason. */
export interface ScaledObjectResume {
  scaledObject: ScaledObjectRef;
  /**
   * `resumed`: the pause is gone and KEDA scales again; `restoredUserPause`: the user's own paused-replicas is back;
   * `notPaused`: the calibration had no pause on it (never paused, or already resumed), so nothing changed.
   */
  action: 'resumed' | 'restoredUserPause' | 'notPaused';
  /** The paused-replicas value after the resume; null when there is none. */
  pausedReplicas: string | null;
  reason: string;
}

/** Undoes pauseScaledObject: removes the calibration's pause, or restores the user's own one. Idempotent. */
export async function resumeScaledObject(cluster: ClusterClient, ref: ScaledObjectRef): Promise<ScaledObjectResume> {
  let result: Omit<ScaledObjectResume, 'scaledObject'> = {
    action: 'notPaused',
    pausedReplicas: null,
    reason: 'the ScaledObject carries no pause by the calibration',
  };
  await update(cluster, ref, 'resume', (live) => {
    const annotations = { ...(live.metadata.annotations ?? {}) };
    const record = annotations[PAUSE_RECORD_ANNOTATION];
    if (record === undefined) {
      const current = annotations[KEDA_PAUSED_REPLICAS_ANNOTATION] ?? null;
      result = {
        action: 'notPaused',
        pausedReplicas: current,
        reason: `the ScaledObject carries no pause by the calibration (no ${PAUSE_RECORD_ANNOTATION} annotation)`,
      };
      return;
    }
    delete annotations[PAUSE_RECORD_ANNOTATION];
    if (record === '') {
      delete annotations[KEDA_PAUSED_REPLICAS_ANNOTATION];
      result = { action: 'resumed', pausedReplicas: null, reason: 'removed the pause; KEDA scales again' };
    } else {
      annotations[KEDA_PAUSED_REPLICAS_ANNOTATION] = record;
      result = {
        action: 'restoredUserPause',
        pausedReplicas: record,
        reason: `the ScaledObject was paused at ${record} replicas before the calibration; that pause is back`,
      };
    }
    live.metadata.annotations = annotations;
  });
  return { scaledObject: { ...ref }, ...result };
}

// ---------------------------------------------------------------------------------------------------------------

type ThresholdValues = ThresholdChange['previous'];

async function writeThresholds(
  cluster: ClusterClient,
  ref: ScaledObjectRef,
  values: ThresholdValues,
  verb: string,
): Promise<void> {
  await update(cluster, ref, verb, (live) => {
    const triggers = findTriggers(live);
    const list = (live.spec as { triggers: Array<{ metadata: Record<string, string> }> }).triggers;
    setField(list[triggers.queueDepth.index]?.metadata, 'threshold', values.queueDepthPerPod);
    setField(list[triggers.queueDepth.index]?.metadata, 'activationThreshold', values.queueActivation);
    setField(list[triggers.p95Latency.index]?.metadata, 'threshold', values.p95LatencySeconds);
  });
}

/** updateWithRetry on the ScaledObject, with the calibration's error names (Step Functions matches on them). */
async function update(
  cluster: ClusterClient,
  ref: ScaledObjectRef,
  verb: string,
  mutate: (live: KubeObject) => void,
): Promise<void> {
  const objectRef: ObjectRef = { apiVersion: 'keda.sh/v1alpha1', kind: 'ScaledObject', ...ref };
  const who = `ScaledObject ${ref.namespace}/${ref.name}`;
  try {
    await cluster.updateWithRetry(objectRef, mutate);
  } catch (error) {
    if (error instanceof KubeNotFoundError)
      throw new CalibrationTargetNotFoundError(`cannot ${verb} ${who}: it does not exist`, { cause: error });
    if (error instanceof KubeError && error.retryable)
      throw new CalibrationDependencyUnavailableError(`cannot ${verb} ${who}: ${error.message}`, { cause: error });
    throw error;
  }
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
  next: ThresholdChange['next'],
): string {
  const hunks: string[] = [];
  const hunk = (kind: ThresholdTriggerKind, fields: Array<[string, string | null, string]>) => {
    const changed = fields.filter(([, before, after]) => before !== after);
    if (changed.length === 0) return;
    const trigger = triggers[kind];
    const named = trigger.name === undefined ? '' : ` "${trigger.name}"`;
    const { label, mentions } = THRESHOLD_TRIGGERS[kind];
    hunks.push(`@@ spec.triggers[${trigger.index}]${named}: ${label} (${mentions}) @@`);
    for (const [key, before, after] of changed) {
      if (before !== null) hunks.push(`- ${key}: ${JSON.stringify(before)}`);
      hunks.push(`+ ${key}: ${JSON.stringify(after)}`);
    }
  };
  hunk('queueDepth', [
    ['threshold', previous.queueDepthPerPod, next.queueDepthPerPod],
    ['activationThreshold', previous.queueActivation, next.queueActivation],
  ]);
  hunk('p95Latency', [['threshold', previous.p95LatencySeconds, next.p95LatencySeconds]]);
  if (hunks.length === 0) return '';
  return [`--- ${who} (live)`, `+++ ${who} (calibrated)`, ...hunks].join('\n');
}

function asPrometheusTrigger(trigger: unknown, index: number): FoundTrigger | undefined {
  if (typeof trigger !== 'object' || trigger === null) return undefined;
  const { type, name, metadata } = trigger as { type?: unknown; name?: unknown; metadata?: unknown };
  if (type !== 'prometheus' || typeof metadata !== 'object' || metadata === null) return undefined;
  const query = (metadata as { query?: unknown }).query;
  if (typeof query !== 'string') return undefined;
  return {
    index,
    name: typeof name === 'string' && name !== '' ? name : undefined,
    query,
    metadata: { ...(metadata as Record<string, string>) },
  };
}

function refOf(scaledObject: KubeObject): ScaledObjectRef {
  return { namespace: scaledObject.metadata.namespace ?? 'default', name: scaledObject.metadata.name };
}

function nameOf(scaledObject: KubeObject): string {
  const { namespace, name } = refOf(scaledObject);
  return `${namespace}/${name}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
