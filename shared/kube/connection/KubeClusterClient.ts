/**
 * The ClusterClient adapter over @kubernetes/client-node 1.4: `KubernetesObjectApi` for objects of any kind, and
 * the scale subresource, Pod logs and the Pod proxy as the generated `AppsV1Api`/`CoreV1Api` request them, sent
 * through the same client-node `Configuration` (shared/kube/clientNodeRequest.ts). Only those parts are imported,
 * by deep paths: the package's index pulls every API group, every model and every auth provider (about 1.4 MB of a
 * minified bundle). It works on plain JSON (no class instances, no Date objects), maps every failure to a named
 * `KubeError`, and writes as the field manager `vllm-eks-pilot`.
 *
 * `apply` is create-or-merge-patch (not server-side apply): it needs nothing beyond RFC 7386 merge patch from the
 * server, which both EKS and the twin serve. The price: a field dropped from the desired object is not removed from
 * the live one (merge patch only removes fields set to `null`). The generators in shared/kube/manifests only add or
 * change fields between versions, so this has not mattered.
 */
import type { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import type { Configuration } from '@kubernetes/client-node/dist/gen/configuration.js';
import { HttpMethod, type ResponseContext } from '@kubernetes/client-node/dist/gen/http/http.js';
import type { V1APIResource } from '@kubernetes/client-node/dist/gen/models/V1APIResource.js';
import { KubernetesObjectApi } from '@kubernetes/client-node/dist/object.js';
import { PatchStrategy } from '@kubernetes/client-node/dist/patch.js';
import type { KubernetesObject } from '@kubernetes/client-node/dist/types.js';
import { kubeConfigConnection, type ClientNodeConnection } from './clientNodeConfiguration.js';
import { sendClientNodeRequest } from './clientNodeRequest.js';
import { KubeAlreadyExistsError, KubeInvalidArgumentError, KubeNotFoundError } from '../errors.js';
import { formatLabelSelector, knownResource } from '../resources.js';
import { toKubeError } from './toKubeError.js';
import { updateWithRetry } from '../updateWithRetry.js';
import {
  APPLY_ACTIONS,
  type ApplyResult,
  type ClusterClient,
  type KubeObject,
  type LabelSelectorInput,
  type ListRef,
  type Mutation,
  type ObjectRef,
  type PodLogOptions,
  type PodProxyRef,
  type PropagationPolicy,
  type UpdateWithRetryOptions,
} from '../types.js';

/** The field manager recorded in `managedFields` for every write of the product. */
export const FIELD_MANAGER = 'vllm-eks-pilot';

/** Metadata the server owns: sending it back on create is refused, and on a merge patch it would be a precondition. */
const SERVER_METADATA = [
  'resourceVersion',
  'uid',
  'creationTimestamp',
  'generation',
  'managedFields',
  'selfLink',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
] as const;

/**
 * `KubernetesObjectApi` that returns the server's JSON as is (the base class turns known kinds into model instances
 * with Date fields) and resolves the kinds of shared/kube/resources.ts without a discovery request.
 */
class PlainObjectApi extends KubernetesObjectApi {
  constructor(configuration: Configuration, defaultNamespace: string) {
    super(configuration);
    this.defaultNamespace = defaultNamespace;
  }

  protected override async resource(
    apiVersion: string,
    kind: string,
    options?: Configuration,
  ): Promise<V1APIResource | undefined> {
    const known = knownResource(apiVersion, kind);
    if (known !== undefined)
      return { kind, name: known.plural, namespaced: known.namespaced, singularName: '', verbs: [] };
    return super.resource(apiVersion, kind, options);
  }

  protected override async processResponse<T extends KubernetesObject>(
    response: ResponseContext,
    type?: string,
  ): Promise<T> {
    if (response.httpStatusCode >= 200 && response.httpStatusCode <= 299) {
      const text = await response.body.text();
      return (text.trim() === '' ? {} : JSON.parse(text)) as T;
    }
    return super.processResponse<T>(response, type);
  }
}

export interface KubeClusterClientOptions {
  /** Default `vllm-eks-pilot`. */
  fieldManager?: string;
}

/**
 * ClusterClient over a client-node `Configuration` (connectToEks builds one without a KubeConfig), or over a
 * KubeConfig's current context (a kubeconfig file, as the tests use): the Configuration `makeApiClient` would build.
 */
export class KubeClusterClient implements ClusterClient {
  readonly #configuration: Configuration;
  readonly #objects: PlainObjectApi;
  readonly #fieldManager: string;

  constructor(cluster: ClientNodeConnection | KubeConfig, options: KubeClusterClientOptions = {}) {
    const connection = 'configuration' in cluster ? cluster : kubeConfigConnection(cluster);
    this.#configuration = connection.configuration;
    this.#objects = new PlainObjectApi(connection.configuration, connection.defaultNamespace);
    this.#fieldManager = options.fieldManager ?? FIELD_MANAGER;
  }

  /** Creates `object`, or merge-patches the live one to it; says whether anything changed. */
  async apply<T extends KubeObject>(object: T): Promise<ApplyResult<T>> {
    const ref = refOf(object);
    const desired = withoutServerFields(object);
    const live = await this.get<T>(ref);
    if (live === undefined) {
      try {
        const created = await this.#call('create', ref, () =>
          this.#objects.create(toWire(desired), undefined, undefined, this.#fieldManager),
        );
        return { action: APPLY_ACTIONS.created, object: created as T };
      } catch (error) {
        // Created by someone else since the read: fall through to the patch.
        if (!(error instanceof KubeAlreadyExistsError)) throw error;
      }
    }
    const patched = (await this.#call('patch', ref, () =>
      this.#objects.patch(
        toWire(desired),
        undefined,
        undefined,
        this.#fieldManager,
        undefined,
        PatchStrategy.MergePatch,
      ),
    )) as T;
    // The API server keeps the resourceVersion when a patch changes nothing.
    const unchanged = live !== undefined && live.metadata.resourceVersion === patched.metadata.resourceVersion;
    return { action: unchanged ? APPLY_ACTIONS.unchanged : APPLY_ACTIONS.configured, object: patched };
  }

  async get<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    checkRef(ref);
    try {
      return (await this.#call('get', ref, () =>
        this.#objects.read({
          apiVersion: ref.apiVersion,
          kind: ref.kind,
          metadata: { name: ref.name, namespace: ref.namespace },
        }),
      )) as T;
    } catch (error) {
      if (error instanceof KubeNotFoundError) return undefined;
      throw error;
    }
  }

  async list<T extends KubeObject = KubeObject>(ref: ListRef): Promise<T[]> {
    const selector = formatLabelSelector(ref.labelSelector);
    const result = await this.#call('list', ref, () =>
      this.#objects.list(ref.apiVersion, ref.kind, ref.namespace, undefined, undefined, undefined, undefined, selector),
    );
    // List items carry no apiVersion/kind on a real API server; callers get whole objects.
    return (result.items ?? []).map(
      (item) => ({ ...item, apiVersion: item.apiVersion ?? ref.apiVersion, kind: item.kind ?? ref.kind }) as T,
    );
  }

  async patchMerge<T extends KubeObject = KubeObject>(ref: ObjectRef, patch: Record<string, unknown>): Promise<T> {
    checkRef(ref);
    const metadata = (patch.metadata ?? {}) as Record<string, unknown>;
    const body = {
      ...patch,
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      metadata: { ...metadata, name: ref.name, namespace: ref.namespace },
    };
    return (await this.#call('patch', ref, () =>
      this.#objects.patch(body, undefined, undefined, this.#fieldManager, undefined, PatchStrategy.MergePatch),
    )) as T;
  }

  async replace<T extends KubeObject>(object: T): Promise<T> {
    const ref = refOf(object);
    return (await this.#call('replace', ref, () =>
      this.#objects.replace(toWire(object), undefined, undefined, this.#fieldManager),
    )) as T;
  }

  async delete(ref: ObjectRef, options: { propagationPolicy?: PropagationPolicy } = {}): Promise<boolean> {
    checkRef(ref);
    try {
      await this.#call('delete', ref, () =>
        this.#objects.delete(
          { apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, namespace: ref.namespace } },
          undefined,
          undefined,
          undefined,
          undefined,
          options.propagationPolicy,
        ),
      );
      return true;
    } catch (error) {
      if (error instanceof KubeNotFoundError) return false;
      throw error;
    }
  }

  async scale(deployment: { namespace: string; name: string }, replicas: number): Promise<void> {
    if (!Number.isInteger(replicas) || replicas < 0)
      throw new KubeInvalidArgumentError('replicas', `got ${replicas}`, 'an integer >= 0');
    const ref = { apiVersion: 'apps/v1', kind: 'Deployment', ...deployment };
    checkRef(ref);
    // AppsV1Api.patchNamespacedDeploymentScale with the Content-Type set to merge patch.
    await this.#call('scale', ref, () =>
      sendClientNodeRequest(this.#configuration, {
        method: HttpMethod.PATCH,
        path: `/apis/apps/v1/namespaces/${segment(ref.namespace)}/deployments/${segment(ref.name)}/scale`,
        query: { fieldManager: this.#fieldManager },
        body: { contentType: PatchStrategy.MergePatch, value: { spec: { replicas } } },
      }),
    );
  }

  async readPodLog(namespace: string, pod: string, options: PodLogOptions = {}): Promise<string> {
    const ref = { apiVersion: 'v1', kind: 'Pod', namespace, name: pod };
    checkRef(ref);
    if (options.tailLines !== undefined && (!Number.isInteger(options.tailLines) || options.tailLines < 0))
      throw new KubeInvalidArgumentError('tailLines', `got ${options.tailLines}`, 'an integer >= 0');
    // CoreV1Api.readNamespacedPodLog.
    const log = await this.#call('read log of', ref, () =>
      sendClientNodeRequest(this.#configuration, {
        method: HttpMethod.GET,
        path: `/api/v1/namespaces/${segment(namespace)}/pods/${segment(pod)}/log`,
        query: { container: options.container, tailLines: options.tailLines },
      }),
    );
    return typeof log === 'string' ? log : JSON.stringify(log);
  }

  async proxyGet(ref: PodProxyRef, options: { signal?: AbortSignal } = {}): Promise<string> {
    const podRef = { apiVersion: 'v1', kind: 'Pod', namespace: ref.namespace, name: ref.pod };
    checkRef(podRef);
    const port = String(ref.port);
    if (!/^[A-Za-z0-9-]+$/.test(port))
      throw new KubeInvalidArgumentError('port', `got ${JSON.stringify(ref.port)}`, 'a port number or port name');
    if (typeof ref.path !== 'string' || !ref.path.startsWith('/'))
      throw new KubeInvalidArgumentError('path', `got ${JSON.stringify(ref.path)}`, 'a path starting with "/"');
    if (options.signal?.aborted === true) throw toKubeError(options.signal.reason, 'proxy to', podRef);
    // CoreV1Api.connectGetNamespacedPodProxyWithPath, which percent-encodes `{path}` as one segment; both
    // kube-apiserver and the twin decode it back.
    const body = await this.#call('proxy to', podRef, () =>
      sendClientNodeRequest(this.#configuration, {
        method: HttpMethod.GET,
        path: `/api/v1/namespaces/${segment(ref.namespace)}/pods/${segment(`${ref.pod}:${port}`)}/proxy/${segment(ref.path.slice(1))}`,
      }),
    );
    return typeof body === 'string' ? body : JSON.stringify(body);
  }

  listPods(namespace: string, labelSelector?: LabelSelectorInput): Promise<KubeObject[]> {
    return this.list({ apiVersion: 'v1', kind: 'Pod', namespace, labelSelector });
  }

  updateWithRetry<T extends KubeObject = KubeObject>(
    ref: ObjectRef,
    mutate: Mutation<T>,
    options?: UpdateWithRetryOptions,
  ): Promise<T> {
    return updateWithRetry(this, ref, mutate, options);
  }

  async #call<R>(verb: string, ref: Partial<ObjectRef> | ListRef, request: () => Promise<R>): Promise<R> {
    try {
      return await request();
    } catch (error) {
      throw toKubeError(error, verb, ref);
    }
  }
}

/** A path parameter as the generated client-node APIs encode it. */
function segment(value: string): string {
  return encodeURIComponent(value);
}

function refOf(object: KubeObject): ObjectRef {
  if (typeof object !== 'object' || object === null)
    throw new KubeInvalidArgumentError(
      'object',
      'is not an object',
      'a Kubernetes object { apiVersion, kind, metadata }',
    );
  const ref = {
    apiVersion: object.apiVersion,
    kind: object.kind,
    name: object.metadata?.name,
    namespace: object.metadata?.namespace,
  } as ObjectRef;
  checkRef(ref);
  return ref;
}

function checkRef(ref: ObjectRef): void {
  for (const field of ['apiVersion', 'kind', 'name'] as const) {
    if (typeof ref[field] !== 'string' || ref[field] === '')
      throw new KubeInvalidArgumentError(
        field === 'name' ? 'metadata.name' : field,
        'is missing or empty',
        'a non-empty string',
      );
  }
  if (ref.namespace !== undefined && (typeof ref.namespace !== 'string' || ref.namespace === ''))
    throw new KubeInvalidArgumentError(
      'metadata.namespace',
      'is empty',
      'a namespace name, or no namespace for cluster-scoped kinds',
    );
}

/**
 * A copy typed as client-node's model (whose timestamps are Date): the JSON is sent as is, because its serializer
 * passes strings through in Date fields. A copy, because client-node fills in a missing namespace in place.
 */
function toWire(object: KubeObject): KubernetesObject {
  return structuredClone(object) as unknown as KubernetesObject;
}

/** The object without status and server-owned metadata: what a client may send to create or patch. */
function withoutServerFields<T extends KubeObject>(object: T): T {
  const { status: _status, ...rest } = object;
  const metadata = { ...object.metadata };
  for (const field of SERVER_METADATA) delete metadata[field];
  return { ...rest, metadata } as T;
}
