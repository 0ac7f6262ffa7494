import { describe, expect, it } from '@jest/globals';
import { escapeLabelValue, formatDouble, formatGoFloat, formatInt, renderLabels } from './exposition.js';

describe('Function: formatGoFloat', () => {
  it.each([
    // Values seen in real kubelet /metrics/cadvisor output.
    { case: 'working set in bytes', value: 34_869_248, expected: '3.4869248e+07' },
    { case: 'start time in seconds', value: 1_744_770_516, expected: '1.744770516e+09' },
    { case: 'cpu seconds', value: 4.656145, expected: '4.656145' },
    { case: 'integer below a million', value: 123_456, expected: '123456' },
    { case: 'first exponent-form integer', value: 1_000_000, expected: '1e+06' },
    { case: 'small fraction', value: 0.0001, expected: '0.0001' },
    { case: 'tiny fraction', value: 0.00001, expected: '1e-05' },
    { case: 'zero', value: 0, expected: '0' },
    { case: 'negative', value: -2.5, expected: '-2.5' },
    { case: 'positive infinity', value: Infinity, expected: '+Inf' },
    { case: 'not a number', value: NaN, expected: 'NaN' },
  ])('prints like Go strconv.FormatFloat(v, g, -1, 64): $case', ({ value, expected }) => {
    // Act
    const text = formatGoFloat(value);

    // Assess
    expect(text).toBe(expected);
  });
});

describe('Function: formatInt', () => {
  it.each([
    { case: 'integer', value: 2520, expected: '2520' },
    { case: 'rounds a fraction', value: 41_939.6, expected: '41940' },
    { case: 'large counter without exponent', value: 1_864_412_931_000, expected: '1864412931000' },
    { case: 'negative zero', value: -0.2, expected: '0' },
  ])('prints like Go %d: $case', ({ value, expected }) => {
    // Act
    const text = formatInt(value);

    // Assess
    expect(text).toBe(expected);
  });
});

describe('Function: formatDouble', () => {
  it.each([
    { case: 'power draw', value: 287.452, expected: '287.452000' },
    { case: 'ratio', value: 0.9622314, expected: '0.962231' },
    { case: 'zero', value: 0, expected: '0.000000' },
  ])('prints like Go %f: $case', ({ value, expected }) => {
    // Act
    const text = formatDouble(value);

    // Assess
    expect(text).toBe(expected);
  });
});

describe('Function: renderLabels', () => {
  it('keeps the given order and escapes values', () => {
    // Act
    const text = renderLabels([
      ['b', 'say "hi"'],
      ['a', 'back\\slash\nnewline'],
    ]);

    // Assess
    expect(text).toBe('{b="say \\"hi\\"",a="back\\\\slash\\nnewline"}');
    expect(renderLabels([])).toBe('');
    expect(escapeLabelValue('plain')).toBe('plain');
  });
});
