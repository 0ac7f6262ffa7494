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

describe('Function: k6LoadJob', () => {
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
