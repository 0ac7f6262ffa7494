import { afterEach, describe, expect, it } from '@jest/globals';
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { MemoryPodLogStore } from '../logs.js';
import { MemoryObjectStore } from '../store.js';
import { startKubeApiServer, type KubeApiServer } from './startKubeApiServer.js';
import { renderKubeconfig } from './writeKubeconfig.js';

const ADMIN = 'admin-token';
const READ_ONLY = 'read-only-token';

let running: KubeApiServer | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

async function start(options: { https: boolean; token?: string }) {
  const store = new MemoryObjectStore();
  const logs = new MemoryPodLogStore();
  store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  store.create({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'scaledobjects.keda.sh' },
    spec: {
      group: 'keda.sh',
      names: { kind: 'ScaledObject', plural: 'scaledobjects' },
      scope: 'Namespaced',
      versions: [{ name: 'v1alpha1', served: true, storage: true }],
    },
  });
  const server = await startKubeApiServer({
    store,
    logs,
    clusterName: 'vllm-demo',
    region: 'us-east-2',
    tokens: { admin: [ADMIN], readOnly: [READ_ONLY] },
  });
  running = server;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(
    renderKubeconfig({
      server: options.https ? server.httpsUrl : server.url,
      clusterName: 'vllm-demo',
      token: options.token ?? ADMIN,
    }),
  );
  return { store, logs, kubeConfig };
}

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'vllm', namespace: 'default', labels: { app: 'vllm' } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'vllm' } },
    template: {
      metadata: { labels: { app: 'vllm' } },
      spec: { containers: [{ name: 'vllm', image: 'vllm/vllm-openai:v0.11.0' }] },
    },
  },
};

describe('Function: startKubeApiServer (with @kubernetes/client-node 1.4)', () => {
  it.each([
    { case: 'plain HTTP', https: false },
    { case: 'HTTPS with a self-signed certificate', https: true },
  ])('creates, scales and reads a Deployment over $case', async ({ https }) => {
    // Prepare
    const { kubeConfig, store } = await start({ https });
    const objects = KubernetesObjectApi.makeApiClient(kubeConfig);
    const apps = kubeConfig.makeApiClient(AppsV1Api);

    // Act
    await objects.create(deployment);
    await apps.patchNamespacedDeploymentScale(
      { name: 'vllm', namespace: 'default', body: { spec: { replicas: 3 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const read = await apps.readNamespacedDeployment({ name: 'vllm', namespace: 'default' });
    const listed = await apps.listNamespacedDeployment({ namespace: 'default', labelSelector: 'app=vllm' });

    // Assess
    expect(read.spec?.replicas).toBe(3);
    expect(listed.items.map((d) => d.metadata?.name)).toEqual(['vllm']);
    expect((store.get('Deployment', 'default', 'vllm')?.spec as { replicas: number }).replicas).toBe(3);
  });

  it('merge-patches a ScaledObject through CustomObjectsApi', async () => {
    // Prepare
    const { kubeConfig, store } = await start({ https: false });
    store.create({
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'ScaledObject',
      metadata: { name: 'vllm', namespace: 'default' },
      spec: {
        scaleTargetRef: { name: 'vllm' },
        triggers: [{ type: 'prometheus', metadata: { serverAddress: 'http://p:9090', query: 'q', threshold: '25' } }],
      },
    });
    const custom = kubeConfig.makeApiClient(CustomObjectsApi);

    // Act
    await custom.patchNamespacedCustomObject(
      {
        group: 'keda.sh',
        version: 'v1alpha1',
        namespace: 'default',
        plural: 'scaledobjects',
        name: 'vllm',
        body: { spec: { maxReplicaCount: 7 } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );

    // Assess
    expect((store.get('ScaledObject', 'default', 'vllm')?.spec as { maxReplicaCount: number }).maxReplicaCount).toBe(7);
  });

  it('reads a Pod log as text', async () => {
    // Prepare
    const { kubeConfig, store, logs } = await start({ https: false });
    store.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'k6-1', namespace: 'default' },
      spec: { containers: [{ name: 'k6', image: 'grafana/k6' }] },
    });
    logs.append('default', 'k6-1', 'running');
    logs.append('default', 'k6-1', '{"http_reqs": 600}');
    const core = kubeConfig.makeApiClient(CoreV1Api);

    // Act
    const text = await core.readNamespacedPodLog({ name: 'k6-1', namespace: 'default', tailLines: 1 });

    // Assess
    expect(text).toBe('{"http_reqs": 600}\n');
  });

  it.each([
    {
      case: '404 for a Deployment that does not exist',
      token: ADMIN,
      act: (apps: AppsV1Api) => apps.readNamespacedDeployment({ name: 'ghost', namespace: 'default' }),
      code: 404,
    },
    {
      case: '409 for a Deployment that exists',
      token: ADMIN,
      act: (apps: AppsV1Api) => apps.createNamespacedDeployment({ namespace: 'default', body: deployment }),
      code: 409,
    },
    {
      case: '403 for a read-only token that deletes',
      token: READ_ONLY,
      act: (apps: AppsV1Api) => apps.deleteNamespacedDeployment({ name: 'vllm', namespace: 'default' }),
      code: 403,
    },
    {
      case: '401 for an unknown token',
      token: 'nope',
      act: (apps: AppsV1Api) => apps.listNamespacedDeployment({ namespace: 'default' }),
      code: 401,
    },
  ])('fails with ApiException $case', async ({ token, act, code }) => {
    // Prepare
    const { kubeConfig, store } = await start({ https: false, token });
    store.create(deployment);
    const apps = kubeConfig.makeApiClient(AppsV1Api);

    // Act
    let thrown: unknown;
    try {
      await act(apps);
    } catch (error) {
      thrown = error;
    }

    // Assess
    expect(thrown).toBeInstanceOf(ApiException);
    expect((thrown as ApiException<unknown>).code).toBe(code);
  });
});
