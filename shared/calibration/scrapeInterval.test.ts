import { describe, expect, it } from '@jest/globals';
import { scrapeSecondsFromSampleTimes } from './scrapeInterval.js';

describe('Function: scrapeSecondsFromSampleTimes', () => {
  it('reads 30 s from samples 30 s apart, repeated at every 1 s step of the range query', () => {
    // A 120 s range at a 1 s step repeats each sample's timestamp until the next one: 5 distinct times.
    const times = Array.from({ length: 121 }, (_, i) => 1_000 + 30 * Math.floor(i / 30));
    expect(scrapeSecondsFromSampleTimes([times])).toBe(30);
  });

  it('takes the median gap, so one missed scrape does not double the interval', () => {
    expect(scrapeSecondsFromSampleTimes([[0, 15, 30, 60, 75, 90]])).toBe(15);
  });

  it('reads every series: a Pod gone before the window (no samples) does not hide the others', () => {
    // The first series is a replaced Pod's, empty in the probe's window; the serving Pod's is scraped every second.
    expect(scrapeSecondsFromSampleTimes([[], [100, 101, 102, 103]])).toBe(1);
  });

  it("falls back to the guide's 30 s with fewer than two sample times", () => {
    expect(scrapeSecondsFromSampleTimes([[42, 42, 42]])).toBe(30);
    expect(scrapeSecondsFromSampleTimes([])).toBe(30);
  });
});
