import { KubeApiNotFoundError } from '../errors.js';
import type { KubeObject } from '../types.js';
import { startControllerLoop } from './controllerLoop.js';
import { EVENT_TYPES, type EventRecorder } from './events.js';
import { controllerOf, controllerRef, field, isControlledBy, keyOf, splitKey } from './meta.js';
import { isPodReady, isPodTerminal } from './podStatus.js';
import { podTemplateHash } from './podTemplateHash.js';
import { nodeMismatch } from './scheduling.js';
import type { Controller, ControllerContext } from './types.js';

const COMPONENT = 'daemonset-controller';
const REVISION_HASH = 'controller-revision-hash';
const TEMPLATE_GENERATION = 'pod-template-generation';

/**
 * The DaemonSet controller: one Pod on every node the template may run on (nodeSelector, required node affinity,
 * NoSchedule/NoExecute taints tolerated), none elsewhere; a changed template replaces Pods one node at a time
 * (RollingUpdate, maxUnavailable 1); status as `kubectl get ds` shows it (desired, current, ready, up-to-date,
 * available, misscheduled).
 */
export function startDaemonSetController(ctx: ControllerContext, events: EventRecorder): Controller {
  const { store } = ctx;
  const allKeys = () => store.list('DaemonSet').map((ds) => keyOf(ds.metadata));
  return startControllerLoop({
    name: 'daemonset',
    ctx,
    watches: [
      { kind: 'DaemonSet', keys: (e) => [keyOf(e.object.metadata)] },
      { kind: 'Node', keys: allKeys },
      {
        kind: 'Pod',
        keys: (e) => {
          const owner = controllerOf(e.object);
          return owner?.kind === 'DaemonSet' ? [`${e.object.metadata.namespace}/${owner.name}`] : [];
        },
      },
    ],
    resyncKeys: allKeys,
    reconcile(key) {
      const { namespace, name } = splitKey(key);
      const ds = store.get('DaemonSet', namespace, name);
      if (!ds) return;
      const template =
        field<{ metadata?: { labels?: Record<string, string> }; spec?: unknown }>(ds, 'spec', 'template') ?? {};
      const hash = podTemplateHash(template);
      const nodes = store.list('Node');
      const eligible = new Set(
        nodes.filter((n) => nodeMismatch(template.spec, n) === undefined).map((n) => n.metadata.name),
      );
      const pods = () =>
        store.list('Pod', { namespace: namespace as string }).filter((p) => isControlledBy(p, ds.metadata.uid));

      // Pods on nodes that are gone or no longer eligible.
      for (const pod of pods()) {
        const node = field<string>(pod, 'spec', 'nodeName');
        if (node && eligible.has(node)) continue;
        remove(ds, pod, node ? `node ${node} no longer matches` : 'it has no node');
      }
      // One Pod per eligible node.
      const byNode = new Map(pods().map((p) => [field<string>(p, 'spec', 'nodeName') as string, p]));
      for (const nodeName of eligible) {
        if (byNode.has(nodeName)) continue;
        const pod = store.create(podFor(ds, template, hash, nodeName));
        ctx.log(`daemonset ${key}: created Pod ${pod.metadata.name} on node ${nodeName}`);
        events.record(ds, EVENT_TYPES.normal, 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`, COMPONENT);
      }
      // Rolling update: replace one outdated Pod at a time, only while every other Pod is ready.
      const current = pods();
      const outdated = current.filter((p) => p.metadata.labels?.[REVISION_HASH] !== hash);
      const unavailable = current.filter((p) => !isPodReady(p)).length;
      if (outdated.length > 0 && unavailable === 0) {
        const pod = outdated[0] as KubeObject;
        remove(ds, pod, 'its template is outdated (rolling update, maxUnavailable 1)');
      }
      writeStatus(key, hash, eligible);
    },
  });

  function remove(ds: KubeObject, pod: KubeObject, why: string): void {
    try {
      store.delete('Pod', pod.metadata.namespace, pod.metadata.name);
    } catch (error) {
      if (!(error instanceof KubeApiNotFoundError)) throw error;
      return;
    }
    ctx.log(`daemonset ${keyOf(ds.metadata)}: deleted Pod ${pod.metadata.name}: ${why}`);
    events.record(ds, EVENT_TYPES.normal, 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`, COMPONENT);
  }

  function writeStatus(key: string, hash: string, eligible: Set<string>): void {
    const { namespace, name } = splitKey(key);
    const ds = store.get('DaemonSet', namespace, name);
    if (!ds) return;
    const pods = store
      .list('Pod', { namespace: namespace as string })
      .filter((p) => isControlledBy(p, ds.metadata.uid) && !isPodTerminal(p));
    const onEligible = pods.filter((p) => eligible.has(field<string>(p, 'spec', 'nodeName') ?? ''));
    const ready = onEligible.filter(isPodReady).length;
    const status = {
      currentNumberScheduled: onEligible.length,
      desiredNumberScheduled: eligible.size,
      numberMisscheduled: pods.length - onEligible.length,
      numberReady: ready,
      numberAvailable: ready,
      ...(eligible.size - ready > 0 ? { numberUnavailable: eligible.size - ready } : {}),
      updatedNumberScheduled: onEligible.filter((p) => p.metadata.labels?.[REVISION_HASH] === hash).length,
      observedGeneration: ds.metadata.generation ?? 1,
    };
    store.update({ ...ds, status }, { subresource: 'status' });
  }
}

function podFor(
  ds: KubeObject,
  template: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: unknown },
  hash: string,
  nodeName: string,
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: '',
      generateName: `${ds.metadata.name}-`,
      namespace: ds.metadata.namespace,
      labels: {
        ...(template.metadata?.labels ?? {}),
        [REVISION_HASH]: hash,
        [TEMPLATE_GENERATION]: String(ds.metadata.generation ?? 1),
      },
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ownerReferences: [controllerRef(ds)],
    },
    // The DaemonSet controller pins each Pod to its node (Kubernetes does it with node affinity on metadata.name).
    spec: { ...structuredClone(template.spec ?? {}), nodeName },
  };
}
