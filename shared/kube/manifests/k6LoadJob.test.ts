import { describe, expect, it } from '@jest/globals';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { KubeManifestInputError } from '../errors.js';
import { k6LoadJob } from './k6LoadJob.js';

type JobShape = {
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  spec: {
    backoffLimit: number;
    ttlSecondsAfterFinished: number;
    activeDeadlineSeconds: number;
    template: {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      spec: {
        restartPolicy: string;
        containers: Array<{
          args: string[];
          ports: unknown[];
          env: Array<{ name: string; value: string }>;
          volumeMounts: unknown[];
        }>;
        volumes: unknown[];
      };
    };
  };
};

const minimal = { targetUrl: 'http://vllm-inference-svc.default.svc:8000', model: 'ministral', rate: 40 };

/** The Pod spec of a Job, loosely typed: the fields the k6 Pod settings render. */
type PodSpec = {
  nodeSelector?: Record<string, string>;
  tolerations?: unknown[];
  imagePullSecrets?: Array<{ name: string }>;
  containers: Array<{ image: string; resources: unknown; env: Array<{ name: string; value: string }> }>;
};
const podOf = (job: unknown) => (job as { spec: { template: { spec: PodSpec } } }).spec.template.spec;

describe('Function: k6LoadJob', () => {
  it('runs grafana/k6 with resources that keep k6 from starving, and no placement by default', () => {
    // Act
    const pod = podOf(k6LoadJob(minimal));

    // Assess
    expect(pod.containers[0]?.image).toBe('grafana/k6:0.54.0');
    expect(pod.containers[0]?.resources).toEqual({ requests: { cpu: '1', memory: '1Gi' }, limits: { memory: '2Gi' } });
    expect(pod.nodeSelector).toBeUndefined();
    expect(pod.tolerations).toBeUndefined();
    expect(pod.imagePullSecrets).toBeUndefined();
  });

  it('renders the image, resources, nodeSelector, tolerations and imagePullSecrets it is given', () => {
    // Act
    const job = k6LoadJob({
      ...minimal,
      pod: {
        image: '123456789012.dkr.ecr.us-east-2.amazonaws.com/k6-sse:0.54.0',
        resources: { requests: { cpu: '2', memory: '2Gi' }, limits: { cpu: '4', memory: '4Gi' } },
        nodeSelector: { 'karpenter.sh/nodepool': 'load' },
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'load', effect: 'NoSchedule' }],
        imagePullSecrets: ['ecr-pull'],
      },
    });

    // Assess
    new Job(job as never).validate();
    const pod = podOf(job);
    expect(pod.containers[0]).toMatchObject({
      image: '123456789012.dkr.ecr.us-east-2.amazonaws.com/k6-sse:0.54.0',
      resources: { requests: { cpu: '2', memory: '2Gi' }, limits: { cpu: '4', memory: '4Gi' } },
    });
    expect(pod.nodeSelector).toEqual({ 'karpenter.sh/nodepool': 'load' });
    expect(pod.tolerations).toEqual([{ key: 'dedicated', operator: 'Equal', value: 'load', effect: 'NoSchedule' }]);
    expect(pod.imagePullSecrets).toEqual([{ name: 'ecr-pull' }]);
  });

  it.each([
    // Each case: a bad Pod setting, and the field its error names.
    {
      case: 'a pull Secret that is no Kubernetes name',
      pod: { imagePullSecrets: ['ECR_Pull'] },
      field: 'pod.imagePullSecrets[0]',
    },
    {
      case: 'a CPU that is no quantity',
      pod: { resources: { requests: { cpu: 'two' } } },
      field: 'pod.resources.requests.cpu',
    },
    {
      case: 'a node selector key with a space',
      pod: { nodeSelector: { 'node pool': 'x' } },
      field: 'pod.nodeSelector',
    },
  ])('refuses $case, naming the field', ({ pod, field }) => {
    // Act
    const build = () => k6LoadJob({ ...minimal, pod: pod });

    // Assess
    expect(build).toThrow(KubeManifestInputError);
    expect(build).toThrow(field);
  });

  it('sends a request mix as JSON instead of the fixed lengths, and asks to stream', () => {
    // Prepare
    const requestMix = {
      seed: 3,
      prompt: { distribution: 'uniform' as const, min: 10, max: 20 },
      output: { distribution: 'fixed' as const, tokens: 64 },
    };

    // Act
    const env = Object.fromEntries(
      (podOf(k6LoadJob({ ...minimal, requestMix, stream: true })).containers[0]?.env ?? []).map((e) => [
        e.name,
        e.value,
      ]),
    );

    // Assess
    expect(JSON.parse(env['VLLM_PILOT_REQUEST_MIX'] ?? '')).toEqual(requestMix);
    expect(env['VLLM_PILOT_STREAM']).toBe('true');
    expect(env['VLLM_PILOT_PROMPT_TOKENS']).toBeUndefined();
    expect(env['VLLM_PILOT_MAX_TOKENS']).toBeUndefined();
  });

  it("runs one load step like the guide's: constant arrival rate for 60 s, 50 VUs pre-allocated, at most 500", () => {
    // Act
    const job = k6LoadJob({
      ...minimal,
      name: 'vllm-pilot-load-40',
      labels: { 'vllm-pilot/execution': 'run-42' },
    }) as unknown as JobShape;

    // Assess
    new Job(job as never).validate();
    const env = Object.fromEntries((job.spec.template.spec.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
    expect(env).toMatchObject({
      VLLM_PILOT_EXECUTOR: 'constant-arrival-rate',
      VLLM_PILOT_RATE: '40',
      VLLM_PILOT_DURATION_SECONDS: '60',
      VLLM_PILOT_PRE_ALLOCATED_VUS: '50',
      VLLM_PILOT_MAX_VUS: '500',
    });
    expect(job.spec).toMatchObject({ backoffLimit: 0, ttlSecondsAfterFinished: 3600 });
    expect(job.spec.template.spec.restartPolicy).toBe('Never');
    expect(job.spec.template.spec.containers[0]?.volumeMounts).toEqual([
      { name: 'script', mountPath: '/scripts', readOnly: true },
    ]);
    expect(job.spec.template.spec.volumes).toEqual([{ name: 'script', configMap: { name: 'vllm-pilot-k6-script' } }]);
  });

  it("serves k6's REST API on the Pod's address and declares its port, so the calibration reads live metrics", () => {
    // Act
    const container = (k6LoadJob(minimal) as unknown as JobShape).spec.template.spec.containers[0];

    // Assess: localhost (k6's default) would be out of the API server's Pod proxy's reach.
    expect(container?.args).toEqual(['run', '--address', '0.0.0.0:6565', '/scripts/load.js']);
    expect(container?.ports).toEqual([{ name: 'k6-api', containerPort: 6565, protocol: 'TCP' }]);
  });

  it('labels the Job and its Pod with the caller labels, so a cleanup can delete every Job of a run', () => {
    // Act
    const job = k6LoadJob({ ...minimal, labels: { 'vllm-pilot/execution': 'run-42' } }) as unknown as JobShape;

    // Assess
    for (const labels of [job.metadata.labels, job.spec.template.metadata.labels]) {
      expect(labels).toMatchObject({ 'vllm-pilot/execution': 'run-42', 'app.kubernetes.io/component': 'load' });
    }
    expect(job.spec.template.metadata.annotations).toEqual({ 'karpenter.sh/do-not-disrupt': 'true' });
  });

  it('gives the Job a deadline: the planned run, one request timeout, the graceful stop and start-up', () => {
    // Act
    const job = k6LoadJob({ ...minimal, durationSeconds: 120, requestTimeoutSeconds: 60 }) as unknown as JobShape;

    // Assess
    expect(job.spec.activeDeadlineSeconds).toBe(120 + 60 + 30 + 60);
  });

  it.each([
    { case: 'no rate', input: { targetUrl: minimal.targetUrl, model: 'm' }, message: /rate: is required/ },
    { case: 'a negative rate', input: { ...minimal, rate: -1 }, message: /rate: must be > 0/ },
    {
      case: 'maxVUs below preAllocatedVUs',
      input: { ...minimal, maxVUs: 10 },
      message: /maxVUs: must be >= preAllocatedVUs/,
    },
    {
      case: 'a label value with spaces',
      input: { ...minimal, labels: { run: 'a b' } },
      message: /labels\.run: is not a label value/,
    },
  ])('refuses $case', ({ input, message }) => {
    // Act
    const act = () => k6LoadJob(input as never);

    // Assess
    expect(act).toThrow(KubeManifestInputError);
    expect(act).toThrow(message);
  });
});
