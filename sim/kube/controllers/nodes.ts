import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import type { Profile } from '../../profile/profile.js';
import type { KubeObject } from '../types.js';

/** The EKS/Karpenter world the twin's nodes pretend to live in (the AWS guide's cluster). */
export const NODE_FACTS = {
  kubeletVersion: 'v1.35.0-eks-3025e55',
  containerRuntimeVersion: 'containerd://2.1.4',
  osImage: 'Amazon Linux 2023.9.20251208',
  kernelVersion: '6.12.55-74.119.amzn2023.x86_64',
  /** One NVIDIA L40S, 16 vCPU, 128 GiB: the guide's GPU node. */
  gpuInstanceType: 'g6e.4xlarge',
  gpuNodePool: 'gpu-inf',
  /** The taint Karpenter puts on a node it is about to terminate, so nothing new is scheduled there. */
  disruptedTaint: { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' },
  /** The managed node group that runs the add-ons and the k6 Jobs. */
  systemInstanceType: 'm5.xlarge',
  systemNodeGroup: 'system',
  systemNodeName: (region: string) => `ip-10-0-0-10.${region}.compute.internal`,
} as const;

/** `ip-10-0-17-42.us-east-2.compute.internal` → `10.0.17.42`. */
export function nodeIp(nodeName: string): string {
  const match = /^ip-(\d+)-(\d+)-(\d+)-(\d+)\./.exec(nodeName);
  return match ? `${match[1]}.${match[2]}.${match[3]}.${match[4]}` : '10.0.0.10';
}

/** A fresh GPU node name that `taken` does not hold, in the guide's VPC (10.0.16.0/20 and up: private subnets). */
export function newGpuNodeName(region: string, taken: (name: string) => boolean): string {
  for (;;) {
    const name = `ip-10-0-${randomInt(16, 64)}-${randomInt(2, 255)}.${region}.compute.internal`;
    if (!taken(name)) return name;
  }
}

/**
 * A GPU node as Karpenter launches it for a vLLM Pod (one g6e.4xlarge, one L40S), with the labels that Karpenter,
 * EKS and the NVIDIA GPU feature discovery put on it, the `nvidia.com/gpu:NoSchedule` taint of the guide's NodePool,
 * and `nvidia.com/gpu` capacity 1.
 */
export function gpuNode(name: string, region: string, profile: Profile): KubeObject {
  const zone = zoneOf(name, region);
  const gpuProduct = profile.gpu.model.replace(/\s+/g, '-');
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        ...baseLabels(name, region, zone, NODE_FACTS.gpuInstanceType),
        'karpenter.sh/nodepool': NODE_FACTS.gpuNodePool,
        'karpenter.sh/capacity-type': 'on-demand',
        'karpenter.sh/initialized': 'true',
        'karpenter.sh/registered': 'true',
        'karpenter.k8s.aws/instance-category': 'g',
        'karpenter.k8s.aws/instance-family': 'g6e',
        'karpenter.k8s.aws/instance-generation': '6',
        'karpenter.k8s.aws/instance-size': '4xlarge',
        'karpenter.k8s.aws/instance-cpu': '16',
        'karpenter.k8s.aws/instance-memory': '131072',
        'karpenter.k8s.aws/instance-gpu-count': '1',
        'karpenter.k8s.aws/instance-gpu-manufacturer': 'nvidia',
        'karpenter.k8s.aws/instance-gpu-name': gpuProduct.replace(/^NVIDIA-/, '').toLowerCase(),
        'karpenter.k8s.aws/instance-gpu-memory': String(profile.gpu.memoryMiB),
        // The guide's NodePool template labels.
        guide: 'ai-eks-docs',
        amiFamily: 'al2023',
        // NVIDIA GPU feature discovery (gpu-operator): what the dcgm-exporter DaemonSet selects on.
        'nvidia.com/gpu.present': 'true',
        'nvidia.com/gpu.count': '1',
        'nvidia.com/gpu.product': gpuProduct,
        'nvidia.com/gpu.memory': String(profile.gpu.memoryMiB),
        'nvidia.com/gpu.deploy.dcgm-exporter': 'true',
      },
      annotations: { 'karpenter.sh/nodepool-hash-version': 'v3' },
    },
    spec: {
      providerID: `aws:///${zone}/i-0${randomBytes(8).toString('hex').slice(0, 16)}`,
      taints: [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }],
    },
    status: nodeStatus(name, {
      cpu: '16',
      memory: '130451908Ki',
      pods: '234',
      'ephemeral-storage': '104845292Ki',
      'nvidia.com/gpu': '1',
    }),
  };
}

/** The managed node group's node that runs add-ons and Jobs (k6): no GPU, no taint. */
export function systemNode(region: string): KubeObject {
  const name = NODE_FACTS.systemNodeName(region);
  const zone = zoneOf(name, region);
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        ...baseLabels(name, region, zone, NODE_FACTS.systemInstanceType),
        'eks.amazonaws.com/nodegroup': NODE_FACTS.systemNodeGroup,
        'eks.amazonaws.com/capacityType': 'ON_DEMAND',
      },
    },
    spec: { providerID: `aws:///${zone}/i-0${randomBytes(8).toString('hex').slice(0, 16)}` },
    status: nodeStatus(name, { cpu: '4', memory: '15896988Ki', pods: '58', 'ephemeral-storage': '83873772Ki' }),
  };
}

function baseLabels(name: string, region: string, zone: string, instanceType: string): Record<string, string> {
  return {
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/os': 'linux',
    'kubernetes.io/hostname': name,
    'node.kubernetes.io/instance-type': instanceType,
    'beta.kubernetes.io/instance-type': instanceType,
    'beta.kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'topology.kubernetes.io/region': region,
    'topology.kubernetes.io/zone': zone,
    'failure-domain.beta.kubernetes.io/region': region,
    'failure-domain.beta.kubernetes.io/zone': zone,
  };
}

function zoneOf(name: string, region: string): string {
  const third = Number(/^ip-\d+-\d+-(\d+)-/.exec(name)?.[1] ?? 0);
  return `${region}${'abc'[third % 3] ?? 'a'}`;
}

function nodeStatus(name: string, capacity: Record<string, string>): Record<string, unknown> {
  const ip = nodeIp(name);
  return {
    capacity,
    allocatable: capacity,
    addresses: [
      { type: 'InternalIP', address: ip },
      { type: 'InternalDNS', address: name },
      { type: 'Hostname', address: name },
    ],
    conditions: [
      ['MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
      ['DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
      ['PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
      ['Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'],
    ].map(([type, status, reason, message]) => ({ type, status, reason, message })),
    nodeInfo: {
      architecture: 'amd64',
      bootID: randomUUID(),
      containerRuntimeVersion: NODE_FACTS.containerRuntimeVersion,
      kernelVersion: NODE_FACTS.kernelVersion,
      kubeProxyVersion: NODE_FACTS.kubeletVersion,
      kubeletVersion: NODE_FACTS.kubeletVersion,
      machineID: randomBytes(16).toString('hex'),
      operatingSystem: 'linux',
      osImage: NODE_FACTS.osImage,
      systemUUID: randomUUID(),
    },
  };
}
