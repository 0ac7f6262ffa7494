import { describe, expect, it } from '@jest/globals';
import { WhatIfTraceInvalidError } from './errors.js';
import { parseTraceCsv } from './trace.js';

describe('Function: parseTraceCsv', () => {
  it('holds each row of a seconds trace until the next row, the last for the step before it', () => {
    // Act
    const trace = parseTraceCsv('seconds,rps\n0,1\n3,2.5\n# a comment\n\n5,4\n', 't.csv');

    // Assess: 0-2 at 1, 3-4 at 2.5, 5-6 at 4 (the last row holds for the previous step, 2 s).
    expect([...trace.rps]).toEqual([1, 1, 1, 2.5, 2.5, 4, 4]);
  });

  it('reads ISO timestamps, one minute apart, into 60 s per row', () => {
    // Act
    const trace = parseTraceCsv(
      'timestamp,rps\n2026-12-01T00:00:00Z,3\n2026-12-01T00:01:00Z,6\n2026-12-01T00:02:00Z,9\n',
      't.csv',
    );

    // Assess
    expect(trace.rps.length).toBe(180);
    expect([trace.rps[0], trace.rps[59], trace.rps[60], trace.rps[179]]).toEqual([3, 3, 6, 9]);
  });

  it.each([
    { case: 'an empty file', text: '', message: ': the file is empty' },
    { case: 'an unknown header', text: 'time,rate\n0,1\n', message: ' line 1: header "time,rate"' },
    { case: 'no rows', text: 'seconds,rps\n', message: ': no rows after the header' },
    { case: 'a rate that is not a number', text: 'seconds,rps\n0,1\n60,lots\n', message: ' line 3: rps "lots"' },
    { case: 'a negative rate', text: 'seconds,rps\n0,-2\n', message: ' line 2: rps "-2"' },
    { case: 'a time that is not a number', text: 'seconds,rps\nnoon,1\n', message: ' line 2: seconds "noon"' },
    { case: 'a bad timestamp', text: 'timestamp,rps\nyesterday,1\n', message: ' line 2: timestamp "yesterday"' },
    { case: 'times going back', text: 'seconds,rps\n60,1\n0,1\n', message: ' line 3: time 0 is not after' },
    { case: 'three cells', text: 'seconds,rps\n0,1,2\n', message: ' line 2: 3 cells' },
  ])('refuses $case, naming the line', ({ text, message }) => {
    // Act / Assess
    expect(() => parseTraceCsv(text, '--trace t.csv')).toThrow(WhatIfTraceInvalidError);
    expect(() => parseTraceCsv(text, '--trace t.csv')).toThrow(`--trace t.csv${message}`);
  });
});
