import { randomUUID } from 'node:crypto';
import type { Clock } from '../../../shared/clock/index.js';
import {
  KubeApiBadRequestError,
  KubeApiConflictError,
  KubeApiError,
  KubeApiInvalidError,
  KubeApiMethodNotAllowedError,
  KubeApiNotFoundError,
  KubeApiAlreadyExistsError,
} from '../errors.js';
import { matchesSelector, parseLabelSelector } from '../labels.js';
import { apiVersionOf, CRD_KINDS, RESOURCES, type ResourceInfo } from '../resources.js';
import type { MemoryObjectStore, PropagationPolicy } from '../store.js';
import type { Kind, KubeObject, LabelSelector, PodLogStore, WatchEvent } from '../types.js';
import { validateObject } from '../validation.js';
import { authenticate, authorize, type EksAccess, type TokenRights, type User } from './auth.js';
import type { RbacObjects } from './rbac.js';
import {
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  openapiV3Document,
  openapiV3Index,
  SERVER_VERSION,
} from './discovery.js';
import {
  KubeApiInternalError,
  KubeApiInvalidOptionError,
  KubeApiResourceNotServedError,
  KubeApiServiceUnavailableError,
} from './errors.js';
import { matchesFieldSelector, parseFieldSelector, type FieldRequirement } from './fieldSelector.js';
import { applyPatch, parsePatchBody, patchTypeOf } from './patch/applyPatch.js';
import { isJsonObject, jsonText } from './patch/json.js';
import { builtInListStrategies, customResourceListStrategies } from './patch/listStrategies.js';
import type { ListStrategyLookup } from './patch/strategicMergePatch.js';
import type { ResourceRoute, Route } from './routes.js';
import { selectorString } from './tables/printers.js';
import { toTable, type IncludeObject } from './tables/table.js';

/** A request as the handler sees it: the body is read in full before (watch requests have none). */
export interface ApiRequest {
  method: string;
  route: Route;
  /** The path as sent, for messages and the log. */
  path: string;
  query: URLSearchParams;
  accept?: string;
  contentType?: string;
  authorization?: string;
  body: string;
}

/** A stream of watch events: `start` sends events until it is cancelled (the returned function) or `end` runs. */
export interface WatchStream {
  start(send: (event: unknown) => void, end: () => void): () => void;
}

/** One request in the audit log: when, who (null: not authenticated), what, and the answer's status. */
export interface KubeAuditEvent {
  at: string;
  method: string;
  path: string;
  user: string | null;
  status: number;
}

/** Audit events kept (the oldest dropped first): hours of the twin's traffic, a few MB. */
export const AUDIT_LOG_SIZE = 20_000;

/** What the handler answers: JSON (objects, lists, Tables, Status), plain text (logs), or a watch stream. */
export type ApiResponse =
  | { status: number; json: unknown }
  | { status: number; text: string }
  | { status: 200; watch: WatchStream }
  /** The Pod proxy: the server forwards a GET to `url` and relays the answer. */
  | { status: 200; proxy: { url: string } };

/** The base URL of the server a Pod runs on `port` (a number or a container port name), or undefined when none runs. */
export type PodEndpointLookup = (namespace: string, pod: string) => string | undefined;

export interface KubeApiHandlerOptions {
  store: MemoryObjectStore;
  logs: PodLogStore;
  tokens: TokenRights;
  clock: Clock;
  /** `127.0.0.1:PORT`, for `/api`'s serverAddressByClientCIDRs. */
  serverAddress: () => string;
  /** Where a Pod's server listens, for `pods/<name>:<port>/proxy`; without it the proxy answers 503. */
  podEndpoint?: PodEndpointLookup;
  /** How EKS tokens are authorised (access entries + RBAC); without it every EKS token is admin. */
  eksAccess?: EksAccess;
  log?: (line: string) => void;
}

/** The propagation policies DeleteOptions accepts. */
const DELETE_POLICIES: readonly PropagationPolicy[] = ['Foreground', 'Background', 'Orphan'];
/** Kinds whose DELETE answers with the deleted object (the real registry's ReturnDeletedObject), not a Status. */
const RETURNS_DELETED_OBJECT: ReadonlySet<Kind> = new Set(['Pod', 'Service', 'Namespace']);
/** The annotation kubectl reads to pick a Pod's default container. */
const DEFAULT_CONTAINER_ANNOTATION = 'kubectl.kubernetes.io/default-container';

/**
 * The twin's kube-apiserver, minus HTTP: authenticates, routes, authorises and answers one request over the object
 * store with Kubernetes semantics. Every failure is a KubeApiError turned into a `Status` body.
 */
export class KubeApiHandler {
  readonly #store: MemoryObjectStore;
  readonly #logs: PodLogStore;
  readonly #tokens: TokenRights;
  readonly #clock: Clock;
  readonly #serverAddress: () => string;
  readonly #log: ((line: string) => void) | undefined;
  readonly #podEndpoint: PodEndpointLookup | undefined;
  readonly #eksAccess: EksAccess | undefined;
  readonly #audit: KubeAuditEvent[] = [];

  constructor(options: KubeApiHandlerOptions) {
    this.#eksAccess = options.eksAccess;
    this.#podEndpoint = options.podEndpoint;
    this.#store = options.store;
    this.#logs = options.logs;
    this.#tokens = options.tokens;
    this.#clock = options.clock;
    this.#serverAddress = options.serverAddress;
    this.#log = options.log;
  }

  /** Whether `kind` is served now: always for built-in kinds, while its CRD exists for KEDA / Prometheus-operator. */
  isServed(kind: Kind): boolean {
    const info = RESOURCES[kind];
    if (!CRD_KINDS.has(kind)) return true;
    return this.#store.get('CustomResourceDefinition', undefined, `${info.plural}.${info.group}`) !== undefined;
  }

  /**
   * The audit log, oldest first (the last AUDIT_LOG_SIZE events at least, a tenth more at most): every request with its user and answer, as an EKS
   * control plane's audit log records them, so a test can show what a command did to the cluster.
   */
  audit(): readonly KubeAuditEvent[] {
    return this.#audit;
  }

  /** Answers one request; never throws (failures become Status responses). */
  handle(request: ApiRequest): ApiResponse {
    const who: { user?: string } = {};
    let response: ApiResponse;
    try {
      response = this.#handle(request, who);
    } catch (error) {
      const apiError =
        error instanceof KubeApiError
          ? error
          : new KubeApiInternalError(error instanceof Error ? error.message : String(error), { cause: error });
      if (apiError.code >= 500)
        this.#log?.(`kube-apiserver twin: ${request.method} ${request.path}: ${describe(error)}`);
      response = { status: apiError.code, json: apiError.toStatus() };
    }
    this.#audit.push({
      at: new Date(this.#clock.now()).toISOString(),
      method: request.method,
      path: request.path,
      user: who.user ?? null,
      status: response.status,
    });
    // Trimmed a tenth at a time, not one event per request: shifting 20,000 entries on every request is a hot path.
    if (this.#audit.length > AUDIT_LOG_SIZE + AUDIT_LOG_SIZE / 10)
      this.#audit.splice(0, this.#audit.length - AUDIT_LOG_SIZE);
    return response;
  }

  #handle(request: ApiRequest, who: { user?: string }): ApiResponse {
    const { route } = request;
    if (route.type === 'public') {
      if (route.name === 'version') return { status: 200, json: SERVER_VERSION };
      return { status: 200, text: 'ok' };
    }
    const user = authenticate(
      request.authorization,
      this.#tokens,
      this.#clock.now(),
      (reason) => this.#log?.(`kube-apiserver twin: 401 for ${request.method} ${request.path}: ${reason}`),
      this.#eksAccess,
    );
    who.user = user.name;
    if (route.type === 'resource') return this.#resource(request, route, user);
    if (request.method !== 'GET') throw new KubeApiMethodNotAllowedError();
    const served = this.#served();
    const found = (body: unknown): ApiResponse => {
      if (body === undefined) throw new KubeApiResourceNotServedError(request.path);
      return { status: 200, json: body };
    };
    switch (route.type) {
      case 'coreVersions':
        return found(apiVersions(this.#serverAddress()));
      case 'groups':
        return found(apiGroupList(served));
      case 'group':
        return found(apiGroup(route.group, served));
      case 'resourceList':
        return found(apiResourceList(route.group, route.version, served));
      case 'openapiV3Index':
        return found(openapiV3Index(served));
      case 'openapiV3':
        return found(openapiV3Document(route.group, route.version, served));
      case 'openapiV2':
        // kubectl 1.32 reads OpenAPI v3 first; v2 is not served (see openapiV3Document).
        return found(undefined);
      case 'unknown':
        return found(undefined);
    }
  }

  /** The RBAC objects as stored now: a binding applied a moment ago counts for the next request. */
  #rbacObjects(): RbacObjects {
    return {
      clusterRoles: this.#store.list('ClusterRole'),
      clusterRoleBindings: this.#store.list('ClusterRoleBinding'),
      roles: this.#store.list('Role'),
      roleBindings: this.#store.list('RoleBinding'),
    };
  }

  #served(): ResourceInfo[] {
    return Object.values(RESOURCES).filter((r) => this.isServed(r.kind));
  }

  #resource(request: ApiRequest, route: ResourceRoute, user: User): ApiResponse {
    const info = Object.values(RESOURCES).find(
      (r) => r.group === route.group && r.version === route.version && r.plural === route.plural,
    );
    if (!info || !this.isServed(info.kind)) throw new KubeApiResourceNotServedError(request.path);
    if (!info.namespaced && route.namespace !== undefined) throw new KubeApiResourceNotServedError(request.path);
    if (info.namespaced && route.namespace === undefined && route.name !== undefined) {
      throw new KubeApiResourceNotServedError(request.path);
    }
    const sub = route.subresource;
    if (
      sub !== undefined &&
      !(sub === 'status' && info.status) &&
      !(sub === 'scale' && info.scale) &&
      !(sub === 'log' && info.kind === 'Pod') &&
      !(sub === 'proxy' && info.kind === 'Pod')
    ) {
      throw new KubeApiResourceNotServedError(request.path);
    }
    const verb = verbOf(request, route, info);
    const namespace = route.namespace;
    authorize(
      user,
      {
        verb,
        resource: info,
        ...(route.name !== undefined ? { name: route.name } : {}),
        ...(namespace !== undefined ? { namespace } : {}),
        ...(sub !== undefined ? { subresource: sub } : {}),
      },
      () => this.#rbacObjects(),
      (reason) => this.#log?.(`kube-apiserver twin: 403 for ${user.name}: ${verb} ${request.path}: ${reason}`),
    );
    const name = route.name as string;
    switch (verb) {
      case 'list':
        return this.#list(request, info, namespace);
      case 'watch':
        return this.#watch(request, info, namespace);
      case 'create':
        return this.#create(request, info, namespace);
      case 'deletecollection':
        return this.#deleteCollection(request, info, namespace);
      case 'get':
        if (sub === 'log') return this.#podLog(request, namespace as string, name);
        if (sub === 'proxy') return this.#podProxy(route, info, namespace as string, name);
        if (sub === 'scale') return { status: 200, json: scaleOf(this.#get(info, namespace, name)) };
        return { status: 200, json: this.#maybeTable(request, info, [this.#get(info, namespace, name)], false) };
      case 'update':
        return this.#update(request, info, namespace, name, sub);
      case 'patch':
        return this.#patch(request, info, namespace, name, sub);
      case 'delete':
        return this.#delete(request, info, namespace, name);
      default:
        throw new KubeApiMethodNotAllowedError();
    }
  }

  /**
   * `GET pods/<name>[:<port>]/proxy/<path>`: 404 for an unknown Pod, 503 while nothing serves (the replica is not
   * running, or the port is not one of its container's), else a forward to the replica's loopback server.
   */
  #podProxy(route: ResourceRoute, info: ResourceInfo, namespace: string, nameAndPort: string): ApiResponse {
    const colon = nameAndPort.indexOf(':');
    const name = colon === -1 ? nameAndPort : nameAndPort.slice(0, colon);
    const port = colon === -1 ? '' : nameAndPort.slice(colon + 1);
    const pod = this.#get(info, namespace, name);
    const endpoint = this.#podEndpoint?.(namespace, name);
    if (endpoint === undefined)
      throw new KubeApiServiceUnavailableError(`no endpoints available for pod "${name}": its server is not running`);
    if (port !== '' && !servesPort(pod, port))
      throw new KubeApiServiceUnavailableError(
        `error trying to reach service: dial tcp ${port}: pod "${name}" declares no container port ${JSON.stringify(port)}`,
      );
    return { status: 200, proxy: { url: `${endpoint}${route.proxyPath ?? '/'}` } };
  }

  #get(info: ResourceInfo, namespace: string | undefined, name: string): KubeObject {
    const object = this.#store.get(info.kind, namespace, name);
    if (!object) throw new KubeApiNotFoundError(info, name);
    return object;
  }

  #select(request: ApiRequest, info: ResourceInfo, namespace: string | undefined) {
    const labelText = request.query.get('labelSelector');
    const fieldText = request.query.get('fieldSelector');
    const selector: LabelSelector | undefined = labelText ? parseLabelSelector(labelText) : undefined;
    const fields: FieldRequirement[] = fieldText ? parseFieldSelector(fieldText, info.kind) : [];
    return {
      selector,
      fields,
      list: (): KubeObject[] =>
        this.#store
          .list(info.kind, {
            ...(namespace !== undefined ? { namespace } : {}),
            ...(selector ? { selector } : {}),
          })
          .filter((o) => matchesFieldSelector(o, fields)),
    };
  }

  #list(request: ApiRequest, info: ResourceInfo, namespace: string | undefined): ApiResponse {
    const items = this.#select(request, info, namespace).list();
    return { status: 200, json: this.#maybeTable(request, info, items, true) };
  }

  /** A List, or a Table when the client asked for one (kubectl get). */
  #maybeTable(request: ApiRequest, info: ResourceInfo, items: KubeObject[], asList: boolean): unknown {
    const table = tableRequested(request.accept);
    const resourceVersion = this.#store.resourceVersion;
    if (table) {
      return toTable(info, items, {
        nowMs: this.#clock.now(),
        resourceVersion,
        includeObject: includeObjectOf(request.query),
        apiVersion: table,
        ...this.#crdOf(info),
      });
    }
    if (!asList) return items[0];
    return { apiVersion: apiVersionOf(info), kind: `${info.kind}List`, metadata: { resourceVersion }, items };
  }

  #crdOf(info: ResourceInfo): { crd?: KubeObject } {
    if (!CRD_KINDS.has(info.kind)) return {};
    const crd = this.#store.get('CustomResourceDefinition', undefined, `${info.plural}.${info.group}`);
    return crd ? { crd } : {};
  }

  /**
   * `?watch=true`: ADDED for what exists (unless a resourceVersion is given: the twin keeps no history, so it then
   * sends only later changes), then every change that matches the namespace and selectors, until `timeoutSeconds`.
   */
  #watch(request: ApiRequest, info: ResourceInfo, namespace: string | undefined): ApiResponse {
    const { selector, fields, list } = this.#select(request, info, namespace);
    const table = tableRequested(request.accept);
    const resourceVersion = request.query.get('resourceVersion');
    const timeoutText = request.query.get('timeoutSeconds');
    const timeoutMs = timeoutText && /^\d+$/.test(timeoutText) ? Number(timeoutText) * 1000 : undefined;
    const initial = !resourceVersion || resourceVersion === '0' ? list() : [];
    const matches = (o: KubeObject) =>
      (namespace === undefined || o.metadata.namespace === namespace) &&
      matchesSelector(o.metadata.labels, selector) &&
      matchesFieldSelector(o, fields);
    let first = true;
    const encode = (event: WatchEvent): unknown => {
      if (!table) return event;
      const object = toTable(info, [event.object], {
        nowMs: this.#clock.now(),
        resourceVersion: event.object.metadata.resourceVersion ?? this.#store.resourceVersion,
        includeObject: includeObjectOf(request.query),
        apiVersion: table,
        noHeaders: !first,
        ...this.#crdOf(info),
      });
      first = false;
      return { type: event.type, object };
    };
    return {
      status: 200,
      watch: {
        start: (send, end) => {
          for (const object of initial) send(encode({ type: 'ADDED', object }));
          const unsubscribe = this.#store.watch(info.kind, (event) => {
            if (matches(event.object)) send(encode(event));
          });
          const timer = timeoutMs !== undefined ? setTimeout(end, timeoutMs) : undefined;
          timer?.unref();
          return () => {
            unsubscribe();
            if (timer) clearTimeout(timer);
          };
        },
      },
    };
  }

  #create(request: ApiRequest, info: ResourceInfo, namespace: string | undefined): ApiResponse {
    const object = objectBody(request.body, info);
    checkIdentity(object, info, namespace, undefined);
    if (object.metadata.resourceVersion) {
      // What etcd3's store answers (a 500, not a 400): a create must not carry a resourceVersion.
      throw new KubeApiInternalError('resourceVersion should not be set on objects to be created');
    }
    if (isDryRun(request.query)) return { status: 201, json: this.#dryRunCreate(info, object) };
    const created = this.#store.create(object);
    this.#logWrite(request, info, created);
    return { status: 201, json: created };
  }

  #update(
    request: ApiRequest,
    info: ResourceInfo,
    namespace: string | undefined,
    name: string,
    sub: string | undefined,
  ): ApiResponse {
    if (sub === 'scale') {
      const scale = parseJsonBody(request.body);
      return { status: 200, json: this.#writeScale(request, info, this.#get(info, namespace, name), scale) };
    }
    const object = objectBody(request.body, info);
    checkIdentity(object, info, namespace, name);
    return { status: 200, json: this.#write(request, info, object, sub === 'status' ? 'status' : undefined) };
  }

  #patch(
    request: ApiRequest,
    info: ResourceInfo,
    namespace: string | undefined,
    name: string,
    sub: string | undefined,
  ): ApiResponse {
    const custom = CRD_KINDS.has(info.kind);
    const type = patchTypeOf(request.contentType, custom);
    const patch = parsePatchBody(type, request.body);
    const lists: ListStrategyLookup = custom ? customResourceListStrategies : builtInListStrategies(info.kind);
    if (type === 'apply' && !request.query.get('fieldManager')) {
      throw new KubeApiBadRequestError('fieldManager: Required value: is required for apply patch');
    }
    const current = this.#store.get(info.kind, namespace, name);
    if (!current) {
      if (type !== 'apply' || sub !== undefined) throw new KubeApiNotFoundError(info, name);
      // Server-side apply creates what does not exist yet.
      const object = applyPatch({}, type, patch, lists);
      if (!isJsonObject(object)) throw new KubeApiBadRequestError('the applied configuration must be an object');
      const created = asObject(object, info);
      checkIdentity(created, info, namespace, name);
      if (isDryRun(request.query)) return { status: 201, json: this.#dryRunCreate(info, created) };
      const stored = this.#store.create(created);
      this.#logWrite(request, info, stored);
      return { status: 201, json: stored };
    }
    if (sub === 'scale') {
      const patched = applyPatch(scaleOf(current), type, patch, builtInListStrategies(info.kind));
      return { status: 200, json: this.#writeScale(request, info, current, patched) };
    }
    const patched = applyPatch(current, type, patch, lists);
    if (!isJsonObject(patched)) throw new KubeApiBadRequestError('the patched object is not a JSON object');
    const object = asObject(patched, info);
    checkIdentity(object, info, namespace, name);
    return { status: 200, json: this.#write(request, info, object, sub === 'status' ? 'status' : undefined) };
  }

  #write(request: ApiRequest, info: ResourceInfo, object: KubeObject, subresource?: 'status'): KubeObject {
    if (isDryRun(request.query)) return this.#dryRunUpdate(info, object, subresource);
    const updated = this.#store.update(object, subresource ? { subresource } : {});
    this.#logWrite(request, info, updated);
    return updated;
  }

  #writeScale(request: ApiRequest, info: ResourceInfo, current: KubeObject, scale: unknown): unknown {
    const name = current.metadata.name;
    if (!isJsonObject(scale)) throw new KubeApiBadRequestError('the Scale body must be a JSON object');
    const metadata = isJsonObject(scale.metadata) ? scale.metadata : {};
    if (metadata.name !== undefined && metadata.name !== name) {
      throw new KubeApiBadRequestError(
        `the name of the object (${jsonText(metadata.name)}) does not match the name on the URL (${name})`,
      );
    }
    const replicas = isJsonObject(scale.spec) ? scale.spec.replicas : undefined;
    if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
      throw new KubeApiInvalidOptionError('autoscaling', 'Scale', name, [
        {
          reason: 'FieldValueInvalid',
          field: 'spec.replicas',
          message: `Invalid value: ${JSON.stringify(replicas)}: must be an integer greater than or equal to 0`,
        },
      ]);
    }
    const resourceVersion = typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : undefined;
    const next: KubeObject = {
      ...current,
      metadata: { ...current.metadata, ...(resourceVersion ? { resourceVersion } : { resourceVersion: '' }) },
      spec: { ...(isJsonObject(current.spec) ? current.spec : {}), replicas },
    };
    return scaleOf(this.#write(request, info, next));
  }

  #delete(request: ApiRequest, info: ResourceInfo, namespace: string | undefined, name: string): ApiResponse {
    const options = deleteOptions(request);
    const current = this.#get(info, namespace, name);
    const pre = options.preconditions;
    if (pre?.uid !== undefined && pre.uid !== current.metadata.uid) {
      throw new KubeApiError(
        409,
        'Conflict',
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid ?? ''}`,
        { name, group: info.group, kind: info.plural },
      );
    }
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== current.metadata.resourceVersion) {
      throw new KubeApiConflictError(info, name);
    }
    const deleted = isDryRun(request.query)
      ? current
      : this.#store.delete(info.kind, namespace, name, options.propagationPolicy ? options : {});
    this.#logWrite(request, info, deleted);
    if (RETURNS_DELETED_OBJECT.has(info.kind)) return { status: 200, json: deleted };
    return {
      status: 200,
      json: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Success',
        details: { name, group: info.group, kind: info.plural, uid: deleted.metadata.uid },
      },
    };
  }

  #deleteCollection(request: ApiRequest, info: ResourceInfo, namespace: string | undefined): ApiResponse {
    const options = deleteOptions(request);
    const items = this.#select(request, info, namespace).list();
    const dryRun = isDryRun(request.query);
    const deleted = items.flatMap((o) => {
      if (dryRun) return [o];
      try {
        return [this.#store.delete(info.kind, o.metadata.namespace, o.metadata.name, options)];
      } catch (error) {
        // Garbage collection of an earlier item may already have removed this one.
        if (error instanceof KubeApiNotFoundError) return [];
        throw error;
      }
    });
    this.#log?.(`kube-apiserver twin: deletecollection ${info.plural}: ${deleted.length} deleted`);
    return {
      status: 200,
      json: {
        apiVersion: apiVersionOf(info),
        kind: `${info.kind}List`,
        metadata: { resourceVersion: this.#store.resourceVersion },
        items: deleted,
      },
    };
  }

  #podLog(request: ApiRequest, namespace: string, name: string): ApiResponse {
    const pod = this.#get(RESOURCES.Pod, namespace, name);
    const spec = isJsonObject(pod.spec) ? pod.spec : {};
    const names = (key: string) =>
      (Array.isArray(spec[key]) ? (spec[key] as unknown[]) : []).map((c) => String(isJsonObject(c) ? c.name : ''));
    const containers = names('containers');
    const all = [...containers, ...names('initContainers')];
    const asked = request.query.get('container') ?? undefined;
    if (asked !== undefined && !all.includes(asked)) {
      throw new KubeApiBadRequestError(`container ${asked} is not valid for pod ${name}`);
    }
    if (asked === undefined && containers.length > 1) {
      throw new KubeApiBadRequestError(
        `a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]`,
      );
    }
    const tailText = request.query.get('tailLines');
    let tailLines: number | undefined;
    if (tailText !== null) {
      tailLines = /^\d+$/.test(tailText) ? Number(tailText) : NaN;
      if (Number.isNaN(tailLines)) {
        throw new KubeApiInvalidOptionError('', 'PodLogOptions', name, [
          {
            reason: 'FieldValueInvalid',
            field: 'tailLines',
            message: `Invalid value: ${JSON.stringify(tailText)}: must be an integer greater than or equal to 0`,
          },
        ]);
      }
    }
    // Lines written without a container belong to the main container: a one-container Pod shows everything.
    const container = all.length > 1 ? (asked ?? pod.metadata.annotations?.[DEFAULT_CONTAINER_ANNOTATION]) : undefined;
    const text = this.#logs.read(namespace, name, {
      ...(container !== undefined ? { container } : {}),
      ...(tailLines !== undefined ? { tailLines } : {}),
    });
    return { status: 200, text: text ?? '' };
  }

  #dryRunCreate(info: ResourceInfo, object: KubeObject): KubeObject {
    const { namespace, name } = object.metadata;
    if (this.#store.get(info.kind, namespace, name)) throw new KubeApiAlreadyExistsError(info, name);
    const causes = validateObject(info.kind, object);
    if (causes.length > 0) throw new KubeApiInvalidError(info, name, causes);
    return {
      ...object,
      metadata: {
        ...object.metadata,
        uid: randomUUID(),
        generation: 1,
        creationTimestamp: new Date(this.#clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      },
    };
  }

  #dryRunUpdate(info: ResourceInfo, object: KubeObject, subresource?: 'status'): KubeObject {
    const { namespace, name, resourceVersion } = object.metadata;
    const current = this.#get(info, namespace, name);
    if (resourceVersion && resourceVersion !== current.metadata.resourceVersion) {
      throw new KubeApiConflictError(info, name);
    }
    const result: KubeObject =
      subresource === 'status'
        ? { ...current, status: object.status }
        : { ...object, metadata: { ...object.metadata, uid: current.metadata.uid }, status: current.status };
    const causes = validateObject(info.kind, result);
    if (causes.length > 0) throw new KubeApiInvalidError(info, name, causes);
    return result;
  }

  #logWrite(request: ApiRequest, info: ResourceInfo, object: KubeObject): void {
    const where = object.metadata.namespace ? `${object.metadata.namespace}/` : '';
    const dry = isDryRun(request.query) ? ' (dry run)' : '';
    this.#log?.(
      `kube-apiserver twin: ${request.method} ${info.plural} ${where}${object.metadata.name} -> rv ${object.metadata.resourceVersion ?? '-'}${dry}`,
    );
  }
}

/** The RBAC verb of a request, or 405 for a method the path does not take. */
function verbOf(request: ApiRequest, route: ResourceRoute, info: ResourceInfo): string {
  const { method } = request;
  const sub = route.subresource;
  if (route.name === undefined) {
    const watch = request.query.get('watch');
    if (method === 'GET') return watch === 'true' || watch === '1' ? 'watch' : 'list';
    // All-namespaces paths of namespaced resources only list.
    if (route.namespace === undefined && info.namespaced) {
      throw new KubeApiMethodNotAllowedError();
    }
    if (method === 'POST') return 'create';
    if (method === 'DELETE') return 'deletecollection';
    throw new KubeApiMethodNotAllowedError();
  }
  if (sub === 'log') {
    if (method === 'GET') return 'get';
    throw new KubeApiMethodNotAllowedError();
  }
  switch (method) {
    case 'GET':
      return 'get';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      if (sub !== undefined) throw new KubeApiMethodNotAllowedError();
      return 'delete';
    default:
      throw new KubeApiMethodNotAllowedError();
  }
}

/**
 * The meta.k8s.io Table version the Accept header asks for (`application/json;as=Table;v=v1;g=meta.k8s.io`), or
 * undefined for plain JSON.
 */
export function tableRequested(accept: string | undefined): string | undefined {
  for (const part of (accept ?? '').split(',')) {
    const params = new Map(
      part
        .split(';')
        .slice(1)
        .map((p) => p.trim().split('=') as [string, string | undefined])
        .map(([k, v]) => [k.toLowerCase(), (v ?? '').trim()]),
    );
    if (params.get('as') === 'Table' && params.get('g') === 'meta.k8s.io') {
      const version = params.get('v');
      if (version === 'v1' || version === 'v1beta1') return `meta.k8s.io/${version}`;
    }
  }
  return undefined;
}

function includeObjectOf(query: URLSearchParams): IncludeObject {
  const value = query.get('includeObject');
  if (value === null || value === '') return 'Metadata';
  if (value === 'None' || value === 'Metadata' || value === 'Object') return value;
  throw new KubeApiBadRequestError(
    `includeObject: Unsupported value: "${value}": supported values: None, Metadata, Object`,
  );
}

function isDryRun(query: URLSearchParams): boolean {
  const values = query.getAll('dryRun');
  if (values.some((v) => v !== 'All')) {
    throw new KubeApiBadRequestError(`dryRun: Unsupported value: "${values.join(',')}": supported values: "All"`);
  }
  return values.length > 0;
}

function parseJsonBody(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch (error) {
    throw new KubeApiBadRequestError(`the request body is not valid JSON: ${(error as Error).message}`);
  }
}

/** A create/update body: a JSON object of the URL's kind and API version. */
function objectBody(body: string, info: ResourceInfo): KubeObject {
  const parsed = parseJsonBody(body);
  if (!isJsonObject(parsed)) throw new KubeApiBadRequestError('the request body must be a JSON object');
  return asObject(parsed, info);
}

/** Checks apiVersion/kind against the URL's resource and that metadata is an object with a string name. */
function asObject(value: Record<string, unknown>, info: ResourceInfo): KubeObject {
  const expected = apiVersionOf(info);
  if (value.kind === undefined || value.kind === '') {
    throw new KubeApiBadRequestError(`Object 'Kind' is missing in the request body (expected "${info.kind}")`);
  }
  if (value.kind !== info.kind) {
    throw new KubeApiBadRequestError(
      `the kind in the body (${jsonText(value.kind)}) does not match the kind of the URL's resource (${info.kind})`,
    );
  }
  if (value.apiVersion !== expected) {
    throw new KubeApiBadRequestError(
      `the API version in the data (${jsonText(value.apiVersion)}) does not match the expected API version (${expected})`,
    );
  }
  if (value.metadata === undefined) value.metadata = {};
  if (!isJsonObject(value.metadata)) throw new KubeApiBadRequestError('metadata must be an object');
  const meta = value.metadata;
  if (meta.name !== undefined && typeof meta.name !== 'string') {
    throw new KubeApiBadRequestError('metadata.name must be a string');
  }
  return value as unknown as KubeObject;
}

/** Name and namespace of the body against the URL (400 when they disagree), defaulting the namespace from the URL. */
function checkIdentity(
  object: KubeObject,
  info: ResourceInfo,
  namespace: string | undefined,
  name: string | undefined,
): void {
  const meta = object.metadata;
  if (info.namespaced && namespace !== undefined) {
    if (meta.namespace === undefined || meta.namespace === '') meta.namespace = namespace;
    else if (meta.namespace !== namespace) {
      throw new KubeApiBadRequestError(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
  }
  if (name !== undefined) {
    if (meta.name === undefined || meta.name === '') meta.name = name;
    else if (meta.name !== name) {
      throw new KubeApiBadRequestError(
        `the name of the object (${meta.name}) does not match the name on the URL (${name})`,
      );
    }
  } else if (!meta.name && !meta.generateName) {
    throw new KubeApiInvalidError(info, '', [
      {
        reason: 'FieldValueRequired',
        field: 'metadata.name',
        message: 'Required value: name or generateName is required',
      },
    ]);
  }
}

/** DeleteOptions from the body (kubectl, client-node) or the query string. */
function deleteOptions(request: ApiRequest): {
  propagationPolicy?: PropagationPolicy;
  preconditions?: { uid?: string; resourceVersion?: string };
} {
  const body = request.body.trim() === '' ? {} : parseJsonBody(request.body);
  const options = isJsonObject(body) ? body : {};
  const policy = options.propagationPolicy ?? request.query.get('propagationPolicy') ?? undefined;
  if (policy !== undefined && policy !== null && !DELETE_POLICIES.includes(policy as PropagationPolicy)) {
    throw new KubeApiInvalidOptionError('meta.k8s.io', 'DeleteOptions', '', [
      {
        reason: 'FieldValueNotSupported',
        field: 'propagationPolicy',
        message: `Unsupported value: ${JSON.stringify(policy)}: supported values: "Foreground", "Background", "Orphan"`,
      },
    ]);
  }
  const pre = isJsonObject(options.preconditions) ? options.preconditions : undefined;
  return {
    ...(typeof policy === 'string' ? { propagationPolicy: policy as PropagationPolicy } : {}),
    ...(pre
      ? {
          preconditions: {
            ...(typeof pre.uid === 'string' ? { uid: pre.uid } : {}),
            ...(typeof pre.resourceVersion === 'string' ? { resourceVersion: pre.resourceVersion } : {}),
          },
        }
      : {}),
  };
}

/** The autoscaling/v1 Scale of a Deployment or ReplicaSet. */
function scaleOf(object: KubeObject): unknown {
  const spec = isJsonObject(object.spec) ? object.spec : {};
  const status = isJsonObject(object.status) ? object.status : {};
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: object.metadata.name,
      namespace: object.metadata.namespace,
      uid: object.metadata.uid,
      resourceVersion: object.metadata.resourceVersion,
      creationTimestamp: object.metadata.creationTimestamp,
    },
    spec: { replicas: typeof spec.replicas === 'number' ? spec.replicas : 1 },
    status: {
      replicas: typeof status.replicas === 'number' ? status.replicas : 0,
      selector: selectorString(spec.selector),
    },
  };
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}${error.stack ? `\n${error.stack}` : ''}`;
  return String(error);
}

/** The vLLM server's port in the Pod when its container declares none (vLLM's default). */
const DEFAULT_POD_PORT = '8000';

/** Whether a container of the Pod declares `port` (by number or name); a Pod declaring none serves vLLM's 8000. */
function servesPort(pod: KubeObject, port: string): boolean {
  const containers = (pod.spec as { containers?: Array<{ ports?: Array<{ name?: string; containerPort?: number }> }> })
    ?.containers;
  const ports = (containers ?? []).flatMap((c) => c.ports ?? []);
  if (ports.length === 0) return port === DEFAULT_POD_PORT;
  return ports.some((p) => p.name === port || String(p.containerPort) === port);
}
