/**
 * The Deployment controller's scaling decisions, as pure functions (kubernetes/pkg/controller/deployment: rolling.go
 * `reconcileNewReplicaSet` / `reconcileOldReplicaSets`, recreate.go, and deployment/util `ResolveFenceposts`).
 */

/** What the plan needs of one ReplicaSet. */
export interface ReplicaSetState {
  name: string;
  /** spec.replicas */
  replicas: number;
  /** status.availableReplicas */
  availableReplicas: number;
  /** status.replicas: Pods that still exist (Recreate waits for them to go). */
  podReplicas: number;
}

export type RolloutStrategy =
  { type: 'RollingUpdate'; maxSurge: number; maxUnavailable: number } | { type: 'Recreate' };

export interface RolloutInput {
  desired: number;
  strategy: RolloutStrategy;
  newRS: ReplicaSetState;
  /** Older ReplicaSets, oldest first. */
  oldRSs: readonly ReplicaSetState[];
}

export interface ScaleDecision {
  name: string;
  from: number;
  to: number;
  reason: string;
}

/**
 * `maxSurge` and `maxUnavailable` as absolute numbers: percentages of `desired`, surge rounded up and unavailable
 * rounded down; both zero would deadlock, so unavailable becomes 1 (ResolveFenceposts). Kubernetes' defaults are 25 %.
 */
export function resolveFenceposts(
  maxSurge: number | string | undefined,
  maxUnavailable: number | string | undefined,
  desired: number,
): { maxSurge: number; maxUnavailable: number } {
  const surge = scaledValue(maxSurge ?? '25%', desired, true);
  let unavailable = scaledValue(maxUnavailable ?? '25%', desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { maxSurge: surge, maxUnavailable: unavailable };
}

function scaledValue(value: number | string, total: number, roundUp: boolean): number {
  if (typeof value === 'number') return Math.max(0, Math.trunc(value));
  const match = /^(\d+)%$/.exec(value.trim());
  if (!match) {
    const n = Number(value);
    return Number.isFinite(n) ? Math.max(0, Math.trunc(n)) : 0;
  }
  const exact = (Number(match[1]) * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/**
 * The next scaling step of a rollout: at most one phase per call, as the controller re-evaluates after every change.
 * Rolling: scale the new ReplicaSet up within desired + maxSurge Pods; otherwise scale old ReplicaSets down while at
 * least desired - maxUnavailable Pods stay available (unhealthy old Pods go first). Recreate: old ReplicaSets to 0,
 * wait until their Pods are gone, then the new one to desired. Returns [] when nothing is to be done.
 */
export function planRollout(input: RolloutInput): ScaleDecision[] {
  const { desired, newRS, oldRSs } = input;
  if (input.strategy.type === 'Recreate') {
    const running = oldRSs.filter((rs) => rs.replicas > 0);
    if (running.length > 0)
      return running.map((rs) => ({ name: rs.name, from: rs.replicas, to: 0, reason: 'Recreate: old Pods go first' }));
    if (oldRSs.some((rs) => rs.podReplicas > 0)) return [];
    return newRS.replicas === desired
      ? []
      : [{ name: newRS.name, from: newRS.replicas, to: desired, reason: `Recreate: spec.replicas ${desired}` }];
  }

  const { maxSurge, maxUnavailable } = input.strategy;
  if (newRS.replicas > desired)
    return [{ name: newRS.name, from: newRS.replicas, to: desired, reason: `spec.replicas ${desired}` }];
  const all = [newRS, ...oldRSs];
  const total = sum(all.map((rs) => rs.replicas));
  if (newRS.replicas < desired) {
    const maxTotal = desired + maxSurge;
    if (total < maxTotal) {
      const to = newRS.replicas + Math.min(maxTotal - total, desired - newRS.replicas);
      const reason =
        oldRSs.some((rs) => rs.replicas > 0) && maxSurge > 0
          ? `rolling update: ${total} of at most ${maxTotal} Pods (spec.replicas ${desired} + maxSurge ${maxSurge})`
          : `spec.replicas ${desired}`;
      return [{ name: newRS.name, from: newRS.replicas, to, reason }];
    }
  }

  // reconcileOldReplicaSets: never go below desired - maxUnavailable available Pods.
  const oldTotal = sum(oldRSs.map((rs) => rs.replicas));
  if (oldTotal === 0) return [];
  const minAvailable = desired - maxUnavailable;
  const newUnavailable = Math.max(0, newRS.replicas - newRS.availableReplicas);
  const maxScaledDown = total - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return [];
  const decisions: ScaleDecision[] = [];
  const next = new Map(oldRSs.map((rs) => [rs.name, rs.replicas]));
  // First the old Pods that are not available anyway: removing them costs no availability.
  let cleaned = 0;
  for (const rs of oldRSs) {
    if (cleaned >= maxScaledDown) break;
    const unhealthy = Math.max(0, rs.replicas - rs.availableReplicas);
    const down = Math.min(maxScaledDown - cleaned, unhealthy);
    if (down > 0) {
      next.set(rs.name, rs.replicas - down);
      cleaned += down;
    }
  }
  // Then available old Pods, as far as the availability budget allows.
  const available = sum(all.map((rs) => rs.availableReplicas));
  let budget = Math.min(available - minAvailable, maxScaledDown - cleaned);
  for (const rs of oldRSs) {
    if (budget <= 0) break;
    const current = next.get(rs.name) ?? 0;
    const down = Math.min(current, budget);
    if (down > 0) {
      next.set(rs.name, current - down);
      budget -= down;
    }
  }
  for (const rs of oldRSs) {
    const to = next.get(rs.name) ?? rs.replicas;
    if (to !== rs.replicas)
      decisions.push({
        name: rs.name,
        from: rs.replicas,
        to,
        reason: `rolling update: ${available} Pods available, at least ${minAvailable} must stay (maxUnavailable ${maxUnavailable})`,
      });
  }
  return decisions;
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
