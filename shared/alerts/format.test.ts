import { describe, expect, it } from '@jest/globals';
import {
  alertValueTemplate,
  formatAlertValue,
  formatDurationSeconds,
  goFormat4g,
  goFormatFloat,
  humanize,
  humanizeDuration,
  humanizePercentage,
} from './format.js';

// Expected strings are what Prometheus 2.42 prints for the same values (checked with promtool; the integration
// test test/alerts-promtool.test.ts compares a table of values against the real template functions).

describe('Function: goFormat4g', () => {
  it.each([
    { case: 'an integer', value: 73, expected: '73' },
    { case: 'trailing zeros removed', value: 9.75, expected: '9.75' },
    { case: 'rounded to 4 digits', value: 0.9551141790396805, expected: '0.9551' },
    { case: 'exponent form from 1e4', value: 123456, expected: '1.235e+05' },
    { case: 'exponent form below 1e-4', value: 0.00001234, expected: '1.234e-05' },
    { case: 'an exact tie rounds to even, like Go', value: 12.125, expected: '12.12' },
    { case: 'rounding up carries into the exponent', value: 99999, expected: '1e+05' },
    { case: 'zero', value: 0, expected: '0' },
    { case: 'NaN', value: Number.NaN, expected: 'NaN' },
    { case: '+Inf', value: Infinity, expected: '+Inf' },
  ])('formats $case', ({ value, expected }) => {
    // Act
    const text = goFormat4g(value);

    // Assess
    expect(text).toBe(expected);
  });
});

describe('Function: goFormatFloat', () => {
  it.each([
    { case: 'the shortest exact form', value: 0.9551141790396805, expected: '0.9551141790396805' },
    { case: 'plain below 1e6', value: 123456, expected: '123456' },
    { case: 'exponent form from 1e6', value: 1234567, expected: '1.234567e+06' },
    { case: 'a float error kept, as Prometheus prints it', value: 5.1000000000000005, expected: '5.1000000000000005' },
  ])('prints $case', ({ value, expected }) => {
    // Act
    const text = goFormatFloat(value);

    // Assess
    expect(text).toBe(expected);
  });
});

describe('Function: humanize / humanizePercentage / humanizeDuration', () => {
  it.each([
    { case: 'humanize: a count', fn: humanize, value: 73, expected: '73' },
    { case: 'humanize: SI prefix', fn: humanize, value: 1234567, expected: '1.235M' },
    { case: 'humanize: below 1', fn: humanize, value: 0.05, expected: '50m' },
    { case: 'humanizePercentage', fn: humanizePercentage, value: 0.9551141790396805, expected: '95.51%' },
    { case: 'humanizeDuration: seconds', fn: humanizeDuration, value: 9.75, expected: '9.75s' },
    { case: 'humanizeDuration: minutes', fn: humanizeDuration, value: 90, expected: '1m 30s' },
    { case: 'humanizeDuration: hours', fn: humanizeDuration, value: 7205, expected: '2h 0m 5s' },
    { case: 'humanizeDuration: below 1 s', fn: humanizeDuration, value: 0.95, expected: '950ms' },
  ])('$case', ({ fn, value, expected }) => {
    // Act
    const text = fn(value);

    // Assess
    expect(text).toBe(expected);
  });
});

describe('Function: formatAlertValue', () => {
  it.each([
    { case: 'requests', unit: 'requests' as const, value: 73, expected: '73', template: '{{ $value | humanize }}' },
    {
      case: 'seconds',
      unit: 'seconds' as const,
      value: 6.5,
      expected: '6.5s',
      template: '{{ $value | humanizeDuration }}',
    },
    {
      case: 'a ratio as a percentage',
      unit: 'ratio' as const,
      value: 0.97,
      expected: '97%',
      template: '{{ $value | humanizePercentage }}',
    },
    {
      case: 'a rate per second',
      unit: 'per-second' as const,
      value: 6,
      expected: '6/s',
      template: '{{ $value | humanize }}/s',
    },
  ])('formats $case, with the matching Prometheus template', ({ unit, value, expected, template }) => {
    // Act
    const text = formatAlertValue(value, unit);

    // Assess
    expect(text).toBe(expected);
    expect(alertValueTemplate(unit)).toBe(template);
  });
});

describe('Function: formatDurationSeconds', () => {
  it.each([
    { seconds: 0, expected: '0s' },
    { seconds: 30, expected: '30s' },
    { seconds: 120, expected: '2m' },
    { seconds: 90, expected: '1m30s' },
    { seconds: 14_400, expected: '4h' },
    { seconds: 90_061, expected: '1d1h1m1s' },
  ])('writes $seconds s as $expected', ({ seconds, expected }) => {
    // Act
    const text = formatDurationSeconds(seconds);

    // Assess
    expect(text).toBe(expected);
  });

  it('refuses a fraction of a second', () => {
    // Act / Assess
    expect(() => formatDurationSeconds(1.5)).toThrow(RangeError);
  });
});
