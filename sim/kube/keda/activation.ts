/**
 * KEDA's own scaling decision, separate from the HPA: activation (0 → N), deactivation after the cooldown (N → 0 or
 * idleReplicaCount), restoring minReplicaCount, and the Ready / Active conditions. Pure: time is `nowMs`.
 *
 * Source: kedacore/keda v2.20 `pkg/scaling/executor/scale_scaledobjects.go` (RequestScale, scaleToZeroOrIdle,
 * scaleFromZeroOrIdle). KEDA's semantics, as found there:
 * - The ScaledObject is active when at least one trigger's value is above its activationThreshold (so it is not
 *   active when every trigger is at or below its activationThreshold, or failed).
 * - Active and the target at 0 replicas → KEDA scales it to max(minReplicaCount, 1) itself ("activation"); from
 *   there the HPA scales between its minReplicas (= max(minReplicaCount, 1)) and maxReplicaCount.
 * - Active with replicas > 0 → only lastActiveTime is refreshed; the HPA does the scaling.
 * - Not active, minReplicaCount 0 (or unset) and replicas > 0 → once lastActiveTime + cooldownPeriod (default 300 s)
 *   has passed (or, never active, creation + initialCooldownPeriod), KEDA scales to 0 (or idleReplicaCount);
 *   before that the Active condition reads "ScalerCooldown".
 * - Not active and minReplicaCount > 0 → KEDA leaves the count to the HPA, which keeps using the metric values
 *   (activation does not stop the HPA: with the guide's minReplicaCount 1 the queue metric still scales 1 ↔ 5).
 * - A trigger error with nothing active → Ready False "TriggerError" and no KEDA scaling (no fallback emulated);
 *   an error while another trigger is active → Ready Unknown "PartialTriggerError".
 */

/** KEDA's runtime defaults (scale_executor.go, scaledobject_types.go). */
export const KEDA_DEFAULTS = {
  cooldownPeriodSeconds: 300,
  initialCooldownPeriodSeconds: 0,
  pollingIntervalSeconds: 30,
  maxReplicaCount: 100,
} as const;

/** A KEDA condition as stored in ScaledObject status (KEDA's conditions carry no timestamps). */
export interface KedaCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
}

export const READY_MESSAGES = {
  ready: 'ScaledObject is defined correctly and is ready for scaling',
  triggerError: 'Triggers defined in ScaledObject are not working correctly',
  partialTriggerError: 'Some triggers defined in ScaledObject are not working correctly',
} as const;

export interface KedaScaleInput {
  nowMs: number;
  /** At least one trigger is above its activationThreshold. */
  isActive: boolean;
  /** At least one trigger failed. */
  isError: boolean;
  /** Why the triggers failed (for the Ready message). */
  errorMessages?: readonly string[];
  /** The target's `spec.replicas` (KEDA reads the scale subresource's spec). */
  currentReplicas: number;
  minReplicaCount?: number;
  idleReplicaCount?: number;
  cooldownPeriodSeconds?: number;
  initialCooldownPeriodSeconds?: number;
  lastActiveTimeMs?: number;
  creationTimeMs: number;
  /** The Active condition before this poll (undefined = Unknown). */
  previousActive?: KedaCondition;
  /** The Ready condition before this poll. */
  previousReady?: KedaCondition;
}

export type KedaAction = 'activate' | 'deactivate' | 'restoreMinimum' | 'cooldown' | 'none';

export interface KedaScaleDecision {
  action: KedaAction;
  /** The replica count KEDA sets on the target, when it sets one. */
  scaleTo?: number;
  /** Refresh status.lastActiveTime to nowMs. */
  touchLastActiveTime: boolean;
  /** The new Ready condition, when it changes. */
  ready?: KedaCondition;
  /** The Active condition after this poll. */
  active: KedaCondition;
  /** The event KEDA records on the ScaledObject, if any. */
  event?: { type: 'Normal'; reason: 'KEDAScaleTargetActivated' | 'KEDAScaleTargetDeactivated'; message: string };
  reason: string;
}

const ACTIVE = {
  active: {
    type: 'Active',
    status: 'True',
    reason: 'ScalerActive',
    message: 'Scaling is performed because triggers are active',
  },
  notActive: {
    type: 'Active',
    status: 'False',
    reason: 'ScalerNotActive',
    message: 'Scaling is not performed because triggers are not active',
  },
  cooldown: {
    type: 'Active',
    status: 'False',
    reason: 'ScalerCooldown',
    message: 'Scaler cooling down because triggers are not active',
  },
} as const satisfies Record<string, KedaCondition>;

/** Decides what KEDA itself does on one poll (the HPA's part is computeHpaReplicas). */
export function decideKedaScale(input: KedaScaleInput, target = 'the target'): KedaScaleDecision {
  const minReplicas = input.minReplicaCount ?? 0;
  const current = input.currentReplicas;
  const detail = input.errorMessages && input.errorMessages.length > 0 ? `: ${input.errorMessages.join('; ')}` : '';
  let ready: KedaCondition | undefined;
  if (!input.isError && input.previousReady?.status !== 'True') {
    ready = { type: 'Ready', status: 'True', reason: 'ScaledObjectReady', message: READY_MESSAGES.ready };
  }

  let decision: Omit<KedaScaleDecision, 'active' | 'ready'> & { active?: KedaCondition };
  if (input.isActive) {
    if ((input.idleReplicaCount !== undefined && current < minReplicas) || current === 0) {
      const scaleTo = minReplicas > 0 ? minReplicas : 1;
      decision = {
        action: 'activate',
        scaleTo,
        touchLastActiveTime: true,
        event: {
          type: 'Normal',
          reason: 'KEDAScaleTargetActivated',
          message: `Scaled apps/v1.Deployment ${target} from ${current} to ${scaleTo}`,
        },
        reason: `a trigger is active and ${target} has ${current} replicas → activate to ${scaleTo}`,
      };
    } else if (input.isError) {
      ready = {
        type: 'Ready',
        status: 'Unknown',
        reason: 'PartialTriggerError',
        message: `${READY_MESSAGES.partialTriggerError}${detail}`,
      };
      decision = { action: 'none', touchLastActiveTime: false, reason: 'a trigger is active but another failed' };
    } else {
      decision = { action: 'none', touchLastActiveTime: true, reason: 'a trigger is active; the HPA scales' };
    }
  } else if (input.isError) {
    ready = {
      type: 'Ready',
      status: 'False',
      reason: 'TriggerError',
      message: `${READY_MESSAGES.triggerError}${detail}`,
    };
    decision = {
      action: 'none',
      touchLastActiveTime: false,
      reason: `no trigger is active and a trigger failed${detail}`,
    };
  } else if (
    (input.idleReplicaCount !== undefined && current > input.idleReplicaCount) ||
    (current > 0 && minReplicas === 0)
  ) {
    decision = scaleToZeroOrIdle(input, target);
  } else if (current < minReplicas && input.idleReplicaCount === undefined) {
    decision = {
      action: 'restoreMinimum',
      scaleTo: minReplicas,
      touchLastActiveTime: false,
      reason: `no trigger is active and ${target} has ${current} replicas, below minReplicaCount ${minReplicas} → ${minReplicas}`,
    };
  } else {
    decision = {
      action: 'none',
      touchLastActiveTime: false,
      reason:
        minReplicas > 0
          ? `no trigger is active; minReplicaCount ${minReplicas} keeps the HPA in charge`
          : 'no trigger is active',
    };
  }

  // The Active condition follows the activity unless a branch set it (cooldown / deactivation).
  let active = decision.active;
  if (!active) {
    const previous = input.previousActive;
    const unchanged =
      previous !== undefined && previous.status !== 'Unknown' && (previous.status === 'True') === input.isActive;
    active = unchanged ? previous : input.isActive ? { ...ACTIVE.active } : { ...ACTIVE.notActive };
  }
  return { ...decision, active, ...(ready ? { ready } : {}) };
}

function scaleToZeroOrIdle(
  input: KedaScaleInput,
  target: string,
): Omit<KedaScaleDecision, 'ready'> & { active: KedaCondition } {
  const cooldownMs = (input.cooldownPeriodSeconds ?? KEDA_DEFAULTS.cooldownPeriodSeconds) * 1000;
  const initialMs = (input.initialCooldownPeriodSeconds ?? KEDA_DEFAULTS.initialCooldownPeriodSeconds) * 1000;
  const scaleTo = input.idleReplicaCount ?? input.minReplicaCount ?? 0;
  // Strictly after the cooldown (Go's time.Before): a poll exactly at the end still waits.
  const cooledDown =
    input.lastActiveTimeMs === undefined
      ? input.creationTimeMs + initialMs < input.nowMs
      : input.lastActiveTimeMs + cooldownMs < input.nowMs;
  if (!cooledDown) {
    const since = input.lastActiveTimeMs === undefined ? 'creation' : 'the last active trigger';
    return {
      action: 'cooldown',
      touchLastActiveTime: false,
      active: { ...ACTIVE.cooldown },
      reason: `no trigger is active; cooling down (${(input.lastActiveTimeMs === undefined ? initialMs : cooldownMs) / 1000} s after ${since}) before scaling ${target} to ${scaleTo}`,
    };
  }
  return {
    action: 'deactivate',
    scaleTo,
    touchLastActiveTime: false,
    active: { ...ACTIVE.notActive },
    event: {
      type: 'Normal',
      reason: 'KEDAScaleTargetDeactivated',
      message: `Deactivated apps/v1.Deployment ${target} from ${input.currentReplicas} to ${scaleTo}`,
    },
    reason: `no trigger is active and the cooldown has passed → deactivate ${target} to ${scaleTo}`,
  };
}
