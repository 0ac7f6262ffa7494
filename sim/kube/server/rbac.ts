import type { KubeObject } from '../types.js';

/**
 * Kubernetes' RBAC authorizer (plugin/pkg/auth/authorizer/rbac in kube-apiserver), over the RBAC objects the twin
 * stores: a request is allowed when a rule of a role bound to the user (by name) or one of their groups covers its
 * verb, API group, resource (with its subresource) and name, in the request's namespace. Deny is the default; there
 * are no deny rules. Non-resource URLs (`/healthz`, discovery) are not authorised here: the twin serves them to any
 * authenticated user, as the `system:discovery` and `system:public-info-viewer` bindings do.
 */

/** Who is asking, as authentication found them. */
export interface RbacUser {
  name: string;
  groups: readonly string[];
}

/** What a resource request does, in RBAC's terms. */
export interface RbacRequest {
  verb: string;
  /** '' for the core group. */
  apiGroup: string;
  /** The plural resource (`deployments`). */
  resource: string;
  /** `scale`, `log`, `proxy`, `status`. */
  subresource?: string;
  /** Undefined for cluster-scoped resources and all-namespaces lists. */
  namespace?: string;
  /** Undefined for list, watch, create and deletecollection. */
  name?: string;
}

/** The RBAC objects to evaluate (the store's, read at each request so a new binding takes effect at once). */
export interface RbacObjects {
  clusterRoles: readonly KubeObject[];
  clusterRoleBindings: readonly KubeObject[];
  roles: readonly KubeObject[];
  roleBindings: readonly KubeObject[];
}

/** Allowed (with the binding and role that allowed it) or denied; the reason goes to the twin's log. */
export type RbacDecision = { allowed: true; reason: string } | { allowed: false; reason: string };

/** One PolicyRule (rbac.authorization.k8s.io/v1). */
interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
}

interface RoleRef {
  kind?: string;
  name?: string;
}

/** The group every authenticated user has (Kubernetes adds it after authentication). */
export const AUTHENTICATED_GROUP = 'system:authenticated';

/** Decides one request: the first binding whose role has a rule covering the request allows it. */
export function authorizeRbac(objects: RbacObjects, user: RbacUser, request: RbacRequest): RbacDecision {
  for (const binding of objects.clusterRoleBindings) {
    if (!bindsUser(binding, user)) continue;
    const rules = rulesOf(objects, roleRefOf(binding), undefined);
    if (rules.some((rule) => ruleAllows(rule, request)))
      return { allowed: true, reason: `ClusterRoleBinding "${binding.metadata.name}"` };
  }
  if (request.namespace !== undefined) {
    for (const binding of objects.roleBindings) {
      if (binding.metadata.namespace !== request.namespace || !bindsUser(binding, user)) continue;
      const rules = rulesOf(objects, roleRefOf(binding), request.namespace);
      if (rules.some((rule) => ruleAllows(rule, request)))
        return {
          allowed: true,
          reason: `RoleBinding "${binding.metadata.name}" of namespace "${request.namespace}"`,
        };
    }
  }
  return { allowed: false, reason: 'no RBAC rule allows it' };
}

/** Whether a rule covers the request (rbac's RuleAllows: verb, API group, resource, resource name). */
export function ruleAllows(rule: PolicyRule, request: RbacRequest): boolean {
  return (
    matches(rule.verbs, request.verb) &&
    matches(rule.apiGroups, request.apiGroup) &&
    resourceMatches(rule.resources ?? [], request) &&
    nameMatches(rule.resourceNames ?? [], request.name)
  );
}

/** `*` or the exact value. */
function matches(values: readonly string[] | undefined, value: string): boolean {
  return (values ?? []).some((v) => v === '*' || v === value);
}

/**
 * `deployments` covers only the Deployment itself; a subresource needs `deployments/scale`, `*` (everything) or
 * `*\/scale` (that subresource of every resource), as in ResourceMatches.
 */
function resourceMatches(resources: readonly string[], request: RbacRequest): boolean {
  const combined = request.subresource === undefined ? request.resource : `${request.resource}/${request.subresource}`;
  return resources.some(
    (r) => r === '*' || r === combined || (request.subresource !== undefined && r === `*/${request.subresource}`),
  );
}

/** Empty resourceNames covers every name; otherwise only requests that name one of them (never list or create). */
function nameMatches(names: readonly string[], name: string | undefined): boolean {
  if (names.length === 0) return true;
  return name !== undefined && names.includes(name);
}

function bindsUser(binding: KubeObject, user: RbacUser): boolean {
  const subjects = (binding as { subjects?: Subject[] }).subjects ?? [];
  return subjects.some(
    (s) => (s.kind === 'User' && s.name === user.name) || (s.kind === 'Group' && user.groups.includes(s.name ?? '')),
  );
}

function roleRefOf(binding: KubeObject): RoleRef {
  return (binding as { roleRef?: RoleRef }).roleRef ?? {};
}

/**
 * The rules a binding grants: a ClusterRole's anywhere (through a RoleBinding only in its namespace: the caller
 * passes the namespace), a Role's only from the RoleBinding's namespace. A missing role grants nothing.
 */
function rulesOf(objects: RbacObjects, ref: RoleRef, bindingNamespace: string | undefined): PolicyRule[] {
  const role =
    ref.kind === 'ClusterRole'
      ? objects.clusterRoles.find((r) => r.metadata.name === ref.name)
      : ref.kind === 'Role' && bindingNamespace !== undefined
        ? objects.roles.find((r) => r.metadata.name === ref.name && r.metadata.namespace === bindingNamespace)
        : undefined;
  return (role as { rules?: PolicyRule[] } | undefined)?.rules ?? [];
}
