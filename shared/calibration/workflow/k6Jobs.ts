import { jobPod, KINDS, type ClusterClient, type K6Summary, type KubeObject } from '../../kube/index.js';
import type { K6LoadJobInputSpec } from '../../kube/manifests/index.js';
import { isFixed, lengthMean } from '../../load/index.js';
import { CalibrationJobFailedError } from '../errors.js';
import { requestMixOf, type CalibrationInput } from '../input.js';
import { parseK6SummaryFromLog } from '../measure.js';
import { EXECUTION_LABEL } from './names.js';
import type { JobRef } from './state.js';

/** The calibration's k6 Jobs: reading a finished one's summary, and the failure of one with its log's tail. */

/** k6 Jobs stop on their own (activeDeadlineSeconds); CheckJob allows this much more before giving up on one. */
export const JOB_BOUND_SLACK_SECONDS = 60;
/** Lines of the k6 log quoted in a failure. */
const LOG_TAIL_LINES = 15;

/** A finished k6 Job's summary (from its Pod's log), with the Pod and the live Job for their times. */
export interface JobSummary {
  summary: K6Summary;
  pod: KubeObject;
  job: KubeObject;
}

/** Reads the k6 summary of a finished Job; CalibrationJobFailedError when the Job, its Pod or the summary is missing. */
export async function readJobSummary(cluster: ClusterClient, ref: JobRef): Promise<JobSummary> {
  const where = `${ref.component} Job ${ref.namespace}/${ref.name}`;
  const job = await cluster.get({ ...KINDS.job, namespace: ref.namespace, name: ref.name });
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

/** The last `lines` lines of text. */
function tail(text: string, lines: number): string {
  return text.trimEnd().split(/\r?\n/).slice(-lines).join('\n');
}

/** The object with the execution label added (the generators take no extra labels for ConfigMaps). */
export function withExecutionLabel(object: KubeObject, label: string): KubeObject {
  return {
    ...object,
    metadata: { ...object.metadata, labels: { ...object.metadata.labels, [EXECUTION_LABEL]: label } },
  };
}

/**
 * The request and Pod fields of a k6 Job from the input: fixed lengths as numbers (the script's K6_ENV.promptTokens
 * and maxTokens, as before mixes), a distribution as the whole mix; streaming; the k6 Pod settings.
 */
export function k6Request(
  input: Pick<CalibrationInput, 'request' | 'k6'>,
): Pick<K6LoadJobInputSpec, 'promptTokens' | 'maxTokens' | 'requestMix' | 'stream' | 'pod'> {
  const mix = requestMixOf(input.request);
  const fixed = isFixed(mix.prompt) && isFixed(mix.output);
  return {
    ...(fixed ? { promptTokens: lengthMean(mix.prompt), maxTokens: lengthMean(mix.output) } : { requestMix: mix }),
    stream: input.request.stream,
    pod: input.k6,
  };
}
