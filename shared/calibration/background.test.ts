import { describe, expect, it } from '@jest/globals';
import {
  MetricsNonFiniteValueError,
  MetricsValueOutOfDomainError,
  type MetricsSource,
  type RangeSeries,
} from '../metrics/index.js';
import {
  countCompletions,
  k6RateFor,
  lastCalibrationRecord,
  measureBackground,
  parseLastCalibration,
  refuseServingTarget,
} from './background.js';
import { CalibrationTargetServingError } from './errors.js';
import { testInput } from './testing/steps.js';

const T0 = Date.UTC(2026, 11, 2, 12, 0, 0);
const points = (values: number[], stepSeconds = 15) =>
  values.map((value, i) => ({ timestampMs: T0 + i * stepSeconds * 1000, value }));

/** A MetricsSource that must not be asked: the measurement is expected to come from the Deployment's record. */
const unasked: MetricsSource = {
  instant: () => Promise.reject(new Error('AMP was asked')),
  range: () => Promise.reject(new Error('AMP was asked')),
};

describe('Function: countCompletions', () => {
  it('divides the completions of every counter series by the seconds the samples cover', () => {
    // Two Pods' counters over 60 s: 30 and 90 completions.
    const result = countCompletions([
      { labels: { pod: 'a' }, points: points([100, 110, 120, 130, 130]) },
      { labels: { pod: 'b' }, points: points([0, 20, 40, 60, 90]) },
    ]);

    expect(result).toEqual({ completed: 120, coveredSeconds: 60 });
  });

  it('counts a drop as a restart from 0 (a replaced or restarted Pod), as increase() does', () => {
    expect(countCompletions([{ labels: {}, points: points([50, 60, 4, 10]) }]).completed).toBe(10 + 4 + 6);
  });

  it('covers nothing with fewer than two samples', () => {
    expect(countCompletions([{ labels: {}, points: points([7]) }])).toEqual({ completed: 0, coveredSeconds: 0 });
  });
});

describe('Function: measureBackground', () => {
  it('keeps the background the last calibration measured when it ended within the lookback (its load is in AMP)', async () => {
    const last = parseLastCalibration(lastCalibrationRecord(T0 - 90_000, 3.5));

    const background = await measureBackground(unasked, testInput(), T0, last);

    expect(background.rateRps).toBe(3.5);
    expect(background.reason).toMatch(/^the last calibration ended 90 s ago/);
  });

  it('measures from AMP once the last calibration ended longer than the lookback ago', async () => {
    const source: MetricsSource = {
      instant: () => Promise.resolve([]),
      range: () => Promise.resolve([{ labels: {}, points: points([0, 30, 60, 90, 120]) }]),
    };
    const last = parseLastCalibration(lastCalibrationRecord(T0 - 600_000, 3.5));

    const background = await measureBackground(source, testInput(), T0, last);

    expect(background.rateRps).toBe(2);
    expect(background.reason).toContain('2 completed req/s over the last 60 s');
  });
});

describe('Function: measureBackground, bad AMP answers', () => {
  const ranging = (series: RangeSeries[]): MetricsSource => ({
    instant: () => Promise.reject(new Error('no instant query expected')),
    range: () => Promise.resolve(series),
  });

  it("sums every Pod's counter series: one per Pod and finish reason is the answer's shape, not an error", async () => {
    // Prepare: two Pods, 60 and 60 completions over 60 s.
    const series = [
      { labels: { pod: 'a', finished_reason: 'stop' }, points: points([0, 15, 30, 45, 60]) },
      { labels: { pod: 'b', finished_reason: 'stop' }, points: points([0, 15, 30, 45, 60]) },
    ];

    // Act
    const background = await measureBackground(ranging(series), testInput(), T0);

    // Assess
    expect(background.rateRps).toBe(2);
  });

  it.each([
    { case: 'a negative counter sample', value: -4, error: MetricsValueOutOfDomainError },
    { case: 'a +Inf counter sample', value: Infinity, error: MetricsNonFiniteValueError },
  ])('refuses $case with a named error naming its series, never a rate', async ({ value, error }) => {
    // Prepare
    const series = [
      { labels: { pod: 'a' }, points: points([0, 30, 60]) },
      { labels: { pod: 'b' }, points: points([0, value, 60]) },
    ];

    // Act
    const measured = measureBackground(ranging(series), testInput(), T0);

    // Assess
    await expect(measured).rejects.toThrow(error);
    await expect(measured).rejects.toThrow(/\{"pod":"b"\}/);
  });
});

describe('Function: parseLastCalibration', () => {
  it('ignores a record that is not one (a hand-edited annotation is not trusted)', () => {
    expect(parseLastCalibration('{"endedAtMs":"yesterday"}')).toBeUndefined();
    expect(parseLastCalibration('not json')).toBeUndefined();
    expect(parseLastCalibration(undefined)).toBeUndefined();
    expect(parseLastCalibration('{"endedAtMs":5,"backgroundRps":-1}')).toEqual({ endedAtMs: 5, backgroundRps: null });
  });
});

describe('Function: refuseServingTarget', () => {
  const serving = { rateRps: 2.4, reason: 'the target served 2.4 completed req/s over the last 300 s' };

  it('refuses an adopted target that serves users, naming the rate and the field that allows it', () => {
    const refuse = () => refuseServingTarget(testInput(), serving);

    expect(refuse).toThrow(CalibrationTargetServingError);
    expect(refuse).toThrow(/served 2\.4 completed req\/s.*set deploy\.allowServingTraffic: true/);
  });

  it('lets it through when the input allows it, in apply mode, and below 0.05 req/s', () => {
    const allowed = testInput({ deploy: { mode: 'adopt', allowServingTraffic: true } });
    expect(() => refuseServingTarget(allowed, serving)).not.toThrow();
    expect(() => refuseServingTarget(testInput(), { rateRps: 0.01, reason: 'health checks' })).not.toThrow();
  });
});

describe('Function: k6RateFor', () => {
  it('offers k6 the planned rate less the background, never less than 0.1 req/s', () => {
    expect(k6RateFor(20, 4.25)).toBe(15.75);
    expect(k6RateFor(3, 4.25)).toBe(0.1);
  });
});
