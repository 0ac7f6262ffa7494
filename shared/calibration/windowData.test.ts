import { describe, expect, it } from '@jest/globals';
import { CalibrationStepDataMissingError } from './errors.js';
import { parseCalibrationInput } from './input.js';
import { testInput } from './testing/steps.js';
import { judgeWindowData, type WindowDataContext } from './windowData.js';

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

describe('Input: ingestion', () => {
  it('defaults to a 180 s bound polled every 3 s', () => {
    expect(testInput().ingestion).toEqual({ timeoutSeconds: 180, pollSeconds: 3 });
  });

  it('refuses a bound above 900 s, naming the field', () => {
    const raw = { ...testInput(), ingestion: { timeoutSeconds: 3600 } };
    expect(() => parseCalibrationInput(raw)).toThrow(/ingestion.timeoutSeconds: must be <= 900 seconds/);
  });
});
