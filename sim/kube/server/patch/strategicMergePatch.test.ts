import { describe, expect, it } from '@jest/globals';
import { KubeApiBadRequestError } from '../../errors.js';
import { builtInListStrategies, customResourceListStrategies } from './listStrategies.js';
import { applyStrategicMergePatch } from './strategicMergePatch.js';

const deployment = () => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'vllm', finalizers: ['a', 'b'], labels: { app: 'vllm' } },
  spec: {
    replicas: 1,
    template: {
      spec: {
        containers: [
          {
            name: 'vllm',
            image: 'vllm:0.9',
            args: ['--max-num-seqs', '256'],
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '2' },
            ],
            ports: [{ containerPort: 8000, name: 'http' }],
          },
          { name: 'sidecar', image: 'busybox' },
        ],
        tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' }],
        volumes: [{ name: 'cache', emptyDir: {} }],
      },
    },
  },
  status: {
    conditions: [
      { type: 'Available', status: 'False' },
      { type: 'Progressing', status: 'True' },
    ],
  },
});

const lists = builtInListStrategies('Deployment');
type Dep = ReturnType<typeof deployment>;
const patchDeployment = (patch: unknown) => applyStrategicMergePatch(deployment(), patch, lists) as Dep;
const podSpec = (d: Dep) => d.spec.template.spec;

describe('Function: applyStrategicMergePatch', () => {
  it('merges containers by name: a changed image keeps the other fields and containers', () => {
    // Act
    const result = patchDeployment({
      spec: { template: { spec: { containers: [{ name: 'vllm', image: 'vllm:0.11' }] } } },
    });

    // Assess
    expect(podSpec(result).containers.map((c) => [c.name, c.image])).toEqual([
      ['vllm', 'vllm:0.11'],
      ['sidecar', 'busybox'],
    ]);
    expect(podSpec(result).containers[0]?.args).toEqual(['--max-num-seqs', '256']);
  });

  it('appends a container whose name is new', () => {
    // Act
    const result = patchDeployment({
      spec: { template: { spec: { containers: [{ name: 'exporter', image: 'dcgm' }] } } },
    });

    // Assess
    expect(podSpec(result).containers.map((c) => c.name)).toEqual(['vllm', 'sidecar', 'exporter']);
  });

  it('merges env by name inside a container and replaces args whole', () => {
    // Act
    const result = patchDeployment({
      spec: {
        template: {
          spec: {
            containers: [
              {
                name: 'vllm',
                env: [
                  { name: 'B', value: '3' },
                  { name: 'C', value: '4' },
                ],
                args: ['--x'],
              },
            ],
          },
        },
      },
    });

    // Assess
    const vllm = podSpec(result).containers[0];
    expect(vllm?.env).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: '3' },
      { name: 'C', value: '4' },
    ]);
    expect(vllm?.args).toEqual(['--x']);
  });

  it('merges container ports by containerPort', () => {
    // Act
    const result = patchDeployment({
      spec: {
        template: { spec: { containers: [{ name: 'vllm', ports: [{ containerPort: 8000, protocol: 'TCP' }] }] } },
      },
    });

    // Assess
    expect(podSpec(result).containers[0]?.ports).toEqual([{ containerPort: 8000, name: 'http', protocol: 'TCP' }]);
  });

  it('replaces tolerations whole (they have no merge key)', () => {
    // Act
    const result = patchDeployment({
      spec: { template: { spec: { tolerations: [{ key: 'x', operator: 'Exists' }] } } },
    });

    // Assess
    expect(podSpec(result).tolerations).toEqual([{ key: 'x', operator: 'Exists' }]);
  });

  it.each([
    {
      case: '$patch: delete on a list element removes it',
      patch: { spec: { template: { spec: { containers: [{ name: 'sidecar', $patch: 'delete' }] } } } },
      want: ['vllm'],
    },
    {
      case: 'a {$patch: replace} element replaces the list',
      patch: { spec: { template: { spec: { containers: [{ $patch: 'replace' }, { name: 'only', image: 'x' }] } } } },
      want: ['only'],
    },
  ])('$case', ({ patch, want }) => {
    // Act
    const result = patchDeployment(patch);

    // Assess
    expect(podSpec(result).containers.map((c) => c.name)).toEqual(want);
  });

  it.each([
    {
      case: '$patch: replace on a map replaces it',
      patch: { metadata: { labels: { tier: 'gpu', $patch: 'replace' } } },
      want: { tier: 'gpu' },
    },
    {
      case: '$patch: delete on a map removes it',
      patch: { metadata: { labels: { $patch: 'delete' } } },
      want: undefined,
    },
    { case: 'null removes a key', patch: { metadata: { labels: { app: null, x: 'y' } } }, want: { x: 'y' } },
  ])('$case', ({ patch, want }) => {
    // Act
    const result = patchDeployment(patch) as Dep & { metadata: { labels?: unknown } };

    // Assess
    expect(result.metadata.labels).toEqual(want);
  });

  it('orders a merged list by $setElementOrder', () => {
    // Act
    const result = patchDeployment({
      spec: {
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'vllm' }],
            containers: [{ name: 'vllm', image: 'vllm:0.11' }],
          },
        },
      },
    });

    // Assess
    expect(podSpec(result).containers.map((c) => c.name)).toEqual(['sidecar', 'vllm']);
    expect(JSON.stringify(result)).not.toContain('$setElementOrder');
  });

  it('merges finalizers as a set and removes values with $deleteFromPrimitiveList', () => {
    // Act
    const result = patchDeployment({
      metadata: { finalizers: ['b', 'c'], '$deleteFromPrimitiveList/finalizers': ['a'] },
    });

    // Assess
    expect(result.metadata.finalizers).toEqual(['b', 'c']);
  });

  it('keeps only the $retainKeys of a map (a volume switching its source)', () => {
    // Act
    const result = patchDeployment({
      spec: {
        template: {
          spec: { volumes: [{ name: 'cache', $retainKeys: ['name', 'hostPath'], hostPath: { path: '/models' } }] },
        },
      },
    });

    // Assess
    expect(podSpec(result).volumes).toEqual([{ name: 'cache', hostPath: { path: '/models' } }]);
  });

  it('merges status conditions by type', () => {
    // Act
    const result = patchDeployment({ status: { conditions: [{ type: 'Available', status: 'True' }] } });

    // Assess
    expect(result.status.conditions).toEqual([
      { type: 'Available', status: 'True' },
      { type: 'Progressing', status: 'True' },
    ]);
  });

  it('merges Service ports by port', () => {
    // Prepare
    const service = {
      spec: {
        ports: [
          { port: 8000, name: 'http' },
          { port: 9400, name: 'metrics' },
        ],
      },
    };

    // Act
    const result = applyStrategicMergePatch(
      service,
      { spec: { ports: [{ port: 8000, targetPort: 8080 }] } },
      builtInListStrategies('Service'),
    );

    // Assess
    expect(result).toEqual({
      spec: {
        ports: [
          { port: 8000, name: 'http', targetPort: 8080 },
          { port: 9400, name: 'metrics' },
        ],
      },
    });
  });

  it('replaces the lists of a custom resource whole', () => {
    // Prepare
    const so = {
      spec: {
        triggers: [
          { type: 'prometheus', name: 'a' },
          { type: 'cpu', name: 'b' },
        ],
      },
    };

    // Act
    const result = applyStrategicMergePatch(
      so,
      { spec: { triggers: [{ type: 'prometheus', name: 'a2' }] } },
      customResourceListStrategies,
    );

    // Assess
    expect(result).toEqual({ spec: { triggers: [{ type: 'prometheus', name: 'a2' }] } });
  });

  it.each([
    {
      case: 'a list element without its merge key',
      patch: { spec: { template: { spec: { containers: [{ image: 'x' }] } } } },
      message: 'does not contain declared merge key: name',
    },
    { case: 'an unknown $patch', patch: { metadata: { $patch: 'explode' } }, message: 'Unknown patch type' },
    { case: 'a patch that is not an object', patch: ['x'], message: 'must be a JSON object' },
  ])('answers 400 for $case', ({ patch, message }) => {
    // Act
    const act = () => patchDeployment(patch);

    // Assess
    expect(act).toThrow(KubeApiBadRequestError);
    expect(act).toThrow(message);
  });
});
