import { CalibrationInputInvalidError } from '../calibration/index.js';
import type { ClusterClient } from '../kube/index.js';
import { KEDA_PAUSED_REPLICAS_ANNOTATION, PAUSE_RECORD_ANNOTATION, type ScaledObjectRef } from './kinds.js';
import { updateScaledObject } from './update.js';

/** Pausing KEDA while the calibration measures one replica, and giving it back (or the user's own pause) after. */

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
  await updateScaledObject(cluster, ref, 'pause', (live) => {
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
  await updateScaledObject(cluster, ref, 'resume', (live) => {
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
