import { describe, expect, it } from '@jest/globals';
import { planRollout, type ReplicaSetState, resolveFenceposts, type RolloutInput } from './rollout.js';

const rs = (name: string, replicas: number, availableReplicas = replicas, podReplicas = replicas): ReplicaSetState => ({
  name,
  replicas,
  availableReplicas,
  podReplicas,
});
const rolling = (maxSurge: number, maxUnavailable: number) => ({
  type: 'RollingUpdate' as const,
  maxSurge,
  maxUnavailable,
});

describe('Function: resolveFenceposts', () => {
  it.each([
    // Kubernetes' defaults (25 % / 25 %) with 2 replicas: surge rounds up to 1, unavailable down to 0.
    {
      case: 'defaults, 2 replicas',
      surge: undefined,
      unavailable: undefined,
      desired: 2,
      expected: { maxSurge: 1, maxUnavailable: 0 },
    },
    {
      case: 'defaults, 8 replicas',
      surge: undefined,
      unavailable: undefined,
      desired: 8,
      expected: { maxSurge: 2, maxUnavailable: 2 },
    },
    { case: 'absolute numbers', surge: 2, unavailable: 1, desired: 5, expected: { maxSurge: 2, maxUnavailable: 1 } },
    // Both zero would never make progress: Kubernetes makes unavailable 1.
    { case: 'both zero', surge: 0, unavailable: '0%', desired: 3, expected: { maxSurge: 0, maxUnavailable: 1 } },
    {
      case: 'percent strings',
      surge: '50%',
      unavailable: '50%',
      desired: 3,
      expected: { maxSurge: 2, maxUnavailable: 1 },
    },
  ])('$case', ({ surge, unavailable, desired, expected }) => {
    // Act
    const result = resolveFenceposts(surge, unavailable, desired);

    // Assess
    expect(result).toEqual(expected);
  });
});

describe('Function: planRollout', () => {
  it.each<{ case: string; input: RolloutInput; expected: Array<[string, number, number]> }>([
    // A fresh Deployment: the new ReplicaSet goes straight to spec.replicas.
    {
      case: 'first rollout',
      input: { desired: 2, strategy: rolling(1, 0), newRS: rs('new', 0), oldRSs: [] },
      expected: [['new', 0, 2]],
    },
    // Scaling without a template change only changes the current ReplicaSet.
    {
      case: 'scale up',
      input: { desired: 3, strategy: rolling(1, 0), newRS: rs('new', 2), oldRSs: [] },
      expected: [['new', 2, 3]],
    },
    {
      case: 'scale down',
      input: { desired: 1, strategy: rolling(1, 0), newRS: rs('new', 3), oldRSs: [] },
      expected: [['new', 3, 1]],
    },
    // Template change with maxSurge 1: one new Pod first, the old ones stay.
    {
      case: 'rollout starts',
      input: { desired: 2, strategy: rolling(1, 0), newRS: rs('new', 0), oldRSs: [rs('old', 2)] },
      expected: [['new', 0, 1]],
    },
    // The new Pod is not ready yet: with maxUnavailable 0 no old Pod may go.
    {
      case: 'new Pod not ready',
      input: { desired: 2, strategy: rolling(1, 0), newRS: rs('new', 1, 0), oldRSs: [rs('old', 2)] },
      expected: [],
    },
    // The new Pod is ready: one old Pod goes.
    {
      case: 'new Pod ready',
      input: { desired: 2, strategy: rolling(1, 0), newRS: rs('new', 1), oldRSs: [rs('old', 2)] },
      expected: [['old', 2, 1]],
    },
    // Old Pods that are not available are removed first: they cost no availability (with every available Pod
    // needed, only the unhealthy one can go).
    {
      case: 'unhealthy old Pods first',
      input: { desired: 2, strategy: rolling(1, 0), newRS: rs('new', 1), oldRSs: [rs('old', 2, 1)] },
      expected: [['old', 2, 1]],
    },
    {
      case: 'nothing to do',
      input: { desired: 2, strategy: rolling(1, 0), newRS: rs('new', 2), oldRSs: [rs('old', 0)] },
      expected: [],
    },
    // Recreate: the old Pods go first, then the new ReplicaSet waits until they are gone.
    {
      case: 'recreate: old down',
      input: { desired: 2, strategy: { type: 'Recreate' }, newRS: rs('new', 0), oldRSs: [rs('old', 2)] },
      expected: [['old', 2, 0]],
    },
    {
      case: 'recreate: waits for old Pods',
      input: { desired: 2, strategy: { type: 'Recreate' }, newRS: rs('new', 0), oldRSs: [rs('old', 0, 0, 1)] },
      expected: [],
    },
    {
      case: 'recreate: new up',
      input: { desired: 2, strategy: { type: 'Recreate' }, newRS: rs('new', 0), oldRSs: [rs('old', 0, 0, 0)] },
      expected: [['new', 0, 2]],
    },
  ])('$case', ({ input, expected }) => {
    // Act
    const decisions = planRollout(input);

    // Assess
    expect(decisions.map((d) => [d.name, d.from, d.to])).toEqual(expected);
    for (const decision of decisions) expect(decision.reason).not.toBe('');
  });

  it('never exceeds desired + maxSurge Pods nor drops below desired - maxUnavailable available, step by step', () => {
    // Prepare: simulate a whole rollout where every scheduled Pod becomes available one step later.
    let newRS = rs('new', 0, 0);
    let oldRS = rs('old', 3);
    let maxTotal = 0;
    let minAvailable = Infinity;

    // Act
    for (let step = 0; step < 20; step++) {
      newRS = { ...newRS, availableReplicas: newRS.replicas, podReplicas: newRS.replicas };
      oldRS = { ...oldRS, availableReplicas: oldRS.replicas, podReplicas: oldRS.replicas };
      for (const d of planRollout({ desired: 3, strategy: rolling(1, 0), newRS, oldRSs: [oldRS] })) {
        if (d.name === 'new') newRS = { ...newRS, replicas: d.to };
        else oldRS = { ...oldRS, replicas: d.to, availableReplicas: Math.min(oldRS.availableReplicas, d.to) };
      }
      maxTotal = Math.max(maxTotal, newRS.replicas + oldRS.replicas);
      minAvailable = Math.min(minAvailable, newRS.availableReplicas + oldRS.availableReplicas);
    }

    // Assess
    expect(newRS.replicas).toBe(3);
    expect(oldRS.replicas).toBe(0);
    expect(maxTotal).toBeLessThanOrEqual(4);
    expect(minAvailable).toBeGreaterThanOrEqual(3);
  });
});
