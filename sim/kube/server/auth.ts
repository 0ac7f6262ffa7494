import { KubeApiForbiddenError, KubeApiUnauthorizedError } from '../errors.js';
import type { ResourceInfo } from '../resources.js';
import type { EksAccessEntries } from './accessEntries.js';
import { EKS_TOKEN_PREFIX, verifyEksToken } from './eksToken.js';
import { AUTHENTICATED_GROUP, authorizeRbac, type RbacObjects } from './rbac.js';

/** Static bearer tokens the server accepts, by what they may do. */
export interface TokenRights {
  /** May do everything. */
  admin: readonly string[];
  /** May get, list and watch only (RBAC's `view`). */
  readOnly: readonly string[];
}

/** The users static tokens authenticate as (EKS tokens authenticate as their STS identity). */
export const STATIC_USERS = {
  admin: 'twin-admin',
  readOnly: 'twin-read-only',
} as const;

/**
 * How EKS tokens are authorised. Without it every EKS token is admin (the twin's default, kinder than EKS). With it
 * the caller's access entry decides: cluster admin, or its username and groups evaluated against the RBAC objects
 * the server stores; a caller without an entry is admin (`unmapped: 'admin'`) or refused with 401 as EKS refuses it
 * (`'refuse'`).
 */
export interface EksAccess {
  entries: EksAccessEntries;
  unmapped: 'admin' | 'refuse';
}

/** Who made a request and what they may do: everything, get/list/watch, or what RBAC allows their name and groups. */
export interface User {
  name: string;
  groups: readonly string[];
  access: 'admin' | 'read-only' | 'rbac';
  via: 'static-token' | 'eks-token';
}

/** The verbs read-only users may use. */
const READ_VERBS: ReadonlySet<string> = new Set(['get', 'list', 'watch']);

/**
 * Authenticates `Authorization: Bearer <token>`: a static admin or read-only token, or an EKS token (see
 * verifyEksToken), whose caller `eksAccess` maps to a Kubernetes user and groups (admin without it). No header,
 * another scheme or an unknown token is 401 Unauthorized, whose body says only "Unauthorized" as a real server's
 * does; `onRefused` hears the reason.
 */
export function authenticate(
  authorization: string | undefined,
  tokens: TokenRights,
  nowMs: number,
  onRefused?: (reason: string) => void,
  eksAccess?: EksAccess,
): User {
  const refuse = (reason: string): never => {
    onRefused?.(reason);
    throw new KubeApiUnauthorizedError();
  };
  if (!authorization) return refuse('no Authorization header');
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!m) return refuse('the Authorization header is not "Bearer <token>"');
  const token = m[1] as string;
  const groups = [AUTHENTICATED_GROUP];
  if (tokens.admin.includes(token)) return { name: STATIC_USERS.admin, groups, access: 'admin', via: 'static-token' };
  if (tokens.readOnly.includes(token))
    return { name: STATIC_USERS.readOnly, groups, access: 'read-only', via: 'static-token' };
  if (token.startsWith(EKS_TOKEN_PREFIX)) {
    const verdict = verifyEksToken(token, nowMs);
    if (!verdict.accepted) return refuse(`EKS token refused: ${verdict.reason}`);
    const { identity } = verdict;
    if (eksAccess === undefined) return { name: identity.arn, groups, access: 'admin', via: 'eks-token' };
    const resolved = eksAccess.entries.resolve(identity);
    if (resolved === undefined) {
      if (eksAccess.unmapped === 'refuse') return refuse(`no access entry maps ${identity.arn}`);
      return { name: identity.arn, groups, access: 'admin', via: 'eks-token' };
    }
    return {
      name: resolved.username,
      groups: [...resolved.groups, AUTHENTICATED_GROUP],
      access: resolved.clusterAdmin ? 'admin' : 'rbac',
      via: 'eks-token',
    };
  }
  return refuse('unknown bearer token');
}

/** What a request does, in RBAC terms. */
export interface Attributes {
  verb: string;
  resource: ResourceInfo;
  name?: string;
  namespace?: string;
  subresource?: string;
}

/**
 * Lets admins do everything, read-only users get/list/watch, and RBAC users what a rule bound to them allows (the
 * objects `rbac` returns, read per request); anything else is 403 with the real message. `onDenied` hears why.
 */
export function authorize(
  user: User,
  attributes: Attributes,
  rbac: () => RbacObjects,
  onDenied?: (reason: string) => void,
): void {
  if (user.access === 'admin') return;
  if (user.access === 'read-only' && READ_VERBS.has(attributes.verb)) return;
  if (user.access === 'rbac') {
    const decision = authorizeRbac(rbac(), user, {
      verb: attributes.verb,
      apiGroup: attributes.resource.group,
      resource: attributes.resource.plural,
      ...(attributes.subresource === undefined ? {} : { subresource: attributes.subresource }),
      ...(attributes.namespace === undefined ? {} : { namespace: attributes.namespace }),
      ...(attributes.name === undefined ? {} : { name: attributes.name }),
    });
    if (decision.allowed) return;
    onDenied?.(decision.reason);
  }
  throw new KubeApiForbiddenError(
    attributes.resource,
    attributes.name,
    user.name,
    attributes.verb,
    attributes.namespace,
    attributes.subresource,
  );
}
