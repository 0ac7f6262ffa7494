import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { generatedInfraFiles, REGENERATE_COMMAND } from '../infra/generatedFiles.js';
import { DASHBOARDS } from '../shared/dashboards/index.js';
import { CONTROL_PLANE_RULES } from '../shared/kube/manifests/index.js';

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
  it('grants the ClusterRole of CONTROL_PLANE_RULES to the group the EKS access entry maps the IAM roles to', async () => {
    // Act
    const [role, binding] = await documents('infra/kubernetes/control-plane-rbac.yaml');

    // Assess
    expect(at(role, 'kind')).toBe('ClusterRole');
    expect((at(role, 'rules') as unknown[]).length).toBe(CONTROL_PLANE_RULES.length);
    expect(binding).toMatchObject({
      kind: 'ClusterRoleBinding',
      roleRef: { kind: 'ClusterRole', name: at(role, 'metadata.name') },
      subjects: [{ kind: 'Group', name: 'vllm-eks-pilot', apiGroup: 'rbac.authorization.k8s.io' }],
    });
  });

  it('grants no wildcard and no access to Secrets', async () => {
    // Act
    const [role] = await documents('infra/kubernetes/control-plane-rbac.yaml');

    // Assess
    const rules = at(role, 'rules') as Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
    const granted = rules.flatMap((rule) => [...rule.apiGroups, ...rule.resources, ...rule.verbs]);
    expect(granted).not.toContain('*');
    expect(rules.flatMap((rule) => rule.resources)).not.toContain('secrets');
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
