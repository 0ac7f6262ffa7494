import type { Datum, Dimension } from '../cloudwatch/index.js';
import type { CatalogReading } from '../metrics/index.js';
import type { Target } from '../config/index.js';

/** CloudWatch dimension names, and the reading dimension each per-Pod / per-GPU one comes from. */
export const DIMENSION_NAMES = {
  cluster: 'Cluster',
  namespace: 'Namespace',
  deployment: 'Deployment',
  model: 'Model',
  pod: 'Pod',
  gpu: 'GPU',
} as const;

/** Reading dimension keys (set by readCatalog) that become CloudWatch dimensions; other keys are not published. */
const READING_DIMENSIONS = [
  ['pod', DIMENSION_NAMES.pod],
  ['gpu', DIMENSION_NAMES.gpu],
] as const;

/**
 * Maps catalog readings to CloudWatch datums stamped with the evaluation time. Every datum carries the target's
 * Cluster, Namespace, Deployment and Model, plus Pod / GPU for per-Pod and per-GPU readings. Values are passed as
 * they are: the sink drops what CloudWatch would refuse (NaN, an over-long value) and says why.
 */
export function toDatums(target: Target, readings: readonly CatalogReading[], timeMs: number): Datum[] {
  const timestamp = new Date(timeMs);
  const base: Dimension[] = [
    { Name: DIMENSION_NAMES.cluster, Value: target.cluster },
    { Name: DIMENSION_NAMES.namespace, Value: target.namespace },
    { Name: DIMENSION_NAMES.deployment, Value: target.deployment },
    { Name: DIMENSION_NAMES.model, Value: target.model },
  ];
  return readings.map((reading) => {
    const extra: Dimension[] = [];
    for (const [key, name] of READING_DIMENSIONS) {
      const value = reading.dimensions[key];
      if (value !== undefined) extra.push({ Name: name, Value: value });
    }
    return {
      MetricName: reading.metricName,
      Unit: reading.unit,
      Value: reading.value,
      Timestamp: timestamp,
      Dimensions: [...base, ...extra],
    };
  });
}
