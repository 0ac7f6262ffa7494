import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { type Clock, systemClock } from '../../shared/clock/index.js';
import {
  KubeApiAlreadyExistsError,
  KubeApiBadRequestError,
  KubeApiConflictError,
  KubeApiInvalidError,
  KubeApiNotFoundError,
} from './errors.js';
import { matchesSelector } from './labels.js';
import { RESOURCES, resourceOfKind, type ResourceInfo } from './resources.js';
import type { Kind, KubeObject, LabelSelector, ObjectStore, WatchEvent } from './types.js';
import { validateObject } from './validation.js';

/** Characters Kubernetes uses for `generateName` suffixes. */
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export type PropagationPolicy = 'Background' | 'Foreground' | 'Orphan';

/**
 * The twin's etcd: objects by kind, namespace and name, with the API server's write semantics (see ObjectStore).
 * Objects go in and out as deep copies, so no caller can change stored state behind the store's back.
 */
export class MemoryObjectStore implements ObjectStore {
  readonly #objects = new Map<Kind, Map<string, KubeObject>>();
  readonly #listeners = new Map<Kind, Set<(event: WatchEvent) => void>>();
  readonly #clock: Clock;
  #revision = 0;

  constructor(options: { clock?: Clock } = {}) {
    this.#clock = options.clock ?? systemClock;
  }

  /** The current resourceVersion of the whole store (a List's `metadata.resourceVersion`). */
  get resourceVersion(): string {
    return String(this.#revision);
  }

  get(kind: Kind, namespace: string | undefined, name: string): KubeObject | undefined {
    const found = this.#bucket(kind).get(key(info(kind), namespace, name));
    return found ? structuredClone(found) : undefined;
  }

  list(kind: Kind, options: { namespace?: string; selector?: LabelSelector } = {}): KubeObject[] {
    const result: KubeObject[] = [];
    for (const object of this.#bucket(kind).values()) {
      if (options.namespace !== undefined && object.metadata.namespace !== options.namespace) continue;
      if (!matchesSelector(object.metadata.labels, options.selector)) continue;
      result.push(structuredClone(object));
    }
    return result.sort((a, b) =>
      key(info(kind), a.metadata.namespace, a.metadata.name).localeCompare(
        key(info(kind), b.metadata.namespace, b.metadata.name),
      ),
    );
  }

  create(input: KubeObject): KubeObject {
    const kind = kindOf(input);
    const resource = info(kind);
    const object = structuredClone(input);
    object.metadata ??= { name: '' };
    if (!object.metadata.name && object.metadata.generateName) {
      object.metadata.name = `${object.metadata.generateName}${suffix(5)}`;
    }
    this.#checkNamespace(resource, object);
    const name = object.metadata.name;
    const bucket = this.#bucket(kind);
    const id = key(resource, object.metadata.namespace, name);
    if (bucket.has(id)) throw new KubeApiAlreadyExistsError(resource, name);
    if (resource.kind !== 'Namespace' && resource.namespaced)
      this.#requireNamespace(object.metadata.namespace as string);
    this.#validate(kind, object);

    delete object.metadata.resourceVersion;
    object.metadata.uid = randomUUID();
    object.metadata.creationTimestamp = new Date(this.#clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    object.metadata.generation = 1;
    object.metadata.resourceVersion = this.#nextRevision();
    bucket.set(id, object);
    this.#emit(kind, 'ADDED', object);
    return structuredClone(object);
  }

  update(input: KubeObject, options: { subresource?: 'status' } = {}): KubeObject {
    const kind = kindOf(input);
    const resource = info(kind);
    const next = structuredClone(input);
    this.#checkNamespace(resource, next);
    const bucket = this.#bucket(kind);
    const id = key(resource, next.metadata.namespace, next.metadata.name);
    const current = bucket.get(id);
    if (!current) throw new KubeApiNotFoundError(resource, next.metadata.name);
    const expected = next.metadata.resourceVersion;
    if (expected !== undefined && expected !== '' && expected !== current.metadata.resourceVersion) {
      throw new KubeApiConflictError(resource, next.metadata.name);
    }

    let merged: KubeObject;
    if (options.subresource === 'status') {
      // A status write changes status only.
      merged = { ...structuredClone(current), status: next.status };
    } else {
      merged = next;
      // A main-resource write keeps status where status is a subresource, and keeps the server-set metadata.
      if (resource.status) merged.status = structuredClone(current.status);
      else if (!('status' in next) && 'status' in current) merged.status = structuredClone(current.status);
      merged.metadata = {
        ...next.metadata,
        uid: current.metadata.uid,
        creationTimestamp: current.metadata.creationTimestamp,
        generation: current.metadata.generation,
      };
      if (!isDeepStrictEqual(specOf(current), specOf(merged))) {
        merged.metadata.generation = (current.metadata.generation ?? 0) + 1;
      }
    }
    if (merged.status === undefined) delete merged.status;
    this.#validate(kind, merged);
    // An update that changes nothing does not move the resourceVersion (as the API server skips no-op writes).
    const unchanged = isDeepStrictEqual(
      { ...merged, metadata: { ...merged.metadata, resourceVersion: undefined } },
      { ...current, metadata: { ...current.metadata, resourceVersion: undefined } },
    );
    if (unchanged) return structuredClone(current);
    merged.metadata.resourceVersion = this.#nextRevision();
    bucket.set(id, merged);
    this.#emit(kind, 'MODIFIED', merged);
    return structuredClone(merged);
  }

  delete(
    kind: Kind,
    namespace: string | undefined,
    name: string,
    options: { propagationPolicy?: PropagationPolicy } = {},
  ): KubeObject {
    const resource = info(kind);
    const bucket = this.#bucket(kind);
    const id = key(resource, namespace, name);
    const current = bucket.get(id);
    if (!current) throw new KubeApiNotFoundError(resource, name);
    bucket.delete(id);
    this.#nextRevision();
    this.#emit(kind, 'DELETED', current);
    // The garbage collector: dependents go with their owner unless the caller orphans them.
    if (options.propagationPolicy !== 'Orphan') this.#collectDependents(current.metadata.uid as string);
    if (kind === 'Namespace') this.#deleteNamespaceContents(name);
    return structuredClone(current);
  }

  watch(kind: Kind, listener: (event: WatchEvent) => void): () => void {
    const set = this.#listeners.get(kind) ?? new Set();
    set.add(listener);
    this.#listeners.set(kind, set);
    return () => set.delete(listener);
  }

  #bucket(kind: Kind): Map<string, KubeObject> {
    let bucket = this.#objects.get(kind);
    if (!bucket) {
      bucket = new Map();
      this.#objects.set(kind, bucket);
    }
    return bucket;
  }

  #nextRevision(): string {
    this.#revision += 1;
    return String(this.#revision);
  }

  #emit(kind: Kind, type: WatchEvent['type'], object: KubeObject): void {
    const listeners = this.#listeners.get(kind);
    if (!listeners || listeners.size === 0) return;
    const snapshot = structuredClone(object);
    // Delivered after the write returns, so a listener that writes back never re-enters the store mid-write.
    queueMicrotask(() => {
      for (const listener of listeners) listener({ type, object: structuredClone(snapshot) });
    });
  }

  #checkNamespace(resource: ResourceInfo, object: KubeObject): void {
    if (resource.namespaced && !object.metadata.namespace) {
      throw new KubeApiBadRequestError(`${resource.plural}: metadata.namespace is required for a namespaced resource`);
    }
    if (!resource.namespaced) delete object.metadata.namespace;
  }

  #requireNamespace(namespace: string): void {
    if (!this.#bucket('Namespace').has(namespace)) throw new KubeApiNotFoundError(RESOURCES.Namespace, namespace);
  }

  #validate(kind: Kind, object: KubeObject): void {
    const causes = validateObject(kind, object);
    if (causes.length > 0) throw new KubeApiInvalidError(info(kind), object.metadata.name, causes);
  }

  #collectDependents(ownerUid: string): void {
    for (const [kind, bucket] of this.#objects) {
      for (const object of [...bucket.values()]) {
        if (object.metadata.ownerReferences?.some((ref) => ref.uid === ownerUid)) {
          this.delete(kind, object.metadata.namespace, object.metadata.name);
        }
      }
    }
  }

  #deleteNamespaceContents(namespace: string): void {
    for (const [kind, bucket] of this.#objects) {
      if (!info(kind).namespaced) continue;
      for (const object of [...bucket.values()]) {
        if (object.metadata.namespace === namespace && bucket.has(key(info(kind), namespace, object.metadata.name))) {
          this.delete(kind, namespace, object.metadata.name);
        }
      }
    }
  }
}

function info(kind: Kind): ResourceInfo {
  return RESOURCES[kind];
}

function kindOf(object: KubeObject): Kind {
  const resource = resourceOfKind(object?.kind);
  if (!resource) throw new KubeApiBadRequestError(`no kind "${String(object?.kind)}" is registered in this server`);
  return resource.kind;
}

function key(resource: ResourceInfo, namespace: string | undefined, name: string): string {
  return resource.namespaced ? `${namespace ?? ''}/${name}` : name;
}

/** Everything but metadata and status: what `generation` tracks. */
function specOf(object: KubeObject): unknown {
  const { metadata: _m, status: _s, ...rest } = object;
  return rest;
}

function suffix(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += SUFFIX_ALPHABET[Math.floor(Math.random() * SUFFIX_ALPHABET.length)];
  return out;
}
