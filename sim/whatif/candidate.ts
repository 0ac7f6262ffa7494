import { findTriggers } from '../../shared/keda/index.js';
import type { KubeObject } from '../../shared/kube/index.js';
import { parseScaledObject, type ParsedScaledObject } from '../kube/keda/scaledObject.js';
import { WhatIfCandidateInvalidError } from './errors.js';

/**
 * A candidate ScaledObject read as the twin's KEDA reads it (`parseScaledObject`: defaults, bounds, behavior, the
 * triggers' thresholds and metricType), with its two triggers found by what their queries read (`findTriggers`,
 * the calibration's own rule), since the replay computes their values itself instead of querying Prometheus.
 */
export interface Candidate {
  /** What the user called it: `guide`, `report:r.json`, `so.yaml`. */
  label: string;
  scaledObject: ParsedScaledObject;
  /** Index in `scaledObject.triggers` of the queue-depth trigger and of the p95-latency trigger. */
  queueTrigger: number;
  latencyTrigger: number;
  /** The latency query's rate window (`[1m]` → 60), over which KEDA's p95 is computed. */
  rateWindowS: number;
  /**
   * The request shape the thresholds were calibrated with (a report's or history record's provenance), when known:
   * a replay with another shape judges them against a replica they were not measured on.
   */
  calibratedShape?: { promptTokens: number; maxTokens: number };
}

/** Reads a candidate from a ScaledObject manifest; fails naming the field when the replay cannot run it. */
export function candidateFromScaledObject(label: string, manifest: unknown): Candidate {
  if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest))
    throw new WhatIfCandidateInvalidError(
      label,
      'the manifest',
      `got ${typeof manifest}`,
      'a ScaledObject (YAML or JSON mapping)',
    );
  const object = manifest as KubeObject;
  if (object.kind !== 'ScaledObject')
    throw new WhatIfCandidateInvalidError(label, 'kind', `got ${JSON.stringify(object.kind)}`, 'ScaledObject');
  const name = (object.metadata as { name?: unknown } | undefined)?.name;
  if (typeof name !== 'string' || name === '')
    throw new WhatIfCandidateInvalidError(label, 'metadata.name', 'missing', 'the ScaledObject name');
  let scaledObject: ParsedScaledObject;
  let found: ReturnType<typeof findTriggers>;
  try {
    scaledObject = parseScaledObject(object);
    found = findTriggers(object);
  } catch (error) {
    // KEDA's and the calibration's errors already name the field and what is accepted: pass them on as they are.
    const e = error as Error & { field?: string };
    const field = e.field ?? 'spec.triggers';
    const problem = e.message.startsWith(`${field}: `) ? e.message.slice(field.length + 2) : e.message;
    throw new WhatIfCandidateInvalidError(label, field, problem, '', { cause: error });
  }
  // Any other trigger's value would have to come from somewhere the replay does not model.
  const others = scaledObject.triggers.filter(
    (t) => t.index !== found.queueDepth.index && t.index !== found.p95Latency.index,
  );
  const [other] = others;
  if (other !== undefined)
    throw new WhatIfCandidateInvalidError(
      label,
      `spec.triggers[${other.index}]`,
      `a trigger the replay cannot compute (query ${JSON.stringify(other.query)})`,
      'only the queue-depth and p95-latency triggers',
    );
  return {
    label,
    scaledObject,
    queueTrigger: found.queueDepth.index,
    latencyTrigger: found.p95Latency.index,
    rateWindowS: rateWindowSeconds(label, found.p95Latency.index, found.p95Latency.query),
  };
}

const UNIT_SECONDS: Readonly<Record<string, number>> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

/** The range of the latency query's `rate(...[W])`; a single PromQL duration such as `1m`, `90s` or `1m30s`. */
function rateWindowSeconds(label: string, index: number, query: string): number {
  const range = /\[([0-9a-z]+)\]/.exec(query)?.[1];
  const parts = range === undefined ? [] : [...range.matchAll(/(\d+)(ms|s|m|h|d)/g)];
  const seconds = parts.reduce((sum, [, amount, unit]) => sum + Number(amount) * (UNIT_SECONDS[unit ?? 's'] ?? 0), 0);
  if (range === undefined || parts.map((p) => p[0]).join('') !== range || !(seconds >= 1))
    throw new WhatIfCandidateInvalidError(
      label,
      `spec.triggers[${index}].metadata.query`,
      `no rate window of at least 1 s in ${JSON.stringify(query)}`,
      'a histogram_quantile over rate(...[1m]) or similar',
    );
  return Math.round(seconds);
}
