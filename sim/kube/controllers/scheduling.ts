import type { KubeObject } from '../types.js';
import { field } from './meta.js';

interface Taint {
  key: string;
  value?: string;
  effect: string;
}
interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: string;
}
interface NodeSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';
  values?: string[];
}

/**
 * Why a Pod spec cannot run on a node, or undefined when it can: the scheduler's NodeSelector/NodeAffinity and
 * TaintToleration predicates (NoSchedule and NoExecute taints must be tolerated; PreferNoSchedule is only a
 * preference). The DaemonSet controller uses it to decide which nodes get a Pod.
 */
export function nodeMismatch(podSpec: unknown, node: KubeObject): string | undefined {
  const selector = selectorMismatch(podSpec, node);
  if (selector) return selector;
  const taint = untoleratedTaint(podSpec, node);
  return taint && `untolerated taint ${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect}`;
}

function selectorMismatch(podSpec: unknown, node: KubeObject): string | undefined {
  const labels = node.metadata.labels ?? {};
  const nodeSelector = field<Record<string, string>>(podSpec, 'nodeSelector') ?? {};
  for (const [key, value] of Object.entries(nodeSelector)) {
    if (labels[key] !== value)
      return `node label ${key}=${labels[key] ?? '<none>'} does not match nodeSelector ${value}`;
  }
  const terms = field<Array<{ matchExpressions?: NodeSelectorRequirement[]; matchFields?: NodeSelectorRequirement[] }>>(
    podSpec,
    'affinity',
    'nodeAffinity',
    'requiredDuringSchedulingIgnoredDuringExecution',
    'nodeSelectorTerms',
  );
  // Terms are ORed; the requirements inside one term are ANDed.
  if (terms && terms.length > 0) {
    const fields = { 'metadata.name': node.metadata.name };
    const anyTerm = terms.some(
      (term) =>
        (term.matchExpressions ?? []).every((req) => requirementHolds(req, labels)) &&
        (term.matchFields ?? []).every((req) => requirementHolds(req, fields)),
    );
    if (!anyTerm) return 'node does not match the required node affinity';
  }
  return undefined;
}

/** The node's first NoSchedule or NoExecute taint the Pod spec does not tolerate. */
function untoleratedTaint(podSpec: unknown, node: KubeObject): Taint | undefined {
  const taints = field<Taint[]>(node, 'spec', 'taints') ?? [];
  const tolerations = field<Toleration[]>(podSpec, 'tolerations') ?? [];
  return taints.find((taint) => taint.effect !== 'PreferNoSchedule' && !tolerations.some((t) => tolerates(t, taint)));
}

/** A node as the scheduler weighs it for a Pod asking for one GPU: the node and the GPUs its Pods already hold. */
export interface GpuNodeUse {
  node: KubeObject;
  gpusInUse: number;
}

const GPU_RESOURCE = 'nvidia.com/gpu';

/**
 * kube-scheduler's FailedScheduling message for a Pod asking for one `nvidia.com/gpu` that no node takes, worded as
 * FitError.Error() words it (v1.35): each node counted under the first filter that rejects it, in the default plugin
 * order (TaintToleration, NodeAffinity, NodeResourcesFit), the "<count> <reason>" strings sorted and joined; then
 * DefaultPreemption's verdict per node: "Preemption is not helpful" where the rejection is unresolvable (an untolerated
 * taint, a selector, a node with no GPU at all), "No preemption victims" where the GPU is taken (every Pod in the
 * twin has priority 0, so none is a victim). A node that would take the Pod is counted but gives no reason.
 * E.g. `0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 1 Preemption is
 * not helpful for scheduling, 2 No preemption victims found for incoming pod.`
 */
export function gpuUnschedulableMessage(podSpec: unknown, nodes: readonly GpuNodeUse[]): string {
  const filters = new Map<string, number>();
  const preemption = new Map<string, number>();
  for (const { node, gpusInUse } of nodes) {
    const rejection = gpuFilterRejection(podSpec, node, gpusInUse);
    if (!rejection) continue;
    filters.set(rejection.reason, (filters.get(rejection.reason) ?? 0) + 1);
    const verdict = rejection.resolvable
      ? 'No preemption victims found for incoming pod'
      : 'Preemption is not helpful for scheduling';
    preemption.set(verdict, (preemption.get(verdict) ?? 0) + 1);
  }
  const histogram = (counts: Map<string, number>) =>
    [...counts]
      .map(([reason, count]) => `${count} ${reason}`)
      .sort()
      .join(', ');
  const available = `0/${nodes.length} nodes are available`;
  return `${available}: ${histogram(filters)}. preemption: ${available}: ${histogram(preemption)}.`;
}

/** The first default filter that rejects the node, with whether preemption could ever free it. */
function gpuFilterRejection(
  podSpec: unknown,
  node: KubeObject,
  gpusInUse: number,
): { reason: string; resolvable: boolean } | undefined {
  const taint = untoleratedTaint(podSpec, node);
  if (taint) return { reason: `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`, resolvable: false };
  if (selectorMismatch(podSpec, node))
    return { reason: "node(s) didn't match Pod's node affinity/selector", resolvable: false };
  const gpus = Number(field<string>(node, 'status', 'allocatable', GPU_RESOURCE) ?? 0);
  if (gpus - gpusInUse >= 1) return undefined;
  // NodeResourcesFit: unresolvable when the request exceeds what the node has at all.
  return { reason: `Insufficient ${GPU_RESOURCE}`, resolvable: gpus >= 1 };
}

function requirementHolds(req: NodeSelectorRequirement, labels: Record<string, string>): boolean {
  const present = Object.hasOwn(labels, req.key);
  const value = labels[req.key];
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return present && values.includes(value as string);
    case 'NotIn':
      return !present || !values.includes(value as string);
    case 'Exists':
      return present;
    case 'DoesNotExist':
      return !present;
    case 'Gt':
    case 'Lt': {
      const have = Number(value);
      const want = Number(values[0]);
      if (!present || !Number.isInteger(have) || !Number.isInteger(want)) return false;
      return req.operator === 'Gt' ? have > want : have < want;
    }
    default:
      return false;
  }
}

/** Toleration matching as in k8s.io/api/core/v1 `Toleration.ToleratesTaint`. */
function tolerates(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  const operator = toleration.operator ?? 'Equal';
  if (operator === 'Exists') return !toleration.key || toleration.key === taint.key;
  return toleration.key === taint.key && (toleration.value ?? '') === (taint.value ?? '');
}
