import { describe, expect, it } from '@jest/globals';
import { kvCacheSaturationReasons, kvCacheSettling, kvCacheWindowFromSamples } from './kvCache.js';

const T0 = Date.UTC(2025, 5, 2, 9, 0, 0);

describe('Function: kvCacheSettling', () => {
  it.each([
    // Each case: usage where the window's latest half begins → at its end.
    { case: 'flat at 85 %', latestHalfStart: 0.85, last: 0.85, levelled: true },
    { case: 'a rise of 3 points (the limit)', latestHalfStart: 0.8, last: 0.83, levelled: true },
    {
      case: 'filling but far from full (20 → 35 %: 50 % after another half)',
      latestHalfStart: 0.2,
      last: 0.35,
      levelled: true,
    },
    {
      case: 'filling towards full (60 → 80 %: 100 % after another half)',
      latestHalfStart: 0.6,
      last: 0.8,
      levelled: false,
    },
    { case: 'near full and still rising (88 → 95 %)', latestHalfStart: 0.88, last: 0.95, levelled: false },
    { case: 'falling (a burst draining)', latestHalfStart: 0.9, last: 0.7, levelled: true },
  ])('judges $case', ({ latestHalfStart, last, levelled }) => {
    // Act
    const settling = kvCacheSettling({ last, latestHalfStart, latestHalfSeconds: 30 });

    // Assess
    expect(settling.levelled).toBe(levelled);
  });

  it('allows no filling at all when asked for no horizon (an early stable ending)', () => {
    // Act
    const settling = kvCacheSettling({ last: 0.64, latestHalfStart: 0.47, latestHalfSeconds: 9 }, null);

    // Assess
    expect(settling).toEqual({
      levelled: false,
      reason: "KV cache still filling (47 % → 64 % over the window's latest half)",
    });
  });
});

describe('Function: kvCacheSaturationReasons', () => {
  it('gives preemptions and a cache near full and rising as two reasons, with their figures', () => {
    // Act
    const reasons = kvCacheSaturationReasons(
      { last: 0.96, latestHalfStart: 0.9, latestHalfSeconds: 30 },
      7,
      'at 7 req/s offered',
    );

    // Assess
    expect(reasons).toEqual([
      expect.stringContaining('vLLM preempted 7 sequences at 7 req/s offered'),
      expect.stringContaining("KV cache 96 % full and still rising (90 % → 96 % over the window's latest half) at 7"),
    ]);
  });

  it('gives none for a levelled cache without preemptions, nor without KV samples', () => {
    // Act
    const levelled = kvCacheSaturationReasons(
      { last: 0.75, latestHalfStart: 0.75, latestHalfSeconds: 30 },
      0,
      'at 6 req/s offered',
    );
    const unknown = kvCacheSaturationReasons(null, 0, 'at 6 req/s offered');

    // Assess
    expect(levelled).toEqual([]);
    expect(unknown).toEqual([]);
  });
});

describe('Function: kvCacheWindowFromSamples', () => {
  it('takes the last sample and the first at or after the midpoint, in time order', () => {
    // Prepare: out of order, one non-finite sample.
    const samples = [
      { tMs: T0 + 20_000, usage: 0.6 },
      { tMs: T0, usage: 0.2 },
      { tMs: T0 + 10_000, usage: 0.5 },
      { tMs: T0 + 5_000, usage: Number.NaN },
    ];

    // Act
    const window = kvCacheWindowFromSamples(samples);

    // Assess
    expect(window).toEqual({ last: 0.6, latestHalfStart: 0.5, latestHalfSeconds: 10 });
  });

  it('knows nothing from fewer than 3 samples', () => {
    // Act
    const window = kvCacheWindowFromSamples([
      { tMs: T0, usage: 0.2 },
      { tMs: T0 + 2000, usage: 0.3 },
    ]);

    // Assess
    expect(window).toBeNull();
  });
});
