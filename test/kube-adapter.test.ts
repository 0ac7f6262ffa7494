/**
 * The product's ClusterClient adapter (shared/kube) against the twin's Kubernetes API server (sim/kube/server) and
 * the twin's EKS endpoint: real HTTP, client-node 1.4, the server's own validation, resourceVersions and RBAC.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EKSClient } from '@aws-sdk/client-eks';
import { KubeConfig } from '@kubernetes/client-node';
import { VirtualClock } from '../shared/clock/index.js';
import {
  type ClusterClient,
  KubeConflictError,
  KubeForbiddenError,
  KubeInvalidError,
  KubeNotFoundError,
  type KubeObject,
  KubeUnauthorizedError,
} from '../shared/kube/index.js';
import { connectToEks, KubeClusterClient } from '../shared/kube/connection/index.js';
import { vllmDeployment } from '../shared/kube/manifests/index.js';
import {
  type EksTwin,
  type KubeApiServer,
  MemoryObjectStore,
  MemoryPodLogStore,
  startEksTwin,
  startKubeApiServer,
} from '../sim/harness/index.js';

const TOKENS = { admin: ['twin-admin-token'], readOnly: ['twin-view-token'] };
const CLUSTER = { name: 'ai-eks-docs', region: 'us-east-2' };
const credentials = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'twin-secret' };

const deploymentRef = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'vllm-inference-app' };

function clientWithToken(server: KubeApiServer, token: string): ClusterClient {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: CLUSTER.name, server: server.url, skipTLSVerify: true }],
    users: [{ name: 'user', token }],
    contexts: [{ name: CLUSTER.name, cluster: CLUSTER.name, user: 'user' }],
    currentContext: CLUSTER.name,
  });
  return new KubeClusterClient(kubeConfig);
}

function configMap(name: string, data: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data };
}

describe('ClusterClient adapter against the twin API server', () => {
  let store: MemoryObjectStore;
  let logs: MemoryPodLogStore;
  let server: KubeApiServer;
  let eksTwin: EksTwin;
  let admin: ClusterClient;
  let viewer: ClusterClient;

  beforeAll(async () => {
    store = new MemoryObjectStore();
    logs = new MemoryPodLogStore();
    if (store.get('Namespace', undefined, 'default') === undefined)
      store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    server = await startKubeApiServer({
      store,
      logs,
      clusterName: CLUSTER.name,
      region: CLUSTER.region,
      tokens: TOKENS,
    });
    eksTwin = await startEksTwin({ clusters: [{ ...CLUSTER, endpoint: server.url }] });
    admin = clientWithToken(server, 'twin-admin-token');
    viewer = clientWithToken(server, 'twin-view-token');
  });

  afterAll(async () => {
    await eksTwin?.stop();
    await server?.stop();
  });

  describe('round trips', () => {
    it('applies the generated vLLM Deployment, re-applies it unchanged, patches, scales and deletes it', async () => {
      // Prepare
      const desired = vllmDeployment({ model: 'ministral', maxModelLen: 8192 });

      // Act
      const created = await admin.apply(desired);
      const again = await admin.apply(vllmDeployment({ model: 'ministral', maxModelLen: 8192 }));
      const patched = await admin.patchMerge(deploymentRef, { metadata: { annotations: { 'vllm-pilot/run': 'r1' } } });
      await admin.scale({ namespace: 'default', name: 'vllm-inference-app' }, 2);
      const scaled = await admin.get(deploymentRef);
      const deleted = await admin.delete(deploymentRef, { propagationPolicy: 'Background' });
      const afterDelete = await admin.get(deploymentRef);
      const deletedAgain = await admin.delete(deploymentRef);

      // Assess
      expect(created.action).toBe('created');
      expect(created.object.metadata.uid).toEqual(expect.any(String));
      expect(again.action).toBe('unchanged');
      expect(again.object.metadata.resourceVersion).toBe(created.object.metadata.resourceVersion);
      expect(patched.metadata.annotations).toMatchObject({ 'vllm-pilot/run': 'r1' });
      expect(scaled?.spec).toMatchObject({ replicas: 2 });
      expect([deleted, afterDelete, deletedAgain]).toEqual([true, undefined, false]);
    });

    it('lists by label and reads a Pod log', async () => {
      // Prepare
      await admin.apply({
        ...configMap('a', { k: 'v' }),
        metadata: { name: 'a', namespace: 'default', labels: { run: 'r9' } },
      });
      await admin.apply({
        ...configMap('b', { k: 'v' }),
        metadata: { name: 'b', namespace: 'default', labels: { run: 'r8' } },
      });
      store.create({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'k6-load-abcde', namespace: 'default' },
        spec: { containers: [{ name: 'k6', image: 'grafana/k6:0.54.0' }] },
      });
      logs.append('default', 'k6-load-abcde', 'running');
      logs.append('default', 'k6-load-abcde', 'K6_SUMMARY {"httpReqs":10}');

      // Act
      const listed = await admin.list({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        namespace: 'default',
        labelSelector: { run: 'r9' },
      });
      const log = await admin.readPodLog('default', 'k6-load-abcde', { tailLines: 1 });

      // Assess
      expect(listed.map((o) => [o.kind, o.metadata.name])).toEqual([['ConfigMap', 'a']]);
      expect(log.trim()).toBe('K6_SUMMARY {"httpReqs":10}');
    });
  });

  describe('errors the server answers, as named errors', () => {
    it('404: patching a missing object is KubeNotFoundError naming it', async () => {
      // Act
      const error = await admin
        .patchMerge({ ...deploymentRef, name: 'absent' }, { spec: { replicas: 1 } })
        .catch((e: unknown) => e);

      // Assess
      expect(error).toBeInstanceOf(KubeNotFoundError);
      expect((error as Error).message).toMatch(
        /^patch deployments\.apps default\/absent: .*not found \(HTTP 404 NotFound\)$/,
      );
    });

    it('409: replacing with a stale resourceVersion is KubeConflictError', async () => {
      // Prepare
      const { object } = await admin.apply(configMap('stale', { v: '1' }));
      store.update({ ...object, data: { v: 'someone else' } });

      // Act
      const error = await admin.replace({ ...object, data: { v: '2' } }).catch((e: unknown) => e);

      // Assess
      expect(error).toBeInstanceOf(KubeConflictError);
      expect((error as KubeConflictError).retryable).toBe(true);
    });

    it('422: an object the schema refuses is KubeInvalidError with the field', async () => {
      // Prepare
      const invalid = vllmDeployment({ name: 'bad', model: 'm', maxModelLen: 8192 });
      (invalid.spec as { replicas: unknown }).replicas = 'two';

      // Act
      const error = await admin.apply(invalid).catch((e: unknown) => e);

      // Assess
      expect(error).toBeInstanceOf(KubeInvalidError);
      expect((error as KubeInvalidError).message).toContain('replicas');
    });

    it('403: a read-only token reads but cannot write (KubeForbiddenError)', async () => {
      // Prepare
      await admin.apply(configMap('readable', { v: '1' }));

      // Act
      const read = await viewer.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'readable' });
      const error = await viewer.apply(configMap('readable', { v: '2' })).catch((e: unknown) => e);

      // Assess
      expect(read?.data).toEqual({ v: '1' });
      expect(error).toBeInstanceOf(KubeForbiddenError);
      expect((error as Error).message).toMatch(/^patch configmaps default\/readable: .*forbidden/);
    });
  });

  describe('updateWithRetry', () => {
    it('re-reads and re-applies its change after another writer wins the race', async () => {
      // Prepare
      await admin.apply(configMap('raced', { mine: 'old' }));
      let attempts = 0;

      // Act
      const updated = await admin.updateWithRetry(
        { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'raced' },
        (live) => {
          attempts += 1;
          if (attempts === 1) {
            const current = store.get('ConfigMap', 'default', 'raced') as KubeObject;
            store.update({ ...current, data: { ...(current.data as object), theirs: 'x' } });
          }
          live.data = { ...(live.data as object), mine: 'new' };
        },
      );

      // Assess
      expect(attempts).toBe(2);
      expect(updated.data).toEqual({ mine: 'new', theirs: 'x' });
    });
  });

  describe('connectToEks through the EKS twin', () => {
    it('finds the API server with DescribeCluster and is accepted with an EKS token', async () => {
      // Prepare
      const eks = new EKSClient({ region: CLUSTER.region, endpoint: eksTwin.endpoint, credentials, maxAttempts: 1 });

      // Act
      const cluster = await connectToEks({ clusterName: CLUSTER.name, region: CLUSTER.region, eks, credentials });
      const applied = await cluster.apply(configMap('via-eks', { hello: 'eks' }));
      const read = await cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'via-eks' });
      eks.destroy();

      // Assess
      expect(applied.action).toBe('created');
      expect(read?.data).toEqual({ hello: 'eks' });
    });

    it('is refused (KubeUnauthorizedError) with a token signed too long ago', async () => {
      // Prepare
      const eks = new EKSClient({ region: CLUSTER.region, endpoint: eksTwin.endpoint, credentials, maxAttempts: 1 });
      const twentyMinutesAgo = new VirtualClock(Date.now() - 20 * 60_000);

      // Act
      const cluster = await connectToEks({
        ...{ clusterName: CLUSTER.name, region: CLUSTER.region },
        eks,
        credentials,
        clock: twentyMinutesAgo,
      });
      const error = await cluster
        .get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'via-eks' })
        .catch((e: unknown) => e);
      eks.destroy();

      // Assess
      expect(error).toBeInstanceOf(KubeUnauthorizedError);
    });
  });
});
