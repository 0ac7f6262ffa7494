import { describe, expect, it } from '@jest/globals';
import { lengthMean, lengthRange, type LengthDistribution } from './lengthDistribution.js';
import { longestRequest, requestMixSchema } from './requestMix.js';

const schema = requestMixSchema(100_000);

/** The first issue of parsing `prompt` as the mix's prompt distribution, as `path: message`. */
function problem(prompt: unknown): string {
  const parsed = schema.safeParse({ prompt, output: 100 });
  if (parsed.success) return 'valid';
  const issue = parsed.error.issues[0];
  return `${issue?.path.join('.')}: ${issue?.message}`;
}

describe('Schema: requestMixSchema', () => {
  it('reads a number as the fixed distribution and defaults the seed', () => {
    // Act
    const mix = schema.parse({ prompt: 35, output: { distribution: 'uniform', min: 10, max: 20 } });

    // Assess
    expect(mix).toEqual({
      seed: 1,
      prompt: { distribution: 'fixed', tokens: 35 },
      output: { distribution: 'uniform', min: 10, max: 20 },
    });
  });

  it.each([
    // Each case: a bad prompt distribution, and what the error must say (which field, what is accepted).
    {
      case: 'max below min',
      prompt: { distribution: 'uniform', min: 500, max: 100 },
      error: /^prompt\.max: 100 is below min \(500\); accepted: max >= min/,
    },
    {
      case: 'a normal with max below min',
      prompt: { distribution: 'normal', mean: 300, stddev: 10, min: 500, max: 100 },
      error: /^prompt\.max: 100 is below min \(500\)/,
    },
    {
      case: 'a normal whose mean is outside its bounds',
      prompt: { distribution: 'normal', mean: 50, stddev: 10, min: 100, max: 500 },
      error: /^prompt\.mean: 50 is outside \[min, max\] = \[100, 500\]/,
    },
    {
      case: 'a normal without spread',
      prompt: { distribution: 'normal', mean: 300, stddev: 0, min: 100, max: 500 },
      error: /^prompt\.stddev: must be > 0 tokens/,
    },
    {
      case: 'a zero weight',
      prompt: { distribution: 'histogram', buckets: [{ tokens: 10, weight: 0 }] },
      error: /^prompt\.buckets\.0\.weight: must be > 0/,
    },
    {
      case: 'a negative weight',
      prompt: {
        distribution: 'histogram',
        buckets: [
          { tokens: 10, weight: 1 },
          { tokens: 20, weight: -2 },
        ],
      },
      error: /^prompt\.buckets\.1\.weight: must be > 0/,
    },
    {
      case: 'an empty histogram',
      prompt: { distribution: 'histogram', buckets: [] },
      error: /^prompt\.buckets: must hold at least one/,
    },
    {
      case: 'an unknown distribution',
      prompt: { distribution: 'poisson', mean: 3 },
      error: /^prompt: is not a length; accepted: a number of tokens or \{distribution: fixed \| uniform/,
    },
    {
      case: 'a fractional length',
      prompt: 12.5,
      error: /^prompt: must be an integer number of tokens \(prompt tokens, tokens\)/,
    },
    {
      case: 'a length past any context',
      prompt: { distribution: 'uniform', min: 1, max: 2_000_000 },
      error: /^prompt\.max: must be <= 100000 tokens/,
    },
    { case: 'an unknown key', prompt: { distribution: 'uniform', min: 1, max: 2, mean: 3 }, error: /^prompt/ },
  ])('refuses $case, naming the field and what is accepted', ({ prompt, error }) => {
    // Act
    const message = problem(prompt);

    // Assess
    expect(message).toMatch(error);
  });
});

describe('Functions: lengthRange, lengthMean, longestRequest', () => {
  it.each([
    { d: { distribution: 'fixed', tokens: 35 }, range: { min: 35, max: 35 }, mean: 35 },
    { d: { distribution: 'uniform', min: 100, max: 900 }, range: { min: 100, max: 900 }, mean: 500 },
    {
      d: {
        distribution: 'histogram',
        buckets: [
          { tokens: 100, weight: 3 },
          { tokens: 500, weight: 1 },
        ],
      },
      range: { min: 100, max: 500 },
      mean: 200,
    },
    // Symmetric and far from its bounds: the normal's own mean.
    { d: { distribution: 'normal', mean: 500, stddev: 50, min: 1, max: 999 }, range: { min: 1, max: 999 }, mean: 500 },
    // Clipped at the mean: E = μ + σ·φ(0) = 100 + 50 × 0.3989 (the upper bound is 6σ away).
    {
      d: { distribution: 'normal', mean: 100, stddev: 50, min: 100, max: 400 },
      range: { min: 100, max: 400 },
      mean: 119.95,
    },
  ] as const)('$d.distribution: range and expected length', ({ d, range, mean }) => {
    // Assess
    expect(lengthRange(d as LengthDistribution)).toEqual(range);
    expect(lengthMean(d as LengthDistribution)).toBeCloseTo(mean, 1);
  });

  it('takes the longest request of a mix as both maxima', () => {
    // Assess
    expect(
      longestRequest({
        prompt: { distribution: 'uniform', min: 100, max: 3000 },
        output: {
          distribution: 'histogram',
          buckets: [
            { tokens: 16, weight: 1 },
            { tokens: 1024, weight: 1 },
          ],
        },
      }),
    ).toBe(4024);
  });
});
