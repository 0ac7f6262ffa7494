import * as z from 'zod';
import { CalibrationJobFailedError, CalibrationJobTimeoutError } from '../../shared/calibration/errors.js';
import type { ClusterClient } from '../../shared/kube/types.js';
import type { CalibrationDeps } from './deps.js';
import { baseEventShape, jobRefSchema, parseEvent, previousCheckSchema, type JobRef } from './event.js';
import { JOB, jobPhase, jobPod, tail } from './kube.js';

const eventSchema = z.object({ ...baseEventShape, job: jobRefSchema.nullable(), previous: previousCheckSchema });

/** Seconds between looks at a running Job: a warmup takes minutes, a load step ends soon after its hold. */
export const JOB_POLL_SECONDS = { warmup: 5, load: 2 } as const;
/** Lines of the k6 log quoted in a failure. */
const LOG_TAIL_LINES = 15;

/** `$.warmupCheck` / `$.loadCheck`: one look at a k6 Job. */
export interface JobCheck {
  status: 'running' | 'succeeded';
  /** The Job looked at (a new step's check starts counting again). */
  job: string | null;
  reason: string;
  attempts: number;
  waitSeconds: number;
}

/**
 * CheckWarmup / CheckLoadJob: whether the k6 Job finished. Running → `running`; Complete → `succeeded`; Failed →
 * CalibrationJobFailedError with the Job's reason and the tail of its k6 log; still running past its bound (the Job's
 * deadline plus a margin, by the clock) → CalibrationJobTimeoutError. No Job (warmup skipped) → `succeeded`.
 */
export async function checkJob(deps: CalibrationDeps, event: unknown): Promise<JobCheck> {
  const { input, execution, job, previous } = parseEvent('CheckJob', eventSchema, event);
  if (job === null)
    return { status: 'succeeded', job: null, reason: 'no Job to wait for', attempts: 0, waitSeconds: 0 };
  const cluster = await deps.cluster(input.target);
  const attempts = (previous?.job === job.name ? previous.attempts : 0) + 1;
  const live = await cluster.get({ ...JOB, namespace: job.namespace, name: job.name });
  const where = `${job.component} Job ${job.namespace}/${job.name}`;
  if (live === undefined) throw new CalibrationJobFailedError(`${where} is gone: it was deleted before it finished`);
  const phase = jobPhase(live);
  if (phase.phase === 'failed') throw await jobFailedError(cluster, job, phase.reason);
  const elapsedSeconds = (deps.clock.now() - job.createdAtMs) / 1000;
  if (phase.phase === 'running' && elapsedSeconds > job.boundSeconds)
    throw new CalibrationJobTimeoutError(
      `${where} is still running after ${elapsedSeconds.toFixed(0)} s (bound ${job.boundSeconds} s): ${phase.reason}`,
    );
  deps.logger.info('job checked', { execution: execution.name, job: job.name, status: phase.phase, attempts });
  return {
    status: phase.phase,
    job: job.name,
    reason: phase.reason,
    attempts,
    waitSeconds: JOB_POLL_SECONDS[job.component],
  };
}

/** CalibrationJobFailedError for a Failed k6 Job: its reason and the tail of its k6 log. */
export async function jobFailedError(
  cluster: ClusterClient,
  job: JobRef,
  reason: string,
): Promise<CalibrationJobFailedError> {
  const where = `${job.component} Job ${job.namespace}/${job.name}`;
  return new CalibrationJobFailedError(`${where} failed (${reason}); ${await logTail(cluster, job)}`);
}

/** `k6 log tail: ...` of the Job's Pod, or why there is none. */
async function logTail(cluster: ClusterClient, job: JobRef): Promise<string> {
  const pod = await jobPod(cluster, job.namespace, job.name);
  if (pod === undefined) return 'no Pod of the Job is left to read a log from';
  try {
    const log = await cluster.readPodLog(job.namespace, pod.metadata.name, { tailLines: LOG_TAIL_LINES });
    return `k6 log tail (Pod ${pod.metadata.name}):\n${tail(log, LOG_TAIL_LINES)}`;
  } catch (error) {
    return `the log of Pod ${pod.metadata.name} could not be read: ${(error as Error).message}`;
  }
}
