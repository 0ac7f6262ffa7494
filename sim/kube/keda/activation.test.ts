import { describe, expect, it } from '@jest/globals';
import { decideKedaScale, type KedaScaleInput } from './activation.js';

const NOW = 1_000_000_000;
const READY = { type: 'Ready', status: 'True', reason: 'ScaledObjectReady' } as const;

function input(overrides: Partial<KedaScaleInput>): KedaScaleInput {
  return {
    nowMs: NOW,
    isActive: false,
    isError: false,
    currentReplicas: 1,
    minReplicaCount: 1,
    creationTimeMs: NOW - 3_600_000,
    previousReady: READY,
    ...overrides,
  };
}

describe('Function: decideKedaScale', () => {
  it.each([
    // Active and at 0: KEDA itself activates the target to max(minReplicaCount, 1).
    {
      case: 'activates from zero to 1',
      overrides: { isActive: true, currentReplicas: 0, minReplicaCount: 0 },
      action: 'activate',
      scaleTo: 1,
    },
    // With minReplicaCount 2 activation goes straight to 2.
    {
      case: 'activates from zero to minReplicaCount',
      overrides: { isActive: true, currentReplicas: 0, minReplicaCount: 2 },
      action: 'activate',
      scaleTo: 2,
    },
    // Active with Pods running: the HPA scales; KEDA only refreshes lastActiveTime.
    {
      case: 'active with replicas leaves scaling to the HPA',
      overrides: { isActive: true, currentReplicas: 3 },
      action: 'none',
      scaleTo: undefined,
    },
    // The guide's minReplicaCount 1: an idle queue never scales to zero; the HPA keeps the floor.
    {
      case: 'inactive with minReplicaCount 1 does nothing',
      overrides: { currentReplicas: 3 },
      action: 'none',
      scaleTo: undefined,
    },
    // minReplicaCount 0, last active 100 s ago, cooldown 300 s: wait.
    {
      case: 'inactive during the cooldown waits',
      overrides: { minReplicaCount: 0, currentReplicas: 3, lastActiveTimeMs: NOW - 100_000 },
      action: 'cooldown',
      scaleTo: undefined,
    },
    // Exactly at the end of the cooldown it still waits (strictly after).
    {
      case: 'inactive exactly at the end of the cooldown still waits',
      overrides: { minReplicaCount: 0, currentReplicas: 3, lastActiveTimeMs: NOW - 300_000 },
      action: 'cooldown',
      scaleTo: undefined,
    },
    // After the cooldown: to zero.
    {
      case: 'inactive after the cooldown deactivates to zero',
      overrides: { minReplicaCount: 0, currentReplicas: 3, lastActiveTimeMs: NOW - 300_001 },
      action: 'deactivate',
      scaleTo: 0,
    },
    // A shorter cooldownPeriod is honoured.
    {
      case: 'cooldownPeriod 60 s',
      overrides: { minReplicaCount: 0, currentReplicas: 2, lastActiveTimeMs: NOW - 61_000, cooldownPeriodSeconds: 60 },
      action: 'deactivate',
      scaleTo: 0,
    },
    // Never active: the cooldown runs from creation + initialCooldownPeriod (0 by default).
    {
      case: 'never active: scales down after initialCooldownPeriod',
      overrides: {
        minReplicaCount: 0,
        currentReplicas: 2,
        creationTimeMs: NOW - 10_000,
        initialCooldownPeriodSeconds: 5,
      },
      action: 'deactivate',
      scaleTo: 0,
    },
    // idleReplicaCount 0 with minReplicaCount 2: inactive means idle (0), active means at least 2.
    {
      case: 'idleReplicaCount: deactivates to the idle count',
      overrides: { minReplicaCount: 2, idleReplicaCount: 0, currentReplicas: 2, lastActiveTimeMs: NOW - 400_000 },
      action: 'deactivate',
      scaleTo: 0,
    },
    // Someone scaled the target below minReplicaCount while idle: KEDA restores the minimum.
    {
      case: 'inactive below minReplicaCount restores it',
      overrides: { minReplicaCount: 2, currentReplicas: 1 },
      action: 'restoreMinimum',
      scaleTo: 2,
    },
    // A failing trigger with nothing active must not scale to zero, even with minReplicaCount 0.
    {
      case: 'a trigger error never deactivates',
      overrides: { isError: true, minReplicaCount: 0, currentReplicas: 2, lastActiveTimeMs: NOW - 400_000 },
      action: 'none',
      scaleTo: undefined,
    },
  ])('$case', ({ overrides, action, scaleTo }) => {
    // Act
    const decision = decideKedaScale(input(overrides), 'default/vllm');

    // Assess
    expect(decision.action).toBe(action);
    expect(decision.scaleTo).toBe(scaleTo);
  });

  it.each([
    { case: 'active', overrides: { isActive: true, currentReplicas: 2 }, status: 'True', reason: 'ScalerActive' },
    { case: 'not active', overrides: { currentReplicas: 2 }, status: 'False', reason: 'ScalerNotActive' },
    {
      case: 'cooling down',
      overrides: { minReplicaCount: 0, currentReplicas: 2, lastActiveTimeMs: NOW - 1000 },
      status: 'False',
      reason: 'ScalerCooldown',
    },
  ])('sets the Active condition when $case', ({ overrides, status, reason }) => {
    // Act
    const decision = decideKedaScale(input(overrides));

    // Assess
    expect(decision.active).toMatchObject({ type: 'Active', status, reason });
  });

  it('refreshes lastActiveTime only while a trigger is active', () => {
    // Act
    const active = decideKedaScale(input({ isActive: true, currentReplicas: 2 }));
    const idle = decideKedaScale(input({ currentReplicas: 2 }));

    // Assess
    expect(active.touchLastActiveTime).toBe(true);
    expect(idle.touchLastActiveTime).toBe(false);
  });

  it('records KEDAScaleTargetActivated with the replica change', () => {
    // Act
    const decision = decideKedaScale(input({ isActive: true, currentReplicas: 0, minReplicaCount: 0 }), 'default/vllm');

    // Assess
    expect(decision.event).toEqual({
      type: 'Normal',
      reason: 'KEDAScaleTargetActivated',
      message: 'Scaled apps/v1.Deployment default/vllm from 0 to 1',
    });
  });

  it('turns Ready False with the trigger error when nothing is active', () => {
    // Act
    const decision = decideKedaScale(
      input({ isError: true, errorMessages: ['s0-prometheus: could not reach http://127.0.0.1:9/'] }),
    );

    // Assess
    expect(decision.ready).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'TriggerError',
      message:
        'Triggers defined in ScaledObject are not working correctly: s0-prometheus: could not reach http://127.0.0.1:9/',
    });
  });

  it('turns Ready Unknown when one trigger fails while another is active', () => {
    // Act
    const decision = decideKedaScale(input({ isError: true, isActive: true, currentReplicas: 2 }));

    // Assess
    expect(decision.ready).toMatchObject({ status: 'Unknown', reason: 'PartialTriggerError' });
  });

  it('turns Ready True again once the triggers work', () => {
    // Act
    const decision = decideKedaScale(
      input({ previousReady: { type: 'Ready', status: 'False', reason: 'TriggerError' } }),
    );

    // Assess
    expect(decision.ready).toMatchObject({ status: 'True', reason: 'ScaledObjectReady' });
  });
});
