import { describe, expect, it } from '@jest/globals';
import {
  MetricsMultipleSeriesError,
  MetricsNonFiniteValueError,
  MetricsValueOutOfDomainError,
  type InstantSample,
  type MetricsSource,
} from '../metrics/index.js';
import {
  counterWindowFrom,
  counterWindowQueries,
  measureCounterWindow,
  type CounterWindowQueries,
} from './counterWindow.js';
import { calibrationTarget } from './stepQueries.js';
import { testInput } from './testing/steps.js';

const START_S = 1_000;
const PARAMS = { startMs: START_S * 1000, endMs: (START_S + 60) * 1000, backgroundRps: 0 };

type Readings = Record<keyof CounterWindowQueries, Map<string, number>>;

/** One reading: per Pod, when it was last scraped and its completions (the other counters follow them). */
function reading(pods: Record<string, { at: number; completed: number; preemptions?: number }>): Readings {
  const map = (f: (p: { at: number; completed: number; preemptions?: number }) => number) =>
    new Map(Object.entries(pods).map(([pod, p]) => [pod, f(p)]));
  return {
    scrapedAt: map((p) => p.at),
    completed: map((p) => p.completed),
    preemptions: map((p) => p.preemptions ?? 0),
    e2eSum: map((p) => p.completed * 3),
    e2eCount: map((p) => p.completed),
    ttftSum: map((p) => p.completed * 0.5),
    ttftCount: map((p) => p.completed),
    inferenceSum: map((p) => p.completed * 2.6),
    inferenceCount: map((p) => p.completed),
  };
}

describe('Function: counterWindowFrom', () => {
  it("sums each Pod's completions over its own seconds from the load's start to its last sample", () => {
    // Prepare: two Pods scraped at different phases, 10 completions/s each once the load runs.
    const before = reading({ a: { at: START_S - 20, completed: 100 }, b: { at: START_S - 5, completed: 50 } });
    const after = reading({
      a: { at: START_S + 40, completed: 500, preemptions: 2 },
      b: { at: START_S + 55, completed: 600 },
    });

    // Act
    const window = counterWindowFrom(before, after, PARAMS);

    // Assess
    expect(window?.completedRps).toBeCloseTo(400 / 40 + 550 / 55, 9);
    expect(window?.spanSeconds).toBe(47.5);
    expect(window?.preemptions).toBe(2);
    expect(window?.meanLifetimeSeconds).toBeCloseTo(2.5, 9);
    expect(window?.meanInferenceSeconds).toBeCloseTo(2.6, 9);
  });

  it("takes the users' completions during the rest before the load off", () => {
    // Prepare: 2 req/s of users; the sample before the load is 30 s before it, so 60 of the completions are theirs.
    const before = reading({ a: { at: START_S - 30, completed: 0 } });
    const after = reading({ a: { at: START_S + 30, completed: 60 + 30 * 12 } });

    // Act
    const window = counterWindowFrom(before, after, { ...PARAMS, backgroundRps: 2 });

    // Assess: what the users and k6 completed together over the 30 s of load.
    expect(window?.completedRps).toBeCloseTo(12, 9);
  });

  it('gives the late half from the middle sample to the last one, where it begins, and its time in the batch', () => {
    const before = reading({ a: { at: START_S - 1, completed: 0 } });
    const middle = reading({ a: { at: START_S + 25, completed: 150 } });
    const after = reading({ a: { at: START_S + 55, completed: 450 } });
    // The requests finished in the late half ran in a fuller batch: 3.4 s each (300 of them), the first 150 2.6 s.
    after.inferenceSum.set('a', 150 * 2.6 + 300 * 3.4);

    const window = counterWindowFrom(before, after, PARAMS, middle);

    expect(window?.lateHalf).toEqual({
      completedRps: 10,
      fromSeconds: 25,
      meanInferenceSeconds: expect.closeTo(3.4, 9),
    });
    expect(window?.meanInferenceSeconds).toBeCloseTo((150 * 2.6 + 300 * 3.4) / 450, 9);
  });

  it.each([
    ['a Pod has no sample inside the window', { at: START_S - 1, completed: 0 }, { at: START_S, completed: 0 }],
    ['a counter went down (vLLM restarted)', { at: START_S - 1, completed: 500 }, { at: START_S + 30, completed: 20 }],
    [
      'the sample "before" is after the load began',
      { at: START_S + 5, completed: 0 },
      { at: START_S + 30, completed: 9 },
    ],
  ])('is null (the caller keeps increase) when %s', (_why, first, last) => {
    expect(counterWindowFrom(reading({ a: first }), reading({ a: last }), PARAMS)).toBeNull();
  });

  it('is null when a Pod appeared or vanished between the two readings', () => {
    const before = reading({ a: { at: START_S - 1, completed: 0 } });
    const after = reading({ a: { at: START_S + 30, completed: 300 }, b: { at: START_S + 30, completed: 10 } });

    expect(counterWindowFrom(before, after, PARAMS)).toBeNull();
    expect(counterWindowFrom(after, reading({ a: { at: START_S + 30, completed: 300 } }), PARAMS)).toBeNull();
  });
});

describe('Function: measureCounterWindow', () => {
  const target = calibrationTarget(testInput());
  const queries = counterWindowQueries(target);
  const middleMs = (PARAMS.startMs + PARAMS.endMs) / 2;
  const before = reading({ a: { at: START_S - 20, completed: 100 }, b: { at: START_S - 5, completed: 50 } });
  const middle = reading({ a: { at: START_S + 25, completed: 300 }, b: { at: START_S + 25, completed: 300 } });
  const after = reading({ a: { at: START_S + 40, completed: 500 }, b: { at: START_S + 55, completed: 600 } });
  const atTime = new Map([
    [PARAMS.startMs, before],
    [middleMs, middle],
    [PARAMS.endMs, after],
  ]);

  /** A MetricsSource answering each per-Pod query from the readings; `bad` replaces one answer at the window's end. */
  function source(bad?: { key: keyof CounterWindowQueries; samples: InstantSample[] }): MetricsSource {
    const keyOf = new Map(Object.entries(queries).map(([key, query]) => [query, key as keyof CounterWindowQueries]));
    return {
      instant: (query, options) => {
        const key = keyOf.get(query) as keyof CounterWindowQueries;
        const timeMs = options?.timeMs ?? 0;
        if (bad !== undefined && bad.key === key && timeMs === PARAMS.endMs) return Promise.resolve(bad.samples);
        const values = atTime.get(timeMs)?.[key] ?? new Map<string, number>();
        return Promise.resolve([...values].map(([pod, value]) => ({ labels: { pod }, value, timestampMs: timeMs })));
      },
      range: () => Promise.reject(new Error('no range query expected')),
    };
  }
  const sample = (pod: string, value: number, labels: Record<string, string> = {}): InstantSample => ({
    labels: { pod, ...labels },
    value,
    timestampMs: PARAMS.endMs,
  });

  it("reads the same figures from AMP's per-Pod answers as from the readings themselves", async () => {
    // Act
    const window = await measureCounterWindow(source(), target, PARAMS);

    // Assess
    expect(window).toEqual(counterWindowFrom(before, after, PARAMS, middle));
    expect(window?.completedRps).toBeCloseTo(400 / 40 + 550 / 55, 9);
  });

  it('refuses two series for one Pod with a named error naming both label sets, never taking one', async () => {
    // Prepare
    const twice = [
      sample('a', 500, { instance: '10.0.0.1:8000' }),
      sample('b', 600),
      sample('a', 20, { instance: '10.0.0.2:8000' }),
    ];

    // Act
    const measured = measureCounterWindow(source({ key: 'completed', samples: twice }), target, PARAMS);

    // Assess
    await expect(measured).rejects.toThrow(MetricsMultipleSeriesError);
    await expect(measured).rejects.toThrow(
      'expected one series per pod, got 2 series: {"pod":"a","instance":"10.0.0.1:8000"}, {"pod":"a","instance":"10.0.0.2:8000"}',
    );
  });

  it.each([
    { case: 'a negative counter', key: 'completed' as const, value: -3, error: MetricsValueOutOfDomainError },
    { case: 'a +Inf sample time', key: 'scrapedAt' as const, value: Infinity, error: MetricsNonFiniteValueError },
    { case: 'a -Inf latency sum', key: 'e2eSum' as const, value: -Infinity, error: MetricsNonFiniteValueError },
  ])('refuses $case with a named error, never a number', async ({ key, value, error }) => {
    // Act
    const measured = measureCounterWindow(
      source({ key, samples: [sample('a', value), sample('b', 1)] }),
      target,
      PARAMS,
    );

    // Assess
    await expect(measured).rejects.toThrow(error);
    await expect(measured).rejects.toThrow(/\{"pod":"a"\}/);
  });
});
