import { describe, expect, it } from '@jest/globals';
import {
  MetricsMultipleSeriesError,
  MetricsNonFiniteValueError,
  MetricsValueOutOfDomainError,
  type InstantSample,
  type MetricsSource,
} from '../metrics/index.js';
import { CalibrationStepDataMissingError } from './errors.js';
import { parseCalibrationInput } from './input.js';
import { testInput } from './testing/steps.js';
import { judgeWindowData, lookForWindowData, type WindowDataContext } from './windowData.js';

const END = Date.UTC(2026, 11, 2, 12, 0, 0);
const context = (nowMs: number, firstLookMs = END): WindowDataContext => ({
  windowEndMs: END,
  nowMs,
  firstLookMs,
  timeoutSeconds: 180,
  stepLabel: 'step 2 (20 req/s)',
});

describe('Function: judgeWindowData', () => {
  it("waits while AMP's newest sample is older than the window's end (a remote-write lag), saying how far behind", () => {
    // Act: 40 s after the window, AMP's newest sample is 12 s before its end.
    const look = judgeWindowData(END - 12_000, context(END + 40_000));

    // Assess
    expect(look.status).toBe('waiting');
    expect(look.waitedSeconds).toBe(40);
    expect(look.reason).toContain("AMP's newest sample of the target is 12 s before the window's end");
  });

  it("measures once a sample past the window's end is in AMP, recording how long after the end that was", () => {
    // Act
    const look = judgeWindowData(END + 2_000, context(END + 47_000));

    // Assess
    expect(look).toMatchObject({ status: 'in', latestSampleMs: END + 2_000, waitedSeconds: 47 });
    expect(look.reason).toMatch(/^AMP held samples past the window's end 47 s after it/);
  });

  it("accepts a sample exactly at the window's end: the last scrape the window's queries can use", () => {
    expect(judgeWindowData(END, context(END + 1_000)).status).toBe('in');
  });

  it('waits when AMP holds no sample of the target at all, and names that', () => {
    const look = judgeWindowData(null, context(END + 5_000));

    expect(look.status).toBe('waiting');
    expect(look.reason).toContain('AMP holds no sample of the target');
  });

  it('fails with CalibrationStepDataMissingError once the wait from the first look reaches the bound, never judging a partial window', () => {
    // Act
    const late = () => judgeWindowData(END - 30_000, context(END + 200_000, END + 10_000));

    // Assess
    expect(late).toThrow(CalibrationStepDataMissingError);
    expect(late).toThrow(
      /step 2 \(20 req\/s\): AMP did not hold the window's data within ingestion.timeoutSeconds \(180 s/,
    );
    expect(late).toThrow(/30 s before the window's end/);
  });
});

describe('Function: lookForWindowData', () => {
  /** A MetricsSource whose instant answer (the newest sample's time, seconds) is `samples`. */
  const answering = (samples: InstantSample[]): MetricsSource => ({
    instant: () => Promise.resolve(samples),
    range: () => Promise.reject(new Error('no range query expected')),
  });
  const at = (seconds: number, labels: Record<string, string> = {}): InstantSample => ({
    labels,
    value: seconds,
    timestampMs: END + 40_000,
  });

  it("judges the window by AMP's newest sample time, to the millisecond", async () => {
    // Act
    const look = await lookForWindowData(answering([at((END + 2_000) / 1000)]), testInput(), context(END + 40_000));

    // Assess
    expect(look).toMatchObject({ status: 'in', latestSampleMs: END + 2_000 });
  });

  it('reads no series and NaN as no sample yet', async () => {
    // Act & Assess
    await expect(lookForWindowData(answering([]), testInput(), context(END + 5_000))).resolves.toMatchObject({
      status: 'waiting',
      latestSampleMs: null,
    });
    await expect(
      lookForWindowData(answering([at(Number.NaN)]), testInput(), context(END + 5_000)),
    ).resolves.toMatchObject({ status: 'waiting', latestSampleMs: null });
  });

  it('refuses two series where the min() gives one, naming both label sets', async () => {
    // Prepare
    const two = [at(END / 1000, { cluster: 'a' }), at(END / 1000, { cluster: 'b' })];

    // Act
    const look = lookForWindowData(answering(two), testInput(), context(END + 5_000));

    // Assess
    await expect(look).rejects.toThrow(MetricsMultipleSeriesError);
    await expect(look).rejects.toThrow('got 2 series: {"cluster":"a"}, {"cluster":"b"}');
  });

  it.each([
    { case: 'a negative time', value: -1, error: MetricsValueOutOfDomainError },
    { case: '+Inf', value: Infinity, error: MetricsNonFiniteValueError },
  ])('refuses $case with a named error, never a time to judge by', async ({ value, error }) => {
    await expect(lookForWindowData(answering([at(value)]), testInput(), context(END + 5_000))).rejects.toThrow(error);
  });
});

describe('Input: ingestion', () => {
  it('defaults to a 180 s bound polled every 3 s', () => {
    expect(testInput().ingestion).toEqual({ timeoutSeconds: 180, pollSeconds: 3 });
  });

  it('refuses a bound above 900 s, naming the field', () => {
    const raw = { ...testInput(), ingestion: { timeoutSeconds: 3600 } };
    expect(() => parseCalibrationInput(raw)).toThrow(/ingestion.timeoutSeconds: must be <= 900 seconds/);
  });
});
