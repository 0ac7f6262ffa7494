/**
 * The fixed numbers of the saturation verdict and of the readiness gate, in one place: the verdict, the docs
 * (docs/calibration.md) and the tests read them from here.
 *
 * Source of the rules: the AWS EKS guide "Identify scaling metric thresholds for AI inference" calls a replica
 * saturated at the rate where "it can no longer keep up with incoming requests": the queue
 * (`vllm:num_requests_waiting`) rises from near 0 and p95 end-to-end latency climbs (2.5 s → 6-10 s at 60 req/s).
 * The numbers below turn "rises" and "keeps up" into tests a machine can apply to one 60 s step.
 */
export const SATURATION_RULES = {
  /**
   * The queue keeps growing: least-squares slope of `sum(vllm:num_requests_waiting)` over the hold above
   * max(queueSlopeMinPerSecond, queueSlopeRateFraction × offered rate) requests/s. 2 % of the rate keeps scrape noise
   * at high rates from counting; 0.1 req/s (6 requests over a 60 s hold, with queueMaxFloor queued at some point) is
   * what a replica that keeps up does not accumulate: below capacity vLLM admits what arrives, and waiting requests
   * are the knee's first sign. It was 0.5 (30 requests a minute): on a replica of 5 req/s that is 10 % of its
   * capacity, and an overload of 8-12 % read "stable" (llama-8b-l4-prefill, 5.5 and 5.7 req/s against 5.09).
   */
  queueSlopeMinPerSecond: 0.1,
  queueSlopeRateFraction: 0.02,
  /**
   * An early ending calls a step saturated only when its queue (earlyStop.ts) or k6's requests in flight
   * (k6Signal.ts) grow significantly faster than max(earlyEndingSlopeMinPerSecond, queueSlopeRateFraction × rate):
   * ending skips the rest of the hold, so only a clear overload ends it; a slight one is held and judged by the
   * verdict. In flight k6 also counts the batch filling towards rate × latency, which a low floor would mistake.
   */
  earlyEndingSlopeMinPerSecond: 0.5,
  /** ... and the queue actually held requests: its maximum reached at least this many (the guide saw 150-350). */
  queueMaxFloor: 5,
  /**
   * Completions fall behind: vLLM's completed requests/s over the hold below this fraction of the offered rate,
   * after allowing for the requests still in flight when the window closes (see `classifyStep`).
   */
  completionFraction: 0.95,
  /** k6 got fewer successful responses per second of hold than this fraction of the rate. */
  k6AchievedFraction: 0.95,
  /** k6 dropped more than this fraction of the planned iterations (every VU busy: maxVUs reached). */
  k6DroppedFraction: 0.01,
} as const;

export const READINESS_RULES = {
  /** The last warmup requests may be this much slower than the warmup's median and still count as warm. */
  recentLatencyTolerance: 0.25,
  /** The tail of the warmup that is averaged: this fraction of its duration... */
  warmupTailFraction: 0.25,
  /** ... but at least this many scrape intervals, so `increase` over it has two samples or more. */
  minTailScrapes: 2.5,
  /**
   * The scrape interval is estimated from the samples of one series over this window (short, so a Pod started a
   * minute ago still fills it; a younger one gives a longer estimate, which only widens the tail)...
   */
  scrapeProbeSeconds: 60,
  /** ... or taken as the guide's kube-prometheus-stack interval when there are too few samples to tell. */
  defaultScrapeIntervalSeconds: 30,
} as const;

/** The range-query step of the queue samples: about 30 points over the hold, 1-15 s apart. */
export function queueStepSeconds(windowSeconds: number): number {
  return Math.min(15, Math.max(1, Math.round(windowSeconds / 30)));
}

/**
 * What the target already serves before a calibration (its users): measured by Deploy from AMP, before anything
 * changes, as the completions of the last `lookbackSeconds` divided by the time AMP's samples cover (a target younger
 * than the lookback is judged on what exists; PromQL's `rate()` would divide by the whole window and read too little).
 * A calibration that ended within the lookback left its own load in those samples: the background it measured before
 * it began stands instead (the Deployment's last-calibration record).
 */
export const BACKGROUND_RULES = {
  lookbackSeconds: 300,
  /** The range query's step: a 30 s scrape has a new sample every 30 s; a finer step only repeats samples. */
  stepSeconds: 15,
  /** At or above this many completed requests/s the target serves users (3 a minute: more than health checks). */
  servingRps: 0.05,
} as const;

/**
 * The KV cache's part in the saturation verdict and in an early stable ending (shared/calibration/kvCache.ts). A
 * replica whose batch is limited by KV blocks before --max-num-seqs shows its knee there first: the cache fills, new
 * prompts stop fitting, and decodes that need a block preempt the newest sequences (vLLM's V1 scheduler), which are
 * recomputed later. Its queue starts growing only once the cache is full, one or more request lifetimes into a step.
 */
export const KV_CACHE_RULES = {
  /**
   * "Full or near it": between the monitoring guide's VLLMKVCacheHigh (80 %) and VLLMKVCacheFull (95 %) alerts. At
   * 90 % of 3,400 blocks, 340 are free: four 512-token prompts, less than one second of arrivals at the knee.
   */
  nearFull: 0.9,
  /**
   * Levelled off: the usage rose at most this much (0.03 = 3 points) over the window's latest half, or, rising at
   * that pace for one more such half, it would still stay below nearFull.
   */
  levelledRise: 0.03,
  /** Preemptions in the window tolerated by a stable verdict: none (each is a sequence evicted for want of blocks). */
  maxPreemptions: 0,
} as const;

/**
 * When a step is evidence (shared/calibration/evidence.ts): the checks MeasureStep makes before a step is judged. A
 * step that fails one is repeated once at the same rate, and failing again ends the run (CalibrationStepEvidenceError).
 */
export const EVIDENCE_RULES = {
  /**
   * AMP covers the window: no gap between a measured Pod's samples (or between the window's start and its first one)
   * longer than this many scrape intervals. One missed scrape is ordinary (a slow /metrics answer); two in a row is a
   * pause or an outage, and the counters read across it lose what happened in it.
   */
  maxGapScrapeIntervals: 2,
  /**
   * AMP's completions agree with k6's: AMP's completed requests over the window within this fraction of what k6 got
   * back OK over its hold plus the background's, plus completionSlackRequests and the requests in flight. 10 % is twice k6's own noise at its window's edges (k6 counts a
   * request when its response ends, AMP when its scrape sees it: up to one scrape of completions fall on either side).
   */
  completionTolerance: 0.1,
  /** The tolerance's absolute part, in requests: at low rates a scrape's worth of completions exceeds 10 %. */
  completionSlackRequests: 5,
  /**
   * k6's failed requests: more than this fraction of its requests failed, and fast (k6's p95 duration below
   * fastFailureFraction of the request timeout), is a broken step (connections refused, 5xx from a Pod that went
   * away), not saturation: a saturated replica's failures are timeouts, which push k6's p95 to the timeout.
   */
  maxFastFailedFraction: 0.05,
  fastFailureFraction: 0.9,
  /**
   * The load generator kept up: with no queue at the replica (below SATURATION_RULES.queueMaxFloor), k6's mean request
   * duration may exceed vLLM's p95 end-to-end latency over the window by this factor plus clientSlackSeconds, no more.
   * Beyond it the time went to k6 or the network, not the replica: a k6 short of CPU sends late and reads late, and a
   * step it measured read "stable, 16.9 req/s completed at 40 offered" for a replica whose capacity is 34. The factor
   * 2 covers the histogram's interpolation (each of vLLM's e2e buckets from 1 s up ends at most twice its start).
   */
  clientLatencyFactor: 2,
  clientSlackSeconds: 1,
  /** A rate is tried this many times in all: once, and once more after a failed check. */
  attemptsPerRate: 2,
} as const;
