import { containerStartMs, jobPod, type ClusterClient, type KubeObject } from '../../kube/index.js';
import { CalibrationJobFailedError } from '../errors.js';
import type { StepEnding } from '../types.js';
import type { LoadState, WatchState } from './state.js';

/** The hold window of one load step as AMP must measure it: when the load started, when it ended, and how. */
export interface StepWindow {
  startMs: number;
  endMs: number;
  ending: StepEnding;
}

/**
 * The window of a step that WatchLoadStep ended early: from the load's start to its `windowEndMs` (the latest AMP
 * sample the decision saw, or the moment the k6 Job was stopped when k6's live metrics ended it). null when the step was not ended early (its last look is of another Job, or says `held`/`continue`).
 */
export function earlyWindow(load: LoadState, watch: WatchState | null): StepWindow | null {
  if (watch?.job !== load.job.name || watch.status !== 'ended') return null;
  if (watch.ending === null || watch.loadStartMs === null || watch.windowEndMs === null) return null;
  return { startMs: watch.loadStartMs, endMs: watch.windowEndMs, ending: watch.ending };
}

/**
 * The window of a step held in full: from the load's start (the later of the Job's creation, to the millisecond, and
 * the k6 container's start, to the second: as WatchLoadStep computes it) for the planned hold.
 */
export function heldWindow(load: LoadState, watch: WatchState | null, pod: KubeObject): StepWindow {
  const startMs = Math.max(load.job.createdAtMs, containerStartMs(pod) ?? load.job.createdAtMs);
  return {
    startMs,
    endMs: startMs + load.holdSeconds * 1000,
    ending: {
      kind: 'held',
      reason:
        watch?.job === load.job.name ? watch.reason : `held the planned ${load.holdSeconds} s (no look was recorded)`,
      heldSeconds: load.holdSeconds,
      plannedHoldSeconds: load.holdSeconds,
    },
  };
}

/** The step's window, reading the k6 Pod when the step was held in full (its container's start opens the window). */
export async function stepWindow(
  cluster: ClusterClient,
  load: LoadState,
  watch: WatchState | null,
): Promise<StepWindow> {
  const early = earlyWindow(load, watch);
  if (early !== null) return early;
  const pod = await jobPod(cluster, load.job.namespace, load.job.name);
  if (pod === undefined)
    throw new CalibrationJobFailedError(
      `load Job ${load.job.namespace}/${load.job.name} has no Pod left: the start of its window cannot be read`,
    );
  return heldWindow(load, watch, pod);
}
