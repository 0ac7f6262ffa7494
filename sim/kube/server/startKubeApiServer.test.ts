import { afterEach, describe, expect, it } from '@jest/globals';
import { request as httpsRequest } from 'node:https';
import { VirtualClock } from '../../../shared/clock/index.js';
import { MemoryPodLogStore } from '../logs.js';
import { MemoryObjectStore } from '../store.js';
import type { KubeObject } from '../types.js';
import { MAX_REQUEST_BODY_BYTES, startKubeApiServer, type KubeApiServer } from './startKubeApiServer.js';
import { makeEksToken } from './testSupport.js';

const NOW = Date.UTC(2025, 5, 1, 12, 0, 0);
const ADMIN = 'admin-token';
const READ_ONLY = 'read-only-token';
const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';

let running: KubeApiServer | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

/** The JSON bodies these tests read (objects, lists, Status, Table, discovery), loosely typed. */
interface Body {
  kind?: string;
  message?: string;
  status?: unknown;
  metadata: { name?: string; uid?: string; generation?: number; resourceVersion?: string };
  spec: { replicas?: number; template: { spec: { containers: Array<{ name: string; env?: unknown[] }> } } };
  items: KubeObject[];
  groups: Array<{ name: string }>;
  resources: Array<Record<string, unknown>>;
  paths: Record<string, { serverRelativeURL?: string; patch?: Record<string, unknown> }>;
  columnDefinitions: Array<{ name: string; priority: number }>;
  rows: Array<{ cells: unknown[]; object: KubeObject }>;
}

interface CallOptions {
  token?: string | null;
  body?: unknown;
  contentType?: string;
  accept?: string;
}

async function start(options: { crds?: boolean } = {}) {
  const clock = new VirtualClock(NOW);
  const store = new MemoryObjectStore({ clock });
  const logs = new MemoryPodLogStore();
  store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  if (options.crds) createKedaCrd(store);
  const lines: string[] = [];
  const server = await startKubeApiServer({
    store,
    logs,
    clusterName: 'vllm-demo',
    region: 'us-east-2',
    tokens: { admin: [ADMIN], readOnly: [READ_ONLY] },
    clock,
    log: (line) => lines.push(line),
  });
  running = server;
  const call = async (method: string, path: string, o: CallOptions = {}) => {
    const headers: Record<string, string> = {};
    const token = o.token === undefined ? ADMIN : o.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (o.accept) headers.accept = o.accept;
    if (o.body !== undefined) headers['content-type'] = o.contentType ?? 'application/json';
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers,
      ...(o.body !== undefined ? { body: typeof o.body === 'string' ? o.body : JSON.stringify(o.body) } : {}),
    });
    const text = await response.text();
    const type = response.headers.get('content-type') ?? '';
    const json = type.startsWith('application/json') && text ? (JSON.parse(text) as Body) : ({} as Body);
    return { status: response.status, type, text, json };
  };
  return { server, store, logs, clock, lines, call };
}

function createKedaCrd(store: MemoryObjectStore): void {
  store.create({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'scaledobjects.keda.sh' },
    spec: {
      group: 'keda.sh',
      names: { kind: 'ScaledObject', plural: 'scaledobjects', singular: 'scaledobject', listKind: 'ScaledObjectList' },
      scope: 'Namespaced',
      versions: [{ name: 'v1alpha1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
    },
  });
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
        spec: {
          containers: [
            { name: 'vllm', image: 'vllm/vllm-openai:v0.11.0', env: [{ name: 'A', value: '1' }] },
            { name: 'sidecar', image: 'busybox' },
          ],
        },
      },
    },
  };
}

function pod(name: string, containers = ['vllm']): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { app: 'vllm' } },
    spec: { containers: containers.map((c) => ({ name: c, image: 'vllm/vllm-openai:v0.11.0' })) },
  };
}

function scaledObject(name = 'vllm'): KubeObject {
  return {
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'ScaledObject',
    metadata: { name, namespace: 'default' },
    spec: {
      scaleTargetRef: { name: 'vllm' },
      minReplicaCount: 1,
      maxReplicaCount: 5,
      triggers: [{ type: 'prometheus', metadata: { serverAddress: 'http://p:9090', query: 'q', threshold: '25' } }],
    },
  };
}

describe('Function: startKubeApiServer', () => {
  describe('Server', () => {
    it('serves plain HTTP and HTTPS (self-signed) on one loopback port', async () => {
      // Prepare
      const { server } = await start();

      // Act
      const plain = await fetch(`${server.url}/version`);
      const tls = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpsRequest(`${server.httpsUrl}/version`, { rejectUnauthorized: false }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });

      // Assess
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.httpsUrl).toBe(server.url.replace('http:', 'https:'));
      expect(plain.status).toBe(200);
      expect(tls.status).toBe(200);
      expect((JSON.parse(tls.body) as { gitVersion: string }).gitVersion).toMatch(/^v1\.30\./);
    });

    it('stops listening and closes kept-alive connections on stop()', async () => {
      // Prepare
      const { server, call } = await start();
      await call('GET', '/api/v1/namespaces');

      // Act
      await server.stop();
      running = undefined;

      // Assess
      await expect(fetch(`${server.url}/version`)).rejects.toThrow();
    });
  });

  describe('Discovery', () => {
    it('answers /version with an EKS 1.30 version without a token', async () => {
      // Prepare
      const { call } = await start();

      // Act
      const { status, json } = await call('GET', '/version', { token: null });

      // Assess
      expect(status).toBe(200);
      expect(json).toMatchObject({ major: '1', gitVersion: expect.stringMatching(/^v1\.30\.\d+/) });
    });

    it('lists the core resources with their subresources and short names', async () => {
      // Prepare
      const { call } = await start();

      // Act
      const { json } = await call('GET', '/api/v1');

      // Assess
      expect(json.kind).toBe('APIResourceList');
      const names = (json.resources as Array<{ name: string }>).map((r) => r.name);
      expect(names).toEqual(expect.arrayContaining(['pods', 'pods/status', 'pods/log', 'services', 'namespaces']));
      expect(json.resources).toContainEqual(
        expect.objectContaining({ name: 'pods', kind: 'Pod', namespaced: true, shortNames: ['po'] }),
      );
    });

    it('lists deployments/scale as an autoscaling/v1 Scale right after deployments', async () => {
      // Prepare
      const { call } = await start();

      // Act
      const { json } = await call('GET', '/apis/apps/v1');

      // Assess
      const resources = json.resources;
      const at = resources.findIndex((r) => r.name === 'deployments');
      expect(resources[at]).toMatchObject({ kind: 'Deployment', verbs: expect.arrayContaining(['patch', 'list']) });
      expect(resources[at + 1]).toMatchObject({
        name: 'deployments/scale',
        group: 'autoscaling',
        version: 'v1',
        kind: 'Scale',
      });
      expect(resources.map((r) => r.name)).toContain('deployments/status');
    });

    it('lists the KEDA group only while its CRD exists, and 404s its resources before', async () => {
      // Prepare
      const { call, store, server } = await start();
      const groupsBefore = await call('GET', '/apis');
      const listBefore = await call('GET', '/apis/keda.sh/v1alpha1/namespaces/default/scaledobjects');
      const servedBefore = server.isServed('ScaledObject');

      // Act
      createKedaCrd(store);
      const groupsAfter = await call('GET', '/apis');
      const listAfter = await call('GET', '/apis/keda.sh/v1alpha1/namespaces/default/scaledobjects');

      // Assess
      const names = (body: Body) => body.groups.map((g) => g.name);
      expect(names(groupsBefore.json)).not.toContain('keda.sh');
      expect(listBefore.status).toBe(404);
      expect(listBefore.json).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
      expect(servedBefore).toBe(false);
      expect(names(groupsAfter.json)).toEqual(expect.arrayContaining(['apps', 'batch', 'autoscaling', 'keda.sh']));
      expect(listAfter.status).toBe(200);
      expect(server.isServed('ScaledObject')).toBe(true);
      expect(server.isServed('ServiceMonitor')).toBe(false);
    });

    it('declares the fieldValidation parameter in OpenAPI v3 (what kubectl apply checks) and has no v2', async () => {
      // Prepare
      const { call } = await start();

      // Act
      const index = await call('GET', '/openapi/v3');
      const url = index.json.paths['apis/apps/v1']?.serverRelativeURL;
      const doc = await call('GET', url ?? '/missing');
      const v2 = await call('GET', '/openapi/v2');

      // Assess
      const patch = doc.json.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}']?.patch ?? {};
      expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: 'apps', version: 'v1', kind: 'Deployment' });
      expect((patch.parameters as Array<{ name: string }>).map((p) => p.name)).toContain('fieldValidation');
      expect(v2.status).toBe(404);
    });
  });

  describe('Verbs', () => {
    it('creates (201), gets, replaces and deletes a Deployment (Status Success)', async () => {
      // Prepare
      const { call } = await start();

      // Act
      const created = await call('POST', DEPLOYMENTS, { body: deployment() });
      const got = await call('GET', `${DEPLOYMENTS}/vllm`);
      const next = { ...got.json, spec: { ...got.json.spec, replicas: 2 } };
      const replaced = await call('PUT', `${DEPLOYMENTS}/vllm`, { body: next });
      const deleted = await call('DELETE', `${DEPLOYMENTS}/vllm`, {
        body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' },
      });
      const gone = await call('GET', `${DEPLOYMENTS}/vllm`);

      // Assess
      expect(created.status).toBe(201);
      expect(created.json.metadata).toMatchObject({
        uid: expect.any(String),
        generation: 1,
        resourceVersion: expect.any(String),
      });
      expect(got.json.metadata.uid).toBe(created.json.metadata.uid);
      expect(replaced.status).toBe(200);
      expect(replaced.json.metadata.generation).toBe(2);
      expect(deleted.status).toBe(200);
      expect(deleted.json).toMatchObject({
        kind: 'Status',
        status: 'Success',
        details: { name: 'vllm', group: 'apps', kind: 'deployments', uid: created.json.metadata.uid },
      });
      expect(gone.status).toBe(404);
    });

    it('answers a Pod delete with the deleted Pod and takes the propagation policy from the query', async () => {
      // Prepare
      const { call, store } = await start();
      store.create(pod('vllm-1'));

      // Act
      const deleted = await call('DELETE', '/api/v1/namespaces/default/pods/vllm-1?propagationPolicy=Background');

      // Assess
      expect(deleted.status).toBe(200);
      expect(deleted.json).toMatchObject({ kind: 'Pod', metadata: { name: 'vllm-1' } });
    });

    it('lists one namespace or all with labelSelector and fieldSelector, and the store resourceVersion', async () => {
      // Prepare
      const { call, store } = await start();
      store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'load' } });
      store.create(pod('a'));
      store.create({ ...pod('b'), metadata: { name: 'b', namespace: 'default', labels: { app: 'k6' } } });
      store.create({ ...pod('c'), metadata: { name: 'c', namespace: 'load', labels: { app: 'vllm' } } });

      // Act
      const inDefault = await call('GET', '/api/v1/namespaces/default/pods?labelSelector=app%3Dvllm');
      const everywhere = await call('GET', '/api/v1/pods?labelSelector=app+in+(vllm)');
      const byName = await call('GET', '/api/v1/pods?fieldSelector=metadata.name%3Db');
      const notDefault = await call('GET', '/api/v1/pods?fieldSelector=metadata.namespace!%3Ddefault');

      // Assess
      const names = (r: { json: Body }) => r.json.items.map((p) => p.metadata.name);
      expect(inDefault.json).toMatchObject({
        apiVersion: 'v1',
        kind: 'PodList',
        metadata: { resourceVersion: store.resourceVersion },
      });
      expect(names(inDefault)).toEqual(['a']);
      expect(names(everywhere)).toEqual(['a', 'c']);
      expect(names(byName)).toEqual(['b']);
      expect(names(notDefault)).toEqual(['c']);
    });

    it('deletes a collection by label selector', async () => {
      // Prepare
      const { call, store } = await start();
      store.create(pod('a'));
      store.create({ ...pod('b'), metadata: { name: 'b', namespace: 'default', labels: { app: 'k6' } } });

      // Act
      const response = await call('DELETE', '/api/v1/namespaces/default/pods?labelSelector=app%3Dk6');

      // Assess
      expect(response.status).toBe(200);
      expect(store.list('Pod').map((p) => p.metadata.name)).toEqual(['a']);
    });

    it('does not persist a dryRun=All create', async () => {
      // Prepare
      const { call, store } = await start();

      // Act
      const response = await call('POST', `${DEPLOYMENTS}?dryRun=All`, { body: deployment() });

      // Assess
      expect(response.status).toBe(201);
      expect(response.json.metadata.uid).toEqual(expect.any(String));
      expect(store.get('Deployment', 'default', 'vllm')).toBeUndefined();
    });

    it('streams watch events: existing objects, then changes, until timeoutSeconds', async () => {
      // Prepare
      const { server, store } = await start();
      store.create(pod('a'));
      const response = await fetch(`${server.url}/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1`, {
        headers: { authorization: `Bearer ${ADMIN}` },
      });
      const reader = response.body?.getReader();
      const events: Array<{ type: string; object: KubeObject }> = [];
      let buffered = '';
      const readUntil = async (count: number) => {
        while (events.length < count) {
          const chunk = await reader?.read();
          if (!chunk || chunk.done) return;
          buffered += Buffer.from(chunk.value).toString();
          const lines = buffered.split('\n');
          buffered = lines.pop() ?? '';
          for (const line of lines) if (line) events.push(JSON.parse(line) as { type: string; object: KubeObject });
        }
      };

      // Act
      await readUntil(1);
      store.create(pod('b'));
      store.delete('Pod', 'default', 'a');
      await readUntil(3);
      const end = await reader?.read();

      // Assess
      expect(response.status).toBe(200);
      expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([
        ['ADDED', 'a'],
        ['ADDED', 'b'],
        ['DELETED', 'a'],
      ]);
      expect(end?.done).toBe(true);
    });
  });

  describe('Errors', () => {
    it.each([
      {
        case: '401 without a token',
        setup: () => undefined,
        method: 'GET',
        path: DEPLOYMENTS,
        options: { token: null },
        status: 401,
        reason: 'Unauthorized',
        message: 'Unauthorized',
      },
      {
        case: '401 for an unknown token',
        method: 'GET',
        path: DEPLOYMENTS,
        options: { token: 'nope' },
        status: 401,
        reason: 'Unauthorized',
        message: 'Unauthorized',
      },
      {
        case: '404 for an object that does not exist',
        method: 'GET',
        path: `${DEPLOYMENTS}/ghost`,
        options: {},
        status: 404,
        reason: 'NotFound',
        message: 'deployments.apps "ghost" not found',
      },
      {
        case: '404 for a resource the server does not serve',
        method: 'GET',
        path: '/apis/apps/v1/namespaces/default/statefulsets',
        options: {},
        status: 404,
        reason: 'NotFound',
        message: 'the server could not find the requested resource',
      },
      {
        case: '405 for POST on an object',
        method: 'POST',
        path: `${DEPLOYMENTS}/vllm`,
        options: { body: deployment() },
        status: 405,
        reason: 'MethodNotAllowed',
        message: 'does not allow this method',
      },
      {
        case: '409 AlreadyExists for a taken name',
        method: 'POST',
        path: DEPLOYMENTS,
        options: { body: deployment('existing') },
        status: 409,
        reason: 'AlreadyExists',
        message: 'deployments.apps "existing" already exists',
      },
      {
        case: '409 Conflict for a stale resourceVersion on update',
        method: 'PUT',
        path: `${DEPLOYMENTS}/existing`,
        options: { body: { ...deployment('existing'), metadata: { name: 'existing', resourceVersion: '1' } } },
        status: 409,
        reason: 'Conflict',
        message: 'the object has been modified',
      },
      {
        case: '409 Conflict for a stale resourceVersion in a merge patch',
        method: 'PATCH',
        path: `${DEPLOYMENTS}/existing`,
        options: {
          body: { metadata: { resourceVersion: '1' }, spec: { replicas: 3 } },
          contentType: 'application/merge-patch+json',
        },
        status: 409,
        reason: 'Conflict',
        message: 'the object has been modified',
      },
      {
        case: '415 for a patch content type the server does not take',
        method: 'PATCH',
        path: `${DEPLOYMENTS}/existing`,
        options: { body: { spec: { replicas: 3 } }, contentType: 'application/json' },
        status: 415,
        reason: 'UnsupportedMediaType',
        message: 'accepted media types include: application/json-patch+json',
      },
      {
        case: '422 Invalid with the field for replicas given as a string',
        method: 'POST',
        path: DEPLOYMENTS,
        options: { body: deployment('bad', '2') },
        status: 422,
        reason: 'Invalid',
        message: 'Deployment.apps "bad" is invalid: spec.replicas',
      },
      {
        case: '422 for a JSON patch test that fails',
        method: 'PATCH',
        path: `${DEPLOYMENTS}/existing`,
        options: {
          body: [{ op: 'test', path: '/spec/replicas', value: 9 }],
          contentType: 'application/json-patch+json',
        },
        status: 422,
        reason: 'Invalid',
        message: 'test failed',
      },
      {
        case: '400 for a body that is not JSON',
        method: 'POST',
        path: DEPLOYMENTS,
        options: { body: '{not json' },
        status: 400,
        reason: 'BadRequest',
        message: 'not valid JSON',
      },
      {
        case: '400 when the body names another object than the URL',
        method: 'PUT',
        path: `${DEPLOYMENTS}/existing`,
        options: { body: deployment('other') },
        status: 400,
        reason: 'BadRequest',
        message: 'does not match the name on the URL',
      },
      {
        case: '400 for a fieldSelector field the kind cannot be selected by',
        method: 'GET',
        path: `${DEPLOYMENTS}?fieldSelector=spec.replicas%3D1`,
        options: {},
        status: 400,
        reason: 'BadRequest',
        message: 'field label not supported: spec.replicas',
      },
    ])('answers $case with a Status body', async ({ method, path, options, status, reason, message }) => {
      // Prepare
      const { call, store } = await start();
      store.create(deployment('existing'));
      store.update({ ...deployment('existing'), spec: { ...(deployment().spec as object), replicas: 2 } });

      // Act
      const response = await call(method, path, options);

      // Assess
      expect(response.status).toBe(status);
      expect(response.type).toBe('application/json');
      expect(response.json).toMatchObject({
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason,
        code: status,
      });
      expect(response.json.message).toContain(message);
    });

    it('answers 413 for a body over the limit', async () => {
      // Prepare
      const { call } = await start();
      const huge = JSON.stringify({ ...deployment(), data: 'x'.repeat(MAX_REQUEST_BODY_BYTES) });

      // Act
      const response = await call('POST', DEPLOYMENTS, { body: huge });

      // Assess
      expect(response.status).toBe(413);
      expect(response.json).toMatchObject({ reason: 'RequestEntityTooLarge', code: 413 });
    });

    it('answers 415 for a strategic merge patch of a custom resource, like a real server', async () => {
      // Prepare
      const { call, store } = await start({ crds: true });
      store.create(scaledObject());

      // Act
      const response = await call('PATCH', '/apis/keda.sh/v1alpha1/namespaces/default/scaledobjects/vllm', {
        body: { spec: { maxReplicaCount: 7 } },
        contentType: 'application/strategic-merge-patch+json',
      });

      // Assess
      expect(response.status).toBe(415);
      expect(response.json.message).not.toContain('strategic-merge-patch');
    });
  });

  describe('Patch', () => {
    it.each([
      {
        case: 'a merge patch',
        contentType: 'application/merge-patch+json',
        body: { spec: { replicas: 3 } },
      },
      {
        case: 'a JSON patch',
        contentType: 'application/json-patch+json',
        body: [{ op: 'replace', path: '/spec/replicas', value: 3 }],
      },
      {
        case: 'a strategic merge patch',
        contentType: 'application/strategic-merge-patch+json',
        body: { spec: { replicas: 3 } },
      },
      {
        case: 'a server-side apply (YAML)',
        contentType: 'application/apply-patch+yaml',
        body: 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: vllm\nspec:\n  replicas: 3\n',
        query: '?fieldManager=test',
      },
    ])('applies $case and bumps resourceVersion and generation', async ({ contentType, body, query }) => {
      // Prepare
      const { call, store } = await start();
      const before = store.create(deployment());

      // Act
      const response = await call('PATCH', `${DEPLOYMENTS}/vllm${query ?? ''}`, { body, contentType });

      // Assess
      expect(response.status).toBe(200);
      expect(response.json.spec.replicas).toBe(3);
      expect(response.json.metadata.generation).toBe(2);
      expect(Number(response.json.metadata.resourceVersion)).toBeGreaterThan(Number(before.metadata.resourceVersion));
      expect(response.json.spec.template.spec.containers).toHaveLength(2);
    });

    it('merges containers and env by name in a strategic merge patch', async () => {
      // Prepare
      const { call, store } = await start();
      store.create(deployment());

      // Act
      const response = await call('PATCH', `${DEPLOYMENTS}/vllm`, {
        body: { spec: { template: { spec: { containers: [{ name: 'vllm', env: [{ name: 'B', value: '2' }] }] } } } },
        contentType: 'application/strategic-merge-patch+json',
      });

      // Assess
      const containers = response.json.spec.template.spec.containers;
      expect(containers.map((c) => c.name)).toEqual(['vllm', 'sidecar']);
      expect(containers[0]?.env).toEqual([
        { name: 'A', value: '1' },
        { name: 'B', value: '2' },
      ]);
    });

    it('creates the object on a server-side apply when it does not exist (201)', async () => {
      // Prepare
      const { call, store } = await start({ crds: true });

      // Act
      const response = await call(
        'PATCH',
        '/apis/keda.sh/v1alpha1/namespaces/default/scaledobjects/vllm?fieldManager=vllm-eks-pilot&force=true',
        { body: JSON.stringify(scaledObject()), contentType: 'application/apply-patch+yaml' },
      );

      // Assess
      expect(response.status).toBe(201);
      expect(store.get('ScaledObject', 'default', 'vllm')?.spec).toEqual(scaledObject().spec);
    });

    it('requires fieldManager for a server-side apply (400)', async () => {
      // Prepare
      const { call, store } = await start();
      store.create(deployment());

      // Act
      const response = await call('PATCH', `${DEPLOYMENTS}/vllm`, {
        body: 'spec: {replicas: 2}',
        contentType: 'application/apply-patch+yaml',
      });

      // Assess
      expect(response.status).toBe(400);
      expect(response.json.message).toContain('fieldManager');
    });

    it('answers 404 for a merge patch of an object that does not exist', async () => {
      // Prepare
      const { call } = await start();

      // Act
      const response = await call('PATCH', `${DEPLOYMENTS}/ghost`, {
        body: { spec: { replicas: 2 } },
        contentType: 'application/merge-patch+json',
      });

      // Assess
      expect(response.status).toBe(404);
    });
  });

  describe('Subresources', () => {
    it('writes status only through /status and ignores status in a main-resource patch', async () => {
      // Prepare
      const { call, store } = await start();
      store.create(deployment());

      // Act
      const statusWrite = await call('PATCH', `${DEPLOYMENTS}/vllm/status`, {
        body: { status: { readyReplicas: 1 }, spec: { replicas: 9 } },
        contentType: 'application/merge-patch+json',
      });
      const mainWrite = await call('PATCH', `${DEPLOYMENTS}/vllm`, {
        body: { status: { readyReplicas: 5 } },
        contentType: 'application/merge-patch+json',
      });

      // Assess
      expect(statusWrite.json.status).toEqual({ readyReplicas: 1 });
      expect(statusWrite.json.spec.replicas).toBe(1);
      expect(mainWrite.json.status).toEqual({ readyReplicas: 1 });
    });

    it('reads and writes spec.replicas through the autoscaling/v1 Scale of a Deployment', async () => {
      // Prepare
      const { call, store } = await start();
      store.create(deployment());

      // Act
      const read = await call('GET', `${DEPLOYMENTS}/vllm/scale`);
      const patched = await call('PATCH', `${DEPLOYMENTS}/vllm/scale`, {
        body: { spec: { replicas: 3 } },
        contentType: 'application/merge-patch+json',
      });
      const stale = await call('PUT', `${DEPLOYMENTS}/vllm/scale`, { body: read.json });
      const negative = await call('PUT', `${DEPLOYMENTS}/vllm/scale`, {
        body: { ...patched.json, spec: { replicas: -1 } },
      });

      // Assess
      expect(read.json).toMatchObject({
        kind: 'Scale',
        apiVersion: 'autoscaling/v1',
        spec: { replicas: 1 },
        status: { replicas: 0, selector: 'app=vllm' },
      });
      expect(patched.json.spec.replicas).toBe(3);
      expect((store.get('Deployment', 'default', 'vllm')?.spec as { replicas: number }).replicas).toBe(3);
      expect(stale.status).toBe(409);
      expect(negative.status).toBe(422);
      expect(negative.json.message).toContain('spec.replicas');
    });

    it.each([
      { case: 'the whole log', query: '', status: 200, want: 'one\ntwo\nthree\n' },
      { case: 'the last line with tailLines=1', query: '?tailLines=1', status: 200, want: 'three\n' },
      { case: 'the container asked for', query: '?container=vllm', status: 200, want: 'one\ntwo\nthree\n' },
      {
        case: '400 for a container the Pod lacks',
        query: '?container=nope',
        status: 400,
        want: 'is not valid for pod',
      },
    ])('serves a Pod log as text: $case', async ({ query, status, want }) => {
      // Prepare
      const { call, store, logs } = await start();
      store.create(pod('vllm-1'));
      logs.append('default', 'vllm-1', 'one\ntwo');
      logs.append('default', 'vllm-1', 'three', 'vllm');

      // Act
      const response = await call('GET', `/api/v1/namespaces/default/pods/vllm-1/log${query}`);

      // Assess
      expect(response.status).toBe(status);
      if (status === 200) {
        expect(response.type).toBe('text/plain');
        expect(response.text).toBe(want);
      } else expect(response.json.message).toContain(want);
    });

    it('answers 404 with a Status for the log of a Pod that does not exist', async () => {
      // Prepare
      const { call } = await start();

      // Act
      const response = await call('GET', '/api/v1/namespaces/default/pods/ghost/log');

      // Assess
      expect(response.status).toBe(404);
      expect(response.json).toMatchObject({ kind: 'Status', reason: 'NotFound', message: 'pods "ghost" not found' });
    });

    it('asks for a container name when a Pod has several (400), as a real server does', async () => {
      // Prepare
      const { call, store } = await start();
      store.create(pod('two', ['vllm', 'sidecar']));

      // Act
      const response = await call('GET', '/api/v1/namespaces/default/pods/two/log');

      // Assess
      expect(response.status).toBe(400);
      expect(response.json.message).toBe(
        'a container name must be specified for pod two, choose one of: [vllm sidecar]',
      );
    });
  });

  describe('Tables', () => {
    it.each([
      {
        case: 'deployments',
        path: DEPLOYMENTS,
        setup: (s: MemoryObjectStore) => s.create(deployment()),
        columns: 'NAME READY UP-TO-DATE AVAILABLE AGE',
        row: ['vllm', '0/1', 0, 0, '2m'],
      },
      {
        case: 'pods',
        path: '/api/v1/pods',
        setup: (s: MemoryObjectStore) => s.create(pod('vllm-1')),
        columns: 'NAME READY STATUS RESTARTS AGE',
        row: ['vllm-1', '0/1', '', '0', '2m'],
      },
      {
        case: 'services',
        path: '/api/v1/namespaces/default/services',
        setup: (s: MemoryObjectStore) =>
          s.create({
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: 'vllm', namespace: 'default' },
            spec: { clusterIP: '10.100.0.1', ports: [{ port: 8000, protocol: 'TCP' }], selector: { app: 'vllm' } },
          }),
        columns: 'NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE',
        row: ['vllm', 'ClusterIP', '10.100.0.1', '<none>', '8000/TCP', '2m'],
      },
      {
        case: 'jobs',
        path: '/apis/batch/v1/jobs',
        setup: (s: MemoryObjectStore) =>
          s.create({
            apiVersion: 'batch/v1',
            kind: 'Job',
            metadata: { name: 'k6', namespace: 'default' },
            spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'k6', image: 'grafana/k6' }] } } },
          }),
        columns: 'NAME STATUS COMPLETIONS DURATION AGE',
        row: ['k6', 'Running', '0/1', '', '2m'],
      },
      {
        case: 'hpa',
        path: '/apis/autoscaling/v2/horizontalpodautoscalers',
        setup: (s: MemoryObjectStore) =>
          s.create({
            apiVersion: 'autoscaling/v2',
            kind: 'HorizontalPodAutoscaler',
            metadata: { name: 'keda-hpa-vllm', namespace: 'default' },
            spec: {
              scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'vllm' },
              minReplicas: 1,
              maxReplicas: 5,
              metrics: [
                {
                  type: 'External',
                  external: { metric: { name: 's0-prometheus' }, target: { type: 'AverageValue', averageValue: '25' } },
                },
              ],
            },
          }),
        columns: 'NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE',
        row: ['keda-hpa-vllm', 'Deployment/vllm', '<unknown>/25 (avg)', '1', 5, 0, '2m'],
      },
      {
        case: 'configmaps (NAME DATA AGE)',
        path: '/api/v1/configmaps',
        setup: (s: MemoryObjectStore) =>
          s.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: {} }),
        columns: 'NAME DATA AGE',
        row: ['c', 0, '2m'],
      },
      {
        case: 'a kind with no printer (NAME AGE)',
        path: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
        setup: (s: MemoryObjectStore) =>
          s.create({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'view' } }),
        columns: 'NAME AGE',
        row: ['view', '2m'],
      },
    ])('answers kubectl get $case with a Table of kubectl columns', async ({ path, setup, columns, row }) => {
      // Prepare
      const { call, store, clock } = await start();
      setup(store);
      clock.advance(120_000);

      // Act
      const response = await call('GET', path, { accept: TABLE_ACCEPT });

      // Assess
      expect(response.json).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
      const defs = response.json.columnDefinitions;
      const shown = defs.map((d, i) => ({ ...d, i })).filter((d) => d.priority === 0);
      expect(shown.map((d) => d.name.toUpperCase()).join(' ')).toBe(columns);
      const cells = response.json.rows[0]?.cells ?? [];
      expect(shown.map((d) => cells[d.i])).toEqual(row);
      expect(cells).toHaveLength(defs.length);
    });
  });

  describe('Auth', () => {
    it('lets a read-only token get and list, and refuses its writes with the real 403 message', async () => {
      // Prepare
      const { call, store } = await start();
      store.create(deployment());

      // Act
      const list = await call('GET', DEPLOYMENTS, { token: READ_ONLY });
      const patch = await call('PATCH', `${DEPLOYMENTS}/vllm`, {
        token: READ_ONLY,
        body: { spec: { replicas: 2 } },
        contentType: 'application/merge-patch+json',
      });
      const scale = await call('PATCH', `${DEPLOYMENTS}/vllm/scale`, {
        token: READ_ONLY,
        body: { spec: { replicas: 2 } },
        contentType: 'application/merge-patch+json',
      });
      const create = await call('POST', DEPLOYMENTS, { token: READ_ONLY, body: deployment('x') });

      // Assess
      expect(list.status).toBe(200);
      expect(patch.status).toBe(403);
      expect(patch.json).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
      expect(patch.json.message).toBe(
        'deployments.apps "vllm" is forbidden: User "twin-read-only" cannot patch resource "deployments" in API group "apps" in the namespace "default"',
      );
      expect(scale.json.message).toContain('cannot patch resource "deployments/scale" in API group "apps"');
      expect(create.json.message).toBe(
        'deployments.apps is forbidden: User "twin-read-only" cannot create resource "deployments" in API group "apps" in the namespace "default"',
      );
      expect((store.get('Deployment', 'default', 'vllm')?.spec as { replicas: number }).replicas).toBe(1);
    });

    it('accepts a fresh EKS token with admin rights and refuses an expired one with 401', async () => {
      // Prepare
      const { call, lines } = await start();
      const fresh = await makeEksToken({ clusterName: 'vllm-demo', region: 'us-east-2', signedAtMs: NOW - 60_000 });
      const expired = await makeEksToken({
        clusterName: 'vllm-demo',
        region: 'us-east-2',
        signedAtMs: NOW - 16 * 60_000,
      });

      // Act
      const write = await call('POST', DEPLOYMENTS, { token: fresh, body: deployment() });
      const refused = await call('GET', DEPLOYMENTS, { token: expired });

      // Assess
      expect(write.status).toBe(201);
      expect(refused.status).toBe(401);
      expect(refused.json.message).toBe('Unauthorized');
      expect(lines.join('\n')).toContain('X-Amz-Date parameter is expired');
    });
  });
});
