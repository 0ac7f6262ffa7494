import { KubeApiNotFoundError } from '../errors.js';
import { matchesSelector } from '../labels.js';
import type { KubeObject, LabelSelector } from '../types.js';
import { startControllerLoop } from './controllerLoop.js';
import { EVENT_TYPES, type EventRecorder } from './events.js';
import { controllerOf, controllerRef, field, isControlledBy, keyOf, numberOr, splitKey } from './meta.js';
import { isPodReady, isPodTerminal, podPhase } from './podStatus.js';
import type { Controller, ControllerContext } from './types.js';

const COMPONENT = 'replicaset-controller';

/**
 * The ReplicaSet controller: keeps `spec.replicas` Pods of the template, created with `generateName <rs>-` (a
 * five-character suffix), the template's labels and a controller ownerReference; scales down the least useful Pods
 * first (unscheduled, not running, not ready, then the newest); writes status (replicas, fullyLabeledReplicas,
 * readyReplicas, availableReplicas, observedGeneration) and SuccessfulCreate / SuccessfulDelete events.
 */
export function startReplicaSetController(ctx: ControllerContext, events: EventRecorder): Controller {
  const { store } = ctx;
  return startControllerLoop({
    name: 'replicaset',
    ctx,
    watches: [
      { kind: 'ReplicaSet', keys: (e) => [keyOf(e.object.metadata)] },
      {
        kind: 'Pod',
        keys: (e) => {
          const owner = controllerOf(e.object);
          return owner?.kind === 'ReplicaSet' ? [`${e.object.metadata.namespace}/${owner.name}`] : [];
        },
      },
    ],
    resyncKeys: () => store.list('ReplicaSet').map((rs) => keyOf(rs.metadata)),
    reconcile(key) {
      const { namespace, name } = splitKey(key);
      const rs = store.get('ReplicaSet', namespace, name);
      if (!rs) return;
      const pods = ownedActivePods(rs);
      const desired = numberOr(field(rs, 'spec', 'replicas'), 1);
      if (pods.length < desired) {
        for (let i = pods.length; i < desired; i++) {
          const pod = store.create(podFromTemplate(rs));
          ctx.log(`replicaset ${key}: created Pod ${pod.metadata.name} (${i + 1} of spec.replicas ${desired})`);
          events.record(rs, EVENT_TYPES.normal, 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`, COMPONENT);
        }
      } else if (pods.length > desired) {
        for (const pod of rankForDeletion(pods).slice(0, pods.length - desired)) {
          try {
            store.delete('Pod', namespace, pod.metadata.name);
          } catch (error) {
            if (!(error instanceof KubeApiNotFoundError)) throw error;
          }
          ctx.log(
            `replicaset ${key}: deleted Pod ${pod.metadata.name} (${podPhase(pod)}, ${isPodReady(pod) ? 'ready' : 'not ready'}; spec.replicas ${desired})`,
          );
          events.record(rs, EVENT_TYPES.normal, 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`, COMPONENT);
        }
      }
      writeStatus(key);
    },
  });

  function ownedActivePods(rs: KubeObject): KubeObject[] {
    return store
      .list('Pod', { namespace: rs.metadata.namespace as string })
      .filter((pod) => isControlledBy(pod, rs.metadata.uid) && !isPodTerminal(pod));
  }

  function writeStatus(key: string): void {
    const { namespace, name } = splitKey(key);
    const rs = store.get('ReplicaSet', namespace, name);
    if (!rs) return;
    const pods = ownedActivePods(rs);
    const templateLabels = field<Record<string, string>>(rs, 'spec', 'template', 'metadata', 'labels') ?? {};
    const ready = pods.filter(isPodReady).length;
    const status = {
      replicas: pods.length,
      fullyLabeledReplicas: pods.filter((p) => matchesSelector(p.metadata.labels, { matchLabels: templateLabels }))
        .length,
      readyReplicas: ready,
      // minReadySeconds is 0 in everything the twin runs: a ready Pod is available.
      availableReplicas: ready,
      observedGeneration: rs.metadata.generation ?? 1,
    };
    store.update({ ...rs, status }, { subresource: 'status' });
  }
}

function podFromTemplate(rs: KubeObject): KubeObject {
  const template = field<{
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    spec?: unknown;
  }>(rs, 'spec', 'template');
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: '',
      generateName: `${rs.metadata.name}-`,
      namespace: rs.metadata.namespace,
      labels: { ...(template?.metadata?.labels ?? {}) },
      ...(template?.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ownerReferences: [controllerRef(rs)],
    },
    spec: structuredClone(template?.spec ?? {}),
  };
}

/** Kubernetes' ActivePods ordering for scale-down: the Pods whose loss hurts least come first. */
function rankForDeletion(pods: KubeObject[]): KubeObject[] {
  const phaseRank: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };
  const rank = (pod: KubeObject) => [
    field<string>(pod, 'spec', 'nodeName') ? 1 : 0,
    phaseRank[podPhase(pod)] ?? 1,
    isPodReady(pod) ? 1 : 0,
    // More restarts go first.
    -(field<Array<{ restartCount?: number }>>(pod, 'status', 'containerStatuses') ?? []).reduce(
      (sum, c) => sum + (c.restartCount ?? 0),
      0,
    ),
  ];
  return [...pods].sort((a, b) => {
    const ra = rank(a);
    const rb = rank(b);
    for (let i = 0; i < ra.length; i++) if (ra[i] !== rb[i]) return (ra[i] as number) - (rb[i] as number);
    // Newer Pods first.
    return (
      (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '') ||
      b.metadata.name.localeCompare(a.metadata.name)
    );
  });
}

/** The label selector of a ReplicaSet / Deployment / DaemonSet spec. */
export function selectorOf(object: KubeObject): LabelSelector | undefined {
  return field<LabelSelector>(object, 'spec', 'selector');
}
