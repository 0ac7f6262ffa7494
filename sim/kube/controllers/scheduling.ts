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
  const taints = field<Taint[]>(node, 'spec', 'taints') ?? [];
  const tolerations = field<Toleration[]>(podSpec, 'tolerations') ?? [];
  for (const taint of taints) {
    if (taint.effect === 'PreferNoSchedule') continue;
    if (!tolerations.some((t) => tolerates(t, taint)))
      return `untolerated taint ${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect}`;
  }
  return undefined;
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
