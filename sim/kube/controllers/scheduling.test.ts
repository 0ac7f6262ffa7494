import { describe, expect, it } from '@jest/globals';
import { loadProfile } from '../../profile/loadProfile.js';
import { gpuNode, systemNode } from './nodes.js';
import { nodeMismatch } from './scheduling.js';

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
