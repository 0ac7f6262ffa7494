import type { RangeSeries } from '../../shared/metrics/index.js';
import { WhatIfAmpAnswerError } from './errors.js';
import { traceFromSamples, type RateTrace } from './trace.js';

/**
 * A trace from a range query of the target's request rate. Every bad answer is an error of its own (the house rule
 * for AMP answers): no series, several series, a value that is NaN, ±Inf or negative, a gap longer than one step.
 * The series may start after the range's start (a Deployment younger than the window): the trace starts there.
 */
export function traceFromRange(series: readonly RangeSeries[], query: string, stepSeconds: number): RateTrace {
  const [only, ...others] = series;
  if (only === undefined || only.points.length === 0)
    throw new WhatIfAmpAnswerError(query, 'no series in the range (is the target serving, and scraped?)');
  if (others.length > 0) throw new WhatIfAmpAnswerError(query, `${series.length} series where one sum was expected`);
  let previousMs: number | undefined;
  const samples = only.points.map(({ timestampMs, value }) => {
    const at = new Date(timestampMs).toISOString();
    if (!Number.isFinite(value) || value < 0)
      throw new WhatIfAmpAnswerError(query, `the value ${value} at ${at} is not a rate >= 0`);
    if (previousMs !== undefined && timestampMs - previousMs > stepSeconds * 1000 * 1.5)
      throw new WhatIfAmpAnswerError(
        query,
        `no sample for ${(timestampMs - previousMs) / 1000} s before ${at} (a gap is not a rate of 0)`,
      );
    previousMs = timestampMs;
    return { t: timestampMs / 1000, rps: value };
  });
  return traceFromSamples(samples, 'amp', stepSeconds);
}
