import { describe, expect, it } from '@jest/globals';
import { counterWindowFrom, type CounterWindowQueries } from './counterWindow.js';

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
