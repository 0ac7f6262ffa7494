import { describe, expect, it } from '@jest/globals';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { KubeManifestInputError } from '../errors.js';
import { vllmDeployment } from './vllmDeployment.js';

interface Container {
  name: string;
  image: string;
  args: string[];
  ports: unknown[];
  env?: Array<{ name: string; value: string }>;
  resources: { limits: Record<string, string> };
  startupProbe: { httpGet: unknown; periodSeconds: number; failureThreshold: number };
  readinessProbe: { httpGet?: unknown; exec?: { command?: string[] } };
  lifecycle?: { postStart?: { exec?: { command?: string[] } } };
  volumeMounts?: unknown[];
}
interface DeploymentShape {
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      spec: { containers: Container[]; tolerations?: unknown[]; nodeSelector?: unknown; volumes?: unknown[] };
    };
  };
}

const minimal = { model: 's3://models/Ministral-3-8B-Instruct-2512/', maxModelLen: 8192 };

function render(input: Parameters<typeof vllmDeployment>[0]): DeploymentShape {
  const object = vllmDeployment(input);
  new Deployment(object as never).validate();
  return object as unknown as DeploymentShape;
}

/** `['--a', '1', '--b', '2']` → `{ '--a': '1', '--b': '2' }` */
function flags(args: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < args.length; i += 2) out[args[i] ?? ''] = args[i + 1] ?? '';
  return out;
}

describe('Function: vllmDeployment', () => {
  it("builds a Deployment the official schema accepts, with the guide's names and advice", () => {
    // Act
    const deployment = render(minimal);

    // Assess
    const container = deployment.spec.template.spec.containers[0] as Container;
    expect(deployment.metadata).toMatchObject({ name: 'vllm-inference-app', namespace: 'default' });
    expect(deployment.spec.replicas).toBe(1);
    expect(container.image).toBe('vllm/vllm-openai:v0.11.0');
    expect(flags(container.args)).toEqual({
      '--model': 's3://models/Ministral-3-8B-Instruct-2512/',
      '--served-model-name': 's3://models/Ministral-3-8B-Instruct-2512/',
      '--gpu-memory-utilization': '0.85',
      '--max-model-len': '8192',
      '--port': '8000',
    });
    expect(container.resources.limits).toEqual({ 'nvidia.com/gpu': '1' });
    expect(container.ports).toEqual([{ name: 'http', containerPort: 8000, protocol: 'TCP' }]);
  });

  it('probes GET /health: readiness (warmup off), and a startup probe that allows 15 minutes for the model to load', () => {
    // Act
    const container = render({ ...minimal, warmup: false }).spec.template.spec.containers[0] as Container;

    // Assess
    expect(container.readinessProbe.httpGet).toEqual({ path: '/health', port: 'http' });
    expect(container.lifecycle).toBeUndefined();
    expect(container.startupProbe.httpGet).toEqual({ path: '/health', port: 'http' });
    expect(container.startupProbe.periodSeconds * container.startupProbe.failureThreshold).toBeGreaterThanOrEqual(900);
  });

  it('protects its Pods from Karpenter consolidation and labels them for the Service, the guide and cleanups', () => {
    // Act
    const deployment = render({ ...minimal, name: 'chat' });

    // Assess
    expect(deployment.spec.template.metadata.annotations).toEqual({
      'karpenter.sh/do-not-disrupt': 'true',
      'vllm-eks-pilot.io/warmup-requests': '100',
    });
    expect(deployment.spec.template.metadata.labels).toEqual({
      app: 'chat',
      'app.kubernetes.io/name': 'vllm',
      'app.kubernetes.io/instance': 'chat',
    });
    expect(deployment.spec.selector.matchLabels).toEqual({ app: 'chat' });
    expect(deployment.metadata.labels['app.kubernetes.io/managed-by']).toBe('vllm-eks-pilot');
    expect(deployment.spec.template.spec.tolerations).toEqual([
      { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
    ]);
  });

  describe('warmup', () => {
    it('by default sends 100 warmup requests in a postStart hook and gates readiness on its marker and /health', () => {
      // Act
      const deployment = render(minimal);
      const container = deployment.spec.template.spec.containers[0] as Container;

      // Assess
      const hook = (container.lifecycle?.postStart?.exec?.command ?? []).join(' ');
      expect(hook).toMatch(/range\(100\)/);
      expect(hook).toContain('/v1/completions');
      expect(hook).toContain('/health');
      expect(hook).toMatch(/touch \/tmp\/vllm-warm$/);
      const probe = (container.readinessProbe.exec?.command ?? []).join(' ');
      expect(probe).toContain('test -f /tmp/vllm-warm');
      expect(probe).toContain('/health');
      expect(container.readinessProbe.httpGet).toBeUndefined();
    });

    it.each([
      { case: 'a custom count', warmup: { requests: 20 }, annotation: '20', hook: /range\(20\)/ },
      { case: 'the default count', warmup: {}, annotation: '100', hook: /range\(100\)/ },
    ])('annotates the Pod template with $case', ({ warmup, annotation, hook }) => {
      // Act
      const deployment = render({ ...minimal, warmup });
      const container = deployment.spec.template.spec.containers[0] as Container;

      // Assess
      expect(deployment.spec.template.metadata.annotations['vllm-eks-pilot.io/warmup-requests']).toBe(annotation);
      expect((container.lifecycle?.postStart?.exec?.command ?? []).join(' ')).toMatch(hook);
    });

    it.each([
      { case: 'zero requests', warmup: { requests: 0 }, message: /warmup/ },
      { case: 'true', warmup: true, message: /warmup/ },
      { case: 'an unknown key', warmup: { count: 5 }, message: /warmup/ },
    ])('refuses $case, naming the field', ({ warmup, message }) => {
      // Act
      const act = () => vllmDeployment({ ...minimal, warmup } as never);

      // Assess
      expect(act).toThrow(message);
    });
  });

  it('is deterministic: the same input gives the same object, with no timestamps', () => {
    // Act
    const first = JSON.stringify(vllmDeployment(minimal));
    const second = JSON.stringify(vllmDeployment({ ...minimal }));

    // Assess
    expect(second).toBe(first);
    expect(first).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
  });

  it.each([
    {
      case: 'maxNumSeqs and a served model name',
      input: { ...minimal, maxNumSeqs: 64, servedModelName: 'ministral' },
      expected: { '--max-num-seqs': '64', '--served-model-name': 'ministral' },
    },
    {
      case: 'two GPUs (tensor parallelism)',
      input: { ...minimal, gpus: 2 },
      expected: { '--tensor-parallel-size': '2' },
    },
    {
      case: 'extra vLLM flags',
      input: { ...minimal, extraArgs: ['--load-format', 'runai_streamer'] },
      expected: { '--load-format': 'runai_streamer' },
    },
  ])('passes $case to vLLM', ({ input, expected }) => {
    // Act
    const container = render(input).spec.template.spec.containers[0] as Container;

    // Assess
    expect(flags(container.args)).toMatchObject(expected);
  });

  it('mounts shared memory and asks for every GPU when the model is sharded', () => {
    // Act
    const deployment = render({ ...minimal, gpus: 4 });

    // Assess
    const container = deployment.spec.template.spec.containers[0] as Container;
    expect(container.resources.limits).toEqual({ 'nvidia.com/gpu': '4' });
    expect(container.volumeMounts).toEqual([{ name: 'dshm', mountPath: '/dev/shm' }]);
    expect(deployment.spec.template.spec.volumes).toEqual([{ name: 'dshm', emptyDir: { medium: 'Memory' } }]);
  });

  it('leaves replicas out when asked, so re-applying does not undo what KEDA scaled to', () => {
    // Act
    const deployment = render({ ...minimal, replicas: null });

    // Assess
    expect(deployment.spec).not.toHaveProperty('replicas');
  });

  it.each([
    {
      case: 'no maxModelLen',
      input: { model: 'm' },
      message: /maxModelLen: is required: the longest prompt \+ output/,
    },
    { case: 'no model', input: { maxModelLen: 4096 }, message: /model: is required/ },
    {
      case: 'a misspelt key',
      input: { ...minimal, maxModelLength: 4096 },
      message: /Unrecognized key: "maxModelLength"/,
    },
    {
      case: 'gpuMemoryUtilization above 1',
      input: { ...minimal, gpuMemoryUtilization: 1.5 },
      message: /gpuMemoryUtilization: must be <= 1/,
    },
    {
      case: 'an upper-case name',
      input: { ...minimal, name: 'VLLM' },
      message: /name: "VLLM" is not valid; accepted: a DNS-1123 label/,
    },
    {
      case: 'a bad toleration effect',
      input: { ...minimal, tolerations: [{ key: 'x', effect: 'Never' }] },
      message: /tolerations\[0\]\.effect: /,
    },
  ])('refuses $case, naming the field', ({ input, message }) => {
    // Act
    const act = () => vllmDeployment(input as never);

    // Assess
    expect(act).toThrow(KubeManifestInputError);
    expect(act).toThrow(message);
  });
});
