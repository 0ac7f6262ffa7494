/** Jobs as the product runs them (the k6 warmup and load steps): created once, read by their conditions. */
import { KINDS } from './kinds.js';
import type { ClusterClient, KubeObject, ObjectRef } from './types.js';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/**
 * Creates the Job unless one of that name exists, and returns the live one either way: a retried task must not
 * start a second load. `created` says which; `createdAtMs` is `nowMs` (taken just before the create, to the
 * millisecond) for a new Job, and the creationTimestamp (whole seconds) of one found.
 */
export async function ensureJob(
  cluster: Pick<ClusterClient, 'get' | 'apply'>,
  job: KubeObject,
  nowMs: number,
): Promise<{ job: KubeObject; created: boolean; createdAtMs: number }> {
  const ref: ObjectRef = { ...KINDS.job, namespace: job.metadata.namespace ?? 'default', name: job.metadata.name };
  const existing = await cluster.get(ref);
  if (existing !== undefined) {
    const at = Date.parse(existing.metadata.creationTimestamp ?? '');
    return { job: existing, created: false, createdAtMs: Number.isFinite(at) ? Math.min(at, nowMs) : nowMs };
  }
  const { object } = await cluster.apply(job);
  return { job: object, created: true, createdAtMs: nowMs };
}

/** Where a Job stands. */
export type JobPhase =
  { phase: 'running'; reason: string } | { phase: 'succeeded'; reason: string } | { phase: 'failed'; reason: string };

/** A Job's phase from its terminal conditions (Complete / Failed), as `kubectl wait --for=condition=...` reads them. */
export function jobPhase(job: KubeObject): JobPhase {
  const status = (job.status ?? {}) as {
    conditions?: Condition[];
    active?: number;
    succeeded?: number;
    failed?: number;
  };
  const condition = (type: string) => status.conditions?.find((c) => c.type === type && c.status === 'True');
  const failed = condition('Failed');
  if (failed) return { phase: 'failed', reason: `${failed.reason ?? 'Failed'}: ${failed.message ?? ''}`.trim() };
  const complete = condition('Complete');
  if (complete) return { phase: 'succeeded', reason: `${complete.reason ?? 'Complete'}` };
  return { phase: 'running', reason: `${status.active ?? 0} Pod(s) active` };
}

/** When a Job completed (epoch ms, `status.completionTime`), or undefined while it runs. */
export function jobCompletionMs(job: KubeObject): number | undefined {
  const at = Date.parse((job.status as { completionTime?: string } | undefined)?.completionTime ?? '');
  return Number.isFinite(at) ? at : undefined;
}

/** The Job's newest Pod (label `job-name`, which the Job controller sets), or undefined. */
export async function jobPod(
  cluster: Pick<ClusterClient, 'listPods'>,
  namespace: string,
  jobName: string,
): Promise<KubeObject | undefined> {
  const pods = await cluster.listPods(namespace, { 'job-name': jobName });
  return pods
    .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''))
    .at(-1);
}
