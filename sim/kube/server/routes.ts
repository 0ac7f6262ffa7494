/** A request path, resolved as the kube-apiserver's RequestInfoFactory resolves it. */
export type Route =
  | { type: 'public'; name: 'version' | 'healthz' | 'livez' | 'readyz' }
  /** `/api`: APIVersions. */
  | { type: 'coreVersions' }
  /** `/apis`: APIGroupList. */
  | { type: 'groups' }
  /** `/apis/<group>`: APIGroup. */
  | { type: 'group'; group: string }
  /** `/api/v1`, `/apis/<group>/<version>`: APIResourceList. */
  | { type: 'resourceList'; group: string; version: string }
  | { type: 'openapiV2' }
  | { type: 'openapiV3Index' }
  | { type: 'openapiV3'; group: string; version: string }
  | ResourceRoute
  | { type: 'unknown' };

/** A REST path of a resource: a collection, an object, or an object's subresource. */
export interface ResourceRoute {
  type: 'resource';
  group: string;
  version: string;
  plural: string;
  /** Set for `/namespaces/<ns>/<plural>...` paths; absent for cluster-scoped and all-namespaces paths. */
  namespace?: string;
  name?: string;
  subresource?: string;
  /** For `pods/<name>[:<port>]/proxy/<path>`: the path on the Pod's server, starting with `/`. */
  proxyPath?: string;
}

/** Namespace subresources: `/api/v1/namespaces/<name>/status` is the Namespace's status, not a resource "status". */
const NAMESPACE_SUBRESOURCES: ReadonlySet<string> = new Set(['status', 'finalize']);

/** Resolves a URL path (without the query string). */
export function parseRoute(pathname: string): Route {
  let parts: string[];
  try {
    parts = pathname
      .split('/')
      .filter((p) => p !== '')
      .map((p) => decodeURIComponent(p));
  } catch {
    return { type: 'unknown' };
  }
  const [first, ...rest] = parts;
  switch (first) {
    case 'version':
    case 'healthz':
    case 'livez':
    case 'readyz':
      return rest.length === 0 ? { type: 'public', name: first } : { type: 'unknown' };
    case 'openapi':
      return openapiRoute(rest);
    case 'api':
      if (rest.length === 0) return { type: 'coreVersions' };
      return groupVersionRoute('', rest[0] as string, rest.slice(1));
    case 'apis':
      if (rest.length === 0) return { type: 'groups' };
      if (rest.length === 1) return { type: 'group', group: rest[0] as string };
      return groupVersionRoute(rest[0] as string, rest[1] as string, rest.slice(2));
    default:
      return { type: 'unknown' };
  }
}

function openapiRoute(rest: string[]): Route {
  if (rest.length === 1 && rest[0] === 'v2') return { type: 'openapiV2' };
  if (rest[0] !== 'v3') return { type: 'unknown' };
  if (rest.length === 1) return { type: 'openapiV3Index' };
  if (rest[1] === 'api' && rest.length === 3) return { type: 'openapiV3', group: '', version: rest[2] as string };
  if (rest[1] === 'apis' && rest.length === 4) {
    return { type: 'openapiV3', group: rest[2] as string, version: rest[3] as string };
  }
  return { type: 'unknown' };
}

function groupVersionRoute(group: string, version: string, parts: string[]): Route {
  if (parts.length === 0) return { type: 'resourceList', group, version };
  let namespace: string | undefined;
  let rest = parts;
  if (parts[0] === 'namespaces' && parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2] ?? '')) {
    namespace = parts[1];
    rest = parts.slice(2);
  }
  // `pods/<name>[:<port>]/proxy[/<path>]`: the Pod proxy subresource carries the rest of the path for the Pod.
  if (rest[0] === 'pods' && rest[2] === 'proxy' && namespace !== undefined) {
    return {
      type: 'resource',
      group,
      version,
      plural: 'pods',
      namespace,
      name: rest[1] as string,
      subresource: 'proxy',
      proxyPath: `/${rest.slice(3).join('/')}`,
    };
  }
  if (rest.length > 3) return { type: 'unknown' };
  const [plural, name, subresource] = rest as [string, string | undefined, string | undefined];
  return {
    type: 'resource',
    group,
    version,
    plural,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(subresource !== undefined ? { subresource } : {}),
  };
}
