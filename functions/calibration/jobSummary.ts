import { parseK6SummaryFromLog } from '../../shared/calibration/measure.js';
import { CalibrationJobFailedError } from '../../shared/calibration/errors.js';
import type { K6Summary } from '../../shared/kube/k6.js';
import type { ClusterClient, KubeObject } from '../../shared/kube/types.js';
import type { JobRef } from './event.js';
import { JOB, jobPod } from './kube.js';

/** A finished k6 Job's summary (from its Pod's log), with the Pod and the live Job for their times. */
export interface JobSummary {
  summary: K6Summary;
  pod: KubeObject;
  job: KubeObject;
}

/** Reads the k6 summary of a finished Job; CalibrationJobFailedError when the Job, its Pod or the summary is missing. */
export async function readJobSummary(cluster: ClusterClient, ref: JobRef): Promise<JobSummary> {
  const where = `${ref.component} Job ${ref.namespace}/${ref.name}`;
  const job = await cluster.get({ ...JOB, namespace: ref.namespace, name: ref.name });
  if (job === undefined) throw new CalibrationJobFailedError(`${where} is gone: its k6 summary cannot be read`);
  const pod = await jobPod(cluster, ref.namespace, ref.name);
  if (pod === undefined) throw new CalibrationJobFailedError(`${where} has no Pod left: its k6 summary cannot be read`);
  const log = await cluster.readPodLog(ref.namespace, pod.metadata.name);
  try {
    return { summary: parseK6SummaryFromLog(log), pod, job };
  } catch (error) {
    if (error instanceof CalibrationJobFailedError)
      throw new CalibrationJobFailedError(`${where} (Pod ${pod.metadata.name}): ${error.message}`);
    throw error;
  }
}

/** The summary of a warmup that sent nothing (`warmup.requests` 0): the readiness gate then skips its latency check. */
export const NO_WARMUP: K6Summary = {
  executor: 'shared-iterations',
  rate: null,
  durationSeconds: 0,
  iterations: 0,
  droppedIterations: 0,
  httpReqs: 0,
  httpReqFailed: 0,
  iterationsRate: 0,
  httpReqDurationMs: { avg: 0, min: 0, med: 0, max: 0, p90: 0, p95: 0, p99: 0 },
};
