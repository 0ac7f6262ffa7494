import { describe, expect, it } from '@jest/globals';
import { VirtualClock } from '../../shared/clock/index.js';
import {
  KubeApiAlreadyExistsError,
  KubeApiBadRequestError,
  KubeApiConflictError,
  KubeApiInvalidError,
  KubeApiNotFoundError,
} from './errors.js';
import { MemoryObjectStore } from './store.js';
import type { KubeObject, WatchEvent } from './types.js';

const START_MS = Date.UTC(2025, 5, 1, 12, 0, 0);

function newStore() {
  const clock = new VirtualClock(START_MS);
  const store = new MemoryObjectStore({ clock });
  store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  return { clock, store };
}

function deployment(name = 'vllm', replicas: unknown = 1): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default', labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'vllm', image: 'vllm/vllm-openai:v0.11.0' }] },
      },
    },
  };
}

function podOf(owner: KubeObject, name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid as string },
      ],
    },
    spec: { containers: [{ name: 'vllm', image: 'vllm/vllm-openai:v0.11.0' }] },
  };
}

/** Lets queued watch notifications (delivered in microtasks) run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('Class: MemoryObjectStore', () => {
  describe('Method: create', () => {
    it('sets uid, resourceVersion, generation 1 and creationTimestamp from the clock', () => {
      // Prepare
      const { store } = newStore();

      // Act
      const created = store.create(deployment());

      // Assess
      expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
      expect(created.metadata.resourceVersion).toBe(store.resourceVersion);
      expect(created.metadata.generation).toBe(1);
      expect(created.metadata.creationTimestamp).toBe('2025-06-01T12:00:00Z');
      expect(store.get('Deployment', 'default', 'vllm')).toEqual(created);
    });

    it('gives every write a higher resourceVersion than the one before', () => {
      // Prepare
      const { store } = newStore();

      // Act
      const first = store.create(deployment('a'));
      const second = store.create(deployment('b'));

      // Assess
      expect(Number(second.metadata.resourceVersion)).toBeGreaterThan(Number(first.metadata.resourceVersion));
    });

    it('refuses a name that is taken with 409 AlreadyExists', () => {
      // Prepare
      const { store } = newStore();
      store.create(deployment());

      // Act
      const act = () => store.create(deployment());

      // Assess
      expect(act).toThrow(KubeApiAlreadyExistsError);
      expect(act).toThrow('deployments.apps "vllm" already exists');
    });

    it('names the object from generateName when it has no name', () => {
      // Prepare
      const { store } = newStore();
      const object = deployment('');
      object.metadata.generateName = 'k6-run-';

      // Act
      const created = store.create(object);

      // Assess
      expect(created.metadata.name).toMatch(/^k6-run-[a-z0-9]{5}$/);
    });

    it.each([
      { case: 'no namespace', namespace: undefined, error: KubeApiBadRequestError, code: 400 },
      { case: 'a namespace that does not exist', namespace: 'nowhere', error: KubeApiNotFoundError, code: 404 },
    ])('refuses a namespaced object with $case ($code)', ({ namespace, error, code }) => {
      // Prepare
      const { store } = newStore();
      const object = deployment();
      if (namespace === undefined) delete object.metadata.namespace;
      else object.metadata.namespace = namespace;

      // Act
      let thrown: unknown;
      try {
        store.create(object);
      } catch (e) {
        thrown = e;
      }

      // Assess
      expect(thrown).toBeInstanceOf(error);
      expect((thrown as KubeApiBadRequestError).code).toBe(code);
    });

    it('refuses an invalid object with 422 Invalid naming the field (replicas given as a string)', () => {
      // Prepare
      const { store } = newStore();

      // Act
      let thrown: unknown;
      try {
        store.create(deployment('vllm', '2'));
      } catch (e) {
        thrown = e;
      }

      // Assess
      expect(thrown).toBeInstanceOf(KubeApiInvalidError);
      const status = (thrown as KubeApiInvalidError).toStatus();
      expect(status.code).toBe(422);
      expect(status.reason).toBe('Invalid');
      expect(status.details?.causes?.map((c) => c.field)).toContain('spec.replicas');
      expect(status.message).toContain('Deployment.apps "vllm" is invalid');
      expect(store.get('Deployment', 'default', 'vllm')).toBeUndefined();
    });

    it('refuses a name that is not a DNS-1123 subdomain with 422 on metadata.name', () => {
      // Prepare
      const { store } = newStore();

      // Act
      const act = () => store.create(deployment('Not_Valid'));

      // Assess
      expect(act).toThrow(KubeApiInvalidError);
      expect(act).toThrow('metadata.name');
    });
  });

  describe('Method: update', () => {
    it('refuses a stale resourceVersion with 409 Conflict and keeps the stored object', () => {
      // Prepare
      const { store } = newStore();
      const created = store.create(deployment());
      store.update({ ...created, spec: { ...(created.spec as object), replicas: 2 } });
      const stale = { ...created, spec: { ...(created.spec as object), replicas: 5 } };

      // Act
      const act = () => store.update(stale);

      // Assess
      expect(act).toThrow(KubeApiConflictError);
      expect(act).toThrow('the object has been modified');
      expect((store.get('Deployment', 'default', 'vllm')?.spec as { replicas: number }).replicas).toBe(2);
    });

    it('applies an update without a resourceVersion unconditionally', () => {
      // Prepare
      const { store } = newStore();
      const created = store.create(deployment());
      const next = structuredClone(created);
      delete next.metadata.resourceVersion;
      (next.spec as { replicas: number }).replicas = 3;

      // Act
      const updated = store.update(next);

      // Assess
      expect((updated.spec as { replicas: number }).replicas).toBe(3);
    });

    it.each([
      {
        case: 'a spec change',
        change: (o: KubeObject) => ((o.spec as { replicas: number }).replicas = 4),
        bumps: true,
      },
      {
        case: 'a label change',
        change: (o: KubeObject) => (o.metadata.labels = { app: 'x', tier: 'gpu' }),
        bumps: false,
      },
      {
        case: 'an annotation change',
        change: (o: KubeObject) => (o.metadata.annotations = { note: 'calibrated' }),
        bumps: false,
      },
    ])('bumps generation on $case: $bumps', ({ change, bumps }) => {
      // Prepare
      const { store } = newStore();
      const next = store.create(deployment());
      change(next);

      // Act
      const updated = store.update(next);

      // Assess
      expect(updated.metadata.generation).toBe(bumps ? 2 : 1);
      expect(Number(updated.metadata.resourceVersion)).toBeGreaterThan(Number(next.metadata.resourceVersion));
    });

    it('keeps the resourceVersion when an update changes nothing', () => {
      // Prepare
      const { store } = newStore();
      const created = store.create(deployment());

      // Act
      const updated = store.update(structuredClone(created));

      // Assess
      expect(updated.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    });

    it('keeps status on a main-resource update and changes only status on a status update', () => {
      // Prepare
      const { store } = newStore();
      const created = store.create(deployment());
      const withStatus = store.update(
        { ...created, status: { replicas: 1, readyReplicas: 1 }, spec: { ...(created.spec as object), replicas: 9 } },
        { subresource: 'status' },
      );

      // Act
      const mainWrite = store.update({
        ...withStatus,
        status: { replicas: 0 },
        spec: { ...(withStatus.spec as object), replicas: 2 },
      });

      // Assess
      expect(withStatus.status).toEqual({ replicas: 1, readyReplicas: 1 });
      expect((withStatus.spec as { replicas: number }).replicas).toBe(1);
      expect(withStatus.metadata.generation).toBe(1);
      expect(mainWrite.status).toEqual({ replicas: 1, readyReplicas: 1 });
      expect((mainWrite.spec as { replicas: number }).replicas).toBe(2);
    });

    it('refuses an update of an object that does not exist with 404', () => {
      // Prepare
      const { store } = newStore();

      // Act
      const act = () => store.update(deployment('ghost'));

      // Assess
      expect(act).toThrow(KubeApiNotFoundError);
      expect(act).toThrow('deployments.apps "ghost" not found');
    });
  });

  describe('Method: delete', () => {
    it('garbage-collects dependents (ownerReferences) of a deleted owner', () => {
      // Prepare
      const { store } = newStore();
      const owner = store.create(deployment());
      store.create(podOf(owner, 'vllm-1'));
      store.create(podOf(owner, 'vllm-2'));
      const stranger = store.create(deployment('other'));
      store.create(podOf(stranger, 'other-1'));

      // Act
      store.delete('Deployment', 'default', 'vllm');

      // Assess
      expect(store.list('Pod').map((p) => p.metadata.name)).toEqual(['other-1']);
    });

    it('keeps dependents with propagationPolicy Orphan', () => {
      // Prepare
      const { store } = newStore();
      const owner = store.create(deployment());
      store.create(podOf(owner, 'vllm-1'));

      // Act
      store.delete('Deployment', 'default', 'vllm', { propagationPolicy: 'Orphan' });

      // Assess
      expect(store.list('Pod').map((p) => p.metadata.name)).toEqual(['vllm-1']);
    });

    it('deletes what a Namespace holds with the Namespace', () => {
      // Prepare
      const { store } = newStore();
      store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'load' } });
      store.create({ ...deployment(), metadata: { name: 'k6', namespace: 'load' } });

      // Act
      store.delete('Namespace', undefined, 'load');

      // Assess
      expect(store.list('Deployment', { namespace: 'load' })).toEqual([]);
    });

    it('answers 404 for an object that does not exist', () => {
      // Prepare
      const { store } = newStore();

      // Act
      const act = () => store.delete('Deployment', 'default', 'ghost');

      // Assess
      expect(act).toThrow(KubeApiNotFoundError);
    });
  });

  describe('Method: list', () => {
    it('filters by namespace and label selector and returns copies', () => {
      // Prepare
      const { store } = newStore();
      store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'load' } });
      store.create(deployment('a'));
      store.create(deployment('b'));
      store.create({ ...deployment('a'), metadata: { name: 'a', namespace: 'load', labels: { app: 'a' } } });

      // Act
      const found = store.list('Deployment', { namespace: 'default', selector: { matchLabels: { app: 'a' } } });
      (found[0]?.metadata as { name: string }).name = 'changed';

      // Assess
      expect(found).toHaveLength(1);
      expect(store.get('Deployment', 'default', 'a')).toBeDefined();
    });
  });

  describe('Method: watch', () => {
    it('reports ADDED, MODIFIED and DELETED after the writes, and nothing after unsubscribing', async () => {
      // Prepare
      const { store } = newStore();
      const events: Array<[WatchEvent['type'], string | undefined]> = [];
      const unsubscribe = store.watch('Deployment', (e) => events.push([e.type, e.object.metadata.resourceVersion]));

      // Act
      const created = store.create(deployment());
      const updated = store.update({ ...created, spec: { ...(created.spec as object), replicas: 2 } });
      store.delete('Deployment', 'default', 'vllm');
      const seenBeforeSettling = events.length;
      await settle();
      unsubscribe();
      store.create(deployment('later'));
      await settle();

      // Assess
      expect(seenBeforeSettling).toBe(0);
      expect(events).toEqual([
        ['ADDED', created.metadata.resourceVersion],
        ['MODIFIED', updated.metadata.resourceVersion],
        ['DELETED', updated.metadata.resourceVersion],
      ]);
    });
  });
});
