import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import {
  KubeAlreadyExistsError,
  KubeBadRequestError,
  KubeConflictError,
  type KubeError,
  KubeForbiddenError,
  KubeInvalidArgumentError,
  KubeInvalidError,
  KubeNotFoundError,
  KubeUnauthorizedError,
  KubeUnavailableError,
} from '../errors.js';
import { FIELD_MANAGER, KubeClusterClient } from './KubeClusterClient.js';
import { startFakeApiServer, type FakeApiServer } from '../testing/fakeApiServer.js';
import type { KubeObject } from '../types.js';

const DEPLOYMENT_PATH = '/apis/apps/v1/namespaces/default/deployments/vllm-app';
const deploymentRef = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'vllm-app' };

function deployment(replicas = 1, args: string[] = ['--max-model-len', '8192']): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'vllm-app', namespace: 'default', labels: { app: 'vllm-app' } },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'vllm-app' } },
      template: {
        metadata: { labels: { app: 'vllm-app' } },
        spec: { containers: [{ name: 'vllm', image: 'vllm/vllm-openai:v0.11.0', args }] },
      },
    },
  };
}

function kubeConfigFor(server: string, token = 'test-token'): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'fake', server, skipTLSVerify: true }],
    users: [{ name: 'tester', token }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'tester' }],
    currentContext: 'fake',
  });
  return kubeConfig;
}

describe('Class: KubeClusterClient', () => {
  let api: FakeApiServer;
  let client: KubeClusterClient;

  beforeAll(async () => {
    api = await startFakeApiServer({ acceptToken: (token) => token === 'test-token' });
    client = new KubeClusterClient(kubeConfigFor(api.url));
  });

  afterAll(() => api.stop());

  beforeEach(() => {
    api.objects.clear();
    api.requests.length = 0;
  });

  describe('Method: apply', () => {
    it('creates a missing object, then reports "unchanged" for the same object and "configured" for a change', async () => {
      // Act
      const first = await client.apply(deployment());
      const second = await client.apply(deployment());
      const third = await client.apply(deployment(2));

      // Assess
      expect(first.action).toBe('created');
      expect(second.action).toBe('unchanged');
      expect(third.action).toBe('configured');
      expect(third.object.spec).toMatchObject({ replicas: 2 });
      expect(api.objects.get(DEPLOYMENT_PATH)?.spec).toMatchObject({ replicas: 2 });
    });

    it('writes with a JSON merge patch as the vllm-eks-pilot field manager, without server-owned fields', async () => {
      // Prepare
      const created = (await client.apply(deployment())).object;
      api.requests.length = 0;

      // Act: re-apply what was read back, status and resourceVersion included
      await client.apply({ ...created, spec: deployment(3).spec, status: { replicas: 1 } });

      // Assess
      const patch = api.requests.find((r) => r.method === 'PATCH');
      expect(patch?.contentType).toBe('application/merge-patch+json');
      expect(patch?.query.fieldManager).toBe(FIELD_MANAGER);
      expect(patch?.body).not.toHaveProperty('status');
      expect((patch?.body as KubeObject).metadata).not.toHaveProperty('resourceVersion');
      expect((patch?.body as KubeObject).metadata).not.toHaveProperty('uid');
    });

    it('returns plain JSON: timestamps stay strings as the server sent them', async () => {
      // Act
      const { object } = await client.apply(deployment());

      // Assess
      expect(object.metadata.creationTimestamp).toBe('2025-06-01T12:00:00Z');
      expect(Object.getPrototypeOf(object)).toBe(Object.prototype);
    });
  });

  describe('Method: get', () => {
    it('returns undefined for a missing object (the only call where 404 is not an error)', async () => {
      // Act
      const result = await client.get(deploymentRef);

      // Assess
      expect(result).toBeUndefined();
    });

    it('sends the bearer token of the kubeconfig', async () => {
      // Act
      await client.get(deploymentRef);

      // Assess
      expect(api.requests[0]?.authorization).toBe('Bearer test-token');
      expect(api.requests[0]?.path).toBe(DEPLOYMENT_PATH);
    });
  });

  describe('Method: list', () => {
    it('sends the label selector and fills in apiVersion and kind on every item', async () => {
      // Prepare
      await client.apply({ ...deployment(), metadata: { name: 'a', namespace: 'default', labels: { run: 'r1' } } });
      await client.apply({ ...deployment(), metadata: { name: 'b', namespace: 'default', labels: { run: 'r2' } } });

      // Act
      const items = await client.list({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        namespace: 'default',
        labelSelector: { run: 'r1' },
      });

      // Assess
      expect(items.map((i) => [i.apiVersion, i.kind, i.metadata.name])).toEqual([['apps/v1', 'Deployment', 'a']]);
      expect(api.requests.at(-1)?.query.labelSelector).toBe('run=r1');
    });
  });

  describe('Method: patchMerge', () => {
    it('merge-patches the named object; null removes a field', async () => {
      // Prepare
      await client.apply({ ...deployment(), metadata: { ...deployment().metadata, annotations: { a: '1', b: '2' } } });

      // Act
      const patched = await client.patchMerge(deploymentRef, { metadata: { annotations: { a: null, c: '3' } } });

      // Assess
      expect(patched.metadata.annotations).toEqual({ b: '2', c: '3' });
    });
  });

  describe('Method: replace', () => {
    it('fails with KubeConflictError when the resourceVersion is stale', async () => {
      // Prepare
      const { object } = await client.apply(deployment());
      api.touch(DEPLOYMENT_PATH, (o) => ((o.spec as { replicas: number }).replicas = 4));

      // Act
      const error = await client.replace({ ...object, spec: deployment(2).spec }).catch((e: unknown) => e);

      // Assess
      expect(error).toBeInstanceOf(KubeConflictError);
      expect((error as KubeError).retryable).toBe(true);
      expect((error as Error).message).toMatch(
        /^replace deployments\.apps default\/vllm-app: Operation cannot be fulfilled/,
      );
    });
  });

  describe('Method: updateWithRetry', () => {
    it('re-reads and re-applies the change after a Conflict from a concurrent write', async () => {
      // Prepare
      await client.apply(deployment());
      let calls = 0;

      // Act: the first mutation races with another writer that sets replicas to 4
      const updated = await client.updateWithRetry(deploymentRef, (live) => {
        calls += 1;
        if (calls === 1)
          api.touch(
            DEPLOYMENT_PATH,
            (o) => ((o.metadata as { labels: object }).labels = { app: 'vllm-app', other: 'writer' }),
          );
        (live.spec as { replicas: number }).replicas = 3;
      });

      // Assess
      expect(calls).toBe(2);
      expect(updated.spec).toMatchObject({ replicas: 3 });
      expect(updated.metadata.labels).toEqual({ app: 'vllm-app', other: 'writer' });
      expect(api.requests.filter((r) => r.method === 'PUT')).toHaveLength(2);
    });

    it('throws the last Conflict when every attempt loses the race', async () => {
      // Prepare
      await client.apply(deployment());

      // Act
      const error = await client
        .updateWithRetry(
          deploymentRef,
          (live) => {
            api.touch(DEPLOYMENT_PATH, () => undefined);
            (live.spec as { replicas: number }).replicas = 3;
          },
          { maxAttempts: 3 },
        )
        .catch((e: unknown) => e);

      // Assess
      expect(error).toBeInstanceOf(KubeConflictError);
      expect(api.requests.filter((r) => r.method === 'PUT')).toHaveLength(3);
    });

    it('writes nothing when the mutation changes nothing', async () => {
      // Prepare
      await client.apply(deployment());

      // Act
      await client.updateWithRetry(deploymentRef, (live) => live);

      // Assess
      expect(api.requests.filter((r) => r.method === 'PUT')).toHaveLength(0);
    });

    it('fails with KubeNotFoundError when the object does not exist', async () => {
      // Act
      const error = await client.updateWithRetry(deploymentRef, () => undefined).catch((e: unknown) => e);

      // Assess
      expect(error).toBeInstanceOf(KubeNotFoundError);
    });
  });

  describe('Method: delete', () => {
    it('deletes with the propagation policy, and resolves false when the object is already gone', async () => {
      // Prepare
      await client.apply(deployment());

      // Act
      const first = await client.delete(deploymentRef, { propagationPolicy: 'Foreground' });
      const second = await client.delete(deploymentRef);

      // Assess
      expect([first, second]).toEqual([true, false]);
      expect(api.requests.find((r) => r.method === 'DELETE')?.query.propagationPolicy).toBe('Foreground');
    });
  });

  describe('Method: scale', () => {
    it('merge-patches the scale subresource', async () => {
      // Prepare
      await client.apply(deployment());

      // Act
      await client.scale({ namespace: 'default', name: 'vllm-app' }, 0);

      // Assess
      const patch = api.requests.find((r) => r.path.endsWith('/scale'));
      expect(patch).toMatchObject({
        method: 'PATCH',
        contentType: 'application/merge-patch+json',
        body: { spec: { replicas: 0 } },
      });
      expect(api.objects.get(DEPLOYMENT_PATH)?.spec).toMatchObject({ replicas: 0 });
    });

    it('refuses a negative replica count before sending anything', async () => {
      // Act
      const error = await client.scale({ namespace: 'default', name: 'vllm-app' }, -1).catch((e: unknown) => e);

      // Assess
      expect(error).toBeInstanceOf(KubeInvalidArgumentError);
      expect(api.requests).toHaveLength(0);
    });
  });

  describe('Method: readPodLog', () => {
    it('returns the log text, the last lines when asked', async () => {
      // Prepare
      api.objects.set('/api/v1/namespaces/default/pods/k6-abc', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'k6-abc' },
      });
      api.logs.set('/api/v1/namespaces/default/pods/k6-abc', 'line 1\nline 2\nK6_SUMMARY {"a":1}\n');

      // Act
      const whole = await client.readPodLog('default', 'k6-abc');
      const tail = await client.readPodLog('default', 'k6-abc', { tailLines: 1 });

      // Assess
      expect(whole).toBe('line 1\nline 2\nK6_SUMMARY {"a":1}\n');
      expect(tail).toBe('K6_SUMMARY {"a":1}\n');
    });
  });

  describe('Method: listPods', () => {
    it('lists the Pods of a namespace by label', async () => {
      // Prepare
      api.objects.set('/api/v1/namespaces/default/pods/p1', { metadata: { name: 'p1', labels: { app: 'x' } } });
      api.objects.set('/api/v1/namespaces/default/pods/p2', { metadata: { name: 'p2', labels: { app: 'y' } } });

      // Act
      const pods = await client.listPods('default', 'app=x');

      // Assess
      expect(pods.map((p) => [p.kind, p.metadata.name])).toEqual([['Pod', 'p1']]);
    });
  });

  describe('Error mapping', () => {
    const status = (code: number, reason: string, message: string, details?: object) => ({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code,
      reason,
      message,
      details,
    });

    it.each([
      { case: '400 BadRequest', code: 400, reason: 'BadRequest', type: KubeBadRequestError, retryable: false },
      { case: '401 Unauthorized', code: 401, reason: 'Unauthorized', type: KubeUnauthorizedError, retryable: false },
      { case: '403 Forbidden', code: 403, reason: 'Forbidden', type: KubeForbiddenError, retryable: false },
      { case: '404 NotFound', code: 404, reason: 'NotFound', type: KubeNotFoundError, retryable: false },
      { case: '409 AlreadyExists', code: 409, reason: 'AlreadyExists', type: KubeAlreadyExistsError, retryable: false },
      { case: '409 Conflict', code: 409, reason: 'Conflict', type: KubeConflictError, retryable: true },
      { case: '422 Invalid', code: 422, reason: 'Invalid', type: KubeInvalidError, retryable: false },
      {
        case: '429 TooManyRequests',
        code: 429,
        reason: 'TooManyRequests',
        type: KubeUnavailableError,
        retryable: true,
      },
      { case: '500 InternalError', code: 500, reason: 'InternalError', type: KubeUnavailableError, retryable: true },
      {
        case: '503 ServiceUnavailable',
        code: 503,
        reason: 'ServiceUnavailable',
        type: KubeUnavailableError,
        retryable: true,
      },
    ])(
      'maps $case to $type.name naming the object and the server message',
      async ({ code, reason, type, retryable }) => {
        // Prepare
        api.failNext({ status: code, body: status(code, reason, `server says ${reason}`) });

        // Act
        const error = await client.patchMerge(deploymentRef, { spec: { replicas: 2 } }).catch((e: unknown) => e);

        // Assess
        expect(error).toBeInstanceOf(type);
        const e = error as KubeError;
        expect(e.name).toBe(type.name);
        expect(e.retryable).toBe(retryable);
        expect(e.status).toBe(code);
        expect(e.reason).toBe(reason);
        expect(e.ref).toMatchObject(deploymentRef);
        expect(e.message).toBe(
          `patch deployments.apps default/vllm-app: server says ${reason} (HTTP ${code} ${reason})`,
        );
      },
    );

    it("carries a 422's causes, naming each field", async () => {
      // Prepare
      api.failNext({
        status: 422,
        body: status(422, 'Invalid', 'Deployment.apps "vllm-app" is invalid', {
          causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: -1: must be >= 0', field: 'spec.replicas' }],
        }),
      });

      // Act
      const error = (await client.apply(deployment(-1)).catch((e: unknown) => e)) as KubeInvalidError;

      // Assess
      expect(error).toBeInstanceOf(KubeInvalidError);
      expect(error.causes).toEqual([
        { reason: 'FieldValueInvalid', message: 'Invalid value: -1: must be >= 0', field: 'spec.replicas' },
      ]);
      expect(error.message).toContain('spec.replicas: Invalid value: -1: must be >= 0');
    });

    it('reads Retry-After of a 429', async () => {
      // Prepare
      api.failNext({ status: 429, body: status(429, 'TooManyRequests', 'slow down'), headers: { 'retry-after': '7' } });

      // Act
      const error = (await client.get(deploymentRef).catch((e: unknown) => e)) as KubeUnavailableError;

      // Assess
      expect(error.retryAfterSeconds).toBe(7);
    });

    it('maps a token the server refuses to KubeUnauthorizedError', async () => {
      // Prepare
      const stranger = new KubeClusterClient(kubeConfigFor(api.url, 'wrong-token'));

      // Act
      const error = await stranger.get(deploymentRef).catch((e: unknown) => e);

      // Assess
      expect(error).toBeInstanceOf(KubeUnauthorizedError);
    });

    it('maps a server that does not answer to a retryable KubeUnavailableError', async () => {
      // Prepare
      const gone = await startFakeApiServer();
      await gone.stop();
      const orphan = new KubeClusterClient(kubeConfigFor(gone.url));

      // Act
      const error = await orphan.get(deploymentRef).catch((e: unknown) => e);

      // Assess
      expect(error).toBeInstanceOf(KubeUnavailableError);
      expect((error as KubeError).retryable).toBe(true);
      expect((error as Error).message).toMatch(
        /^get deployments\.apps default\/vllm-app: no answer from the API server: .*ECONNREFUSED/,
      );
    });
  });
});
