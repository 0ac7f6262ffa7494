import { describe, expect, it } from '@jest/globals';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { K6_IMAGE } from '../k6.js';
import { KubeManifestInputError } from '../errors.js';
import { k6WarmupJob } from './k6WarmupJob.js';

type JobShape = {
  metadata: { labels: Record<string, string> };
  spec: {
    backoffLimit: number;
    template: {
      spec: { containers: Array<{ image: string; args: string[]; env: Array<{ name: string; value: string }> }> };
    };
  };
};

const minimal = { targetUrl: 'http://vllm-inference-svc.default.svc:8000', model: 'ministral' };

describe('Function: k6WarmupJob', () => {
  it("runs the guide's warmup: 100 sequential requests from one VU, once", () => {
    // Act
    const job = k6WarmupJob({ ...minimal, labels: { 'vllm-pilot/execution': 'run-42' } }) as unknown as JobShape;

    // Assess
    new Job(job as never).validate();
    const container = job.spec.template.spec.containers[0];
    expect(container?.image).toBe(K6_IMAGE);
    expect(container?.args).toEqual(['run', '--address', '0.0.0.0:6565', '/scripts/load.js']);
    expect(Object.fromEntries((container?.env ?? []).map((e) => [e.name, e.value]))).toEqual({
      VLLM_PILOT_TARGET_URL: 'http://vllm-inference-svc.default.svc:8000',
      VLLM_PILOT_MODEL: 'ministral',
      VLLM_PILOT_EXECUTOR: 'shared-iterations',
      VLLM_PILOT_VUS: '1',
      VLLM_PILOT_ITERATIONS: '100',
      VLLM_PILOT_MAX_TOKENS: '100',
      VLLM_PILOT_REQUEST_TIMEOUT_SECONDS: '240',
    });
    expect(job.spec.backoffLimit).toBe(0);
    expect(job.metadata.labels).toMatchObject({
      'vllm-pilot/execution': 'run-42',
      'app.kubernetes.io/component': 'warmup',
    });
  });

  it('refuses a target that is not a URL', () => {
    // Act
    const act = () => k6WarmupJob({ ...minimal, targetUrl: 'vllm-inference-svc' });

    // Assess
    expect(act).toThrow(KubeManifestInputError);
    expect(act).toThrow(/targetUrl: must be an http\(s\) URL/);
  });
});
