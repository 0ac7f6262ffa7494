/** The twin's Kubernetes API server: start it over an object store, and write kubeconfigs that point at it. */
export { startKubeApiServer, MAX_REQUEST_BODY_BYTES } from './startKubeApiServer.js';
export type { KubeApiServer, KubeApiServerOptions } from './startKubeApiServer.js';
export { writeKubeconfig, renderKubeconfig } from './writeKubeconfig.js';
export type { KubeconfigOptions } from './writeKubeconfig.js';
export { STATIC_USERS } from './auth.js';
export type { EksAccess, TokenRights, User } from './auth.js';
export { EksAccessEntries } from './accessEntries.js';
export type { AccessEntry, AccessEntryInput, ResolvedIdentity } from './accessEntries.js';
export { authorizeRbac, AUTHENTICATED_GROUP } from './rbac.js';
export type { RbacDecision, RbacObjects, RbacRequest, RbacUser } from './rbac.js';
export { verifyEksToken, EKS_TOKEN_PREFIX } from './eksToken.js';
export type { EksIdentity, EksTokenVerdict } from './eksToken.js';
export { SERVER_VERSION } from './discovery.js';
export * from './errors.js';
export type { KubeAuditEvent } from './KubeApiHandler.js';
