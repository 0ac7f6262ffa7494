import { describe, expect, it } from '@jest/globals';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { controlPlaneRbac } from './controlPlaneRbac.js';

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };

function allowed(rules: Rule[], group: string, resource: string, verb: string): boolean {
  return rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));
}

describe('Function: controlPlaneRbac', () => {
  const [role, binding] = controlPlaneRbac();
  const rules = (role as unknown as { rules: Rule[] }).rules;

  it('builds a ClusterRole and a ClusterRoleBinding to the control-plane group that the schema accepts', () => {
    // Assess
    new ClusterRole(role).validate();
    new ClusterRoleBinding(binding as never).validate();
    expect(binding).toMatchObject({
      metadata: { name: 'vllm-eks-pilot' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'vllm-eks-pilot' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'vllm-eks-pilot' }],
    });
  });

  it('grants no wildcard, no Secrets and no watch', () => {
    // Assess
    const all = rules.flatMap((r) => [...r.apiGroups, ...r.resources, ...r.verbs]);
    expect(all).not.toContain('*');
    expect(rules.flatMap((r) => r.resources)).not.toContain('secrets');
    expect(rules.flatMap((r) => r.verbs)).not.toContain('watch');
  });

  it.each([
    { case: 'apply a Deployment', group: 'apps', resource: 'deployments', verb: 'patch' },
    { case: 'scale through the subresource', group: 'apps', resource: 'deployments/scale', verb: 'patch' },
    { case: 'start a k6 Job', group: 'batch', resource: 'jobs', verb: 'create' },
    { case: 'read the k6 summary', group: '', resource: 'pods/log', verb: 'get' },
    { case: 'write thresholds with updateWithRetry', group: 'keda.sh', resource: 'scaledobjects', verb: 'update' },
    { case: 'create the ServiceMonitor', group: 'monitoring.coreos.com', resource: 'servicemonitors', verb: 'create' },
    { case: 'read the HPA status', group: 'autoscaling', resource: 'horizontalpodautoscalers', verb: 'get' },
  ])('allows what the product does: $case', ({ group, resource, verb }) => {
    // Assess
    expect(allowed(rules, group, resource, verb)).toBe(true);
  });

  it.each([
    { case: 'delete Pods directly', group: '', resource: 'pods', verb: 'delete' },
    { case: 'write the HPA that KEDA owns', group: 'autoscaling', resource: 'horizontalpodautoscalers', verb: 'patch' },
    { case: 'exec into Pods', group: '', resource: 'pods/exec', verb: 'create' },
  ])('refuses what it does not do: $case', ({ group, resource, verb }) => {
    // Assess
    expect(allowed(rules, group, resource, verb)).toBe(false);
  });

  it('names the role and the group as asked (the EKS access entry maps the IAM role to that group)', () => {
    // Act
    const [customRole, customBinding] = controlPlaneRbac({ name: 'pilot', group: 'pilot-ops' });

    // Assess
    expect(customRole?.metadata.name).toBe('pilot');
    expect(customBinding).toMatchObject({ roleRef: { name: 'pilot' }, subjects: [{ name: 'pilot-ops' }] });
  });
});
