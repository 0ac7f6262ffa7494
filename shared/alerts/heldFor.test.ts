import { describe, expect, it } from '@jest/globals';
import { PromqlInvalidArgumentError } from '../metrics/index.js';
import {
  alertConditionLookbackSeconds,
  alertConditionQuery,
  heldForQuery,
  keptFiringQuery,
  resolutionFor,
} from './heldFor.js';

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

describe('Function: keptFiringQuery', () => {
  it('is the held query itself without a keep-firing time', () => {
    expect(keptFiringQuery('(v) > 5', 0, 1)).toBe('(v) > 5');
  });

  it('answers the value now while the condition holds, else its last value within the keep-firing time and one step', () => {
    // Act
    const query = keptFiringQuery('(v) > 5', 60, 15);

    // Assess
    expect(query).toBe('((v) > 5) or last_over_time(((v) > 5)[75s:15s])');
  });

  it.each<{ case: string; args: Parameters<typeof keptFiringQuery> }>([
    { case: 'an empty query', args: [' ', 60, 15] },
    { case: 'a fractional keep-firing time', args: ['v', 0.5, 1] },
    { case: 'a negative keep-firing time', args: ['v', -60, 15] },
    { case: 'a zero resolution', args: ['v', 60, 0] },
  ])('refuses $case', ({ args }) => {
    // Act / Assess
    expect(() => keptFiringQuery(...args)).toThrow(PromqlInvalidArgumentError);
  });
});

describe('Function: alertConditionQuery', () => {
  it('samples the keep-firing look-back as finely as the `for` window, not at the step of the keep-firing time alone', () => {
    // Act: `for` 30 s (7 s steps) kept 90 s (15 s steps alone).
    const query = alertConditionQuery('v', 0.95, 30, 90);

    // Assess: the held query once as the value now, once inside a 97 s look-back with 7 s steps.
    const held = heldForQuery('v', 0.95, 30, 7);
    expect(query).toBe(`(${held}) or last_over_time((${held})[97s:7s])`);
  });

  it('keeps the step of the keep-firing time when it is the finer one', () => {
    // Act: `for` 5 m (15 s steps) kept 20 s (5 s steps).
    const query = alertConditionQuery('v', 1, 300, 20);

    // Assess
    expect(query).toBe(keptFiringQuery(heldForQuery('v', 1, 300, 15), 20, 5));
  });

  it('uses the step of the keep-firing time for a rule without `for`, and is the plain condition without either', () => {
    // Act / Assess
    expect(alertConditionQuery('v', 5, 0, 90)).toBe('((v) > 5) or last_over_time(((v) > 5)[105s:15s])');
    expect(alertConditionQuery('v', 5, 0, 0)).toBe('(v) > 5');
  });
});

describe('Function: alertConditionLookbackSeconds', () => {
  it.each([
    { forSeconds: 120, keep: 90, expected: 90 + 15 + 120 + 15 },
    { forSeconds: 30, keep: 90, expected: 90 + 7 + 30 + 7 },
    { forSeconds: 0, keep: 90, expected: 90 + 15 },
    { forSeconds: 300, keep: 0, expected: 300 + 15 },
    { forSeconds: 0, keep: 0, expected: 0 },
  ])('reads $expected s back for `for` $forSeconds s kept $keep s', ({ forSeconds, keep, expected }) => {
    // Act / Assess
    expect(alertConditionLookbackSeconds(forSeconds, keep)).toBe(expected);
  });
});
