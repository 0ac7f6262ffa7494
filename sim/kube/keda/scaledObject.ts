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
    ...(behavior !== undefined ? { behavior } : {}),
    restoreToOriginalReplicaCount: spec.advanced?.restoreToOriginalReplicaCount === true,
    triggers: triggers.map((trigger, index) => parsePrometheusTrigger(trigger, index)),
    authenticationNames: triggers.flatMap((trigger) =>
      trigger.authenticationRef ? [trigger.authenticationRef.name] : [],
    ),
  };
}

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
