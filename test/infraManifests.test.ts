import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { generatedInfraFiles, REGENERATE_COMMAND } from '../infra/generatedFiles.js';
import { DASHBOARDS } from '../shared/dashboards/index.js';
import { CALIBRATION_NAMESPACED_RULES, RBAC_GROUPS, READ_ONLY_RULES } from '../shared/kube/manifests/index.js';

// The files under infra/ that come from code must equal what the code generates today (a stale file would deploy
// yesterday's RBAC or dashboards); the hand-written Karpenter NodePool must keep the fields that matter for GPUs.

const ROOT = new URL('../', import.meta.url);
const GENERATED = await generatedInfraFiles();

async function read(path: string): Promise<string> {
  return readFile(new URL(path, ROOT), 'utf8');
}

async function documents(path: string): Promise<Array<Record<string, unknown>>> {
  return parseAllDocuments(await read(path)).map((document) => document.toJS() as Record<string, unknown>);
}

/** Reads `path` (e.g. `spec.template.spec.taints`) from a parsed document. */
function at(value: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], value);
}

describe('Files: generated infra/', () => {
  it.each(GENERATED.map((file) => ({ path: file.path, content: file.content })))(
    '$path is what the code generates',
    async ({ path, content }) => {
      // Act
      const committed = await read(path).catch(() => '<missing>');

      // Assess
      if (committed !== content) throw new Error(`${path} is out of date; regenerate with: ${REGENERATE_COMMAND}`);
      expect(committed).toBe(content);
    },
  );

  it('covers every dashboard, the RBAC, the KEDA TriggerAuthentication and the alert rules', () => {
    // Assess
    expect(GENERATED.map((file) => file.path)).toEqual([
      ...DASHBOARDS.map((dashboard) => `infra/grafana/${dashboard.uid}.json`),
      'infra/grafana/dashboards-configmaps.yaml',
      'infra/kubernetes/control-plane-rbac.yaml',
      'infra/kubernetes/keda-trigger-authentication.yaml',
      'infra/prometheus/vllm-alerts.rules.yaml',
      'infra/prometheus/vllm-alerts.test.yaml',
    ]);
  });
});

describe('File: infra/grafana/dashboards-configmaps.yaml', () => {
  it("holds each dashboard file's JSON in a ConfigMap Grafana's sidecar picks up", async () => {
    // Act
    const configMaps = await documents('infra/grafana/dashboards-configmaps.yaml');

    // Assess
    expect(configMaps).toHaveLength(DASHBOARDS.length);
    for (const [index, dashboard] of DASHBOARDS.entries()) {
      const configMap = configMaps[index];
      expect(at(configMap, 'metadata.labels.grafana_dashboard')).toBe('1');
      expect(at(configMap, 'metadata.namespace')).toBe('monitoring');
      const data = at(configMap, 'data') as Record<string, string>;
      expect(JSON.parse(data[`${dashboard.uid}.json`] ?? 'null')).toEqual(
        JSON.parse(await read(`infra/grafana/${dashboard.uid}.json`)),
      );
    }
  });
});

describe('File: infra/kubernetes/control-plane-rbac.yaml', () => {
  type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };
  const rulesOf = (doc: Record<string, unknown>) => (at(doc, 'rules') as Rule[] | undefined) ?? [];

  it('grants the read group the read-only ClusterRole and the calibration group its Role in `default` only', async () => {
    // Act
    const docs = await documents('infra/kubernetes/control-plane-rbac.yaml');

    // Assess
    const binding = (kind: string, name: string) =>
      docs.find((d) => d.kind === kind && at(d, 'metadata.name') === name);
    expect(binding('ClusterRoleBinding', 'vllm-eks-pilot-read')).toMatchObject({
      roleRef: { kind: 'ClusterRole', name: 'vllm-eks-pilot-read' },
      subjects: [{ kind: 'Group', name: RBAC_GROUPS.read, apiGroup: 'rbac.authorization.k8s.io' }],
    });
    expect(rulesOf(binding('ClusterRole', 'vllm-eks-pilot-read') ?? {})).toHaveLength(READ_ONLY_RULES.length);
    const roles = docs.filter((d) => d.kind === 'Role');
    expect(roles.map((r) => at(r, 'metadata.namespace'))).toEqual(['default']);
    expect(rulesOf(roles[0] ?? {})).toHaveLength(CALIBRATION_NAMESPACED_RULES.length);
    expect(binding('RoleBinding', 'vllm-eks-pilot-calibration')).toMatchObject({
      subjects: [{ kind: 'Group', name: RBAC_GROUPS.calibration }],
    });
  });

  it('grants no wildcard and no access to Secrets, and only get/list/watch to the read-only ClusterRoles', async () => {
    // Act
    const docs = await documents('infra/kubernetes/control-plane-rbac.yaml');

    // Assess
    const rules = docs.flatMap(rulesOf);
    const granted = rules.flatMap((rule) => [...rule.apiGroups, ...rule.resources, ...rule.verbs]);
    expect(granted.filter((value) => value.includes('*'))).toEqual([]);
    expect(rules.flatMap((rule) => rule.resources).filter((r) => r.startsWith('secrets'))).toEqual([]);
    const clusterVerbs = docs
      .filter((d) => d.kind === 'ClusterRole')
      .flatMap((d) => rulesOf(d).flatMap((r) => r.verbs));
    expect([...new Set(clusterVerbs)].sort()).toEqual(['get', 'list']);
  });
});

describe('File: infra/kubernetes/keda-trigger-authentication.yaml', () => {
  it("signs KEDA's AMP queries with its pod identity and names no namespace (applied with -n)", async () => {
    // Act
    const [auth] = await documents('infra/kubernetes/keda-trigger-authentication.yaml');

    // Assess
    expect(auth).toMatchObject({ apiVersion: 'keda.sh/v1alpha1', kind: 'TriggerAuthentication' });
    expect(at(auth, 'spec.podIdentity.provider')).toBe('aws');
    expect(at(auth, 'metadata.namespace')).toBeUndefined();
  });
});

describe('File: infra/karpenter/gpu-nodepool.yaml (hand-written)', () => {
  interface Requirement {
    key: string;
    operator: string;
    values: string[];
  }

  async function nodePool(): Promise<{ pool: Record<string, unknown>; nodeClass: Record<string, unknown> }> {
    const docs = await documents('infra/karpenter/gpu-nodepool.yaml');
    const pool = docs.find((doc) => doc.kind === 'NodePool');
    const nodeClass = docs.find((doc) => doc.kind === 'EC2NodeClass');
    if (pool === undefined || nodeClass === undefined) throw new Error('expected a NodePool and an EC2NodeClass');
    return { pool, nodeClass };
  }

  it('is a Karpenter v1 NodePool whose node class is the EC2NodeClass beside it', async () => {
    // Act
    const { pool, nodeClass } = await nodePool();

    // Assess
    expect(pool.apiVersion).toBe('karpenter.sh/v1');
    expect(nodeClass.apiVersion).toBe('karpenter.k8s.aws/v1');
    expect(at(pool, 'spec.template.spec.nodeClassRef')).toEqual({
      group: 'karpenter.k8s.aws',
      kind: 'EC2NodeClass',
      name: at(nodeClass, 'metadata.name'),
    });
  });

  it('launches only NVIDIA GPU instance families', async () => {
    // Act
    const { pool } = await nodePool();

    // Assess
    const requirements = at(pool, 'spec.template.spec.requirements') as Requirement[];
    const family = requirements.find((requirement) => requirement.key === 'karpenter.k8s.aws/instance-family');
    expect(family?.operator).toBe('In');
    expect(family?.values.length).toBeGreaterThan(0);
    for (const value of family?.values ?? []) expect(value).toMatch(/^(g5|g6|g6e|p4d|p4de|p5|p5e|p5en)$/);
    expect(requirements).toContainEqual({
      key: 'karpenter.k8s.aws/instance-gpu-manufacturer',
      operator: 'In',
      values: ['nvidia'],
    });
  });

  it('taints its nodes nvidia.com/gpu:NoSchedule, so only GPU workloads land there', async () => {
    // Act
    const { pool } = await nodePool();

    // Assess
    expect(at(pool, 'spec.template.spec.taints')).toEqual([{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }]);
  });

  it('consolidates only empty nodes, after the scale-down stabilization window', async () => {
    // Act
    const { pool } = await nodePool();

    // Assess
    expect(at(pool, 'spec.disruption')).toMatchObject({ consolidationPolicy: 'WhenEmpty', consolidateAfter: '5m' });
  });

  it('caps what it may launch, GPUs included', async () => {
    // Act
    const { pool } = await nodePool();

    // Assess
    const limits = at(pool, 'spec.limits') as Record<string, string>;
    expect(Object.keys(limits).sort()).toEqual(['cpu', 'memory', 'nvidia.com/gpu']);
    expect(Number(limits['nvidia.com/gpu'])).toBeGreaterThan(0);
  });
});
