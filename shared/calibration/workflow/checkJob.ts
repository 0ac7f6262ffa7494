import * as z from 'zod';
import { jobPhase, KINDS } from '../../kube/index.js';
import { CalibrationJobFailedError, CalibrationJobTimeoutError } from '../errors.js';
import { jobFailedError } from './k6Jobs.js';
import type { BasePorts, CalibrationPorts } from './ports.js';
import { baseEventShape, jobRefSchema, previousCheckSchema } from './state.js';
import type { CalibrationStep } from './step.js';

type Ports = BasePorts & Pick<CalibrationPorts, 'cluster'>;
const event = z.object({ ...baseEventShape, job: jobRefSchema.nullable(), previous: previousCheckSchema });

/** Seconds between looks at a running Job: a warmup takes minutes, a load step ends soon after its hold. */
export const JOB_POLL_SECONDS = { warmup: 5, load: 2 } as const;

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
export async function checkJob(
  ports: Ports,
  { input, execution, job, previous }: z.output<typeof event>,
): Promise<JobCheck> {
  if (job === null)
    return { status: 'succeeded', job: null, reason: 'no Job to wait for', attempts: 0, waitSeconds: 0 };
  const cluster = await ports.cluster(input.target);
  const attempts = (previous?.job === job.name ? previous.attempts : 0) + 1;
  const live = await cluster.get({ ...KINDS.job, namespace: job.namespace, name: job.name });
  const where = `${job.component} Job ${job.namespace}/${job.name}`;
  if (live === undefined) throw new CalibrationJobFailedError(`${where} is gone: it was deleted before it finished`);
  const phase = jobPhase(live);
  if (phase.phase === 'failed') throw await jobFailedError(cluster, job, phase.reason);
  const elapsedSeconds = (ports.clock.now() - job.createdAtMs) / 1000;
  if (phase.phase === 'running' && elapsedSeconds > job.boundSeconds)
    throw new CalibrationJobTimeoutError(
      `${where} is still running after ${elapsedSeconds.toFixed(0)} s (bound ${job.boundSeconds} s): ${phase.reason}`,
    );
  ports.logger.info('job checked', { execution: execution.name, job: job.name, status: phase.phase, attempts });
  return {
    status: phase.phase,
    job: job.name,
    reason: phase.reason,
    attempts,
    waitSeconds: JOB_POLL_SECONDS[job.component],
  };
}

export const checkJobStep = {
  name: 'checkJob',
  label: 'CheckJob',
  placeholder: 'CheckJobFunctionArn',
  event,
  run: checkJob,
} satisfies CalibrationStep<typeof event, JobCheck, Ports>;
