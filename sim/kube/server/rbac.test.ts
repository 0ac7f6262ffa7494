import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../types.js';
import { authorizeRbac, type RbacObjects, type RbacRequest, ruleAllows } from './rbac.js';

const RBAC = 'rbac.authorization.k8s.io/v1';

function object(kind: string, name: string, extra: Record<string, unknown>, namespace?: string): KubeObject {
  return {
    apiVersion: RBAC,
    kind,
    metadata: { name, ...(namespace === undefined ? {} : { namespace }) },
    ...extra,
  };
}

/** A world with one read-only ClusterRole for group `readers`, and a Role in `team-a` for group `writers`. */
const OBJECTS: RbacObjects = {
  clusterRoles: [
    object('ClusterRole', 'read', {
      rules: [
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list'] },
        { apiGroups: [''], resources: ['pods/proxy'], verbs: ['get'] },
      ],
    }),
    object('ClusterRole', 'node-reader', { rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }] }),
  ],
  clusterRoleBindings: [
    object('ClusterRoleBinding', 'read', {
      roleRef: { kind: 'ClusterRole', name: 'read' },
      subjects: [{ kind: 'Group', name: 'readers' }],
    }),
    object('ClusterRoleBinding', 'alice-nodes', {
      roleRef: { kind: 'ClusterRole', name: 'node-reader' },
      subjects: [{ kind: 'User', name: 'alice' }],
    }),
  ],
  roles: [
    object(
      'Role',
      'write',
      {
        rules: [
          { apiGroups: ['apps'], resources: ['deployments', 'deployments/scale'], verbs: ['get', 'patch'] },
          { apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: ['k6-script'] },
        ],
      },
      'team-a',
    ),
    // Same name in another namespace, bound to nobody: must not leak into team-a's grants or vice versa.
    object('Role', 'write', { rules: [{ apiGroups: ['batch'], resources: ['jobs'], verbs: ['create'] }] }, 'team-b'),
  ],
  roleBindings: [
    object(
      'RoleBinding',
      'write',
      { roleRef: { kind: 'Role', name: 'write' }, subjects: [{ kind: 'Group', name: 'writers' }] },
      'team-a',
    ),
    // A RoleBinding to a ClusterRole grants its rules in the binding's namespace only.
    object(
      'RoleBinding',
      'nodes-in-b',
      { roleRef: { kind: 'ClusterRole', name: 'read' }, subjects: [{ kind: 'User', name: 'bob' }] },
      'team-b',
    ),
  ],
};

const READER = { name: 'r', groups: ['readers', 'system:authenticated'] };
const WRITER = { name: 'w', groups: ['writers'] };

describe('Function: authorizeRbac', () => {
  it.each<{ case: string; user: { name: string; groups: string[] }; request: RbacRequest; allowed: boolean }>([
    {
      case: 'a ClusterRoleBinding grants its rules in every namespace',
      user: READER,
      request: { verb: 'get', apiGroup: 'apps', resource: 'deployments', namespace: 'any', name: 'x' },
      allowed: true,
    },
    {
      case: 'and at the cluster scope (an all-namespaces list)',
      user: READER,
      request: { verb: 'list', apiGroup: 'apps', resource: 'deployments' },
      allowed: true,
    },
    {
      case: 'a verb the rule does not list is denied',
      user: READER,
      request: { verb: 'patch', apiGroup: 'apps', resource: 'deployments', namespace: 'any', name: 'x' },
      allowed: false,
    },
    {
      case: 'the same resource in another API group is denied',
      user: READER,
      request: { verb: 'get', apiGroup: 'extensions', resource: 'deployments', namespace: 'any', name: 'x' },
      allowed: false,
    },
    {
      case: 'a resource does not grant its subresources',
      user: READER,
      request: { verb: 'get', apiGroup: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'a' },
      allowed: false,
    },
    {
      case: 'a subresource named in the rule (pods/proxy) is granted',
      user: READER,
      request: { verb: 'get', apiGroup: '', resource: 'pods', subresource: 'proxy', namespace: 'a', name: 'p:8000' },
      allowed: true,
    },
    {
      case: 'a subresource does not grant the resource',
      user: READER,
      request: { verb: 'get', apiGroup: '', resource: 'pods', namespace: 'a', name: 'p' },
      allowed: false,
    },
    {
      case: 'a User subject matches by name',
      user: { name: 'alice', groups: [] },
      request: { verb: 'get', apiGroup: '', resource: 'nodes', name: 'n1' },
      allowed: true,
    },
    {
      case: 'a User subject does not match a group of that name',
      user: { name: 'mallory', groups: ['alice'] },
      request: { verb: 'get', apiGroup: '', resource: 'nodes', name: 'n1' },
      allowed: false,
    },
    {
      case: "a RoleBinding grants its Role's rules in its namespace",
      user: WRITER,
      request: { verb: 'patch', apiGroup: 'apps', resource: 'deployments', namespace: 'team-a', name: 'x' },
      allowed: true,
    },
    {
      case: 'with the subresources the Role names',
      user: WRITER,
      request: { verb: 'patch', apiGroup: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'team-a' },
      allowed: true,
    },
    {
      case: 'and nothing in another namespace',
      user: WRITER,
      request: { verb: 'patch', apiGroup: 'apps', resource: 'deployments', namespace: 'team-b', name: 'x' },
      allowed: false,
    },
    {
      case: 'nor at the cluster scope',
      user: WRITER,
      request: { verb: 'list', apiGroup: 'apps', resource: 'deployments' },
      allowed: false,
    },
    {
      case: 'a Role of the same name in another namespace grants nothing here',
      user: WRITER,
      request: { verb: 'create', apiGroup: 'batch', resource: 'jobs', namespace: 'team-a' },
      allowed: false,
    },
    {
      case: 'resourceNames allow the named object',
      user: WRITER,
      request: { verb: 'get', apiGroup: '', resource: 'configmaps', namespace: 'team-a', name: 'k6-script' },
      allowed: true,
    },
    {
      case: 'resourceNames deny another object',
      user: WRITER,
      request: { verb: 'get', apiGroup: '', resource: 'configmaps', namespace: 'team-a', name: 'other' },
      allowed: false,
    },
    {
      case: 'a RoleBinding to a ClusterRole grants it in the binding namespace',
      user: { name: 'bob', groups: [] },
      request: { verb: 'get', apiGroup: 'apps', resource: 'deployments', namespace: 'team-b', name: 'x' },
      allowed: true,
    },
    {
      case: 'but not elsewhere',
      user: { name: 'bob', groups: [] },
      request: { verb: 'get', apiGroup: 'apps', resource: 'deployments', namespace: 'team-a', name: 'x' },
      allowed: false,
    },
    {
      case: 'a user nobody bound is denied',
      user: { name: 'nobody', groups: ['system:authenticated'] },
      request: { verb: 'get', apiGroup: 'apps', resource: 'deployments', namespace: 'team-a', name: 'x' },
      allowed: false,
    },
  ])('$case', ({ user, request, allowed }) => {
    // Act
    const decision = authorizeRbac(OBJECTS, user, request);

    // Assess
    expect(decision.allowed).toBe(allowed);
  });

  it('names the binding that allowed a request (for the log)', () => {
    // Act
    const decision = authorizeRbac(OBJECTS, WRITER, {
      verb: 'get',
      apiGroup: 'apps',
      resource: 'deployments',
      namespace: 'team-a',
      name: 'x',
    });

    // Assess
    expect(decision).toEqual({ allowed: true, reason: 'RoleBinding "write" of namespace "team-a"' });
  });
});

describe('Function: ruleAllows', () => {
  const request: RbacRequest = { verb: 'patch', apiGroup: 'apps', resource: 'deployments', subresource: 'scale' };

  it.each([
    { case: '`*` verbs, groups and resources', rule: { verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, ok: true },
    { case: '`*/scale` covers every scale', rule: { verbs: ['patch'], apiGroups: ['apps'], resources: ['*/scale'] } },
    { case: 'an empty rule covers nothing', rule: {}, ok: false },
    {
      case: 'resourceNames never cover a request without a name',
      rule: { verbs: ['patch'], apiGroups: ['apps'], resources: ['deployments/scale'], resourceNames: ['x'] },
      ok: false,
    },
  ])('$case', ({ rule, ok }) => {
    // Assess
    expect(ruleAllows(rule, request)).toBe(ok ?? true);
  });
});
