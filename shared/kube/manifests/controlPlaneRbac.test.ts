import { describe, expect, it } from '@jest/globals';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { KubeManifestInputError } from '../errors.js';
import type { KubeObject } from '../types.js';
import { CONTROL_PLANE_RULES, controlPlaneRbac, RBAC_GROUPS } from './controlPlaneRbac.js';

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };

function rulesOf(object: KubeObject | undefined): Rule[] {
  return (object as unknown as { rules?: Rule[] } | undefined)?.rules ?? [];
}

function allowed(rules: Rule[], group: string, resource: string, verb: string): boolean {
  return rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));
}

function find(objects: KubeObject[], kind: string, name: string, namespace?: string): KubeObject | undefined {
  return objects.find(
    (o) =>
      o.kind === kind && o.metadata.name === name && (namespace === undefined || o.metadata.namespace === namespace),
  );
}

describe('Function: controlPlaneRbac', () => {
  const objects = controlPlaneRbac();
  const read = rulesOf(find(objects, 'ClusterRole', 'vllm-eks-pilot-read'));
  const calibrationCluster = rulesOf(find(objects, 'ClusterRole', 'vllm-eks-pilot-calibration-cluster'));
  const calibration = rulesOf(find(objects, 'Role', 'vllm-eks-pilot-calibration', 'default'));

  it('renders valid objects: two ClusterRoles with their bindings, one Role and RoleBinding in `default`', () => {
    // Assess
    expect(objects.map((o) => `${o.kind} ${o.metadata.namespace ?? '-'}/${o.metadata.name}`)).toEqual([
      'ClusterRole -/vllm-eks-pilot-read',
      'ClusterRoleBinding -/vllm-eks-pilot-read',
      'ClusterRole -/vllm-eks-pilot-calibration-cluster',
      'ClusterRoleBinding -/vllm-eks-pilot-calibration-cluster',
      'Role default/vllm-eks-pilot-calibration',
      'RoleBinding default/vllm-eks-pilot-calibration',
    ]);
    const models = { ClusterRole, ClusterRoleBinding, Role, RoleBinding } as const;
    for (const object of objects) new models[object.kind as keyof typeof models](object as never).validate();
  });

  it('binds the read-only role to the read group and the calibration roles to the calibration group', () => {
    // Assess
    expect(find(objects, 'ClusterRoleBinding', 'vllm-eks-pilot-read')).toMatchObject({
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'vllm-eks-pilot-read' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: RBAC_GROUPS.read }],
    });
    expect(find(objects, 'ClusterRoleBinding', 'vllm-eks-pilot-calibration-cluster')).toMatchObject({
      subjects: [{ kind: 'Group', name: RBAC_GROUPS.calibration }],
    });
    expect(find(objects, 'RoleBinding', 'vllm-eks-pilot-calibration', 'default')).toMatchObject({
      roleRef: { kind: 'Role', name: 'vllm-eks-pilot-calibration' },
      subjects: [{ kind: 'Group', name: RBAC_GROUPS.calibration }],
    });
  });

  it('grants no wildcard and no Secrets anywhere', () => {
    // Assess
    const all = objects.flatMap(rulesOf);
    expect(all.flatMap((r) => [...r.apiGroups, ...r.resources, ...r.verbs]).some((v) => v.includes('*'))).toBe(false);
    expect(all.flatMap((r) => r.resources).filter((r) => r.startsWith('secrets'))).toEqual([]);
  });

  it('gives the read-only roles only get, list and watch', () => {
    // Assess
    const verbs = new Set([...read, ...calibrationCluster].flatMap((r) => r.verbs));
    expect([...verbs].filter((verb) => !['get', 'list', 'watch'].includes(verb))).toEqual([]);
  });

  it('keeps a reason for every rule', () => {
    // Assess
    const rules = Object.values(CONTROL_PLANE_RULES).flat();
    expect(rules.filter((rule) => rule.why.trim().length < 20)).toEqual([]);
  });

  it.each([
    { case: 'preflight reads the Deployment', rules: 'read', group: 'apps', resource: 'deployments', verb: 'get' },
    { case: "preflight reads a replica's /metrics", rules: 'read', group: '', resource: 'pods/proxy', verb: 'get' },
    { case: 'preflight finds the DCGM DaemonSet', rules: 'read', group: 'apps', resource: 'daemonsets', verb: 'list' },
    {
      case: 'preflight checks the KEDA CRD',
      rules: 'read',
      group: 'apiextensions.k8s.io',
      resource: 'customresourcedefinitions',
      verb: 'get',
    },
    { case: 'calibration applies a Deployment', rules: 'ns', group: 'apps', resource: 'deployments', verb: 'patch' },
    { case: 'calibration scales', rules: 'ns', group: 'apps', resource: 'deployments/scale', verb: 'patch' },
    { case: 'calibration starts a k6 Job', rules: 'ns', group: 'batch', resource: 'jobs', verb: 'create' },
    { case: 'calibration reads the k6 summary', rules: 'ns', group: '', resource: 'pods/log', verb: 'get' },
    { case: 'calibration writes thresholds', rules: 'ns', group: 'keda.sh', resource: 'scaledobjects', verb: 'update' },
    { case: "calibration reads the report's node", rules: 'cluster', group: '', resource: 'nodes', verb: 'get' },
  ])('allows what the product does: $case', ({ rules, group, resource, verb }) => {
    // Prepare
    const set = rules === 'read' ? read : rules === 'ns' ? calibration : calibrationCluster;

    // Assess
    expect(allowed(set, group, resource, verb)).toBe(true);
  });

  it.each([
    { case: 'preflight patches a Deployment', rules: 'read', group: 'apps', resource: 'deployments', verb: 'patch' },
    { case: 'preflight deletes a Job', rules: 'read', group: 'batch', resource: 'jobs', verb: 'delete' },
    { case: 'calibration deletes Pods directly', rules: 'ns', group: '', resource: 'pods', verb: 'delete' },
    { case: 'calibration execs into Pods', rules: 'ns', group: '', resource: 'pods/exec', verb: 'create' },
    { case: 'calibration writes a node', rules: 'cluster', group: '', resource: 'nodes', verb: 'patch' },
    {
      case: 'calibration writes the HPA KEDA owns',
      rules: 'ns',
      group: 'autoscaling',
      resource: 'horizontalpodautoscalers',
      verb: 'patch',
    },
  ])('refuses what it does not do: $case', ({ rules, group, resource, verb }) => {
    // Prepare
    const set = rules === 'read' ? read : rules === 'ns' ? calibration : calibrationCluster;

    // Assess
    expect(allowed(set, group, resource, verb)).toBe(false);
  });

  it('renders one Role and RoleBinding per namespace given as `a,b` (what --set namespaces=a,b passes)', () => {
    // Act
    const rendered = controlPlaneRbac({ namespaces: 'team-a, team-b' });

    // Assess
    const namespaced = rendered.filter((o) => o.kind === 'Role' || o.kind === 'RoleBinding');
    expect(namespaced.map((o) => `${o.kind} ${o.metadata.namespace}`)).toEqual([
      'Role team-a',
      'RoleBinding team-a',
      'Role team-b',
      'RoleBinding team-b',
    ]);
  });

  it.each([
    { case: 'a namespace that is not a DNS label', namespaces: ['Team_A'], path: 'namespaces[0]' },
    { case: 'no namespace', namespaces: [], path: 'namespaces' },
  ])('refuses $case, naming the field', ({ namespaces, path }) => {
    // Act
    const error = (() => {
      try {
        controlPlaneRbac({ namespaces });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();

    // Assess
    expect(error).toBeInstanceOf(KubeManifestInputError);
    expect((error as Error).message).toContain(path);
  });

  it('names the roles and groups as asked (the access entries map the IAM roles to those groups)', () => {
    // Act
    const rendered = controlPlaneRbac({ name: 'pilot', readGroup: 'ops-read', calibrationGroup: 'ops-calib' });

    // Assess
    expect(find(rendered, 'ClusterRoleBinding', 'pilot-read')).toMatchObject({ subjects: [{ name: 'ops-read' }] });
    expect(find(rendered, 'RoleBinding', 'pilot-calibration', 'default')).toMatchObject({
      subjects: [{ name: 'ops-calib' }],
    });
  });
});
