import { describe, expect, it } from '@jest/globals';
import { formatMilliQuantity, formatNumber, toMilli } from './quantity.js';

describe('Function: formatMilliQuantity', () => {
  it.each([
    { case: 'zero', milli: 0, want: '0' },
    { case: 'a whole number', milli: 25_000, want: '25' },
    { case: 'a fraction stays in milli-units', milli: 12_500, want: '12500m' },
    { case: 'a per-Pod average that does not divide evenly', milli: 66_667, want: '66667m' },
    { case: 'half a unit', milli: 500, want: '500m' },
    { case: 'thousands that divide evenly take k', milli: 2_000_000, want: '2k' },
    { case: 'thousands that do not divide evenly stay whole', milli: 1_500_000, want: '1500' },
    { case: 'millions take M', milli: 3_000_000_000, want: '3M' },
  ])('prints $case as Kubernetes does ($want)', ({ milli, want }) => {
    // Act
    const text = formatMilliQuantity(milli);

    // Assess
    expect(text).toBe(want);
  });
});

describe('Function: toMilli', () => {
  it('rounds, so a float product just below a whole milli-unit does not lose one', () => {
    // Act / Assess: 2.3 × 1000 is 2299.9999999999995 in floating point.
    expect(toMilli(2.3)).toBe(2300);
    expect(toMilli(0.0004)).toBe(0);
  });
});

describe('Function: formatNumber', () => {
  it('keeps at most three decimals', () => {
    // Act / Assess
    expect(formatNumber(2.34567)).toBe('2.346');
    expect(formatNumber(80)).toBe('80');
  });
});
