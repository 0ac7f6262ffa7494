import { createHash } from 'node:crypto';
import type { KubeObject } from '../types.js';
import { type Condition, field, setCondition } from './meta.js';

/** Pod phases. */
export const POD_PHASES = {
  pending: 'Pending',
  running: 'Running',
  succeeded: 'Succeeded',
  failed: 'Failed',
} as const;
export type PodPhase = (typeof POD_PHASES)[keyof typeof POD_PHASES];

export interface ContainerSpec {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: unknown }>;
  ports?: Array<{ name?: string; containerPort: number; protocol?: string }>;
  /** Only the field the kubelet emulation honours: how many failed probes in a row make a Ready container not Ready. */
  readinessProbe?: { failureThreshold?: number };
}

/** The kubelet's view of one container. */
export type ContainerState =
  | { state: 'waiting'; reason: string; message?: string }
  | { state: 'running'; startedAtIso: string; ready: boolean }
  | {
      state: 'terminated';
      exitCode: number;
      reason: string;
      message?: string;
      startedAtIso: string;
      finishedAtIso: string;
    };

export interface ContainerRun {
  name: string;
  image: string;
  current: ContainerState;
  restartCount: number;
  /** The previous run, shown as lastState (a crashed container's last exit). */
  last?: Extract<ContainerState, { state: 'terminated' }>;
}

/** What the kubelet knows about a Pod, from which its status is written. */
export interface PodRunState {
  phase: PodPhase;
  nodeName: string;
  hostIp: string;
  startTimeIso: string;
  containers: ContainerRun[];
}

/** The containers of a Pod spec. */
export function containersOf(pod: KubeObject): ContainerSpec[] {
  return field<ContainerSpec[]>(pod, 'spec', 'containers') ?? [];
}

/** Pod.status as the kubelet writes it: phase, IPs, start time, the four conditions and the container statuses. */
export function podStatus(pod: KubeObject, run: PodRunState, nowIso: string): Record<string, unknown> {
  const previous = field<Condition[]>(pod, 'status', 'conditions');
  const terminal = run.phase === POD_PHASES.succeeded || run.phase === POD_PHASES.failed;
  const allReady =
    run.containers.length > 0 && run.containers.every((c) => c.current.state === 'running' && c.current.ready);
  const notReady = run.containers.filter((c) => !(c.current.state === 'running' && c.current.ready)).map((c) => c.name);
  const readyCondition = (type: string): Omit<Condition, 'lastTransitionTime'> =>
    allReady
      ? { type, status: 'True', lastProbeTime: null }
      : {
          type,
          status: 'False',
          lastProbeTime: null,
          reason: terminal ? 'PodCompleted' : 'ContainersNotReady',
          ...(terminal ? {} : { message: `containers with unready status: [${notReady.join(' ')}]` }),
        };
  let conditions = previous ?? [];
  conditions = setCondition(
    conditions,
    { type: 'PodReadyToStartContainers', status: terminal ? 'False' : 'True', lastProbeTime: null },
    nowIso,
  );
  conditions = setCondition(
    conditions,
    { type: 'Initialized', status: 'True', lastProbeTime: null, ...(terminal ? { reason: 'PodCompleted' } : {}) },
    nowIso,
  );
  conditions = setCondition(conditions, readyCondition('Ready'), nowIso);
  conditions = setCondition(conditions, readyCondition('ContainersReady'), nowIso);
  conditions = setCondition(conditions, { type: 'PodScheduled', status: 'True', lastProbeTime: null }, nowIso);
  const podIp = '127.0.0.1';
  return {
    phase: run.phase,
    conditions,
    hostIP: run.hostIp,
    hostIPs: [{ ip: run.hostIp }],
    podIP: podIp,
    podIPs: [{ ip: podIp }],
    startTime: run.startTimeIso,
    containerStatuses: run.containers.map((c) => containerStatus(pod, c)),
    qosClass: qosClassOf(pod),
  };
}

/**
 * Pod.status of a Pod the scheduler could not place: Pending, PodScheduled False (Unschedulable) with the scheduler's
 * message, and nothing the kubelet writes (no node, no IPs, no start time, no container statuses).
 */
export function unschedulablePodStatus(pod: KubeObject, message: string, nowIso: string): Record<string, unknown> {
  const conditions = setCondition(
    field<Condition[]>(pod, 'status', 'conditions'),
    { type: 'PodScheduled', status: 'False', lastProbeTime: null, reason: 'Unschedulable', message },
    nowIso,
  );
  return { phase: POD_PHASES.pending, conditions, qosClass: qosClassOf(pod) };
}

function containerStatus(pod: KubeObject, run: ContainerRun): Record<string, unknown> {
  const current = run.current;
  return {
    name: run.name,
    image: run.image,
    imageID: imageId(run.image),
    containerID: `containerd://${createHash('sha256').update(`${pod.metadata.uid}/${run.name}/${run.restartCount}`).digest('hex')}`,
    ready: current.state === 'running' && current.ready,
    started: current.state === 'running',
    restartCount: run.restartCount,
    state: stateJson(current),
    lastState: run.last ? stateJson(run.last) : {},
  };
}

function stateJson(state: ContainerState): Record<string, unknown> {
  switch (state.state) {
    case 'waiting':
      return { waiting: { reason: state.reason, ...(state.message ? { message: state.message } : {}) } };
    case 'running':
      return { running: { startedAt: state.startedAtIso } };
    case 'terminated':
      return {
        terminated: {
          exitCode: state.exitCode,
          reason: state.reason,
          ...(state.message ? { message: state.message } : {}),
          startedAt: state.startedAtIso,
          finishedAt: state.finishedAtIso,
        },
      };
  }
}

/** A registry digest for an image reference, stable per image (the twin pulls nothing). */
function imageId(image: string): string {
  const repository = image.replace(/[:@].*$/, '');
  const qualified =
    repository.includes('/') && repository.split('/')[0]?.includes('.')
      ? repository
      : `docker.io/${repository.includes('/') ? repository : `library/${repository}`}`;
  return `${qualified}@sha256:${createHash('sha256').update(image).digest('hex')}`;
}

/** Guaranteed when every container's limits equal its requests, BestEffort with none, else Burstable. */
function qosClassOf(pod: KubeObject): string {
  const containers =
    field<
      Array<{ resources?: { limits?: Record<string, string | number>; requests?: Record<string, string | number> } }>
    >(pod, 'spec', 'containers') ?? [];
  const resources = containers.map((c) => c.resources ?? {});
  if (resources.every((r) => Object.keys(r.limits ?? {}).length === 0 && Object.keys(r.requests ?? {}).length === 0))
    return 'BestEffort';
  const guaranteed = resources.every((r) => {
    const limits = r.limits ?? {};
    const requests = { ...limits, ...(r.requests ?? {}) };
    return ['cpu', 'memory'].every((k) => limits[k] !== undefined && String(limits[k]) === String(requests[k]));
  });
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** Whether a Pod's Ready condition is True. */
export function isPodReady(pod: KubeObject): boolean {
  return field<Condition[]>(pod, 'status', 'conditions')?.find((c) => c.type === 'Ready')?.status === 'True';
}

/** The Pod's phase ('Pending' when it has no status yet). */
export function podPhase(pod: KubeObject): string {
  return field<string>(pod, 'status', 'phase') ?? POD_PHASES.pending;
}

/** Whether the Pod has finished (Succeeded or Failed): it no longer counts as active. */
export function isPodTerminal(pod: KubeObject): boolean {
  const phase = podPhase(pod);
  return phase === POD_PHASES.succeeded || phase === POD_PHASES.failed;
}
