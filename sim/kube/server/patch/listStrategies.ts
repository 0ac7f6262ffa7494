import type { Kind } from '../../types.js';
import type { ListStrategy, ListStrategyLookup } from './strategicMergePatch.js';

const byKey = (mergeKey: string): ListStrategy => ({ type: 'mergeByKey', mergeKey });
const CONTAINER_LISTS: ReadonlySet<string> = new Set(['containers', 'initContainers', 'ephemeralContainers']);

/**
 * The `patchStrategy:"merge"` / `patchMergeKey` tags of the Kubernetes Go types (k8s.io/api core/v1, apps/v1,
 * batch/v1, autoscaling/v2, meta/v1) for the fields the twin's objects use. Lists not named here are replaced whole,
 * as `tolerations`, `args` and `command` are by the real server.
 */
export function builtInListStrategies(kind: Kind): ListStrategyLookup {
  return (path) => {
    const field = path.at(-1);
    const parent = path.at(-2);
    switch (field) {
      case 'containers':
      case 'initContainers':
      case 'ephemeralContainers':
      case 'volumes':
      case 'imagePullSecrets':
      case 'resourceClaims':
      case 'schedulingGates':
        return byKey('name');
      case 'env':
        return parent !== undefined && CONTAINER_LISTS.has(parent) ? byKey('name') : undefined;
      case 'volumeMounts':
        return byKey('mountPath');
      case 'volumeDevices':
        return byKey('devicePath');
      case 'ports':
        // ServiceSpec.ports merges by port; Container.ports by containerPort.
        if (kind === 'Service' && path.length === 2 && parent === 'spec') return byKey('port');
        return parent !== undefined && CONTAINER_LISTS.has(parent) ? byKey('containerPort') : undefined;
      case 'hostAliases':
        return byKey('ip');
      case 'topologySpreadConstraints':
        return byKey('topologyKey');
      case 'conditions':
        return parent === 'status' ? byKey('type') : undefined;
      case 'addresses':
        return kind === 'Node' && parent === 'status' ? byKey('type') : undefined;
      default:
        return metadataListStrategy(path);
    }
  };
}

/**
 * Custom resources have no Go struct tags: the real server refuses strategic merge for them, and server-side apply
 * treats their lists as atomic except the metadata lists (ownerReferences by uid, finalizers as a set).
 */
export const customResourceListStrategies: ListStrategyLookup = (path) => metadataListStrategy(path);

function metadataListStrategy(path: readonly string[]): ListStrategy | undefined {
  if (path.at(-2) !== 'metadata') return undefined;
  if (path.at(-1) === 'ownerReferences') return byKey('uid');
  if (path.at(-1) === 'finalizers') return { type: 'mergePrimitives' };
  return undefined;
}
