import { createHash } from 'node:crypto';
import { apiVersionOf, type ResourceInfo } from '../resources.js';
import type { Kind } from '../types.js';

/** What `/version` answers: an EKS 1.30 control plane (the product targets EKS; kubectl warns beyond +/-1 minor). */
export const SERVER_VERSION = {
  major: '1',
  minor: '30+',
  gitVersion: 'v1.30.14-eks-twin',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2025-01-01T00:00:00Z',
  goVersion: 'go1.23.8',
  compiler: 'gc',
  platform: 'linux/amd64',
} as const;

/** Kinds in the `all` category, so `kubectl get all` lists them as on a real cluster. */
const ALL_CATEGORY: ReadonlySet<Kind> = new Set([
  'Pod',
  'Service',
  'Deployment',
  'ReplicaSet',
  'DaemonSet',
  'Job',
  'HorizontalPodAutoscaler',
]);

/** The verbs of the subresources the twin serves. */
const SUBRESOURCE_VERBS = ['get', 'patch', 'update'];

/** `/api`: the core group's versions. */
export function apiVersions(serverAddress: string): unknown {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

/** `/apis`: the named groups that have at least one served resource. */
export function apiGroupList(served: readonly ResourceInfo[]): unknown {
  const groups = [...new Set(served.filter((r) => r.group !== '').map((r) => r.group))];
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map((g) => groupOf(g, served)) };
}

/** `/apis/<group>`, or undefined when nothing of that group is served. */
export function apiGroup(group: string, served: readonly ResourceInfo[]): unknown {
  if (group === '' || !served.some((r) => r.group === group)) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupOf(group, served) };
}

/**
 * `/api/v1`, `/apis/<group>/<version>`: each resource followed by its subresources (`<plural>/status`,
 * `deployments/scale`, `pods/log`); client-node picks the first entry of a kind, so the resource comes first.
 */
export function apiResourceList(group: string, version: string, served: readonly ResourceInfo[]): unknown {
  const resources = served.filter((r) => r.group === group && r.version === version);
  if (resources.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group === '' ? version : `${group}/${version}`,
    resources: resources.flatMap((r) => [
      {
        name: r.plural,
        singularName: r.singular,
        namespaced: r.namespaced,
        kind: r.kind,
        verbs: r.verbs,
        ...(r.shortNames ? { shortNames: r.shortNames } : {}),
        ...(ALL_CATEGORY.has(r.kind) ? { categories: ['all'] } : {}),
      },
      ...(r.scale
        ? [
            {
              name: `${r.plural}/scale`,
              singularName: '',
              namespaced: r.namespaced,
              group: 'autoscaling',
              version: 'v1',
              kind: 'Scale',
              verbs: SUBRESOURCE_VERBS,
            },
          ]
        : []),
      ...(r.status
        ? [
            {
              name: `${r.plural}/status`,
              singularName: '',
              namespaced: r.namespaced,
              kind: r.kind,
              verbs: SUBRESOURCE_VERBS,
            },
          ]
        : []),
      ...(r.kind === 'Pod'
        ? [{ name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] }]
        : []),
    ]),
  };
}

/** `/openapi/v3`: one document per served group-version, with a content hash so clients can cache it. */
export function openapiV3Index(served: readonly ResourceInfo[]): unknown {
  const groupVersions = new Map<string, ResourceInfo>();
  for (const r of served) groupVersions.set(apiVersionOf(r), r);
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const r of groupVersions.values()) {
    const prefix = r.group === '' ? `api/${r.version}` : `apis/${r.group}/${r.version}`;
    const document = openapiV3Document(r.group, r.version, served);
    const hash = createHash('sha512').update(JSON.stringify(document)).digest('hex').slice(0, 64).toUpperCase();
    paths[prefix] = { serverRelativeURL: `/openapi/v3/${prefix}?hash=${hash}` };
  }
  return { paths };
}

/**
 * `/openapi/v3/apis/<group>/<version>`: a minimal OpenAPI 3 document that declares, for every resource, a PATCH
 * operation taking the `fieldValidation` query parameter. That is what kubectl 1.32 reads to decide that the server
 * validates fields itself (`kubectl apply --validate=strict`, the default); without it kubectl wants `/openapi/v2`.
 * The operations carry no request-body schema, so kubectl builds strategic merge patches for built-in kinds from its
 * compiled-in types and JSON merge patches for custom resources, as it does against any server without schemas.
 */
export function openapiV3Document(group: string, version: string, served: readonly ResourceInfo[]): unknown {
  const resources = served.filter((r) => r.group === group && r.version === version);
  if (resources.length === 0) return undefined;
  const root = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
  const paths: Record<string, unknown> = {};
  for (const r of resources) {
    const path = r.namespaced ? `${root}/namespaces/{namespace}/${r.plural}/{name}` : `${root}/${r.plural}/{name}`;
    paths[path] = {
      patch: {
        operationId: `patch${r.kind}`,
        parameters: ['dryRun', 'fieldManager', 'fieldValidation', 'force'].map((name) => ({
          name,
          in: 'query',
          schema: { type: name === 'force' ? 'boolean' : 'string', uniqueItems: true },
        })),
        responses: { '200': { description: 'OK' } },
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': { group, version, kind: r.kind },
      },
    };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: SERVER_VERSION.gitVersion },
    paths,
    components: { schemas: {} },
  };
}

function groupOf(group: string, served: readonly ResourceInfo[]) {
  const versions = [...new Set(served.filter((r) => r.group === group).map((r) => r.version))].map((v) => ({
    groupVersion: `${group}/${v}`,
    version: v,
  }));
  return { name: group, versions, preferredVersion: versions[0] };
}
