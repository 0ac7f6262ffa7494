import { KubeApiNotFoundError } from '../errors.js';
import type { KubeObject } from '../types.js';
import { startControllerLoop } from './controllerLoop.js';
import { EVENT_TYPES, type EventRecorder } from './events.js';
import {
  type Condition,
  controllerOf,
  controllerRef,
  field,
  findCondition,
  isControlledBy,
  keyOf,
  kubeTime,
  numberOr,
  setCondition,
  splitKey,
} from './meta.js';
import { isPodReady, isPodTerminal, podPhase, POD_PHASES } from './podStatus.js';
import type { Controller, ControllerContext } from './types.js';

const COMPONENT = 'job-controller';
/** Kubernetes' defaults: backoffLimit 6; retries wait 10 s, doubling, up to 6 min. */
const DEFAULT_BACKOFF_LIMIT = 6;
const RETRY_DELAY = { baseMs: 10_000, maxMs: 360_000 } as const;

/**
 * The Job controller: runs Pods until `completions` (default 1) succeeded, `parallelism` (default 1) at a time;
 * a failed Pod is replaced after a back-off until more than `backoffLimit` failed (then the Job fails with
 * BackoffLimitExceeded); `activeDeadlineSeconds` fails it with DeadlineExceeded. Status as Kubernetes 1.31+ writes
 * it: active / ready / succeeded / failed, startTime, completionTime, and the terminal conditions SuccessCriteriaMet +
 * Complete or FailureTarget + Failed. Deleting the Job deletes its Pods (the store's garbage collector), which
 * stops what they run.
 */
export function startJobController(ctx: ControllerContext, events: EventRecorder): Controller {
  const { store, clock } = ctx;
  const loop = startControllerLoop({
    name: 'job',
    ctx,
    watches: [
      { kind: 'Job', keys: (e) => [keyOf(e.object.metadata)] },
      {
        kind: 'Pod',
        keys: (e) => {
          const owner = controllerOf(e.object);
          return owner?.kind === 'Job' ? [`${e.object.metadata.namespace}/${owner.name}`] : [];
        },
      },
    ],
    resyncKeys: () => store.list('Job').map((j) => keyOf(j.metadata)),
    reconcile(key) {
      const { namespace, name } = splitKey(key);
      const job = store.get('Job', namespace, name);
      if (!job) return;
      const conditions = field<Condition[]>(job, 'status', 'conditions') ?? [];
      if (isFinished(conditions)) return;
      const previous = field<Record<string, unknown>>(job, 'status') ?? {};
      const nowMs = clock.now();
      const now = kubeTime(nowMs);
      const pods = () =>
        store.list('Pod', { namespace: namespace as string }).filter((p) => isControlledBy(p, job.metadata.uid));
      const completions = numberOr(field(job, 'spec', 'completions'), 1);
      const parallelism = numberOr(field(job, 'spec', 'parallelism'), 1);
      const backoffLimit = numberOr(field(job, 'spec', 'backoffLimit'), DEFAULT_BACKOFF_LIMIT);
      const deadlineS = field<number>(job, 'spec', 'activeDeadlineSeconds');
      const suspended = field(job, 'spec', 'suspend') === true;

      let all = pods();
      const succeeded = all.filter((p) => podPhase(p) === POD_PHASES.succeeded).length;
      const failed = all.filter((p) => podPhase(p) === POD_PHASES.failed).length;
      let active = all.filter((p) => !isPodTerminal(p));
      const startTime = (previous['startTime'] as string | undefined) ?? (suspended ? undefined : now);

      let verdict: { type: 'Complete' | 'Failed'; reason: string; message: string } | undefined;
      if (succeeded >= completions)
        verdict = {
          type: 'Complete',
          reason: 'CompletionsReached',
          message: 'Reached expected number of succeeded pods',
        };
      else if (failed > backoffLimit)
        verdict = {
          type: 'Failed',
          reason: 'BackoffLimitExceeded',
          message: 'Job has reached the specified backoff limit',
        };
      else if (deadlineS !== undefined && startTime && nowMs - Date.parse(startTime) > deadlineS * 1000)
        verdict = {
          type: 'Failed',
          reason: 'DeadlineExceeded',
          message: 'Job was active longer than specified deadline',
        };

      if (verdict) {
        // A finished Job's remaining Pods are stopped.
        for (const pod of active) deletePod(pod);
        active = [];
      } else if (!suspended) {
        const wanted = Math.min(parallelism, completions - succeeded) - active.length;
        const retryAtMs =
          failed > 0 ? lastFailureMs(all) + Math.min(RETRY_DELAY.baseMs * 2 ** (failed - 1), RETRY_DELAY.maxMs) : 0;
        if (wanted > 0 && nowMs < retryAtMs) {
          loop.queue.addAfter(key, retryAtMs - nowMs);
        } else {
          for (let i = 0; i < wanted; i++) {
            const pod = store.create(podFor(job));
            ctx.log(
              `job ${key}: created Pod ${pod.metadata.name}${failed > 0 ? ` (retry ${failed} of backoffLimit ${backoffLimit})` : ''}`,
            );
            events.record(job, EVENT_TYPES.normal, 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`, COMPONENT);
          }
          all = pods();
          active = all.filter((p) => !isPodTerminal(p));
        }
      }

      let nextConditions = conditions;
      if (verdict) {
        const target = verdict.type === 'Complete' ? 'SuccessCriteriaMet' : 'FailureTarget';
        nextConditions = setCondition(
          nextConditions,
          { type: target, status: 'True', reason: verdict.reason, message: verdict.message, lastProbeTime: now },
          now,
        );
        nextConditions = setCondition(
          nextConditions,
          { type: verdict.type, status: 'True', reason: verdict.reason, message: verdict.message, lastProbeTime: now },
          now,
        );
        ctx.log(`job ${key}: ${verdict.type} (${verdict.reason}: ${succeeded} succeeded, ${failed} failed)`);
        if (verdict.type === 'Complete')
          events.record(job, EVENT_TYPES.normal, 'Completed', 'Job completed', COMPONENT);
        else events.record(job, EVENT_TYPES.warning, verdict.reason, verdict.message, COMPONENT);
      }
      const status: Record<string, unknown> = {
        ...(startTime ? { startTime } : {}),
        ...(verdict?.type === 'Complete' ? { completionTime: now } : {}),
        ...(active.length > 0 ? { active: active.length } : {}),
        ready: active.filter(isPodReady).length,
        terminating: 0,
        ...(succeeded > 0 ? { succeeded } : {}),
        ...(failed > 0 ? { failed } : {}),
        uncountedTerminatedPods: {},
        ...(nextConditions.length > 0 ? { conditions: nextConditions } : {}),
      };
      const fresh = store.get('Job', namespace, name);
      if (fresh) store.update({ ...fresh, status }, { subresource: 'status' });
    },
  });
  return loop;

  function deletePod(pod: KubeObject): void {
    try {
      store.delete('Pod', pod.metadata.namespace, pod.metadata.name);
    } catch (error) {
      if (!(error instanceof KubeApiNotFoundError)) throw error;
    }
  }
}

function isFinished(conditions: Condition[]): boolean {
  return ['Complete', 'Failed'].some((type) => findCondition(conditions, type)?.status === 'True');
}

function lastFailureMs(pods: KubeObject[]): number {
  let last = 0;
  for (const pod of pods) {
    if (podPhase(pod) !== POD_PHASES.failed) continue;
    for (const c of field<Array<{ state?: { terminated?: { finishedAt?: string } } }>>(
      pod,
      'status',
      'containerStatuses',
    ) ?? []) {
      const at = Date.parse(c.state?.terminated?.finishedAt ?? '');
      if (Number.isFinite(at)) last = Math.max(last, at);
    }
  }
  return last;
}

function podFor(job: KubeObject): KubeObject {
  const template =
    field<{ metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: unknown }>(
      job,
      'spec',
      'template',
    ) ?? {};
  const uid = job.metadata.uid as string;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: '',
      generateName: `${job.metadata.name}-`,
      namespace: job.metadata.namespace,
      labels: {
        ...(template.metadata?.labels ?? {}),
        'batch.kubernetes.io/controller-uid': uid,
        'batch.kubernetes.io/job-name': job.metadata.name,
        'controller-uid': uid,
        'job-name': job.metadata.name,
      },
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ownerReferences: [controllerRef(job)],
    },
    spec: structuredClone(template.spec ?? {}),
  };
}
