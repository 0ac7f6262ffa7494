import { describe, expect, it } from '@jest/globals';
import { loadProfile } from '../../profile/loadProfile.js';
import { gpuNode, NODE_FACTS, systemNode } from './nodes.js';
import { gpuUnschedulableMessage, nodeMismatch } from './scheduling.js';

const profile = await loadProfile('demo');
const gpu = gpuNode('ip-10-0-17-42.us-east-2.compute.internal', 'us-east-2', profile);
const system = systemNode('us-east-2');
const tolerateGpu = [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }];

describe('Function: nodeMismatch', () => {
  it.each([
    // The gpu-operator's dcgm-exporter: GFD label + toleration of the GPU taint.
    {
      case: 'dcgm-exporter on a GPU node',
      spec: { nodeSelector: { 'nvidia.com/gpu.present': 'true' }, tolerations: tolerateGpu },
      node: gpu,
      fits: true,
    },
    {
      case: 'dcgm-exporter on the system node',
      spec: { nodeSelector: { 'nvidia.com/gpu.present': 'true' }, tolerations: tolerateGpu },
      node: system,
      fits: false,
    },
    // The GPU NodePool's taint keeps Pods without the toleration away.
    {
      case: 'no toleration on a GPU node',
      spec: { nodeSelector: { 'nvidia.com/gpu.present': 'true' } },
      node: gpu,
      fits: false,
    },
    { case: 'no selector on the system node', spec: {}, node: system, fits: true },
    // The guide's Karpenter selector key for the DCGM exporter.
    {
      case: 'Karpenter label selector',
      spec: { nodeSelector: { 'karpenter.k8s.aws/instance-gpu-manufacturer': 'nvidia' }, tolerations: tolerateGpu },
      node: gpu,
      fits: true,
    },
    {
      case: 'required node affinity Gt',
      spec: {
        tolerations: tolerateGpu,
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4'] }] },
              ],
            },
          },
        },
      },
      node: gpu,
      fits: true,
    },
    {
      case: 'required node affinity NotIn',
      spec: {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'eks.amazonaws.com/nodegroup', operator: 'NotIn', values: ['system'] }] },
              ],
            },
          },
        },
      },
      node: system,
      fits: false,
    },
  ])('$case', ({ spec, node, fits }) => {
    // Act
    const reason = nodeMismatch(spec, node);

    // Assess
    if (fits) expect(reason).toBeUndefined();
    else expect(reason).toEqual(expect.any(String));
  });

  it('names the untolerated taint', () => {
    // Act
    const reason = nodeMismatch({}, gpu);

    // Assess
    expect(reason).toBe('untolerated taint nvidia.com/gpu:NoSchedule');
  });
});

describe('Function: gpuUnschedulableMessage', () => {
  const gpu2 = gpuNode('ip-10-0-18-7.us-east-2.compute.internal', 'us-east-2', profile);
  const disrupted = {
    ...gpu2,
    spec: {
      ...(gpu2.spec as object),
      taints: [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }, NODE_FACTS.disruptedTaint],
    },
  };

  it.each([
    // What a vLLM Pod sees at the NodePool's limit: the system node has no GPU, each GPU node's one GPU is taken.
    {
      case: 'every GPU taken',
      spec: { tolerations: tolerateGpu },
      nodes: [
        { node: system, gpusInUse: 0 },
        { node: gpu, gpusInUse: 1 },
        { node: gpu2, gpusInUse: 1 },
      ],
      message:
        '0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: ' +
        '1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.',
    },
    // TaintToleration runs before NodeResourcesFit, and an untolerated taint is not something preemption resolves.
    {
      case: 'no toleration of the GPU taint',
      spec: {},
      nodes: [
        { node: system, gpusInUse: 0 },
        { node: gpu, gpusInUse: 1 },
        { node: gpu2, gpusInUse: 1 },
      ],
      message:
        '0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint {nvidia.com/gpu: }. ' +
        'preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.',
    },
    // A GPU node whose Pod is gone carries Karpenter's disruption taint until it is terminated.
    {
      case: 'a GPU node being terminated',
      spec: { tolerations: tolerateGpu },
      nodes: [
        { node: system, gpusInUse: 0 },
        { node: gpu, gpusInUse: 1 },
        { node: disrupted, gpusInUse: 0 },
      ],
      message:
        '0/3 nodes are available: 1 node(s) had untolerated taint {karpenter.sh/disrupted: }, 2 Insufficient ' +
        'nvidia.com/gpu. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, ' +
        '2 Preemption is not helpful for scheduling.',
    },
    // NodeAffinity runs before NodeResourcesFit.
    {
      case: 'a nodeSelector no node matches',
      spec: { tolerations: tolerateGpu, nodeSelector: { 'nvidia.com/gpu.product': 'NVIDIA-H100' } },
      nodes: [
        { node: system, gpusInUse: 0 },
        { node: gpu, gpusInUse: 1 },
      ],
      message:
        "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. " +
        'preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.',
    },
  ])('words $case as kube-scheduler does', ({ spec, nodes, message }) => {
    // Act
    const text = gpuUnschedulableMessage(spec, nodes);

    // Assess
    expect(text).toBe(message);
  });
});
