import { describe, expect, it } from '@jest/globals';
import { formatNumber, progressBar, table } from './output.js';

describe('Function: progressBar', () => {
  it('fills in proportion and clamps', () => {
    expect(progressBar(0.5, 'half', 10)).toBe('[#####.....]  50% half');
    expect(progressBar(2, 'over', 4)).toBe('[####] 100% over');
  });
});

describe('Function: table', () => {
  it('aligns text left and numbers right', () => {
    const out = table(
      ['metric', 'value'],
      [
        ['queue', 3],
        ['p95 latency', 2.4567],
      ],
    );
    expect(out.split('\n')).toEqual(['metric       value', 'queue            3', 'p95 latency   2.46']);
  });
});

describe('Function: formatNumber', () => {
  it.each([
    { name: 'small keeps 3 significant digits', n: 0.012345, expected: '0.0123' },
    { name: 'large is rounded', n: 1234.56, expected: '1235' },
    { name: 'NaN is shown as such', n: Number.NaN, expected: 'NaN' },
  ])('$name', ({ n, expected }) => {
    expect(formatNumber(n)).toBe(expected);
  });
});
