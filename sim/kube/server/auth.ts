import { KubeApiForbiddenError, KubeApiUnauthorizedError } from '../errors.js';
import type { ResourceInfo } from '../resources.js';
import { EKS_TOKEN_PREFIX, verifyEksToken } from './eksToken.js';

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

/** Who made a request and what they may do. */
export interface User {
  name: string;
  access: 'admin' | 'read-only';
  via: 'static-token' | 'eks-token';
}

/** The verbs read-only users may use. */
const READ_VERBS: ReadonlySet<string> = new Set(['get', 'list', 'watch']);

/**
 * Authenticates `Authorization: Bearer <token>`: a static admin or read-only token, or an EKS token (accepted with
 * admin rights, see verifyEksToken). No header, another scheme or an unknown token is 401 Unauthorized, whose body
 * says only "Unauthorized" as a real server's does; `onRefused` hears the reason.
 */
export function authenticate(
  authorization: string | undefined,
  tokens: TokenRights,
  nowMs: number,
  onRefused?: (reason: string) => void,
): User {
  const refuse = (reason: string): never => {
    onRefused?.(reason);
    throw new KubeApiUnauthorizedError();
  };
  if (!authorization) return refuse('no Authorization header');
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!m) return refuse('the Authorization header is not "Bearer <token>"');
  const token = m[1] as string;
  if (tokens.admin.includes(token)) return { name: STATIC_USERS.admin, access: 'admin', via: 'static-token' };
  if (tokens.readOnly.includes(token)) return { name: STATIC_USERS.readOnly, access: 'read-only', via: 'static-token' };
  if (token.startsWith(EKS_TOKEN_PREFIX)) {
    const verdict = verifyEksToken(token, nowMs);
    if (verdict.accepted) return { name: verdict.identity.arn, access: 'admin', via: 'eks-token' };
    return refuse(`EKS token refused: ${verdict.reason}`);
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

/** Lets admins do everything and read-only users get/list/watch; anything else is 403 with the real message. */
export function authorize(user: User, attributes: Attributes): void {
  if (user.access === 'admin' || READ_VERBS.has(attributes.verb)) return;
  throw new KubeApiForbiddenError(
    attributes.resource,
    attributes.name,
    user.name,
    attributes.verb,
    attributes.namespace,
    attributes.subresource,
  );
}
