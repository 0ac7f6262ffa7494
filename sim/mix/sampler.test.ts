import { describe, expect, it } from '@jest/globals';
import { lengthMean, type LengthDistribution, type RequestMix } from '../../shared/load/index.js';
import { sampleRequestAt } from './sampler.js';

/** N draws of one length from a mix whose other length is fixed. */
function draws(prompt: LengthDistribution, n = 20_000, seed = 1): number[] {
  const mix: RequestMix = { seed, prompt, output: { distribution: 'fixed', tokens: 1 } };
  return Array.from({ length: n }, (_, i) => sampleRequestAt(mix, i).promptTokens);
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const stddev = (xs: number[]) => {
  const m = mean(xs);
  return Math.sqrt(mean(xs.map((x) => (x - m) ** 2)));
};

describe('Function: sampleRequestAt', () => {
  it('gives the same lengths for the same seed and iteration, in any order, and others for another seed', () => {
    // Prepare
    const mix: RequestMix = {
      seed: 42,
      prompt: { distribution: 'uniform', min: 1, max: 4000 },
      output: { distribution: 'normal', mean: 200, stddev: 80, min: 1, max: 1000 },
    };

    // Act
    const forward = Array.from({ length: 50 }, (_, i) => sampleRequestAt(mix, i));
    const backward = Array.from({ length: 50 }, (_, i) => sampleRequestAt(mix, 49 - i)).reverse();
    const other = Array.from({ length: 50 }, (_, i) => sampleRequestAt({ ...mix, seed: 43 }, i));

    // Assess
    expect(backward).toEqual(forward);
    expect(other).not.toEqual(forward);
  });

  it('pins the sequence of seed 1 (the script on EKS draws these; a change here changes every run)', () => {
    // Prepare
    const mix: RequestMix = {
      seed: 1,
      prompt: { distribution: 'uniform', min: 100, max: 900 },
      output: { distribution: 'uniform', min: 10, max: 20 },
    };

    // Act
    const first = Array.from({ length: 4 }, (_, i) => sampleRequestAt(mix, i));

    // Assess
    expect(first).toEqual([
      { promptTokens: 218, maxTokens: 14 },
      { promptTokens: 848, maxTokens: 13 },
      { promptTokens: 438, maxTokens: 19 },
      { promptTokens: 752, maxTokens: 20 },
    ]);
  });

  it.each([
    // Each case: the distribution, and the mean and standard deviation its draws must show (20,000 draws).
    { case: 'fixed', d: { distribution: 'fixed', tokens: 35 }, mean: 35, sd: 0 },
    // Discrete uniform on 100..900: sd = sqrt(((801)^2 - 1) / 12).
    { case: 'uniform', d: { distribution: 'uniform', min: 100, max: 900 }, mean: 500, sd: 231.2 },
    // Far from its bounds, a normal keeps its mean and stddev.
    { case: 'normal', d: { distribution: 'normal', mean: 500, stddev: 100, min: 1, max: 2000 }, mean: 500, sd: 100 },
    {
      case: 'histogram 3:1',
      d: {
        distribution: 'histogram',
        buckets: [
          { tokens: 100, weight: 3 },
          { tokens: 500, weight: 1 },
        ],
      },
      // mean 200, sd = 400 * sqrt(0.75 * 0.25)
      mean: 200,
      sd: 173.2,
    },
  ] as const)('draws $case with its mean and spread', ({ d, mean: expectedMean, sd }) => {
    // Act
    const xs = draws(d as LengthDistribution);

    // Assess
    expect(Math.abs(mean(xs) - expectedMean)).toBeLessThanOrEqual(Math.max(0.5, 0.02 * expectedMean));
    expect(Math.abs(stddev(xs) - sd)).toBeLessThanOrEqual(Math.max(0.5, 0.03 * sd));
    expect(xs.every(Number.isInteger)).toBe(true);
  });

  it('keeps uniform draws within [min, max] and reaches both ends', () => {
    // Act
    const xs = draws({ distribution: 'uniform', min: 10, max: 13 }, 2_000);

    // Assess
    expect(new Set(xs)).toEqual(new Set([10, 11, 12, 13]));
  });

  it('clips a normal to [min, max]: the draws pile on the bounds, and their mean is lengthMean', () => {
    // Prepare: half the mass is below 100 and is clipped onto it.
    const d: LengthDistribution = { distribution: 'normal', mean: 100, stddev: 50, min: 100, max: 400 };

    // Act
    const xs = draws(d);

    // Assess
    expect(Math.min(...xs)).toBe(100);
    expect(Math.max(...xs)).toBeLessThanOrEqual(400);
    expect(xs.filter((x) => x === 100).length / xs.length).toBeCloseTo(0.5, 1);
    expect(Math.abs(mean(xs) - lengthMean(d))).toBeLessThan(1.5);
  });

  it("draws only the histogram's lengths, in proportion to their weights", () => {
    // Act
    const xs = draws({
      distribution: 'histogram',
      buckets: [
        { tokens: 64, weight: 0.5 },
        { tokens: 128, weight: 0.25 },
        { tokens: 1024, weight: 0.25 },
      ],
    });

    // Assess
    expect(new Set(xs)).toEqual(new Set([64, 128, 1024]));
    expect(xs.filter((x) => x === 64).length / xs.length).toBeCloseTo(0.5, 1);
  });
});
