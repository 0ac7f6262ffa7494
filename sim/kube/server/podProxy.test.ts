import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeNotFoundError, KubeUnavailableError } from '../../../shared/kube/index.js';
import { KubeClusterClient } from '../../../shared/kube/connection/index.js';
import { MemoryPodLogStore } from '../logs.js';
import { MemoryObjectStore } from '../store.js';
import { startKubeApiServer, type KubeApiServer } from './startKubeApiServer.js';
import { renderKubeconfig } from './writeKubeconfig.js';

const METRICS = '# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name="m"} 3\n';

let replica: Server;
let api: KubeApiServer;
let client: KubeClusterClient;

function pod(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { containers: [{ name: 'vllm', image: 'vllm/vllm-openai', ports: [{ name: 'http', containerPort: 8000 }] }] },
  };
}

beforeAll(async () => {
  // A replica's server: /metrics as text, /v1/models as JSON.
  replica = createServer((req, res) => {
    if (req.url === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.end(METRICS);
    } else if (req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'm' }] }));
    } else {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"detail":"Not Found"}');
    }
  });
  await new Promise<void>((resolve) => replica.listen(0, '127.0.0.1', resolve));
  const replicaUrl = `http://127.0.0.1:${(replica.address() as AddressInfo).port}`;
  const store = new MemoryObjectStore();
  store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  store.create(pod('running'));
  store.create(pod('starting'));
  api = await startKubeApiServer({
    store,
    logs: new MemoryPodLogStore(),
    clusterName: 'vllm-demo',
    region: 'us-east-2',
    tokens: { admin: ['admin'], readOnly: ['read-only'] },
    podEndpoint: (namespace, name) => (namespace === 'default' && name === 'running' ? replicaUrl : undefined),
  });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(renderKubeconfig({ server: api.url, clusterName: 'vllm-demo', token: 'read-only' }));
  client = new KubeClusterClient(kubeConfig);
});

afterAll(async () => {
  await api.stop();
  replica.closeAllConnections();
  await new Promise<void>((resolve) => replica.close(() => resolve()));
});

describe('Function: startKubeApiServer (the Pod proxy)', () => {
  it.each([
    { case: 'the port number and /metrics (text)', port: 8000, path: '/metrics', expected: METRICS },
    {
      case: 'the port name and /v1/models (JSON)',
      port: 'http',
      path: '/v1/models',
      expected: '{"object":"list","data":[{"id":"m"}]}',
    },
  ])("forwards a GET to the Pod's server by $case, for a read-only user", async ({ port, path, expected }) => {
    // Act
    const body = await client.proxyGet({ namespace: 'default', pod: 'running', port, path });

    // Assess
    expect(body).toBe(expected);
  });

  it.each([
    { case: 'an unknown Pod', pod: 'nope', port: 8000, error: KubeNotFoundError },
    { case: 'a Pod whose server is not running', pod: 'starting', port: 8000, error: KubeUnavailableError },
    { case: 'a port the Pod does not declare', pod: 'running', port: 9400, error: KubeUnavailableError },
  ])('answers $case with a named error', async ({ pod: name, port, error }) => {
    // Act
    const outcome = client.proxyGet({ namespace: 'default', pod: name, port, path: '/metrics' });

    // Assess
    await expect(outcome).rejects.toBeInstanceOf(error);
  });
});
