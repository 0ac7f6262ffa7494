import type { K6Summary } from '../kube/index.js';
import type { RequestMix } from '../load/index.js';

/**
 * Contracts of the calibration: what the strategies, the measurement, the analysis, the workflow handlers and the
 * applying code pass between them. Everything here is plain JSON: it travels through the Step Functions state.
 */

/** The next thing a strategy wants: another load step, or the end of the plan with why. */
export type StrategyDecision =
  | {
      done: false;
      rateRps: number;
      holdSeconds: number;
      restSeconds: number;
      reason: string;
      /**
       * The least fraction of the hold before this step may end as stable, when it must be stricter than
       * plan.earlyStop.stableAfterFraction: near the knee the queue starts growing only once the batch is full.
       */
      stableAfterFraction?: number;
    }
  | { done: true; reason: string };

/** What AMP says about one step's hold window (server-side series, aggregated over the target's Pods). */
export interface AmpStepMeasurement {
  /** `sum(vllm:num_requests_waiting)` sampled over the hold window: mean, max, and least-squares slope (req/s). */
  queueMean: number;
  queueMax: number;
  queueSlopePerSecond: number;
  /** Quantiles over the hold window (histogram increase over the window), seconds; null when no request finished. */
  p95E2eSeconds: number | null;
  p95TtftSeconds: number | null;
  p95InterTokenSeconds: number | null;
  /** KV-cache usage 0-1: the mean and max over the window of the busiest Pod. */
  kvCacheUsageMean: number;
  kvCacheUsageMax: number;
  /**
   * KV-cache usage 0-1 of the busiest Pod at the window's end and where its latest half begins (the verdict's "has it
   * levelled off", shared/calibration/kvCache.ts); null when AMP had no sample, absent in reports written before.
   */
  kvCacheUsageLast?: number | null;
  kvCacheUsageLatestHalfStart?: number | null;
  /** Preemptions during the window. */
  preemptions: number;
  /** Completed requests per second during the window (all finish reasons). */
  completedRps: number;
  /**
   * Completed requests per second in the window's second half; null when not measured (reports written before it).
   * Once a saturated replica's batch is full its departures run at its capacity, so this needs no in-flight correction.
   */
  completedRpsLateHalf?: number | null;
  /**
   * Seconds from the load's start to the window's last sample, which completedRps covers when it was read from the
   * counters at the window's own samples (shared/calibration/counterWindow.ts); null or absent: the whole hold
   * (`increase` over the window).
   */
  completedSpanSeconds?: number | null;
  /** Seconds into the load where completedRpsLateHalf begins, read so; null or absent: half the hold. */
  completedLateHalfFromSeconds?: number | null;
  /** Ready Pods serving during the window. */
  pods: number;
  /** Requests in the running batches, all Pods together, averaged over the window; null or absent: not measured. */
  runningMean?: number | null;
  /**
   * The same over the window's latest half, where a saturated replica's batch has filled (the whole window's mean
   * includes the filling); null or absent: no sample there, or not measured.
   */
  runningLatestHalfMean?: number | null;
  /**
   * Mean time in the running batch (vllm:request_inference_time_seconds, scheduled to last token) of the requests
   * finished in the window, seconds; null or absent: not measured (read only at the window's samples).
   */
  meanInferenceSeconds?: number | null;
  /**
   * The same for the requests finished in the window's late half (from completedLateHalfFromSeconds), whose batch had
   * filled: the early ones ran in a smaller, faster batch; null or absent: not measured, or none finished.
   */
  meanInferenceSecondsLateHalf?: number | null;
  /**
   * Mean decode time (mean end-to-end − mean TTFT) of the requests finished in the window, seconds; null when none
   * finished. Absent in reports written before it was measured.
   */
  meanLifetimeSeconds?: number | null;
}

/** Whether a step saturated, with every reason found (empty when stable). */
export interface StepVerdict {
  saturated: boolean;
  reasons: string[];
}

/** How a load step ended: held for its planned time, or ended early once saturation or stability was evident. */
export const STEP_ENDING_KINDS = ['held', 'saturated-early', 'stable-early'] as const;
export type StepEndingKind = (typeof STEP_ENDING_KINDS)[number];

/** What an early ending was decided from: k6's live metrics (k6Signal.ts, no lag) or AMP's queue (earlyStop.ts). */
export const STEP_ENDING_EVIDENCE = ['k6', 'amp'] as const;
export type StepEndingEvidence = (typeof STEP_ENDING_EVIDENCE)[number];

/**
 * The ending of a load step, with the reason (shared/calibration/earlyStop.ts and k6Signal.ts decide the early
 * ones).
 */
export interface StepEnding {
  kind: StepEndingKind;
  reason: string;
  /** An early ending's evidence; absent for a held step (and in reports written before k6 was read live). */
  evidence?: StepEndingEvidence;
  /**
   * Iterations k6 had dropped when an early ending stopped its Job (its last live reading: a stopped Job prints no
   * summary); absent for a held step (its `k6` summary has them) or when k6 was not read.
   */
  droppedIterations?: number;
  /** Seconds the load actually ran (from its start to the end of the hold, or to the Job's deletion). */
  heldSeconds: number;
  plannedHoldSeconds: number;
}

/** One load step as measured. */
export interface StepMeasurement {
  index: number;
  /** The rate offered to the replica in all: k6's plus what the target's own users sent (background). */
  rateRps: number;
  /** k6's share of rateRps, when the target served users beside the test (absent: k6 offered all of it). */
  k6RateRps?: number;
  /** The length of the window measured (the planned hold, or less when the step ended early). */
  holdSeconds: number;
  /** ISO times of the hold window the AMP figures cover. */
  windowStart: string;
  windowEnd: string;
  /**
   * The k6 summary of the step's Job (offered vs achieved, drops, errors, client-side latency); null when the step
   * ended early: its Job was stopped before k6 printed a summary, and the offered rate is the planned one.
   */
  k6: K6Summary | null;
  amp: AmpStepMeasurement;
  verdict: StepVerdict;
  /**
   * The engine's `--max-num-seqs` per Pod during the step (Deploy read it from the Deployment); null: not set there
   * (vLLM's default applies); absent in reports written before it was recorded.
   */
  maxNumSeqs?: number | null;
  /** How the step ended; absent in reports written before steps could end early (they were all held). */
  ending?: StepEnding;
  /**
   * How long after the window's end AMP held it whole (AwaitStepData): the step was measured only then. Absent in
   * measurements made before AwaitStepData existed.
   */
  ingestion?: { waitedSeconds: number; looks: number; reason: string };
  /**
   * Whether the step's data can be trusted (shared/calibration/evidence.ts): AMP covered the window, the same warm
   * Pods served it, AMP's completions agree with k6's. A step whose evidence failed is repeated once and never judged.
   * Absent in measurements made before the checks existed (taken as held).
   */
  evidence?: StepEvidence;
}

/** The outcome of a step's evidence checks: `ok`, or every reason it failed; `attempt` counts this rate's tries. */
export interface StepEvidence {
  ok: boolean;
  reasons: string[];
  /** 1 for a rate's first try, 2 for its repeat after a failed check. */
  attempt: number;
}

/** A derived value with the reason and formula that produced it (for the report, the logs and docs/calibration.md). */
export interface Derived<T> {
  value: T;
  reason: string;
  formula: string;
}

export interface Thresholds {
  /** The KEDA queue trigger: `sum(vllm:num_requests_waiting)` per Pod (AverageValue). */
  queueDepthPerPod: Derived<number>;
  /** The KEDA queue trigger's activation threshold. */
  queueActivation: Derived<number>;
  /** The KEDA p95 latency guardrail trigger, seconds, compared as a whole (metricType Value, ADR 0019). */
  p95LatencySeconds: Derived<number>;
  /** The scale-in condition: queue 0 and p95 below this for `forSeconds`. */
  scaleIn: Derived<{ queueDepth: 0; p95BelowSeconds: number; forSeconds: number }>;
}

/**
 * The alert thresholds derived for the target (alertThresholds.ts), by alert name, for the evaluator to use where the
 * target's alert settings pin none.
 */
export interface DerivedAlertThresholds {
  /** Waiting requests per Pod. */
  VLLMHighQueueDepth: Derived<number>;
  /** p95 end-to-end latency in seconds. */
  VLLMHighLatency: Derived<number>;
}

export interface CalibrationAnalysis {
  /** found: the lowest rate that saturated; notFound: no step saturated within the plan (an honest answer). */
  saturation: { found: true; rateRps: number; stepIndex: number; reasons: string[] } | { found: false; reason: string };
  /** The highest rate below saturation at which the replica was stable; null when even the first step saturated. */
  lastStableRps: number | null;
  /** One replica's capacity (requests/s) and how it was estimated; a lower bound when saturation was not found. */
  capacityRps: Derived<number> | null;
  thresholds: Thresholds | null;
  /** The alert thresholds derived with them; null without thresholds; absent in reports from before they were derived. */
  alerts?: DerivedAlertThresholds | null;
  /** Warnings a user should read (few Pods measured, drops in k6, errors, ...). */
  notes: string[];
  /** The requests k6 sent: the mix asked for and the lengths vLLM reported (sentLoad.ts); absent in older reports. */
  sent?: SentLoad;
}

/** The request mix a calibration sent, as asked and as k6 measured it. */
export interface SentLoad {
  /** Each length's distribution (as text, e.g. `uniform 100-900 (mean 500)`) and expected value. */
  promptTokens: { distribution: string; expected: number };
  maxTokens: { distribution: string; expected: number };
  seed: number;
  stream: boolean;
  /** Requests answered over the steps' k6 summaries. */
  requests: number;
  /** Mean prompt and completion tokens from vLLM's usage, weighted by answered requests; null when k6 had none. */
  achieved: { promptTokensMean: number; completionTokensMean: number } | null;
}

/** Where a calibration comes from. */
export interface Provenance {
  executionId: string;
  executionName: string;
  startedAt: string;
  finishedAt: string;
  cluster: string;
  namespace: string;
  deployment: string;
  model: string;
  image: string;
  gpu: string | null;
  vllmArgs: string[];
  /**
   * A hash of the Deployment's Pod template (image, args, resources): a later check can tell whether this calibration
   * still describes the running spec.
   */
  podTemplateHash: string;
  strategy: string;
  /** The request lengths: fixed ones, or a mix's expected values (rounded). */
  requestShape: { promptTokens: number; maxTokens: number };
  /** The lengths' distributions and seed, when they were not fixed (absent in reports from before mixes). */
  requestMix?: RequestMix;
  /** true when the requests streamed (k6 measured TTFT and inter-token latency); absent otherwise. */
  stream?: boolean;
  /** deploy.mode shadow: the copy of `deployment` the load went to (same Pod template); absent when it was itself. */
  measuredOn?: string;
}

/** The previous and new trigger thresholds of the ScaledObject (for the diff and for rollback). */
export interface ThresholdChange {
  scaledObject: { namespace: string; name: string };
  /**
   * The live values (null where the field is absent). `p95LatencyMetricType` is undefined in records from before
   * the calibration managed it: such a change leaves the metricType as it is, on apply and on rollback.
   */
  previous: {
    queueDepthPerPod: string | null;
    queueActivation: string | null;
    p95LatencySeconds: string | null;
    p95LatencyMetricType?: string | null;
  };
  next: { queueDepthPerPod: string; queueActivation: string; p95LatencySeconds: string; p95LatencyMetricType?: string };
  /** A unified-diff-like text of the changed lines. */
  diff: string;
  applied: boolean;
}

/** What a calibration produces: the report (JSON), stored with its chart and written to the history. */
export interface CalibrationReport {
  version: 1;
  provenance: Provenance;
  steps: StepMeasurement[];
  analysis: CalibrationAnalysis;
  change: ThresholdChange | null;
}
