/**
 * Reading a ScaledObject as the KEDA operator does (defaults, bounds checks, triggers), and the objects it derives
 * from it: the `autoscaling/v2` HorizontalPodAutoscaler (kedacore/keda `controllers/keda/hpa.go`,
 * `newHPAForScaledObject`) and the HPA's status entries.
 */
import type { KubeObject } from '../types.js';
import { KEDA_DEFAULTS } from './activation.js';
import { KedaInvalidScaledObjectError } from './errors.js';
import { resolveBehavior, type HpaBehavior, type MetricOutcome } from './hpaAlgorithm.js';
import { parsePrometheusTrigger, type PrometheusTrigger, type ScaledObjectTrigger } from './prometheusTrigger.js';
import { formatMilliQuantity, toMilli } from './quantity.js';

/** The KEDA release whose behaviour the twin follows (the version label KEDA puts on its HPAs). */
export const KEDA_VERSION = '2.20.2';
/** The label KEDA adds to every ScaledObject and uses as the external metrics' selector. */
export const SCALED_OBJECT_LABEL = 'scaledobject.keda.sh/name';
/** The CRD whose presence means "KEDA is installed". */
export const SCALED_OBJECT_CRD = 'scaledobjects.keda.sh';

/**
 * KEDA's pause annotations (kedacore/keda v2.20 `apis/keda/v1alpha1/scaledobject_types.go`, keda-docs 2.20 "Pause
 * autoscaling"): `paused-replicas: "<n>"` scales the target to n and stops autoscaling; `paused: "true"` stops it at
 * the current count; with both, paused-replicas wins. Removing them resumes.
 */
export const PAUSE_ANNOTATIONS = {
  pausedReplicas: 'autoscaling.keda.sh/paused-replicas',
  paused: 'autoscaling.keda.sh/paused',
} as const;

/** Whether and how a ScaledObject is paused by its annotations. */
export type PauseRequest =
  | { paused: false }
  | { paused: true; replicas: number; reason: string }
  | { paused: true; replicas: undefined; reason: string };

/** A ScaledObject's spec with KEDA's defaults applied and every trigger parsed. */
export interface ParsedScaledObject {
  namespace: string;
  name: string;
  uid: string;
  /** The Deployment it scales (the twin scales Deployments only). */
  targetName: string;
  minReplicaCount?: number;
  maxReplicaCount: number;
  idleReplicaCount?: number;
  pollingIntervalSeconds?: number;
  cooldownPeriodSeconds?: number;
  initialCooldownPeriodSeconds?: number;
  /** `advanced.horizontalPodAutoscalerConfig.name`, else `keda-hpa-<name>`. */
  hpaName: string;
  /** The pause annotations, read as KEDA reads them. */
  pause: PauseRequest;
  /** Copied to the HPA as written (the HPA algorithm fills the defaults). */
  behavior?: HpaBehavior;
  restoreToOriginalReplicaCount: boolean;
  triggers: PrometheusTrigger[];
  /** `authenticationRef` names, for status.authenticationsTypes. */
  authenticationNames: string[];
}

interface ScaledObjectSpec {
  scaleTargetRef?: { apiVersion?: string; kind?: string; name?: string };
  minReplicaCount?: number;
  maxReplicaCount?: number;
  idleReplicaCount?: number;
  pollingInterval?: number;
  cooldownPeriod?: number;
  initialCooldownPeriod?: number;
  advanced?: {
    horizontalPodAutoscalerConfig?: { name?: string; behavior?: HpaBehavior };
    restoreToOriginalReplicaCount?: boolean;
  };
  triggers?: ScaledObjectTrigger[];
}

/** The HPA's minReplicas: minReplicaCount, or 1 when it is 0 / unset (KEDA itself handles 0). */
export function hpaMinReplicas(parsed: ParsedScaledObject): number {
  return parsed.minReplicaCount !== undefined && parsed.minReplicaCount > 0 ? parsed.minReplicaCount : 1;
}

/** Parses and checks a ScaledObject as KEDA's reconciler does; throws KedaInvalid*Error naming the field. */
export function parseScaledObject(so: KubeObject): ParsedScaledObject {
  const spec = (so.spec ?? {}) as ScaledObjectSpec;
  const ref = spec.scaleTargetRef ?? {};
  if (typeof ref.name !== 'string' || ref.name === '') {
    throw new KedaInvalidScaledObjectError('spec.scaleTargetRef.name', 'missing', 'the name of a Deployment');
  }
  const apiVersion = ref.apiVersion ?? 'apps/v1';
  const kind = ref.kind ?? 'Deployment';
  if (kind !== 'Deployment' || apiVersion !== 'apps/v1') {
    throw new KedaInvalidScaledObjectError(
      'spec.scaleTargetRef',
      `got ${apiVersion}/${kind}, which the twin does not scale`,
      'apiVersion apps/v1, kind Deployment',
    );
  }
  const minReplicaCount = optionalInt(spec.minReplicaCount, 'spec.minReplicaCount', 0);
  const maxReplicaCount = optionalInt(spec.maxReplicaCount, 'spec.maxReplicaCount', 1) ?? KEDA_DEFAULTS.maxReplicaCount;
  const idleReplicaCount = optionalInt(spec.idleReplicaCount, 'spec.idleReplicaCount', 0);
  // CheckReplicaCountBoundsAreValid
  if (minReplicaCount !== undefined && minReplicaCount > maxReplicaCount) {
    throw new KedaInvalidScaledObjectError(
      'spec.minReplicaCount',
      `${minReplicaCount} is greater than maxReplicaCount ${maxReplicaCount}`,
      'a value <= maxReplicaCount',
    );
  }
  if (idleReplicaCount !== undefined && idleReplicaCount >= (minReplicaCount ?? 0)) {
    throw new KedaInvalidScaledObjectError(
      'spec.idleReplicaCount',
      `${idleReplicaCount} is not lower than minReplicaCount ${minReplicaCount ?? 0}`,
      'a value < minReplicaCount',
    );
  }
  const pollingIntervalSeconds = optionalInt(spec.pollingInterval, 'spec.pollingInterval', 1);
  const cooldownPeriodSeconds = optionalInt(spec.cooldownPeriod, 'spec.cooldownPeriod', 0);
  const initialCooldownPeriodSeconds = optionalInt(spec.initialCooldownPeriod, 'spec.initialCooldownPeriod', 0);
  const hpaConfig = spec.advanced?.horizontalPodAutoscalerConfig;
  const behavior = hpaConfig?.behavior;
  if (behavior !== undefined) resolveBehavior(behavior, 'spec.advanced.horizontalPodAutoscalerConfig.behavior');
  const triggers = spec.triggers ?? [];
  if (!Array.isArray(triggers) || triggers.length === 0) {
    throw new KedaInvalidScaledObjectError('spec.triggers', 'no triggers', 'at least one prometheus trigger');
  }
  const name = so.metadata.name;
  const pause = parsePauseAnnotations(so.metadata.annotations);
  return {
    namespace: so.metadata.namespace ?? 'default',
    name,
    uid: so.metadata.uid ?? '',
    targetName: ref.name,
    ...(minReplicaCount !== undefined ? { minReplicaCount } : {}),
    maxReplicaCount,
    ...(idleReplicaCount !== undefined ? { idleReplicaCount } : {}),
    ...(pollingIntervalSeconds !== undefined ? { pollingIntervalSeconds } : {}),
    ...(cooldownPeriodSeconds !== undefined ? { cooldownPeriodSeconds } : {}),
    ...(initialCooldownPeriodSeconds !== undefined ? { initialCooldownPeriodSeconds } : {}),
    hpaName: hpaConfig?.name || `keda-hpa-${name}`,
    pause,
    ...(behavior !== undefined ? { behavior } : {}),
    restoreToOriginalReplicaCount: spec.advanced?.restoreToOriginalReplicaCount === true,
    triggers: triggers.map((trigger, index) => parsePrometheusTrigger(trigger, index)),
    authenticationNames: triggers.flatMap((trigger) =>
      trigger.authenticationRef ? [trigger.authenticationRef.name] : [],
    ),
  };
}

/**
 * Reads the pause annotations as KEDA v2.20 does: `paused-replicas` must be a base-10 int32 (KEDA's
 * `GetPausedReplicaCount`, strconv.ParseInt; a negative count could never be applied to a Deployment, so the twin
 * refuses it too) and wins over `paused`; `paused` is read with Go's strconv.ParseBool, and a value that is not a
 * boolean counts as true (`getBoolAnnotation`).
 */
export function parsePauseAnnotations(annotations: Record<string, string> | undefined): PauseRequest {
  const replicasText = annotations?.[PAUSE_ANNOTATIONS.pausedReplicas];
  if (replicasText !== undefined) {
    const replicas = /^[+-]?\d+$/.test(replicasText) ? Number(replicasText) : NaN;
    if (!Number.isInteger(replicas) || replicas < 0 || replicas > 2 ** 31 - 1) {
      throw new KedaInvalidScaledObjectError(
        `metadata.annotations["${PAUSE_ANNOTATIONS.pausedReplicas}"]`,
        `got ${JSON.stringify(replicasText)}`,
        'a replica count written as a base-10 integer >= 0, e.g. "1"',
      );
    }
    return { paused: true, replicas, reason: `${PAUSE_ANNOTATIONS.pausedReplicas} is "${replicasText}"` };
  }
  const pausedText = annotations?.[PAUSE_ANNOTATIONS.paused];
  if (pausedText === undefined || GO_FALSE.has(pausedText)) return { paused: false };
  return {
    paused: true,
    replicas: undefined,
    reason: GO_TRUE.has(pausedText)
      ? `${PAUSE_ANNOTATIONS.paused} is "${pausedText}"`
      : `${PAUSE_ANNOTATIONS.paused} is "${pausedText}", not a boolean, which KEDA reads as true`,
  };
}

/** Go's strconv.ParseBool spellings. */
const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const GO_FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** The HPA KEDA creates for a ScaledObject (deterministic: no timestamps, so an unchanged spec is not rewritten). */
export function buildHpa(so: KubeObject, parsed: ParsedScaledObject): KubeObject {
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: {
      name: parsed.hpaName,
      namespace: parsed.namespace,
      labels: {
        'app.kubernetes.io/name': parsed.hpaName,
        'app.kubernetes.io/version': KEDA_VERSION,
        'app.kubernetes.io/part-of': parsed.name,
        'app.kubernetes.io/managed-by': 'keda-operator',
        ...(so.metadata.labels ?? {}),
      },
      ...(so.metadata.annotations ? { annotations: { ...so.metadata.annotations } } : {}),
      ownerReferences: [
        {
          apiVersion: 'keda.sh/v1alpha1',
          kind: 'ScaledObject',
          name: parsed.name,
          uid: parsed.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: parsed.targetName },
      minReplicas: hpaMinReplicas(parsed),
      maxReplicas: parsed.maxReplicaCount,
      metrics: parsed.triggers.map((trigger) => ({
        type: 'External',
        external: {
          metric: { name: trigger.metricName, selector: { matchLabels: { [SCALED_OBJECT_LABEL]: parsed.name } } },
          target:
            trigger.metricType === 'AverageValue'
              ? { type: 'AverageValue', averageValue: formatMilliQuantity(toMilli(trigger.threshold)) }
              : { type: 'Value', value: formatMilliQuantity(toMilli(trigger.threshold)) },
        },
      })),
      ...(parsed.behavior !== undefined ? { behavior: structuredClone(parsed.behavior) } : {}),
    },
  };
}

/** One `status.currentMetrics` entry; a failed metric has no current value (kubectl shows `<unknown>`). */
export function metricStatus(outcome: MetricOutcome, soName: string): Record<string, unknown> {
  const current: Record<string, string> = {};
  if (outcome.currentMilli !== undefined) {
    current[outcome.targetType === 'AverageValue' ? 'averageValue' : 'value'] = formatMilliQuantity(
      outcome.currentMilli,
    );
  }
  return {
    type: 'External',
    external: { metric: { name: outcome.name, selector: { matchLabels: { [SCALED_OBJECT_LABEL]: soName } } }, current },
  };
}

interface HpaMetricSpec {
  type?: string;
  external?: { target?: { type?: string; averageValue?: string | number; value?: string | number } };
}
interface HpaMetricStatus {
  external?: { current?: { averageValue?: string | number; value?: string | number } };
}

/**
 * The TARGETS column of `kubectl get hpa` for External metrics (kubectl's formatHPAMetrics): `0/25 (avg), 0/5 (avg)`,
 * `<unknown>` for a value not known yet, at most two entries then `+ N more...`.
 */
export function formatHpaTargets(hpa: KubeObject): string {
  const specs = (hpa.spec as { metrics?: HpaMetricSpec[] } | undefined)?.metrics ?? [];
  const statuses = (hpa.status as { currentMetrics?: HpaMetricStatus[] } | undefined)?.currentMetrics ?? [];
  if (specs.length === 0) return '<none>';
  const shown: string[] = [];
  for (const [index, spec] of specs.entries()) {
    if (shown.length === 2) return `${shown.join(', ')} + ${specs.length - 2} more...`;
    const target = spec.external?.target;
    const current = statuses[index]?.external?.current;
    if (target?.averageValue !== undefined) {
      shown.push(`${current?.averageValue ?? '<unknown>'}/${target.averageValue} (avg)`);
    } else {
      shown.push(`${current?.value ?? '<unknown>'}/${target?.value ?? '<unknown>'}`);
    }
  }
  return shown.join(', ');
}

function optionalInt(value: unknown, field: string, minimum: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Number.isInteger(value) || (value as number) < minimum) {
    throw new KedaInvalidScaledObjectError(field, `got ${JSON.stringify(value)}`, `an integer >= ${minimum}`);
  }
  return value as number;
}
