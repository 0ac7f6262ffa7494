import * as z from 'zod';
import { REGION, TARGET_NAME_RULES, toConfigIssues } from '../config/index.js';
import { CalibrationInputInvalidError } from './errors.js';
import { STRATEGY_NAMES, type StrategyName } from './strategyNames.js';

/**
 * The calibration's input, validated by ValidateInput before anything touches the cluster. Strict: an unknown key
 * is refused with its path, so a typo cannot silently fall back to a default.
 */

/** The one-sided confidences of the early-ending slope test (the columns of its t table). */
export const EARLY_STOP_CONFIDENCES = [0.9, 0.95, 0.99] as const;

/** deploy.mode's values (input.ts `deploy`). */
export const DEPLOY_MODES = ['shadow', 'adopt', 'apply'] as const;
export type DeployMode = (typeof DEPLOY_MODES)[number];

/** The AWS guide's plan: 10, 20, ... 70 requests/s. */
export const GUIDE_RATES = [10, 20, 30, 40, 50, 60, 70] as const;

function rule(r: { pattern: RegExp; accepted: string }) {
  return z.string({ error: `must be a string; accepted: ${r.accepted}` }).regex(r.pattern, {
    error: (issue) => `${JSON.stringify(issue.input)} is not valid; accepted: ${r.accepted}`,
  });
}
const seconds = (what: string) =>
  z.number({ error: `must be a number of seconds (${what})` }).gt(0, { error: `must be > 0 seconds (${what})` });
const count = (what: string, min = 1) =>
  z
    .number({ error: `must be an integer (${what})` })
    .int({ error: `must be an integer (${what})` })
    .min(min, { error: `must be >= ${min} (${what})` });

export const calibrationInputSchema = z.strictObject({
  /** The deployment to calibrate and where its metrics are. */
  target: z.strictObject({
    cluster: rule(TARGET_NAME_RULES.cluster),
    region: z
      .string({ error: 'is required (the AWS region)' })
      .regex(REGION, { error: 'must be an AWS region such as us-east-2' }),
    namespace: rule(TARGET_NAME_RULES.dns1123Label),
    deployment: rule(TARGET_NAME_RULES.dns1123Label),
    /** The served model name (`model_name` label, `model` field of requests). Any characters: it is escaped. */
    model: z.string({ error: 'is required (the served model name)' }).min(1, { error: 'must not be empty' }),
    /** The AMP workspace URL (the twin's Prometheus URL locally). */
    ampWorkspaceUrl: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL (the AMP workspace URL)' }),
    clusterLabel: rule(TARGET_NAME_RULES.prometheusLabel).optional(),
  }),
  /**
   * Where the load goes (docs/adr/0017-shadow-calibration-by-default.md). `shadow` (default): a copy of the live
   * Deployment (same Pod template, labels of its own, its own Service and ServiceMonitor) that no production Service
   * selects, removed at the cleanup; it needs a free GPU. `adopt`: the Deployment that runs now, KEDA paused and
   * scaled to testReplicas meanwhile. `apply`: apply the product's vLLM Deployment, Service and ServiceMonitor first
   * (shared/kube/manifests), then as adopt.
   */
  deploy: z
    .discriminatedUnion(
      'mode',
      [
        z.strictObject({ mode: z.literal('shadow') }),
        z.strictObject({
          mode: z.literal('adopt'),
          /**
           * Calibrate the live Deployment although it serves users (Deploy measures their traffic in AMP first): they
           * share the saturated test replica meanwhile. Default false: such a target is refused.
           */
          allowServingTraffic: z
            .boolean({ error: 'must be true or false (calibrate a target that serves users)' })
            .default(false),
        }),
        z.strictObject({
          mode: z.literal('apply'),
          image: z.string().min(1).optional(),
          /** vLLM's `--model` (an s3:// path or a Hugging Face id); default: target.model. */
          modelSource: z.string().min(1).optional(),
          maxModelLen: count('max_model_len in tokens'),
          gpuMemoryUtilization: z.number().gt(0).max(1).optional(),
          maxNumSeqs: count('max_num_seqs').optional(),
        }),
      ],
      {
        error: (issue) =>
          issue.code === 'invalid_union' ? `is not a mode; accepted: ${DEPLOY_MODES.join(', ')}` : undefined,
      },
    )
    .default({ mode: 'shadow' }),
  /** Replicas during the test: the guide measures one replica (KEDA is paused at this count meanwhile). */
  testReplicas: count('replicas during the test').default(1),
  /** The request shape of every load request (the guide: a prompt of about 35 tokens, max_tokens 100). */
  request: z
    .strictObject({
      promptTokens: count('prompt tokens').default(35),
      maxTokens: count('max_tokens').default(100),
      timeoutSeconds: seconds('per-request timeout').default(240),
    })
    .prefault({}),
  /** The guide: 100 sequential requests (1 VU) before measuring, so CUDA graph capture is over. */
  warmup: z
    .strictObject({
      requests: count('warmup requests', 0).default(100),
      timeoutSeconds: seconds('warmup timeout').default(1800),
    })
    .prefault({}),
  plan: z
    .strictObject({
      strategy: z
        .string({ error: 'must be a strategy name' })
        .refine((name): name is StrategyName => (STRATEGY_NAMES as readonly string[]).includes(name), {
          error: (issue) => `unknown strategy ${JSON.stringify(issue.input)}; accepted: ${STRATEGY_NAMES.join(', ')}`,
        })
        .default('linear'),
      /** Offered rates in requests/s, strictly increasing (linear's steps). */
      rates: z
        .array(z.number({ error: 'must be a number of requests/s' }).gt(0, { error: 'must be > 0 requests/s' }))
        .min(1, { error: 'must list at least one rate' })
        .superRefine((rates, ctx) => {
          rates.forEach((rate, i) => {
            const previous = rates[i - 1];
            if (i > 0 && previous !== undefined && rate <= previous)
              ctx.addIssue({
                code: 'custom',
                path: [i],
                message: `${rate} is not greater than the rate before it (${previous}); rates must strictly increase`,
              });
          });
        })
        .default([...GUIDE_RATES]),
      holdSeconds: seconds('hold time of each step').default(60),
      restSeconds: z
        .number({ error: 'must be a number of seconds (rest between steps)' })
        .min(0, { error: 'must be >= 0 seconds (rest between steps)' })
        .default(30),
      /** End the plan after the first saturated step (the rest only adds overload). */
      stopAtSaturation: z.boolean().default(true),
      preAllocatedVUs: count('pre-allocated VUs').default(50),
      maxVUs: count('max VUs').default(500),
      /**
       * Early step ending (shared/calibration/earlyStop.ts): a step ends before its hold once the queue's growth is
       * statistically evident (saturated) or once it is clearly stable; `enabled: false` holds every step fully.
       */
      earlyStop: z
        .strictObject({
          enabled: z.boolean({ error: 'must be true or false (end steps early)' }).default(true),
          /** One-sided confidence of the slope test: 0.9, 0.95 or 0.99 (the t table has these columns). */
          confidence: z
            .number({ error: 'must be a number (confidence of the slope test)' })
            .refine((value) => (EARLY_STOP_CONFIDENCES as readonly number[]).includes(value), {
              error: (issue) =>
                `${JSON.stringify(issue.input)} is not supported; accepted: ${EARLY_STOP_CONFIDENCES.join(', ')}`,
            })
            .default(0.99),
          /** No saturated ending before this many seconds of load; default 25 % of the step's hold. */
          minSeconds: seconds('least load before a saturated ending').optional(),
          /** Queue samples needed before any ending (the slope's t-test has n − 2 degrees of freedom). */
          minSamples: count('queue samples before an ending', 4).default(6),
          /**
           * No stable ending before this fraction of the hold (as minSeconds for a saturated one): a quarter lets the
           * bracket steps far below the knee end soon, while the slope test on the latest half still sees a knee
           * that only began.
           */
          stableAfterFraction: z
            .number({ error: 'must be a fraction of the hold (stable ending)' })
            .gt(0, { error: 'must be > 0 (a fraction of the hold)' })
            .max(1, { error: 'must be <= 1 (a fraction of the hold)' })
            .default(0.25),
          /**
           * No saturated ending before this many request lifetimes of load: the capacity comes from its completions,
           * corrected by W / (W − S), whose error grows as the window W nears the lifetime S.
           */
          saturatedMinLifetimes: z
            .number({ error: 'must be a number of request lifetimes (saturated ending)' })
            .min(0, { error: 'must be >= 0 request lifetimes (saturated ending)' })
            .default(4),
          /** No stable ending before this many request lifetimes of load (the batch has turned over). */
          stableMinLifetimes: z
            .number({ error: 'must be a number of request lifetimes (stable ending)' })
            .min(0, { error: 'must be >= 0 request lifetimes (stable ending)' })
            .default(2),
          /** A stable ending needs the queue's maximum at most this many requests per Pod. */
          stableQueueMaxPerPod: z
            .number({ error: 'must be a number of queued requests per Pod' })
            .min(0, { error: 'must be >= 0 queued requests per Pod' })
            .default(2),
          /**
           * Seconds between looks at the running step (WatchLoadStep). Each look reads k6's live metrics, whose
           * growth test needs 5 readings: 5 s lets a saturated step end some 25 s in rather than 50 (a look is one
           * Lambda invocation and a few state transitions).
           */
          watchSeconds: seconds('between looks at a running step').default(5),
        })
        .prefault({}),
      /**
       * The `adaptive` strategy (strategies/adaptive.ts): geometric steps from startRps (× growthFactor, up to maxRps)
       * until one saturates, then probes at capacity × (1 ± resolution) until the bracket [highest stable, lowest
       * saturated] is that narrow, or maxSteps. `rates` above are linear's and do not apply to it.
       */
      adaptive: z
        .strictObject({
          startRps: z
            .number({ error: 'must be a number of requests/s (first bracket step)' })
            .gt(0, { error: 'must be > 0 requests/s (first bracket step)' })
            .default(10),
          growthFactor: z
            .number({ error: 'must be a number (rate multiplier between bracket steps)' })
            .gt(1, { error: 'must be > 1 (rate multiplier between bracket steps)' })
            .max(10, { error: 'must be <= 10 (rate multiplier between bracket steps)' })
            .default(3),
          maxRps: z
            .number({ error: 'must be a number of requests/s (highest rate offered)' })
            .gt(0, { error: 'must be > 0 requests/s (highest rate offered)' })
            .default(1024),
          resolution: z
            .number({ error: 'must be a fraction of capacity (0.05 = ±5 %)' })
            .gt(0, { error: 'must be > 0 (a fraction of capacity, 0.05 = ±5 %)' })
            .max(0.5, { error: 'must be <= 0.5 (a fraction of capacity, 0.05 = ±5 %)' })
            .default(0.05),
          maxSteps: count('load steps at most', 2).max(50, { error: 'must be <= 50 (load steps at most)' }).default(10),
          /** Hold of the bracket steps (before any step saturated); default plan.holdSeconds. */
          bracketHoldSeconds: seconds('hold time of the bracket steps').optional(),
        })
        .refine((a) => a.startRps <= a.maxRps, {
          path: ['startRps'],
          error: (issue) => {
            const a = issue.input as { startRps: number; maxRps: number };
            return `${a.startRps} is above maxRps (${a.maxRps}); accepted: a rate <= maxRps`;
          },
        })
        .prefault({}),
    })
    .prefault({}),
  /** The latency SLO: a step whose p95 end-to-end latency exceeds it counts as saturated. Optional. */
  slo: z.strictObject({ p95LatencySeconds: seconds('p95 latency SLO').optional() }).prefault({}),
  /** The knobs of the threshold formulas (docs/calibration.md, "How thresholds are derived"). */
  thresholds: z
    .strictObject({
      /** The queue threshold holds at most this much work at the last stable rate. */
      maxQueueWaitSeconds: seconds('queue wait').default(0.5),
      /** The latency guardrail is this factor times the stable p95 (capped by the SLO). */
      guardrailFactor: z.number().gt(1, { error: 'must be > 1' }).default(2),
      /** Scale in when p95 stays below this factor times the stable p95. */
      scaleInFactor: z.number().gt(1, { error: 'must be > 1' }).default(1.2),
      scaleInForSeconds: seconds('scale-in window').default(300),
    })
    .prefault({}),
  scaledObject: z
    .strictObject({
      /** Default: the Deployment's name (as in the guide). */
      name: rule(TARGET_NAME_RULES.dns1123Label).optional(),
      /** true: patch the thresholds into the ScaledObject; false (default): dry run, print the diff only. */
      apply: z.boolean().default(false),
    })
    .prefault({}),
  rollout: z
    .strictObject({
      timeoutSeconds: seconds('rollout timeout').default(900),
      pollSeconds: seconds('rollout poll').default(10),
    })
    .prefault({}),
  readiness: z
    .strictObject({
      timeoutSeconds: seconds('readiness timeout').default(600),
      pollSeconds: seconds('readiness poll').default(5),
    })
    .prefault({}),
  /**
   * AMP's ingestion: a step is measured only once AMP holds samples past its window's end (AwaitStepData). Samples
   * reach AMP by remote write up to about a minute late (plus a scrape interval); past `timeoutSeconds` after the
   * window's end the calibration fails with CalibrationStepDataMissingError rather than judge a partial window.
   */
  ingestion: z
    .strictObject({
      timeoutSeconds: seconds('wait for AMP to hold a step window')
        .max(900, {
          error: 'must be <= 900 seconds (wait for AMP to hold a step window)',
        })
        .default(180),
      pollSeconds: seconds('poll for a step window in AMP').default(3),
    })
    .prefault({}),
});

export type CalibrationInput = z.output<typeof calibrationInputSchema>;
export type CalibrationInputSpec = z.input<typeof calibrationInputSchema>;
export type CalibrationPlan = CalibrationInput['plan'];
export type EarlyStopSettings = CalibrationPlan['earlyStop'];
export type AdaptiveSettings = CalibrationPlan['adaptive'];

/** Validates a calibration input; throws CalibrationInputInvalidError naming every bad field. */
export function parseCalibrationInput(input: unknown): CalibrationInput {
  const parsed = calibrationInputSchema.safeParse(input);
  if (!parsed.success) throw new CalibrationInputInvalidError(toConfigIssues('', parsed.error.issues));
  return parsed.data;
}
