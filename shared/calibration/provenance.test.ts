import { describe, expect, it } from '@jest/globals';
import { vllmDeployment } from '../kube/manifests/index.js';
import type { KubeObject } from '../kube/index.js';
import { CalibrationTargetNotFoundError } from './errors.js';
import { buildProvenance, canonicalJson, podTemplateHash } from './provenance.js';
import { testInput } from './testing/steps.js';

const input = testInput();
const RUN = {
  executionId: 'arn:aws:states:us-east-2:123456789012:execution:vllm-calibration:run-1',
  executionName: 'run-1',
  startedAt: '2025-06-02T09:00:00.000Z',
  finishedAt: '2025-06-02T09:12:00.000Z',
  input,
  strategy: 'linear',
};

/** The product's own vLLM Deployment for the guide's model, pinned to L40S nodes. */
function guideDeployment(extra: { nodeSelector?: Record<string, string>; maxNumSeqs?: number } = {}): KubeObject {
  return vllmDeployment({
    model: 's3://ai-eks-docs-models-123/Ministral-3-8B-Instruct-2512/',
    servedModelName: 'mistralai/Ministral-3-8B-Instruct-2512',
    maxModelLen: 32768,
    ...extra,
  });
}

function gpuNode(labels: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name: 'ip-10-0-1-17.us-east-2.compute.internal', labels } };
}

describe('Function: buildProvenance', () => {
  it("records the run, the vLLM container's image and args, the GPU and the request shape", () => {
    // Prepare
    const deployment = guideDeployment({
      nodeSelector: { 'nvidia.com/gpu.product': 'NVIDIA-L40S', 'node.kubernetes.io/instance-type': 'g6e.4xlarge' },
    });

    // Act
    const provenance = buildProvenance({ ...RUN, deployment });

    // Assess
    expect(provenance).toMatchObject({
      executionId: RUN.executionId,
      executionName: 'run-1',
      startedAt: RUN.startedAt,
      finishedAt: RUN.finishedAt,
      cluster: 'ai-eks-docs',
      namespace: 'default',
      deployment: 'vllm-inference-app',
      model: 'mistralai/Ministral-3-8B-Instruct-2512',
      image: 'vllm/vllm-openai:v0.11.0',
      gpu: '1 × NVIDIA-L40S (g6e.4xlarge)',
      strategy: 'linear',
      requestShape: { promptTokens: 35, maxTokens: 100 },
    });
    expect(provenance.vllmArgs).toEqual(expect.arrayContaining(['--max-model-len', '32768', '--served-model-name']));
    expect(provenance.podTemplateHash).toMatch(/^[0-9a-f]{16}$/);
  });

  it("names the GPU from the Node's labels when the Pod template does not pin it", () => {
    // Prepare
    const node = gpuNode({
      'nvidia.com/gpu.product': 'NVIDIA-L40S',
      'node.kubernetes.io/instance-type': 'g6e.4xlarge',
    });

    // Act
    const provenance = buildProvenance({ ...RUN, deployment: guideDeployment(), node });

    // Assess
    expect(provenance.gpu).toBe('1 × NVIDIA-L40S (g6e.4xlarge)');
  });

  it('reads a Karpenter node-affinity requirement as a pinned label, and says only what it knows', () => {
    // Prepare
    const deployment: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'vllm-inference-app', namespace: 'default' },
      spec: {
        template: {
          spec: {
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [
                    {
                      matchExpressions: [
                        { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['g5.xlarge'] },
                      ],
                    },
                  ],
                },
              },
            },
            containers: [
              { name: 'sidecar', image: 'fluent/fluent-bit:3' },
              { name: 'server', image: 'vllm/vllm-openai:v0.9.2', args: ['--model', 'm'] },
            ],
          },
        },
      },
    };

    // Act
    const provenance = buildProvenance({ ...RUN, deployment });

    // Assess
    expect(provenance.image).toBe('vllm/vllm-openai:v0.9.2');
    expect(provenance.vllmArgs).toEqual(['--model', 'm']);
    expect(provenance.gpu).toBe('g5.xlarge');
  });

  it('gives no GPU when nothing names one', () => {
    // Prepare
    const deployment = guideDeployment();
    const template = (deployment.spec as { template: { spec: { containers: Array<Record<string, unknown>> } } })
      .template;
    delete template.spec.containers[0]?.resources;

    // Act / Assess
    expect(buildProvenance({ ...RUN, deployment }).gpu).toBeNull();
  });

  it('refuses a Deployment without containers, naming it', () => {
    // Prepare
    const deployment: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'vllm-inference-app' },
      spec: { template: { spec: { containers: [] } } },
    };

    // Act / Assess
    expect(() => buildProvenance({ ...RUN, deployment })).toThrow(CalibrationTargetNotFoundError);
    expect(() => buildProvenance({ ...RUN, deployment })).toThrow(
      'Deployment default/vllm-inference-app has no usable Pod template (spec.template.spec.containers)',
    );
  });
});

describe('Function: podTemplateHash', () => {
  it('is the same for the same template whatever the key order, and changes with the vLLM args', () => {
    // Prepare
    const a = { spec: { containers: [{ name: 'vllm', image: 'x', args: ['--max-num-seqs', '256'] }] }, metadata: {} };
    const reordered = {
      metadata: {},
      spec: { containers: [{ args: ['--max-num-seqs', '256'], image: 'x', name: 'vllm' }] },
    };
    const changed = {
      metadata: {},
      spec: { containers: [{ name: 'vllm', image: 'x', args: ['--max-num-seqs', '128'] }] },
    };

    // Act / Assess
    expect(podTemplateHash(reordered)).toBe(podTemplateHash(a));
    expect(podTemplateHash(changed)).not.toBe(podTemplateHash(a));
  });

  it('tells two rollouts of the product Deployment apart', () => {
    // Prepare
    const spec = (d: KubeObject) => (d.spec as { template: unknown }).template;

    // Act / Assess
    expect(podTemplateHash(spec(guideDeployment()))).toBe(podTemplateHash(spec(guideDeployment())));
    expect(podTemplateHash(spec(guideDeployment({ maxNumSeqs: 128 })))).not.toBe(
      podTemplateHash(spec(guideDeployment())),
    );
  });
});

describe('Function: canonicalJson', () => {
  it('sorts keys at every level and drops undefined fields', () => {
    // Act / Assess
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: undefined, x: null }], c: 'v' } })).toBe(
      '{"a":{"c":"v","d":[2,{"x":null,"z":1}]},"b":1}',
    );
  });
});
