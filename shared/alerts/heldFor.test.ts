import { describe, expect, it } from '@jest/globals';
import { PromqlInvalidArgumentError } from '../metrics/index.js';
import { heldForQuery, resolutionFor } from './heldFor.js';

describe('Function: resolutionFor', () => {
  it.each([
    { case: 'no for', forSeconds: 0, expected: 1 },
    { case: 'a short for keeps four steps', forSeconds: 30, expected: 7 },
    { case: 'one minute: capped at a scrape interval', forSeconds: 60, expected: 15 },
    { case: 'two minutes: capped', forSeconds: 120, expected: 15 },
    { case: 'very short: at least 1 s', forSeconds: 3, expected: 1 },
  ])('$case: $forSeconds s → $expected s', ({ forSeconds, expected }) => {
    // Act
    const resolution = resolutionFor(forSeconds);

    // Assess
    expect(resolution).toBe(expected);
  });
});

describe('Function: heldForQuery', () => {
  it('is just the comparison when there is no for', () => {
    // Act
    const query = heldForQuery('max by (pod) (m)', 5, 0, 1);

    // Assess
    expect(query).toBe('(max by (pod) (m)) > 5');
  });

  it('requires the condition now, at the window start, and at every step in between', () => {
    // Act
    const query = heldForQuery('max by (pod) (m)', 50, 120, 15);

    // Assess
    expect(query).toBe(
      '((max by (pod) (m)) > 50) and ' +
        '(last_over_time(((max by (pod) (m)) > 50)[15s:15s] offset 120s)) and ' +
        '(count_over_time(((max by (pod) (m)) > 50)[120s:15s]) == count_over_time((max by (pod) (m))[120s:15s]))',
    );
  });

  it('writes a fractional threshold as a PromQL number', () => {
    // Act
    const query = heldForQuery('v', 0.95, 30, 7);

    // Assess
    expect(query.startsWith('((v) > 0.95) and')).toBe(true);
  });

  it.each<{ case: string; args: Parameters<typeof heldForQuery> }>([
    { case: 'an empty value', args: ['', 1, 60, 15] },
    { case: 'a NaN threshold', args: ['v', Number.NaN, 60, 15] },
    { case: 'a fractional for', args: ['v', 1, 1.5, 1] },
    { case: 'a negative for', args: ['v', 1, -60, 15] },
    { case: 'a zero resolution', args: ['v', 1, 60, 0] },
  ])('refuses $case', ({ args }) => {
    // Act / Assess
    expect(() => heldForQuery(...args)).toThrow(PromqlInvalidArgumentError);
  });
});
