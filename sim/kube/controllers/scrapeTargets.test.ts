import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../types.js';
import { computeScrapeTargets, type ScrapeWorld } from './scrapeTargets.js';
import { dcgmExporterDaemonSet, vllmService, vllmServiceMonitor } from './testWorld.js';

const GPU_NODES = ['ip-10-0-17-1.us-east-2.compute.internal', 'ip-10-0-17-2.us-east-2.compute.internal'];

function node(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name } };
}

function pod(
  name: string,
  options: { app: string; node: string; ready?: boolean; namespace?: string; owner?: KubeObject; image?: string },
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: options.namespace ?? 'default',
      labels: { app: options.app },
      ...(options.owner
        ? {
            ownerReferences: [
              {
                apiVersion: 'apps/v1',
                kind: options.owner.kind,
                name: options.owner.metadata.name,
                uid: 'u',
                controller: true,
              },
            ],
          }
        : {}),
    },
    spec: {
      nodeName: options.node,
      containers: [
        {
          name: options.image ? 'exporter' : 'vllm',
          image: options.image ?? 'vllm/vllm-openai:v0.11.0',
          ports: [{ name: 'http', containerPort: 8000 }],
        },
      ],
    },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: options.ready === false ? 'False' : 'True' }] },
  };
}

function world(objects: { pods?: KubeObject[]; services?: KubeObject[]; serviceMonitors?: KubeObject[] }): ScrapeWorld {
  const vllmPods = (objects.pods ?? []).filter((p) => !p.metadata.ownerReferences);
  return {
    pods: objects.pods ?? [],
    services: objects.services ?? [],
    serviceMonitors: objects.serviceMonitors ?? [],
    nodes: [...GPU_NODES.map(node), node('ip-10-0-0-10.us-east-2.compute.internal')],
    podAddress: (namespace, name) => {
      const index = vllmPods.findIndex((p) => p.metadata.namespace === namespace && p.metadata.name === name);
      return index >= 0 ? `127.0.0.1:${41000 + index}` : undefined;
    },
    // Only GPU nodes run an agent.
    nodeAgentAddress: (name) => (GPU_NODES.includes(name) ? `127.0.0.1:${42000 + GPU_NODES.indexOf(name)}` : undefined),
  };
}

const vllmPods = [
  pod('app-1', { app: 'app', node: GPU_NODES[0] as string }),
  pod('app-2', { app: 'app', node: GPU_NODES[1] as string }),
];
const ds = dcgmExporterDaemonSet();

describe('Function: computeScrapeTargets', () => {
  it.each([
    // The guide's failure mode: no ServiceMonitor, no vLLM metrics.
    { case: 'no ServiceMonitor', services: [vllmService('svc', 'app')], monitors: [], vllm: 0 },
    {
      case: 'a ServiceMonitor selecting the Service',
      services: [vllmService('svc', 'app')],
      monitors: [vllmServiceMonitor('sm', 'app')],
      vllm: 2,
    },
    {
      case: 'a ServiceMonitor selecting other labels',
      services: [vllmService('svc', 'app')],
      monitors: [vllmServiceMonitor('sm', 'other')],
      vllm: 0,
    },
    // A ServiceMonitor looks only in its own namespace unless namespaceSelector says otherwise.
    {
      case: 'a ServiceMonitor in another namespace',
      services: [vllmService('svc', 'app')],
      monitors: [vllmServiceMonitor('sm', 'app', { namespace: 'monitoring' })],
      vllm: 0,
    },
    {
      case: 'namespaceSelector.matchNames',
      services: [vllmService('svc', 'app')],
      monitors: [
        vllmServiceMonitor('sm', 'app', { namespace: 'monitoring', namespaceSelector: { matchNames: ['default'] } }),
      ],
      vllm: 2,
    },
    {
      case: 'namespaceSelector.any',
      services: [vllmService('svc', 'app')],
      monitors: [vllmServiceMonitor('sm', 'app', { namespace: 'monitoring', namespaceSelector: { any: true } })],
      vllm: 2,
    },
    // The endpoint must name a port of the Service.
    {
      case: 'an endpoint port the Service lacks',
      services: [vllmService('svc', 'app')],
      monitors: [vllmServiceMonitor('sm', 'app', { port: 'metrics' })],
      vllm: 0,
    },
    // Two ServiceMonitors for the same Service do not scrape twice.
    {
      case: 'two ServiceMonitors for one Service',
      services: [vllmService('svc', 'app')],
      monitors: [vllmServiceMonitor('sm', 'app'), vllmServiceMonitor('sm2', 'app')],
      vllm: 2,
    },
  ])('vllm job: $case → $vllm targets', ({ services, monitors, vllm }) => {
    // Act
    const targets = computeScrapeTargets(world({ pods: vllmPods, services, serviceMonitors: monitors }));

    // Assess
    expect(targets.vllm).toHaveLength(vllm);
  });

  it('labels vLLM targets as the Prometheus Operator does and leaves out Pods that are not Ready', () => {
    // Prepare
    const pods = [...vllmPods, pod('app-3', { app: 'app', node: GPU_NODES[0] as string, ready: false })];

    // Act
    const targets = computeScrapeTargets(
      world({ pods, services: [vllmService('svc', 'app')], serviceMonitors: [vllmServiceMonitor('sm', 'app')] }),
    );

    // Assess
    expect(targets.vllm).toEqual([
      {
        targets: ['127.0.0.1:41000'],
        labels: { namespace: 'default', pod: 'app-1', service: 'svc', container: 'vllm', endpoint: 'http' },
      },
      {
        targets: ['127.0.0.1:41001'],
        labels: { namespace: 'default', pod: 'app-2', service: 'svc', container: 'vllm', endpoint: 'http' },
      },
    ]);
  });

  it.each([
    // Without the DaemonSet's Pods, GPU nodes export nothing to the dcgm job; cAdvisor is always there.
    { case: 'no dcgm-exporter DaemonSet', exporters: [], dcgm: 0 },
    {
      case: 'a ready exporter Pod on one GPU node',
      exporters: [
        pod('dcgm-a', {
          app: 'nvidia-dcgm-exporter',
          namespace: 'gpu-operator',
          node: GPU_NODES[0] as string,
          owner: ds,
          image: 'nvcr.io/nvidia/k8s/dcgm-exporter:4.4.2',
        }),
      ],
      dcgm: 1,
    },
    {
      case: 'an exporter Pod that is not Ready',
      exporters: [
        pod('dcgm-a', {
          app: 'nvidia-dcgm-exporter',
          namespace: 'gpu-operator',
          node: GPU_NODES[0] as string,
          owner: ds,
          image: 'nvcr.io/nvidia/k8s/dcgm-exporter:4.4.2',
          ready: false,
        }),
      ],
      dcgm: 0,
    },
    {
      case: 'a DaemonSet Pod of another image',
      exporters: [
        pod('other-a', {
          app: 'x',
          namespace: 'gpu-operator',
          node: GPU_NODES[0] as string,
          owner: ds,
          image: 'nvcr.io/nvidia/k8s-device-plugin:v0.17',
        }),
      ],
      dcgm: 0,
    },
  ])('dcgm-exporter job: $case → $dcgm targets', ({ exporters, dcgm }) => {
    // Act
    const targets = computeScrapeTargets(world({ pods: [...vllmPods, ...exporters] }));

    // Assess
    expect(targets['dcgm-exporter']).toHaveLength(dcgm);
    expect(targets['kubelet-cadvisor']).toEqual(
      GPU_NODES.map((name, i) => ({
        targets: [`127.0.0.1:${42000 + i}`],
        labels: { service: 'kubelet', endpoint: 'https-metrics', node: name },
      })),
    );
  });

  it('labels a dcgm target with the exporter namespace, the DaemonSet (no Service) and the node', () => {
    // Prepare
    const exporter = pod('dcgm-a', {
      app: 'nvidia-dcgm-exporter',
      namespace: 'gpu-operator',
      node: GPU_NODES[1] as string,
      owner: ds,
      image: 'nvcr.io/nvidia/k8s/dcgm-exporter:4.4.2',
    });

    // Act
    const targets = computeScrapeTargets(world({ pods: [exporter] }));

    // Assess
    expect(targets['dcgm-exporter']).toEqual([
      {
        targets: ['127.0.0.1:42001'],
        labels: { namespace: 'gpu-operator', service: 'nvidia-dcgm-exporter', node: GPU_NODES[1] },
      },
    ]);
  });
});
