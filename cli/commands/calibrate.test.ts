import { describe, expect, it } from '@jest/globals';
import type { InstantSample } from '../../shared/metrics/index.js';
import { liveHoldText } from './calibrate.js';

const QUERIES = { queue: 'sum(vllm:num_requests_waiting{...})', p95E2e: 'histogram_quantile(0.95, ...)' };
const one = (value: number, labels: Record<string, string> = {}): InstantSample => ({ labels, value, timestampMs: 0 });

describe('Function: liveHoldText', () => {
  it.each([
    { case: 'both figures', queue: [one(12)], p95: [one(2.4567)], text: 'queue 12 · p95 2.46 s' },
    { case: 'no data yet (no series, NaN)', queue: [], p95: [one(Number.NaN)], text: 'queue - · p95 -' },
  ])('shows $case', ({ queue, p95, text }) => {
    expect(liveHoldText(QUERIES, queue, p95)).toBe(text);
  });

  it.each([
    {
      case: 'two queue series',
      queue: [one(1, { cluster: 'a' }), one(9, { cluster: 'b' })],
      p95: [one(2)],
      text: /^\(AMP answer refused: MetricsMultipleSeriesError: expected exactly one series, got 2 series: \{"cluster":"a"\}, \{"cluster":"b"\}/,
    },
    {
      case: 'a negative queue',
      queue: [one(-3)],
      p95: [one(2)],
      text: /^\(AMP answer refused: MetricsValueOutOfDomainError: the query returned -3/,
    },
    {
      case: 'a +Inf p95',
      queue: [one(0)],
      p95: [one(Infinity)],
      text: /^\(AMP answer refused: MetricsNonFiniteValueError: the query returned a non-finite value \(\+Inf\)/,
    },
  ])('shows $case as refused instead of a number, without throwing', ({ queue, p95, text }) => {
    expect(liveHoldText(QUERIES, queue, p95)).toMatch(text);
  });
});
