import { describe, expect, it } from '@jest/globals';
import { jobPhase } from './jobs.js';
import type { KubeObject } from './types.js';
import { rolloutStatus } from './workload.js';

function deployment(replicas: number, generation: number, status: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'vllm', namespace: 'default', generation },
    spec: { replicas },
    status,
  };
}

describe('Function: rolloutStatus', () => {
  it.each([
    {
      case: 'every replica updated and available',
      object: deployment(1, 2, { observedGeneration: 2, replicas: 1, updatedReplicas: 1, availableReplicas: 1 }),
      done: true,
      reason: /1 of 1 replicas updated and available/,
    },
    {
      // The controller has not seen the new spec yet: its status describes the old one.
      case: 'the controller behind the spec',
      object: deployment(1, 3, { observedGeneration: 2, replicas: 1, updatedReplicas: 1, availableReplicas: 1 }),
      done: false,
      reason: /generation 3/,
    },
    {
      case: 'a new replica still loading',
      object: deployment(3, 2, { observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 2 }),
      done: false,
      reason: /2 of 3 updated replicas available/,
    },
    {
      // Scaled from 2 to 1: the old Pod still counts until it is gone.
      case: 'an old replica still terminating',
      object: deployment(1, 2, { observedGeneration: 2, replicas: 2, updatedReplicas: 1, availableReplicas: 2 }),
      done: false,
      reason: /1 old replica/,
    },
  ])('reports $case', ({ object, done, reason }) => {
    // Act
    const status = rolloutStatus(object);

    // Assess
    expect(status.done).toBe(done);
    expect(status.stuck).toBe(false);
    expect(status.reason).toMatch(reason);
  });

  it('reports a rollout past its progress deadline as stuck, with the controller message', () => {
    // Prepare
    const object = deployment(1, 2, {
      observedGeneration: 2,
      conditions: [
        {
          type: 'Progressing',
          status: 'False',
          reason: 'ProgressDeadlineExceeded',
          message: 'ReplicaSet "vllm-abc" has timed out progressing.',
        },
      ],
    });

    // Act
    const status = rolloutStatus(object);

    // Assess
    expect(status).toEqual({ done: false, stuck: true, reason: 'ReplicaSet "vllm-abc" has timed out progressing.' });
  });
});

describe('Function: jobPhase', () => {
  const job = (status: Record<string, unknown>): KubeObject => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'calib-1-s0' },
    status,
  });

  it.each([
    { case: 'a running Job', status: { active: 1 }, phase: 'running' },
    { case: 'a complete Job', status: { conditions: [{ type: 'Complete', status: 'True' }] }, phase: 'succeeded' },
    {
      case: 'a failed Job',
      status: { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }] },
      phase: 'failed',
    },
    {
      // Kubernetes 1.31 sets FailureTarget before Failed: only Failed is final.
      case: 'a Job with FailureTarget only',
      status: { active: 1, conditions: [{ type: 'FailureTarget', status: 'True' }] },
      phase: 'running',
    },
  ])('reads $case', ({ status, phase }) => {
    // Assess
    expect(jobPhase(job(status)).phase).toBe(phase);
  });
});
