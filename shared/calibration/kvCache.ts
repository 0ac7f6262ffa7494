/**
 * The KV cache's evidence about a load step (KV_CACHE_RULES): whether its usage levelled off, and the saturation
 * reasons it gives. The step's verdict (measure.ts) reads it from AMP's figures at the window's end; an early stable
 * ending (earlyStop.ts) from the samples so far. Both judge the same two numbers: the usage at the window's end and at
 * the start of its latest half, so a cache still filling when the window closes cannot pass for a settled one.
 */
import { fmt, pct } from './format.js';
import { KV_CACHE_RULES } from './rules.js';

/** One KV-cache usage sample (0-1, the busiest Pod) at epoch ms `tMs`. */
export interface KvCacheSample {
  tMs: number;
  usage: number;
}

/** What a window says about the KV cache. */
export interface KvCacheWindow {
  /** Usage 0-1 of the busiest Pod at the window's end. */
  last: number;
  /** Usage 0-1 of the busiest Pod where the window's latest half begins. */
  latestHalfStart: number;
  /** The latest half's length, seconds. */
  latestHalfSeconds: number;
}

/** Whether the usage levelled off, with the sentence that says so (with its figures). */
export interface KvCacheSettling {
  levelled: boolean;
  reason: string;
}

/**
 * The window of samples in time order: the last usage, and the first sample at or after the midpoint between the
 * first and last sample's times. Null with fewer than 3 samples: two points cannot tell a level from a ramp.
 */
export function kvCacheWindowFromSamples(samples: readonly KvCacheSample[]): KvCacheWindow | null {
  const points = samples
    .filter((s) => Number.isFinite(s.tMs) && Number.isFinite(s.usage))
    .sort((a, b) => a.tMs - b.tMs);
  const first = points[0];
  const last = points[points.length - 1];
  if (first === undefined || last === undefined || points.length < 3) return null;
  const midMs = (first.tMs + last.tMs) / 2;
  const mid = points.find((p) => p.tMs >= midMs) ?? last;
  return {
    last: last.usage,
    latestHalfStart: mid.usage,
    latestHalfSeconds: Math.max(1e-3, (last.tMs - mid.tMs) / 1000),
  };
}

/**
 * Levelled off: the usage rose at most KV_CACHE_RULES.levelledRise over the window's latest half, or it is far enough
 * from full that rising at that pace for `horizonSeconds` more leaves it below nearFull (a cache at 30 % still filling
 * is not what limits the replica; one at 75 % rising 15 points per half window will be full before long). The verdict
 * looks one more half ahead (the default); `horizonSeconds` null allows no such filling (an early stable ending).
 */
export function kvCacheSettling(
  kv: KvCacheWindow,
  horizonSeconds: number | null = kv.latestHalfSeconds,
): KvCacheSettling {
  const { nearFull, levelledRise } = KV_CACHE_RULES;
  const rise = kv.last - kv.latestHalfStart;
  const projected =
    horizonSeconds === null ? Number.POSITIVE_INFINITY : kv.last + (rise / kv.latestHalfSeconds) * horizonSeconds;
  const span = `${pct(kv.latestHalfStart, 0)} → ${pct(kv.last, 0)} over the window's latest half`;
  if (rise <= levelledRise) {
    return { levelled: true, reason: `KV cache levelled off (${span}, at most ${fmt(levelledRise * 100, 0)} points)` };
  }
  if (projected < nearFull) {
    return {
      levelled: true,
      reason:
        `KV cache still filling (${span}) but at that pace below ${pct(nearFull, 0)} for ` +
        `${fmt(horizonSeconds ?? 0, 0)} s more`,
    };
  }
  const fills =
    horizonSeconds === null ? '' : `: at that pace it passes ${pct(nearFull, 0)} within ${fmt(horizonSeconds, 0)} s`;
  return {
    levelled: false,
    reason:
      kv.last >= nearFull
        ? `KV cache ${pct(kv.last, 0)} full and still rising (${span})`
        : `KV cache still filling (${span})${fills}`,
  };
}

/**
 * The saturation reasons the KV cache gives for a window (empty when it gives none): preemptions in it, and a cache
 * that has not levelled off (kvCacheSettling; `kv` null: no samples, not judged). `offered` is the verdict's
 * "at N req/s offered" phrase.
 */
export function kvCacheSaturationReasons(kv: KvCacheWindow | null, preemptions: number, offered: string): string[] {
  const reasons: string[] = [];
  if (preemptions > KV_CACHE_RULES.maxPreemptions) {
    reasons.push(
      `vLLM preempted ${fmt(preemptions, 0)} sequences ${offered}: the KV cache could not hold the running batch's ` +
        'next tokens, so sequences were evicted to be recomputed (the batch is limited by KV blocks)',
    );
  }
  if (kv !== null) {
    const settling = kvCacheSettling(kv);
    if (!settling.levelled) {
      reasons.push(
        `${settling.reason} ${offered}: the cache had not levelled off when the window closed, so the step did not ` +
          'show that the replica holds this rate',
      );
    }
  }
  return reasons;
}
