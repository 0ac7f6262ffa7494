import { describe, expect, it } from '@jest/globals';
import { mean, quantile } from './stats.js';

describe('Function: quantile', () => {
  it.each([
    { name: 'median of an odd list', values: [3, 1, 2], q: 0.5, expected: 2 },
    { name: 'interpolates between ranks', values: [0, 10], q: 0.95, expected: 9.5 },
    { name: 'p100 is the maximum', values: [5, 9, 1], q: 1, expected: 9 },
    { name: 'empty list has no quantile', values: [], q: 0.5, expected: Number.NaN },
  ])('$name', ({ values, q, expected }) => {
    expect(quantile(values, q)).toBe(expected);
  });

  it('does not reorder the caller’s array', () => {
    const values = [3, 1, 2];
    quantile(values, 0.5);
    expect(values).toEqual([3, 1, 2]);
  });
});

describe('Function: mean', () => {
  it('averages, and is NaN for nothing', () => {
    expect(mean([1, 2, 3, 6])).toBe(3);
    expect(mean([])).toBeNaN();
  });
});
