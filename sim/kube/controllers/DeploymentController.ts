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
import { podTemplateHash } from './podTemplateHash.js';
import { planRollout, type ReplicaSetState, resolveFenceposts, type RolloutStrategy } from './rollout.js';
import type { Controller, ControllerContext } from './types.js';

const COMPONENT = 'deployment-controller';
const HASH_LABEL = 'pod-template-hash';
const REVISION = 'deployment.kubernetes.io/revision';
const DESIRED = 'deployment.kubernetes.io/desired-replicas';
const MAX = 'deployment.kubernetes.io/max-replicas';
/** Kubernetes' defaults: revisionHistoryLimit 10, progressDeadlineSeconds 600. */
const DEFAULT_HISTORY = 10;
const DEFAULT_PROGRESS_DEADLINE_S = 600;

/**
 * The Deployment controller: one ReplicaSet per Pod template, named `<deployment>-<pod-template-hash>`; scaling
 * changes the current ReplicaSet; a template change rolls out with the Deployment's strategy (RollingUpdate with
 * maxSurge / maxUnavailable, 25 % / 25 % by default as in Kubernetes, which for 1-3 replicas means one new Pod at a
 * time and no old Pod removed before a new one is ready; or Recreate). Status and the Available / Progressing
 * conditions follow Kubernetes' sync.go and progress.go.
 */
export function startDeploymentController(ctx: ControllerContext, events: EventRecorder): Controller {
  const { store, clock } = ctx;
  return startControllerLoop({
    name: 'deployment',
    ctx,
    watches: [
      { kind: 'Deployment', keys: (e) => [keyOf(e.object.metadata)] },
      {
        kind: 'ReplicaSet',
        keys: (e) => {
          const owner = controllerOf(e.object);
          return owner?.kind === 'Deployment' ? [`${e.object.metadata.namespace}/${owner.name}`] : [];
        },
      },
    ],
    resyncKeys: () => store.list('Deployment').map((d) => keyOf(d.metadata)),
    reconcile(key) {
      const { namespace, name } = splitKey(key);
      const deployment = store.get('Deployment', namespace, name);
      if (!deployment) return;
      const desired = numberOr(field(deployment, 'spec', 'replicas'), 1);
      const template = field(deployment, 'spec', 'template') ?? {};
      const hash = podTemplateHash(template, numberOr(field(deployment, 'status', 'collisionCount'), 0));
      const owned = () =>
        store
          .list('ReplicaSet', { namespace: namespace as string })
          .filter((rs) => isControlledBy(rs, deployment.metadata.uid));
      let replicaSets = owned();
      let newRS = replicaSets.find((rs) => rs.metadata.labels?.[HASH_LABEL] === hash);
      const strategy = strategyOf(deployment, desired);
      const maxSurge = strategy.type === 'RollingUpdate' ? strategy.maxSurge : 0;
      // The current template's ReplicaSet carries the highest revision, also when a rollback brings an old one back.
      const others = replicaSets.filter((rs) => rs !== newRS);
      const revision = newRS && revisionOf(newRS) > maxRevision(others) ? revisionOf(newRS) : maxRevision(others) + 1;

      if (!newRS) {
        newRS = store.create(replicaSetFor(deployment, hash, revision, desired, maxSurge));
        ctx.log(
          `deployment ${key}: created ReplicaSet ${newRS.metadata.name} for the current Pod template (revision ${revision})`,
        );
        replicaSets = owned();
      } else {
        keepAnnotations(newRS, revision, desired, maxSurge);
      }

      if (deployment.metadata.annotations?.[REVISION] !== String(revision)) {
        const fresh = store.get('Deployment', namespace, name);
        if (fresh)
          store.update({
            ...fresh,
            metadata: {
              ...fresh.metadata,
              annotations: { ...(fresh.metadata.annotations ?? {}), [REVISION]: String(revision) },
            },
          });
      }
      const oldRSs = replicaSets
        .filter((rs) => rs.metadata.uid !== newRS.metadata.uid)
        .sort((a, b) => revisionOf(a) - revisionOf(b));
      const decisions = planRollout({ desired, strategy, newRS: stateOf(newRS), oldRSs: oldRSs.map(stateOf) });
      for (const decision of decisions) {
        const rs = store.get('ReplicaSet', namespace, decision.name);
        if (!rs) continue;
        store.update({ ...rs, spec: { ...(rs.spec as object), replicas: decision.to } });
        const direction = decision.to > decision.from ? 'up' : 'down';
        ctx.log(
          `deployment ${key}: scaling ReplicaSet ${decision.name} ${decision.from} -> ${decision.to} (${decision.reason})`,
        );
        events.record(
          deployment,
          EVENT_TYPES.normal,
          'ScalingReplicaSet',
          `Scaled ${direction} replica set ${decision.name} from ${decision.from} to ${decision.to}`,
          COMPONENT,
        );
      }
      cleanupHistory(deployment, oldRSs);
      writeStatus(key, newRS.metadata.name, desired, strategy);
    },
  });

  function keepAnnotations(rs: KubeObject, revision: number, desired: number, maxSurge: number): void {
    const annotations = rs.metadata.annotations ?? {};
    const wanted = { [REVISION]: String(revision), [DESIRED]: String(desired), [MAX]: String(desired + maxSurge) };
    if (Object.entries(wanted).every(([k, v]) => annotations[k] === v)) return;
    store.update({ ...rs, metadata: { ...rs.metadata, annotations: { ...annotations, ...wanted } } });
  }

  /** Old ReplicaSets scaled to 0 beyond revisionHistoryLimit are deleted, oldest first. */
  function cleanupHistory(deployment: KubeObject, oldRSs: KubeObject[]): void {
    const limit = numberOr(field(deployment, 'spec', 'revisionHistoryLimit'), DEFAULT_HISTORY);
    const idle = oldRSs.filter((rs) => {
      const fresh = store.get('ReplicaSet', rs.metadata.namespace, rs.metadata.name);
      return (
        fresh &&
        numberOr(field(fresh, 'spec', 'replicas'), 0) === 0 &&
        numberOr(field(fresh, 'status', 'replicas'), 0) === 0
      );
    });
    for (const rs of idle.slice(0, Math.max(0, idle.length - limit))) {
      store.delete('ReplicaSet', rs.metadata.namespace, rs.metadata.name);
      ctx.log(
        `deployment ${keyOf(deployment.metadata)}: deleted old ReplicaSet ${rs.metadata.name} (revisionHistoryLimit ${limit})`,
      );
    }
  }

  function writeStatus(key: string, newName: string, desired: number, strategy: RolloutStrategy): void {
    const { namespace, name } = splitKey(key);
    const deployment = store.get('Deployment', namespace, name);
    if (!deployment) return;
    const all = store
      .list('ReplicaSet', { namespace: namespace as string })
      .filter((rs) => isControlledBy(rs, deployment.metadata.uid));
    const newRS = all.find((rs) => rs.metadata.name === newName);
    const count = (rs: KubeObject | undefined, f: string) => numberOr(field(rs, 'status', f), 0);
    const sum = (f: string) => all.reduce((total, rs) => total + count(rs, f), 0);
    const previous = field<Record<string, unknown>>(deployment, 'status') ?? {};
    const replicas = sum('replicas');
    const updated = count(newRS, 'replicas');
    const ready = sum('readyReplicas');
    const available = sum('availableReplicas');
    const generation = deployment.metadata.generation ?? 1;
    const nowMs = clock.now();
    const now = kubeTime(nowMs);
    const maxUnavailable = strategy.type === 'RollingUpdate' ? strategy.maxUnavailable : desired;

    let conditions = (previous['conditions'] as Condition[] | undefined) ?? [];
    conditions =
      available >= desired - maxUnavailable
        ? setCondition(
            conditions,
            {
              type: 'Available',
              status: 'True',
              reason: 'MinimumReplicasAvailable',
              message: 'Deployment has minimum availability.',
            },
            now,
            { withUpdateTime: true },
          )
        : setCondition(
            conditions,
            {
              type: 'Available',
              status: 'False',
              reason: 'MinimumReplicasUnavailable',
              message: 'Deployment does not have minimum availability.',
            },
            now,
            { withUpdateTime: true },
          );

    const complete = updated === desired && replicas === desired && available === desired;
    const progressing = findCondition(conditions, 'Progressing');
    const moved =
      updated > numberOr(previous['updatedReplicas'], 0) ||
      ready > numberOr(previous['readyReplicas'], 0) ||
      available > numberOr(previous['availableReplicas'], 0) ||
      replicas < numberOr(previous['replicas'], 0) ||
      numberOr(previous['observedGeneration'], 0) < generation;
    const deadlineS = numberOr(field(deployment, 'spec', 'progressDeadlineSeconds'), DEFAULT_PROGRESS_DEADLINE_S);
    if (complete) {
      conditions = setCondition(
        conditions,
        {
          type: 'Progressing',
          status: 'True',
          reason: 'NewReplicaSetAvailable',
          message: `ReplicaSet "${newName}" has successfully progressed.`,
        },
        now,
        { withUpdateTime: true },
      );
    } else if (!progressing || progressing.message?.includes(`"${newName}"`) !== true) {
      conditions = setCondition(
        conditions,
        {
          type: 'Progressing',
          status: 'True',
          reason: 'NewReplicaSetCreated',
          message: `Created new replica set "${newName}"`,
        },
        now,
        { withUpdateTime: true },
      );
    } else if (moved) {
      conditions = setCondition(
        conditions,
        {
          type: 'Progressing',
          status: 'True',
          reason: 'ReplicaSetUpdated',
          message: `ReplicaSet "${newName}" is progressing.`,
        },
        now,
        { withUpdateTime: true, touch: true },
      );
    } else if (
      progressing.status === 'True' &&
      nowMs - Date.parse(progressing.lastUpdateTime ?? now) > deadlineS * 1000
    ) {
      conditions = setCondition(
        conditions,
        {
          type: 'Progressing',
          status: 'False',
          reason: 'ProgressDeadlineExceeded',
          message: `ReplicaSet "${newName}" has timed out progressing.`,
        },
        now,
        { withUpdateTime: true },
      );
      ctx.log(`deployment ${key}: rollout of ${newName} made no progress for ${deadlineS} s (progressDeadlineSeconds)`);
    }
    // Kubernetes lists Available before Progressing.
    conditions.sort((a, b) => order(a.type) - order(b.type));

    const status = {
      observedGeneration: generation,
      replicas,
      updatedReplicas: updated,
      readyReplicas: ready,
      availableReplicas: available,
      ...(desired - available > 0 ? { unavailableReplicas: desired - available } : {}),
      conditions,
      ...(previous['collisionCount'] !== undefined ? { collisionCount: previous['collisionCount'] } : {}),
    };
    store.update({ ...deployment, status }, { subresource: 'status' });
  }
}

function order(type: string): number {
  return type === 'Available' ? 0 : type === 'Progressing' ? 1 : 2;
}

function strategyOf(deployment: KubeObject, desired: number): RolloutStrategy {
  const strategy = field<{
    type?: string;
    rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string };
  }>(deployment, 'spec', 'strategy');
  if (strategy?.type === 'Recreate') return { type: 'Recreate' };
  const { maxSurge, maxUnavailable } = resolveFenceposts(
    strategy?.rollingUpdate?.maxSurge,
    strategy?.rollingUpdate?.maxUnavailable,
    desired,
  );
  return { type: 'RollingUpdate', maxSurge, maxUnavailable };
}

function stateOf(rs: KubeObject): ReplicaSetState {
  return {
    name: rs.metadata.name,
    replicas: numberOr(field(rs, 'spec', 'replicas'), 0),
    availableReplicas: numberOr(field(rs, 'status', 'availableReplicas'), 0),
    podReplicas: numberOr(field(rs, 'status', 'replicas'), 0),
  };
}

function revisionOf(rs: KubeObject): number {
  return Number(rs.metadata.annotations?.[REVISION] ?? 0) || 0;
}

function maxRevision(replicaSets: KubeObject[]): number {
  return replicaSets.reduce((max, rs) => Math.max(max, revisionOf(rs)), 0);
}

function replicaSetFor(
  deployment: KubeObject,
  hash: string,
  revision: number,
  desired: number,
  maxSurge: number,
): KubeObject {
  const template = structuredClone(
    field<{ metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: unknown }>(
      deployment,
      'spec',
      'template',
    ) ?? {},
  );
  const labels = { ...(template.metadata?.labels ?? {}), [HASH_LABEL]: hash };
  const selector =
    field<{ matchLabels?: Record<string, string>; matchExpressions?: unknown[] }>(deployment, 'spec', 'selector') ?? {};
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${deployment.metadata.name}-${hash}`,
      namespace: deployment.metadata.namespace,
      labels,
      annotations: { [REVISION]: String(revision), [DESIRED]: String(desired), [MAX]: String(desired + maxSurge) },
      ownerReferences: [controllerRef(deployment)],
    },
    spec: {
      replicas: 0,
      ...(field(deployment, 'spec', 'minReadySeconds') !== undefined
        ? { minReadySeconds: field(deployment, 'spec', 'minReadySeconds') }
        : {}),
      selector: { ...selector, matchLabels: { ...(selector.matchLabels ?? {}), [HASH_LABEL]: hash } },
      template: { ...template, metadata: { ...(template.metadata ?? {}), labels } },
    },
  };
}
