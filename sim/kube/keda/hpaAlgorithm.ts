/**
 * The Kubernetes HorizontalPodAutoscaler algorithm (autoscaling/v2), as kube-controller-manager runs it for the HPA
 * that KEDA creates. Pure and deterministic: time is the `nowMs` parameter and the controller's memory (past
 * recommendations and scale events) goes in and comes out as `HpaHistory`.
 *
 * Sources: Kubernetes `pkg/controller/podautoscaler/horizontal.go` (reconcileAutoscaler,
 * stabilizeRecommendationWithBehaviors, convertDesiredReplicasWithBehaviorRate, calculateScaleUp/DownLimit...,
 * the legacy normalizeDesiredReplicas path), `replica_calculator.go` (GetExternalPerPodMetricReplicas,
 * GetExternalMetricReplicas), `pkg/apis/autoscaling/v2/defaults.go` (behavior defaults), and the "Horizontal Pod
 * Autoscaling" docs page (algorithm details, tolerance 0.1, stabilization window, scaling policies).
 */
import { KedaInvalidHpaInputError, KedaInvalidScaledObjectError } from './errors.js';
import { formatNumber, toMilli } from './quantity.js';

/** The controller-wide defaults of kube-controller-manager. */
export const HPA_DEFAULTS = {
  /** `--horizontal-pod-autoscaler-tolerance`: no change while |ratio − 1| ≤ 0.1. */
  tolerance: 0.1,
  /** `--horizontal-pod-autoscaler-downscale-stabilization`: the scale-down window when behavior does not set one. */
  downscaleStabilizationSeconds: 300,
  /** Legacy path (no `behavior`): scale up to at most max(2 × current, 4) per reconcile. */
  legacyScaleUpLimitFactor: 2,
  legacyScaleUpLimitMinimum: 4,
} as const;

export const SELECT_POLICIES = { Max: 'Max', Min: 'Min', Disabled: 'Disabled' } as const;
export type SelectPolicy = (typeof SELECT_POLICIES)[keyof typeof SELECT_POLICIES];

export const POLICY_TYPES = { Pods: 'Pods', Percent: 'Percent' } as const;
export type PolicyType = (typeof POLICY_TYPES)[keyof typeof POLICY_TYPES];

export const METRIC_TARGET_TYPES = { AverageValue: 'AverageValue', Value: 'Value' } as const;
export type MetricTargetType = (typeof METRIC_TARGET_TYPES)[keyof typeof METRIC_TARGET_TYPES];

/** `HPAScalingPolicy`: at most `value` Pods (or percent) of change per `periodSeconds`. */
export interface HpaScalingPolicy {
  type: PolicyType;
  value: number;
  periodSeconds: number;
}

/** `HPAScalingRules` as written in a spec (every field optional). */
export interface HpaScalingRules {
  stabilizationWindowSeconds?: number;
  selectPolicy?: SelectPolicy;
  policies?: HpaScalingPolicy[];
}

/** `HorizontalPodAutoscalerBehavior` as written in a spec. */
export interface HpaBehavior {
  scaleUp?: HpaScalingRules;
  scaleDown?: HpaScalingRules;
}

/** Scaling rules with the API server's defaults filled in. */
export interface ResolvedScalingRules {
  stabilizationWindowSeconds: number;
  selectPolicy: SelectPolicy;
  policies: HpaScalingPolicy[];
}

export interface ResolvedBehavior {
  scaleUp: ResolvedScalingRules;
  scaleDown: ResolvedScalingRules;
}

/** The API server's default scale-up rules (GenerateHPAScaleUpRules): double, or +4 Pods, per 15 s; no window. */
export const DEFAULT_SCALE_UP: ResolvedScalingRules = {
  stabilizationWindowSeconds: 0,
  selectPolicy: 'Max',
  policies: [
    { type: 'Pods', value: 4, periodSeconds: 15 },
    { type: 'Percent', value: 100, periodSeconds: 15 },
  ],
};

/** The default scale-down rules (GenerateHPAScaleDownRules + the controller's 300 s window): all Pods per 15 s. */
export const DEFAULT_SCALE_DOWN: ResolvedScalingRules = {
  stabilizationWindowSeconds: HPA_DEFAULTS.downscaleStabilizationSeconds,
  selectPolicy: 'Max',
  policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
};

/** One metric of the HPA with its current reading (KEDA's external metric `sN-prometheus`). */
export interface MetricReading {
  /** The external metric name, e.g. `s0-prometheus`. */
  name: string;
  /** What the reason calls it (the trigger's `name`, e.g. `queue`); default `name`. */
  label?: string;
  targetType: MetricTargetType;
  /** The threshold: per Pod for AverageValue, in total for Value. */
  target: number;
  /** The metric's current value (for AverageValue, the total over all Pods); absent when reading it failed. */
  value?: number;
  /** Why the value could not be read. */
  error?: string;
}

/** What the HPA controller remembers between reconciles, per HPA. */
export interface HpaHistory {
  recommendations: ReadonlyArray<{ replicas: number; atMs: number }>;
  scaleUpEvents: ReadonlyArray<{ change: number; atMs: number }>;
  scaleDownEvents: ReadonlyArray<{ change: number; atMs: number }>;
}

export interface HpaInput {
  nowMs: number;
  /** The target's `spec.replicas`: the HPA's "current replicas" (what it scales from and writes back). */
  specReplicas: number;
  /** The target's `status.replicas`: AverageValue targets divide by it. Default `specReplicas`. */
  statusReplicas?: number;
  /** Ready Pods: Value targets multiply by it. Default `statusReplicas`. */
  readyReplicas?: number;
  minReplicas: number;
  maxReplicas: number;
  metrics: readonly MetricReading[];
  /** `spec.behavior`; absent selects the controller's legacy path, as Kubernetes does. */
  behavior?: HpaBehavior;
  /** Default 0.1. */
  tolerance?: number;
  /** Absent on the first reconcile (the controller then records the current size as its first recommendation). */
  history?: HpaHistory;
}

export type HpaConditionType = 'AbleToScale' | 'ScalingActive' | 'ScalingLimited';

/** A condition the reconcile set (conditions it did not set keep their previous value, as in Kubernetes). */
export interface HpaConditionUpdate {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/** What one metric asked for. */
export interface MetricOutcome {
  name: string;
  targetType: MetricTargetType;
  targetMilli: number;
  /** Replicas this metric asks for; absent when it failed. */
  proposal?: number;
  /** What the HPA status shows as current: the per-Pod average (AverageValue) or the value (Value), milli-units. */
  currentMilli?: number;
  error?: string;
  /** e.g. `queue 80 / 25 per Pod → 4`. */
  reason: string;
}

export interface HpaDecision {
  /** The replica count the HPA wants now (equal to specReplicas when it does not rescale). */
  desiredReplicas: number;
  rescale: boolean;
  /** The whole chain, e.g. `queue 80 / 25 per Pod → 4; scale-up policy allows +2 Pods per 60 s → 3`. */
  reason: string;
  /** Kubernetes' own words for the SuccessfulRescale event: `external metric s0-prometheus above target`. */
  rescaleReason: string;
  metrics: MetricOutcome[];
  conditions: Partial<Record<HpaConditionType, HpaConditionUpdate>>;
  history: HpaHistory;
}

/** Fills the API server's defaults into `behavior` and validates it as the API server would; throws naming the field. */
export function resolveBehavior(behavior: HpaBehavior, field = 'behavior'): ResolvedBehavior {
  if (!isRecord(behavior)) throw new KedaInvalidScaledObjectError(field, `got ${describeValue(behavior)}`, 'an object');
  return {
    scaleUp: resolveRules(behavior.scaleUp, DEFAULT_SCALE_UP, `${field}.scaleUp`),
    scaleDown: resolveRules(behavior.scaleDown, DEFAULT_SCALE_DOWN, `${field}.scaleDown`),
  };
}

/** Runs one HPA reconcile: metrics → proposal → stabilization → rate limits → min/max, with the reason. */
export function computeHpaReplicas(input: HpaInput): HpaDecision {
  validateInput(input);
  const { nowMs, specReplicas, minReplicas, maxReplicas } = input;
  const statusReplicas = input.statusReplicas ?? specReplicas;
  const readyReplicas = input.readyReplicas ?? statusReplicas;
  const tolerance = input.tolerance ?? HPA_DEFAULTS.tolerance;
  const behavior = input.behavior === undefined ? undefined : resolveBehavior(input.behavior);
  // recordInitialRecommendation: the first reconcile remembers the current size, so a new HPA does not scale
  // down at once (and, with a scale-up window, not up at once either).
  let history: HpaHistory = input.history ?? {
    recommendations: [{ replicas: specReplicas, atMs: nowMs }],
    scaleUpEvents: [],
    scaleDownEvents: [],
  };
  const conditions: HpaDecision['conditions'] = {
    AbleToScale: {
      status: 'True',
      reason: 'SucceededGetScale',
      message: "the HPA controller was able to get the target's current scale",
    },
  };
  const metrics = input.metrics.map((metric) =>
    evaluateMetric(metric, { specReplicas, statusReplicas, readyReplicas, tolerance }),
  );
  const steps: string[] = [];
  let desired: number;
  let rescale = true;
  let rescaleReason = '';

  if (specReplicas === 0 && minReplicas !== 0) {
    desired = 0;
    rescale = false;
    conditions.ScalingActive = {
      status: 'False',
      reason: 'ScalingDisabled',
      message: 'scaling is disabled since the replica count of the target is zero',
    };
    steps.push('the target has 0 replicas: the HPA stays idle until KEDA activates the target');
  } else if (specReplicas > maxReplicas) {
    desired = maxReplicas;
    rescaleReason = 'Current number of replicas above Spec.MaxReplicas';
    steps.push(`${specReplicas} replicas is above maxReplicas ${maxReplicas} → ${maxReplicas}`);
  } else if (specReplicas < minReplicas) {
    desired = minReplicas;
    rescaleReason = 'Current number of replicas below Spec.MinReplicas';
    steps.push(`${specReplicas} replicas is below minReplicas ${minReplicas} → ${minReplicas}`);
  } else {
    let proposed = 0;
    let proposedBy = '';
    for (const metric of metrics) {
      if (metric.proposal === undefined) continue;
      if (proposed === 0 || metric.proposal > proposed) {
        proposed = metric.proposal;
        proposedBy = metric.name;
      }
    }
    const failed = metrics.filter((metric) => metric.error !== undefined);
    steps.push(...metrics.map((metric) => metric.reason));
    // computeReplicasForMetrics: give up when every metric failed, or when some failed and the rest would scale
    // down (a missing metric must not remove capacity); scaling up on the metrics that work is allowed.
    if (failed.length === metrics.length || (failed.length > 0 && proposed < specReplicas)) {
      const first = failed[0];
      conditions.ScalingActive = {
        status: 'False',
        reason: 'FailedGetExternalMetric',
        message: `the HPA was unable to compute the replica count: ${first ? first.error : 'no metrics'}`,
      };
      steps.push(`no scaling while ${failed.length} of ${metrics.length} metrics fail → stays ${specReplicas}`);
      return {
        desiredReplicas: specReplicas,
        rescale: false,
        reason: steps.join('; '),
        rescaleReason: '',
        metrics,
        conditions,
        history,
      };
    }
    conditions.ScalingActive = {
      status: 'True',
      reason: 'ValidMetricFound',
      message: `the HPA was able to successfully calculate a replica count from external metric ${proposedBy}`,
    };
    if (metrics.length > 1) steps.push(`the highest proposal wins → ${proposed}`);
    if (proposed > specReplicas) rescaleReason = `external metric ${proposedBy} above target`;
    if (proposed < specReplicas) rescaleReason = 'All metrics below target';

    const normalized = behavior
      ? normalizeWithBehavior(behavior, history, nowMs, specReplicas, proposed, minReplicas, maxReplicas)
      : normalizeLegacy(history, nowMs, specReplicas, proposed, minReplicas, maxReplicas);
    desired = normalized.desired;
    history = normalized.history;
    conditions.AbleToScale = normalized.ableToScale;
    conditions.ScalingLimited = normalized.scalingLimited;
    steps.push(...normalized.steps);
    rescale = desired !== specReplicas;
  }

  if (rescale) {
    conditions.AbleToScale = {
      status: 'True',
      reason: 'SucceededRescale',
      message: `the HPA controller was able to update the target scale to ${desired}`,
    };
    if (behavior) history = storeScaleEvent(history, behavior, nowMs, specReplicas, desired);
  } else {
    desired = specReplicas;
  }
  const summary = rescale ? `scale ${specReplicas} → ${desired}` : `no change (${specReplicas} replicas)`;
  return {
    desiredReplicas: desired,
    rescale,
    reason: [...steps, summary].join('; '),
    rescaleReason,
    metrics,
    conditions,
    history,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Metrics (replica_calculator.go)

interface Counts {
  specReplicas: number;
  statusReplicas: number;
  readyReplicas: number;
  tolerance: number;
}

function evaluateMetric(metric: MetricReading, counts: Counts): MetricOutcome {
  const label = metric.label ?? metric.name;
  const targetMilli = toMilli(metric.target);
  const base = { name: metric.name, targetType: metric.targetType, targetMilli };
  if (metric.error !== undefined || metric.value === undefined) {
    const error = metric.error ?? 'no value';
    return { ...base, error, reason: `${label}: ${error}` };
  }
  const usage = toMilli(metric.value);
  const value = formatNumber(metric.value);
  const target = formatNumber(metric.target);
  const tolerancePercent = `${formatNumber(counts.tolerance * 100)}%`;

  if (metric.targetType === 'AverageValue') {
    // GetExternalPerPodMetricReplicas: the external value is a total; the target is per Pod.
    const pods = counts.statusReplicas;
    const ratio = usage / (targetMilli * pods);
    const outside = Math.abs(1 - ratio) > counts.tolerance;
    const proposal = outside ? Math.ceil(usage / targetMilli) : pods;
    const currentMilli = pods > 0 ? Math.ceil(usage / pods) : usage;
    const reason = outside
      ? `${label} ${value} / ${target} per Pod → ${proposal}`
      : `${label} ${value} / ${target} per Pod is within the ${tolerancePercent} tolerance at ${pods} Pods → ${proposal}`;
    return { ...base, proposal, currentMilli, reason };
  }

  // GetExternalMetricReplicas: the value is compared with the target as a whole and scales the ready Pods.
  const ratio = usage / targetMilli;
  let proposal: number;
  let reason: string;
  if (counts.specReplicas === 0) {
    proposal = Math.ceil(ratio);
    reason = `${label} ${value} vs target ${target} → ${proposal}`;
  } else if (Math.abs(1 - ratio) <= counts.tolerance) {
    proposal = counts.specReplicas;
    reason = `${label} ${value} vs target ${target} is within the ${tolerancePercent} tolerance → ${proposal}`;
  } else {
    proposal = Math.ceil(ratio * counts.readyReplicas);
    reason = `${label} ${value} vs target ${target} × ${counts.readyReplicas} ready Pods → ${proposal}`;
  }
  return { ...base, proposal, currentMilli: usage, reason };
}

// ---------------------------------------------------------------------------------------------------------------
// Normalization with behavior (stabilization window, then scaling policies, then min/max)

interface Normalized {
  desired: number;
  history: HpaHistory;
  ableToScale: HpaConditionUpdate;
  scalingLimited: HpaConditionUpdate;
  steps: string[];
}

function normalizeWithBehavior(
  behavior: ResolvedBehavior,
  history: HpaHistory,
  nowMs: number,
  current: number,
  proposed: number,
  minReplicas: number,
  maxReplicas: number,
): Normalized {
  const steps: string[] = [];
  const upWindowMs = behavior.scaleUp.stabilizationWindowSeconds * 1000;
  const downWindowMs = behavior.scaleDown.stabilizationWindowSeconds * 1000;
  const upCutoff = nowMs - upWindowMs;
  const downCutoff = nowMs - downWindowMs;

  // Scale-up uses the lowest recommendation of its window, scale-down the highest of its window; the current size
  // is then brought within [lowest-up, highest-down] (only strictly newer samples count: timestamp.After(cutoff)).
  let upRecommendation = proposed;
  let downRecommendation = proposed;
  for (const rec of history.recommendations) {
    if (rec.atMs > upCutoff) upRecommendation = Math.min(upRecommendation, rec.replicas);
    if (rec.atMs > downCutoff) downRecommendation = Math.max(downRecommendation, rec.replicas);
  }
  let stabilized = current;
  if (stabilized < upRecommendation) stabilized = upRecommendation;
  if (stabilized > downRecommendation) stabilized = downRecommendation;
  const recommendations = [
    ...history.recommendations.filter((rec) => !(rec.atMs < upCutoff && rec.atMs < downCutoff)),
    { replicas: proposed, atMs: nowMs },
  ];

  let ableToScale: HpaConditionUpdate;
  if (stabilized !== proposed) {
    if (proposed >= current) {
      ableToScale = {
        status: 'True',
        reason: 'ScaleUpStabilized',
        message: 'recent recommendations were lower than current one, applying the lowest recent recommendation',
      };
      steps.push(
        `scale-up stabilization window ${behavior.scaleUp.stabilizationWindowSeconds} s holds the lowest recent recommendation ${upRecommendation} → ${stabilized}`,
      );
    } else {
      ableToScale = {
        status: 'True',
        reason: 'ScaleDownStabilized',
        message: 'recent recommendations were higher than current one, applying the highest recent recommendation',
      };
      steps.push(
        `scale-down stabilization window ${behavior.scaleDown.stabilizationWindowSeconds} s holds the highest recent recommendation ${downRecommendation} → ${stabilized}`,
      );
    }
  } else {
    ableToScale = { status: 'True', reason: 'ReadyForNewScale', message: 'recommended size matches current size' };
  }

  const limited = limitWithPolicies(behavior, history, nowMs, current, stabilized, minReplicas, maxReplicas);
  if (limited.step) steps.push(limited.step);
  return {
    desired: limited.desired,
    history: { ...history, recommendations },
    ableToScale,
    scalingLimited: {
      status: limited.desired === stabilized ? 'False' : 'True',
      reason: limited.reason,
      message: limited.message,
    },
    steps,
  };
}

interface Limited {
  desired: number;
  reason: string;
  message: string;
  step?: string;
}

/** convertDesiredReplicasWithBehaviorRate: the scaling policies' rate limit, then min/max. */
function limitWithPolicies(
  behavior: ResolvedBehavior,
  history: HpaHistory,
  nowMs: number,
  current: number,
  desired: number,
  minReplicas: number,
  maxReplicas: number,
): Limited {
  if (desired > current) {
    const rate = scaleUpLimit(behavior.scaleUp, history, nowMs, current);
    // A limit below the current size (events still in the period) means "no further scale-up for now".
    const limit = Math.max(rate.limit, current);
    if (maxReplicas > limit) {
      if (desired > limit) {
        return {
          desired: limit,
          reason: 'ScaleUpLimit',
          message: 'the desired replica count is increasing faster than the maximum scale rate',
          step: `${rate.describe} → ${limit}`,
        };
      }
    } else if (desired > maxReplicas) {
      return {
        desired: maxReplicas,
        reason: 'TooManyReplicas',
        message: 'the desired replica count is more than the maximum replica count',
        step: `capped at maxReplicas ${maxReplicas} → ${maxReplicas}`,
      };
    }
  } else if (desired < current) {
    const rate = scaleDownLimit(behavior.scaleDown, history, nowMs, current);
    const limit = Math.min(rate.limit, current);
    if (minReplicas < limit) {
      if (desired < limit) {
        return {
          desired: limit,
          reason: 'ScaleDownLimit',
          message: 'the desired replica count is decreasing faster than the maximum scale rate',
          step: `${rate.describe} → ${limit}`,
        };
      }
    } else if (desired < minReplicas) {
      return {
        desired: minReplicas,
        reason: 'TooFewReplicas',
        message: 'the desired replica count is less than the minimum replica count',
        step: `raised to minReplicas ${minReplicas} → ${minReplicas}`,
      };
    }
  }
  return { desired, reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
}

interface RateLimit {
  limit: number;
  describe: string;
}

/** calculateScaleUpLimitWithScalingRules: each policy allows a change relative to the size at its period's start. */
function scaleUpLimit(rules: ResolvedScalingRules, history: HpaHistory, nowMs: number, current: number): RateLimit {
  if (rules.selectPolicy === 'Disabled') {
    return { limit: current, describe: 'scale-up is disabled (selectPolicy Disabled)' };
  }
  const useMin = rules.selectPolicy === 'Min';
  let limit = useMin ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
  const parts: string[] = [];
  for (const policy of rules.policies) {
    const added = changeInPeriod(history.scaleUpEvents, policy.periodSeconds, nowMs);
    const deleted = changeInPeriod(history.scaleDownEvents, policy.periodSeconds, nowMs);
    const periodStart = current - added + deleted;
    // Percent rounds up, or a small target could never grow (horizontal.go's comment).
    const proposed =
      policy.type === 'Pods' ? periodStart + policy.value : Math.ceil(periodStart * (1 + policy.value / 100));
    limit = useMin ? Math.min(limit, proposed) : Math.max(limit, proposed);
    parts.push(describePolicy('+', policy, added, 'added'));
  }
  return { limit, describe: describeRate('scale-up', rules.selectPolicy, parts) };
}

/** calculateScaleDownLimitWithBehaviors: the mirror image; "Min" means the smallest change (the highest floor). */
function scaleDownLimit(rules: ResolvedScalingRules, history: HpaHistory, nowMs: number, current: number): RateLimit {
  if (rules.selectPolicy === 'Disabled') {
    return { limit: current, describe: 'scale-down is disabled (selectPolicy Disabled)' };
  }
  const useMin = rules.selectPolicy === 'Min';
  let limit = useMin ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  const parts: string[] = [];
  for (const policy of rules.policies) {
    const added = changeInPeriod(history.scaleUpEvents, policy.periodSeconds, nowMs);
    const deleted = changeInPeriod(history.scaleDownEvents, policy.periodSeconds, nowMs);
    const periodStart = current - added + deleted;
    const proposed =
      policy.type === 'Pods' ? periodStart - policy.value : Math.trunc(periodStart * (1 - policy.value / 100));
    limit = useMin ? Math.max(limit, proposed) : Math.min(limit, proposed);
    parts.push(describePolicy('−', policy, deleted, 'removed'));
  }
  return { limit, describe: describeRate('scale-down', rules.selectPolicy, parts) };
}

/** getReplicasChangePerPeriod: the change recorded strictly within the last `periodSeconds`. */
function changeInPeriod(
  events: ReadonlyArray<{ change: number; atMs: number }>,
  periodSeconds: number,
  nowMs: number,
): number {
  const cutoff = nowMs - periodSeconds * 1000;
  return events.reduce((sum, event) => (event.atMs > cutoff ? sum + event.change : sum), 0);
}

function describePolicy(sign: string, policy: HpaScalingPolicy, changed: number, verb: string): string {
  const amount = policy.type === 'Pods' ? `${policy.value} Pod${policy.value === 1 ? '' : 's'}` : `${policy.value}%`;
  const already = changed > 0 ? ` (${changed} ${verb} in the last ${policy.periodSeconds} s)` : '';
  return `${sign}${amount} per ${policy.periodSeconds} s${already}`;
}

function describeRate(direction: string, select: SelectPolicy, parts: string[]): string {
  if (parts.length === 1) return `${direction} policy allows ${parts[0] ?? ''}`;
  return `${direction} policies (selectPolicy ${select} of ${parts.join(', ')}) allow`;
}

/** storeScaleEvent: remember the change (events older than the longest policy period are no longer needed). */
function storeScaleEvent(
  history: HpaHistory,
  behavior: ResolvedBehavior,
  nowMs: number,
  previous: number,
  next: number,
): HpaHistory {
  if (next > previous) {
    const keepMs = longestPeriodSeconds(behavior.scaleUp) * 1000;
    return {
      ...history,
      scaleUpEvents: [
        ...history.scaleUpEvents.filter((event) => event.atMs >= nowMs - keepMs),
        { change: next - previous, atMs: nowMs },
      ],
    };
  }
  const keepMs = longestPeriodSeconds(behavior.scaleDown) * 1000;
  return {
    ...history,
    scaleDownEvents: [
      ...history.scaleDownEvents.filter((event) => event.atMs >= nowMs - keepMs),
      { change: previous - next, atMs: nowMs },
    ],
  };
}

function longestPeriodSeconds(rules: ResolvedScalingRules): number {
  return rules.policies.reduce((longest, policy) => Math.max(longest, policy.periodSeconds), 0);
}

// ---------------------------------------------------------------------------------------------------------------
// The legacy path (no behavior): a 300 s scale-down window, and at most max(2 × current, 4) per reconcile

function normalizeLegacy(
  history: HpaHistory,
  nowMs: number,
  current: number,
  proposed: number,
  minReplicas: number,
  maxReplicas: number,
): Normalized {
  const steps: string[] = [];
  const windowSeconds = HPA_DEFAULTS.downscaleStabilizationSeconds;
  const cutoff = nowMs - windowSeconds * 1000;
  // stabilizeRecommendation: the highest recommendation of the window (samples at the cutoff still count).
  let stabilized = proposed;
  for (const rec of history.recommendations) if (rec.atMs >= cutoff) stabilized = Math.max(stabilized, rec.replicas);
  const recommendations = [
    ...history.recommendations.filter((rec) => rec.atMs >= cutoff),
    { replicas: proposed, atMs: nowMs },
  ];
  let ableToScale: HpaConditionUpdate;
  if (stabilized !== proposed) {
    ableToScale = {
      status: 'True',
      reason: 'ScaleDownStabilized',
      message: 'recent recommendations were higher than current one, applying the highest recent recommendation',
    };
    steps.push(
      `scale-down stabilization window ${windowSeconds} s holds the highest recent recommendation → ${stabilized}`,
    );
  } else {
    ableToScale = { status: 'True', reason: 'ReadyForNewScale', message: 'recommended size matches current size' };
  }

  // convertDesiredReplicasWithRules
  const scaleUpLimit = Math.floor(
    Math.max(HPA_DEFAULTS.legacyScaleUpLimitFactor * current, HPA_DEFAULTS.legacyScaleUpLimitMinimum),
  );
  let limited: Limited;
  if (stabilized < minReplicas) {
    limited = {
      desired: minReplicas,
      reason: 'TooFewReplicas',
      message: 'the desired replica count is less than the minimum replica count',
      step: `raised to minReplicas ${minReplicas} → ${minReplicas}`,
    };
  } else if (maxReplicas > scaleUpLimit && stabilized > scaleUpLimit) {
    limited = {
      desired: scaleUpLimit,
      reason: 'ScaleUpLimit',
      message: 'the desired replica count is increasing faster than the maximum scale rate',
      step: `scale-up without behavior allows at most max(2 × ${current}, 4) → ${scaleUpLimit}`,
    };
  } else if (maxReplicas <= scaleUpLimit && stabilized > maxReplicas) {
    limited = {
      desired: maxReplicas,
      reason: 'TooManyReplicas',
      message: 'the desired replica count is more than the maximum replica count',
      step: `capped at maxReplicas ${maxReplicas} → ${maxReplicas}`,
    };
  } else {
    limited = {
      desired: stabilized,
      reason: 'DesiredWithinRange',
      message: 'the desired count is within the acceptable range',
    };
  }
  if (limited.step) steps.push(limited.step);
  return {
    desired: limited.desired,
    history: { ...history, recommendations },
    ableToScale,
    scalingLimited: {
      status: limited.desired === stabilized ? 'False' : 'True',
      reason: limited.reason,
      message: limited.message,
    },
    steps,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Input checks

function resolveRules(rules: HpaScalingRules | undefined, defaults: ResolvedScalingRules, field: string) {
  if (rules === undefined) return { ...defaults, policies: defaults.policies.map((policy) => ({ ...policy })) };
  if (!isRecord(rules)) throw new KedaInvalidScaledObjectError(field, `got ${describeValue(rules)}`, 'an object');
  const window = rules.stabilizationWindowSeconds ?? defaults.stabilizationWindowSeconds;
  if (!Number.isInteger(window) || window < 0 || window > 3600) {
    throw new KedaInvalidScaledObjectError(
      `${field}.stabilizationWindowSeconds`,
      `got ${describeValue(rules.stabilizationWindowSeconds)}`,
      'an integer number of seconds from 0 to 3600',
    );
  }
  const selectPolicy = rules.selectPolicy ?? defaults.selectPolicy;
  if (!Object.hasOwn(SELECT_POLICIES, selectPolicy)) {
    throw new KedaInvalidScaledObjectError(
      `${field}.selectPolicy`,
      `got ${describeValue(rules.selectPolicy)}`,
      Object.keys(SELECT_POLICIES).join(', '),
    );
  }
  const policies = rules.policies ?? defaults.policies;
  if (!Array.isArray(policies) || policies.length === 0) {
    throw new KedaInvalidScaledObjectError(
      `${field}.policies`,
      `got ${describeValue(rules.policies)}`,
      'a non-empty list',
    );
  }
  policies.forEach((policy, index) => {
    const at = `${field}.policies[${index}]`;
    if (!isRecord(policy)) throw new KedaInvalidScaledObjectError(at, `got ${describeValue(policy)}`, 'an object');
    if (!Object.hasOwn(POLICY_TYPES, policy.type)) {
      throw new KedaInvalidScaledObjectError(`${at}.type`, `got ${describeValue(policy.type)}`, 'Pods, Percent');
    }
    if (!Number.isInteger(policy.value) || policy.value <= 0) {
      throw new KedaInvalidScaledObjectError(`${at}.value`, `got ${describeValue(policy.value)}`, 'an integer > 0');
    }
    if (!Number.isInteger(policy.periodSeconds) || policy.periodSeconds <= 0 || policy.periodSeconds > 1800) {
      throw new KedaInvalidScaledObjectError(
        `${at}.periodSeconds`,
        `got ${describeValue(policy.periodSeconds)}`,
        'an integer number of seconds from 1 to 1800',
      );
    }
  });
  return {
    stabilizationWindowSeconds: window,
    selectPolicy,
    policies: policies.map((policy) => ({ ...policy })),
  };
}

function validateInput(input: HpaInput): void {
  if (!Number.isFinite(input.nowMs)) {
    throw new KedaInvalidHpaInputError('nowMs', `got ${describeValue(input.nowMs)}`, 'epoch milliseconds');
  }
  for (const field of ['specReplicas', 'statusReplicas', 'readyReplicas', 'minReplicas'] as const) {
    const value = input[field];
    if (value === undefined && field !== 'specReplicas' && field !== 'minReplicas') continue;
    if (!Number.isInteger(value) || (value as number) < 0) {
      throw new KedaInvalidHpaInputError(field, `got ${describeValue(value)}`, 'an integer >= 0');
    }
  }
  if (!Number.isInteger(input.maxReplicas) || input.maxReplicas < Math.max(1, input.minReplicas)) {
    throw new KedaInvalidHpaInputError(
      'maxReplicas',
      `got ${describeValue(input.maxReplicas)}`,
      `an integer >= 1 and >= minReplicas (${input.minReplicas})`,
    );
  }
  if (input.tolerance !== undefined && !(input.tolerance >= 0)) {
    throw new KedaInvalidHpaInputError('tolerance', `got ${describeValue(input.tolerance)}`, 'a number >= 0');
  }
  input.metrics.forEach((metric, index) => {
    if (!Object.hasOwn(METRIC_TARGET_TYPES, metric.targetType)) {
      throw new KedaInvalidHpaInputError(
        `metrics[${index}].targetType`,
        `got ${describeValue(metric.targetType)}`,
        'AverageValue, Value',
      );
    }
    if (!Number.isFinite(metric.target) || toMilli(metric.target) <= 0) {
      throw new KedaInvalidHpaInputError(
        `metrics[${index}].target`,
        `got ${describeValue(metric.target)}`,
        'a number >= 0.001',
      );
    }
    if (metric.value !== undefined && !Number.isFinite(metric.value)) {
      throw new KedaInvalidHpaInputError(
        `metrics[${index}].value`,
        `got ${describeValue(metric.value)}`,
        'a finite number',
      );
    }
  });
}

/** Not a type guard on purpose: the typed input keeps its type after the check. */
function isRecord(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeValue(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}
