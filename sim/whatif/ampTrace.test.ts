import { describe, expect, it } from '@jest/globals';
import { traceFromRange } from './ampTrace.js';
import { WhatIfAmpAnswerError } from './errors.js';

const T0 = Date.parse('2026-12-01T00:00:00Z');
const points = (...values: number[]) => values.map((value, i) => ({ timestampMs: T0 + i * 60_000, value }));

describe('Function: traceFromRange', () => {
  it('holds each one-minute sample for 60 s', () => {
    // Act
    const trace = traceFromRange([{ labels: {}, points: points(2, 4, 6) }], 'q', 60);

    // Assess
    expect(trace.rps.length).toBe(180);
    expect([trace.rps[0], trace.rps[60], trace.rps[179]]).toEqual([2, 4, 6]);
  });

  it('holds a single sample for one step', () => {
    expect(traceFromRange([{ labels: {}, points: points(5) }], 'q', 60).rps.length).toBe(60);
  });

  it.each([
    { case: 'no series', series: [], message: /no series in the range/ },
    {
      case: 'several series',
      series: [
        { labels: { pod: 'a' }, points: points(1) },
        { labels: { pod: 'b' }, points: points(1) },
      ],
      message: /2 series where one sum was expected/,
    },
    {
      case: 'a NaN',
      series: [{ labels: {}, points: points(1, Number.NaN) }],
      message: /the value NaN at .* is not a rate/,
    },
    { case: 'a negative rate', series: [{ labels: {}, points: points(1, -3) }], message: /the value -3 at/ },
    {
      case: 'a gap',
      series: [{ labels: {}, points: [...points(1, 2), { timestampMs: T0 + 10 * 60_000, value: 2 }] }],
      message: /no sample for 540 s before .* \(a gap is not a rate of 0\)/,
    },
  ])('refuses $case', ({ series, message }) => {
    expect(() => traceFromRange(series, 'q', 60)).toThrow(WhatIfAmpAnswerError);
    expect(() => traceFromRange(series, 'q', 60)).toThrow(message);
  });
});
