import { PUT_METRIC_DATA_LIMITS } from './limits.js';
import type { Datum, DroppedDatum } from './types.js';
import { datumProblem } from './validate.js';

export interface BatchLimits {
  maxDatumsPerRequest: number;
  maxRequestBytes: number;
}

/** Which datums go into which request, and which are not sent at all (with the reason). */
export interface BatchPlan {
  /** Each batch lists datum positions in the input array, in input order. */
  batches: number[][];
  dropped: DroppedDatum[];
}

/**
 * Splits datums into PutMetricData requests that respect both the datum count and the body size limit, after
 * dropping the datums CloudWatch would refuse (one bad datum makes it refuse the whole request).
 * Sizes are those of the AWS JSON 1.0 body the SDK sends: `{"Namespace":..,"MetricData":[datum,datum,...]}`.
 */
export function planBatches(
  namespace: string,
  datums: readonly Datum[],
  limits: BatchLimits = PUT_METRIC_DATA_LIMITS,
): BatchPlan {
  const envelopeBytes = byteLength(JSON.stringify({ Namespace: namespace, MetricData: [] }));
  const batches: number[][] = [];
  const dropped: DroppedDatum[] = [];
  let current: number[] = [];
  let currentBytes = envelopeBytes;

  datums.forEach((datum, index) => {
    const problem = datumProblem(datum);
    if (problem !== undefined) {
      dropped.push({ index, metricName: datum.MetricName, reason: problem });
      return;
    }
    // +1 for the comma that separates it from the previous datum.
    const size = serializedDatumBytes(datum) + 1;
    if (envelopeBytes + size > limits.maxRequestBytes) {
      dropped.push({
        index,
        metricName: datum.MetricName,
        reason: `is ${size} bytes once serialised; a request holds at most ${limits.maxRequestBytes}`,
      });
      return;
    }
    if (current.length >= limits.maxDatumsPerRequest || currentBytes + size > limits.maxRequestBytes) {
      batches.push(current);
      current = [];
      currentBytes = envelopeBytes;
    }
    current.push(index);
    currentBytes += size;
  });
  if (current.length > 0) batches.push(current);
  return { batches, dropped };
}

/** Bytes of one datum in the SDK's JSON 1.0 encoding (timestamps as epoch seconds). */
export function serializedDatumBytes(datum: Datum): number {
  return byteLength(
    JSON.stringify({
      MetricName: datum.MetricName,
      Dimensions: datum.Dimensions,
      Timestamp: datum.Timestamp.getTime() / 1000,
      Value: datum.Value,
      Unit: datum.Unit,
    }),
  );
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
