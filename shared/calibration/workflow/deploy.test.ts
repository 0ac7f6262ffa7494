import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClusterClient } from '../../kube/connection/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../kube/testing/fakeApiServer.js';
import type { LoggerPort } from '../../log/index.js';
import { CalibrationInputInvalidError } from '../errors.js';
import { parseCalibrationInput } from '../input.js';
import { deploy } from './deploy.js';

// Deploy's bounds that only the cluster knows: refused before the first write (no shadow copy, mark, pause or scale).

const DEPLOYMENT_PATH = '/apis/apps/v1/namespaces/default/deployments/vllm-inference-app';
const SO_PATH = '/apis/keda.sh/v1alpha1/namespaces/default/scaledobjects/vllm-inference-app';
const EXECUTION = {
  id: 'arn:aws:states:us-east-2:1:execution:c:run-1',
  name: 'run-1',
  startTime: '2026-12-03T00:00:00Z',
};
const silent = { debug() {}, info() {}, warn() {}, error() {} } as unknown as LoggerPort;

function deployment(args: string[]): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'vllm-inference-app', namespace: 'default' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'vllm' } },
      template: {
        metadata: { labels: { app: 'vllm' } },
        spec: { containers: [{ name: 'vllm', image: 'vllm/vllm-openai', args }] },
      },
    },
  };
}

function scaledObject(maxReplicaCount?: number): Record<string, unknown> {
  return {
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'ScaledObject',
    metadata: { name: 'vllm-inference-app', namespace: 'default' },
    spec: {
      scaleTargetRef: { name: 'vllm-inference-app' },
      ...(maxReplicaCount === undefined ? {} : { maxReplicaCount }),
      triggers: [],
    },
  };
}

function input(over: Record<string, unknown>) {
  return parseCalibrationInput({
    target: {
      cluster: 'ai-eks',
      region: 'us-east-2',
      namespace: 'default',
      deployment: 'vllm-inference-app',
      model: 'm',
      ampWorkspaceUrl: 'https://aps-workspaces.us-east-2.amazonaws.com/workspaces/ws-1',
    },
    ...over,
  });
}

describe('Function: deploy (bounds the cluster knows)', () => {
  let api: FakeApiServer;
  let client: KubeClusterClient;

  beforeAll(async () => {
    api = await startFakeApiServer();
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'fake', server: api.url, skipTLSVerify: true }],
      users: [{ name: 'tester', token: 'test-token' }],
      contexts: [{ name: 'fake', cluster: 'fake', user: 'tester' }],
      currentContext: 'fake',
    });
    client = new KubeClusterClient(kubeConfig);
  });

  afterAll(() => api.stop());

  beforeEach(() => {
    api.objects.clear();
    api.requests.length = 0;
  });

  const ports = () => ({
    cluster: () => Promise.resolve(client),
    metricsSource: () => {
      throw new Error('Deploy measured the background before refusing');
    },
    clock: { now: () => 0 },
    logger: silent,
  });

  it.each([
    {
      case: 'shadow: testReplicas above the ScaledObject maxReplicaCount',
      objects: { [DEPLOYMENT_PATH]: deployment(['--model', 'm']), [SO_PATH]: scaledObject(5) },
      over: { testReplicas: 6 },
      says: ["testReplicas: 6 is above ScaledObject vllm-inference-app's maxReplicaCount (5)"],
    },
    {
      case: "adopt: a request longer than the Deployment's --max-model-len",
      objects: { [DEPLOYMENT_PATH]: deployment(['--model', 'm', '--max-model-len=2048']) },
      over: { deploy: { mode: 'adopt' }, request: { promptTokens: 2000, maxTokens: 100 } },
      says: ['request.maxTokens: promptTokens + maxTokens = 2100 tokens exceeds --max-model-len 2048'],
    },
    {
      case: 'adopt: both at once, KEDA default maxReplicaCount 100 when unset',
      objects: {
        [DEPLOYMENT_PATH]: deployment(['--max-model-len', '1024']),
        [SO_PATH]: scaledObject(),
      },
      over: { deploy: { mode: 'adopt' }, testReplicas: 64, request: { promptTokens: 1000, maxTokens: 100 } },
      says: ['request.maxTokens: promptTokens + maxTokens = 1100'],
    },
    {
      case: 'shadow: testReplicas above maxReplicaCount 1 (and the copy is not made)',
      objects: { [DEPLOYMENT_PATH]: deployment(['--max-model-len', '8192']), [SO_PATH]: scaledObject(1) },
      over: { testReplicas: 2 },
      says: ['testReplicas: 2 is above', '(1)'],
    },
  ])('$case: refused, nothing written', async ({ objects, over, says }) => {
    // Prepare
    for (const [path, object] of Object.entries(objects))
      api.objects.set(path, structuredClone(object) as Record<string, unknown>);
    const before = JSON.stringify([...api.objects.entries()]);

    // Act
    const refused = await deploy(ports(), { input: input(over), execution: EXECUTION }).catch(
      (error: unknown) => error,
    );

    // Assess
    expect(refused).toBeInstanceOf(CalibrationInputInvalidError);
    for (const text of says) expect((refused as Error).message).toContain(text);
    expect((refused as Error).message.split('\n')).toHaveLength(1);
    expect(api.requests.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(JSON.stringify([...api.objects.entries()])).toBe(before);
  });
});
