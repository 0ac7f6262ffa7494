import * as z from 'zod';
import { REGION, TARGET_NAME_RULES, toConfigIssues } from '../config/index.js';
import {
  DEFAULT_MIX_SEED,
  lengthDistributionSchema,
  longestRequest,
  mixSeedSchema,
  toDistribution,
  type LengthDistribution,
  type RequestMix,
} from '../load/index.js';
import { K6_IMAGE } from '../kube/index.js';
import { k6PodSettingsSchema } from '../kube/manifests/index.js';
import { CalibrationInputInvalidError, type InputIssue } from './errors.js';
import { EXECUTION_TIMEOUT_SECONDS } from './executionTimeout.js';
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

/**
 * Bounds a value cannot sensibly exceed, checked by ValidateInput before anything changes. Above them the input is a
 * typo (`testReplicas: 1000000`, `maxTokens: 1e9`), not a plan.
 */
export const INPUT_BOUNDS = {
  /**
   * Replicas during the test without a ScaledObject to bound them (Deploy refuses above its maxReplicaCount): a
   * calibration measures what one replica serves; 64 GPUs is past any NodePool the guide sizes, and a typo would have
   * Deploy scale (and pause KEDA) there.
   */
  testReplicas: 64,
  /** Offered rate: a vLLM replica serves tens of requests/s; 10,000 is past any k6 Job this product starts. */
  rateRps: 10_000,
  /** Prompt, max_tokens and max_model_len: no served model has a context of a million tokens. */
  tokens: 1_000_000,
  /** Any duration (timeouts, holds, rests): none can exceed the execution's own timeout (names.ts). */
  seconds: EXECUTION_TIMEOUT_SECONDS,
  /**
   * Per load step, beyond its hold, rest and ingestion timeout: starting the k6 Job and the WatchLoadStep looks
   * (a Lambda invocation and a few state transitions each).
   */
  stepMarginSeconds: 60,
  /** Per run, beyond its steps: Analyze, StoreReport, ApplyThresholds and Cleanup. */
  runMarginSeconds: 600,
  /** Attempts a load step may take: a step that fails its evidence checks is repeated once (issue 15, item 1). */
  stepAttempts: 2,
} as const;

/** Control characters (C0, DEL, C1): a model name is a label value and a log field; these cannot be in it. */
const CONTROL_CHARACTERS = /\p{Cc}/u;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one: not valid UTF-16. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A number's type error, naming a non-finite one (YAML's .inf and .nan parse as numbers; zod refuses them). */
const notNumber = (expected: string) => (issue: { input?: unknown }) =>
  typeof issue.input === 'number' ? `${issue.input} is not a finite number; ${expected}` : expected;

/** JSON quoting that also escapes DEL and the C1 controls (JSON.stringify leaves them raw; NEL breaks a line). */
function quote(text: string): string {
  return JSON.stringify(text).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function rule(r: { pattern: RegExp; accepted: string }) {
  return z.string({ error: `must be a string; accepted: ${r.accepted}` }).regex(r.pattern, {
    error: (issue) => `${JSON.stringify(issue.input)} is not valid; accepted: ${r.accepted}`,
  });
}
const seconds = (what: string) =>
  z
    .number({ error: notNumber(`must be a number of seconds (${what})`) })
    .gt(0, { error: `must be > 0 seconds (${what})` })
    .max(INPUT_BOUNDS.seconds, {
      error: `must be <= ${INPUT_BOUNDS.seconds} seconds, the execution timeout (${what})`,
    });
const count = (what: string, min = 1) =>
  z
    .number({ error: notNumber(`must be an integer (${what})`) })
    .int({ error: `must be an integer (${what})` })
    .min(min, { error: `must be >= ${min} (${what})` });
const tokens = (what: string) =>
  count(what).max(INPUT_BOUNDS.tokens, {
    error: `must be <= ${INPUT_BOUNDS.tokens} tokens, past any model's context (${what})`,
  });
const rate = (what: string) =>
  z
    .number({ error: notNumber(`must be a number of requests/s (${what})`) })
    .gt(0, { error: `must be > 0 requests/s (${what})` })
    .max(INPUT_BOUNDS.rateRps, { error: `must be <= ${INPUT_BOUNDS.rateRps} requests/s (${what})` });

/** The `request` of a calibration input; `vllm-pilot twin capacity --request` reads the same. */
export const calibrationRequestSchema = z
  .strictObject({
    promptTokens: lengthDistributionSchema('prompt tokens', INPUT_BOUNDS.tokens).default(35),
    maxTokens: lengthDistributionSchema('max_tokens', INPUT_BOUNDS.tokens).default(100),
    /** The seed of the lengths' draws: the same seed, the same lengths for the same iteration, on EKS and the twin. */
    seed: mixSeedSchema.default(DEFAULT_MIX_SEED),
    /**
     * true: every request streams (`stream: true`, usage in the last chunk) and k6 measures time to first token and
     * inter-token latency; needs a k6 image with the xk6-sse extension (k6.image).
     */
    stream: z.boolean({ error: 'must be true or false (stream the answers)' }).default(false),
    timeoutSeconds: seconds('per-request timeout').default(240),
  })
  .prefault({});
export type CalibrationRequest = z.output<typeof calibrationRequestSchema>;

/** Validates a calibration input's `request` alone; CalibrationInputInvalidError names every bad field (`request.…`). */
export function parseCalibrationRequest(request: unknown): CalibrationRequest {
  const parsed = calibrationRequestSchema.safeParse(request, { error: unknownKeysError });
  if (!parsed.success)
    throw new CalibrationInputInvalidError(
      inputIssues(parsed.error.issues.map((issue) => ({ ...issue, path: ['request', ...issue.path] }))),
    );
  return parsed.data;
}

const calibrationInputFields = z.strictObject({
  /** The deployment to calibrate and where its metrics are. */
  target: z.strictObject({
    cluster: rule(TARGET_NAME_RULES.cluster),
    region: z
      .string({ error: 'is required (the AWS region)' })
      .regex(REGION, { error: 'must be an AWS region such as us-east-2' }),
    namespace: rule(TARGET_NAME_RULES.dns1123Label),
    deployment: rule(TARGET_NAME_RULES.dns1123Label),
    /** The served model name (`model_name` label, `model` field of requests). Any characters: it is escaped. */
    model: z
      .string({ error: 'is required (the served model name)' })
      .min(1, { error: 'must not be empty' })
      .refine((model) => !CONTROL_CHARACTERS.test(model), {
        error: (issue) => `${quote(issue.input as string)} holds a control character; accepted: printable characters`,
      })
      .refine((model) => !LONE_SURROGATE.test(model), {
        error: (issue) => `${quote(issue.input as string)} is not valid Unicode (a lone surrogate)`,
      }),
    /** The AMP workspace URL (the twin's Prometheus URL locally): no credentials (SigV4 signs), no query. */
    ampWorkspaceUrl: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL (the AMP workspace URL)' })
      .superRefine((text, ctx) => {
        const url = new URL(text);
        if (url.username !== '' || url.password !== '')
          ctx.addIssue({
            code: 'custom',
            message:
              'must not carry credentials (user:pass@): requests are signed with SigV4; accepted: https://host/path',
          });
        if (url.search !== '' || url.hash !== '')
          ctx.addIssue({
            code: 'custom',
            message: 'must not carry a query or fragment (?… or #…); accepted: https://host/path',
          });
      }),
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
          maxModelLen: tokens('max_model_len in tokens'),
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
  testReplicas: count('replicas during the test')
    .max(INPUT_BOUNDS.testReplicas, {
      error: `must be <= ${INPUT_BOUNDS.testReplicas} (replicas during the test; a calibration measures one replica's capacity)`,
    })
    .default(1),
  /**
   * The requests k6 sends (the guide: a prompt of about 35 tokens, max_tokens 100). Each length is a number (every
   * request the same) or a distribution (shared/load): k6 draws each request's lengths from it, seeded, so a run is
   * reproducible (docs/calibration.md, "The request mix").
   */
  request: calibrationRequestSchema,
  promptTokens: lengthDistributionSchema('prompt tokens', INPUT_BOUNDS.tokens).default(35),
  maxTokens: lengthDistributionSchema('max_tokens', INPUT_BOUNDS.tokens).default(100),
  /** The seed of the lengths' draws: the same seed, the same lengths for the same iteration, on EKS and the twin. */
  seed: mixSeedSchema.default(DEFAULT_MIX_SEED),
  /**
   * true: every request streams (`stream: true`, usage in the last chunk) and k6 measures time to first token and
   * inter-token latency; needs a k6 image with the xk6-sse extension (k6.image).
   */
  stream: z.boolean({ error: 'must be true or false (stream the answers)' }).default(false),
  /**
   * The k6 Jobs' Pod (warmup and load steps): image (default grafana/k6; streaming needs one built with xk6-sse),
   * resources (default: 1 CPU and 1 Gi requested, 2 Gi memory limit, no CPU limit), nodeSelector, tolerations,
   * imagePullSecrets.
   */
  k6: k6PodSettingsSchema.prefault({}),
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
        .array(rate('offered rate of a step'))
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
        .number({ error: notNumber('must be a number of seconds (rest between steps)') })
        .min(0, { error: 'must be >= 0 seconds (rest between steps)' })
        .max(INPUT_BOUNDS.seconds, {
          error: `must be <= ${INPUT_BOUNDS.seconds} seconds, the execution timeout (rest between steps)`,
        })
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
          startRps: rate('first bracket step').default(10),
          growthFactor: z
            .number({ error: 'must be a number (rate multiplier between bracket steps)' })
            .gt(1, { error: 'must be > 1 (rate multiplier between bracket steps)' })
            .max(10, { error: 'must be <= 10 (rate multiplier between bracket steps)' })
            .default(3),
          maxRps: rate('highest rate offered').default(1024),
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
      /** VLLMHighQueueDepth fires when the queue holds this much work at the replica's capacity (alertThresholds.ts). */
      alertQueueWaitSeconds: seconds('queue alert wait').default(1),
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
  /**
   * Set by a many-target execution on each target's child execution (batchInput.ts), never by hand: the parent
   * execution and the target's place in its list. A child publishes no notification of its own: the parent sends one
   * summarizing every target. Last, so that the keys an unknown key's message lists begin with those a user writes.
   */
  batch: z
    .strictObject({
      executionArn: z.string({ error: 'must be the parent execution ARN' }).min(1),
      index: z.number({ error: 'must be the index of the target in the list' }).int().min(0),
    })
    .optional(),
});

/** The fields, then the bounds that span several of them (a plan's worst-case duration, a request's length). */
export const calibrationInputSchema = calibrationInputFields.superRefine((input, ctx) => {
  const plan = worstCaseDuration(input);
  if (plan.seconds > EXECUTION_TIMEOUT_SECONDS)
    ctx.addIssue({
      code: 'custom',
      path: ['plan'],
      message:
        `worst-case duration ${plan.seconds} s (${plan.formula}) exceeds the execution timeout ` +
        `${EXECUTION_TIMEOUT_SECONDS} s; accepted: fewer or shorter steps, or shorter timeouts`,
    });
  if (input.request.stream && input.k6.image === K6_IMAGE)
    ctx.addIssue({
      code: 'custom',
      path: ['k6', 'image'],
      message:
        `request.stream needs a k6 built with the xk6-sse extension (stock ${K6_IMAGE} cannot read a stream as it ` +
        'arrives); accepted: the image of one, e.g. built with `xk6 build --with github.com/phymbert/xk6-sse`',
    });
  const request = longestRequest(requestMixOf(input.request));
  if (input.deploy.mode === 'apply' && request > input.deploy.maxModelLen)
    ctx.addIssue({
      code: 'custom',
      path: ['request', 'maxTokens'],
      message:
        `promptTokens + maxTokens = ${request} tokens exceeds deploy.maxModelLen (${input.deploy.maxModelLen}), ` +
        "the model's context; accepted: a request (the longest of a distribution) that fits it",
    });
});

/** The request mix of an input's `request`: numbers become fixed distributions. */
export function requestMixOf(request: {
  promptTokens: number | LengthDistribution;
  maxTokens: number | LengthDistribution;
  seed: number;
}): RequestMix {
  return {
    seed: request.seed,
    prompt: toDistribution(request.promptTokens),
    output: toDistribution(request.maxTokens),
  };
}

export type CalibrationInput = z.output<typeof calibrationInputSchema>;
export type CalibrationInputSpec = z.input<typeof calibrationInputSchema>;
export type CalibrationPlan = CalibrationInput['plan'];
export type EarlyStopSettings = CalibrationPlan['earlyStop'];
export type AdaptiveSettings = CalibrationPlan['adaptive'];

/**
 * The longest an execution of this input can run, and how: warmup, rollout and readiness timeouts, then for every
 * step the plan may take (linear: its rates; adaptive: maxSteps), each attempt (a step is repeated once when its
 * evidence fails) its hold, rest, AMP ingestion timeout and a margin, then the run's margin (INPUT_BOUNDS).
 */
export function worstCaseDuration(
  input: Pick<CalibrationInput, 'plan' | 'warmup' | 'rollout' | 'readiness' | 'ingestion'>,
): {
  seconds: number;
  formula: string;
} {
  const { plan } = input;
  const linear = plan.strategy === 'linear';
  const steps = linear ? plan.rates.length : plan.adaptive.maxSteps;
  const hold = linear ? plan.holdSeconds : Math.max(plan.holdSeconds, plan.adaptive.bracketHoldSeconds ?? 0);
  const { stepAttempts, stepMarginSeconds, runMarginSeconds } = INPUT_BOUNDS;
  const perStep = hold + plan.restSeconds + input.ingestion.timeoutSeconds + stepMarginSeconds;
  const seconds =
    input.warmup.timeoutSeconds +
    input.rollout.timeoutSeconds +
    input.readiness.timeoutSeconds +
    steps * stepAttempts * perStep +
    runMarginSeconds;
  const formula =
    `warmup ${input.warmup.timeoutSeconds} + rollout ${input.rollout.timeoutSeconds} + readiness ` +
    `${input.readiness.timeoutSeconds} + ${steps} steps × ${stepAttempts} attempts × (hold ${hold} + rest ` +
    `${plan.restSeconds} + ingestion ${input.ingestion.timeoutSeconds} + margin ${stepMarginSeconds}) + run margin ` +
    `${runMarginSeconds}`;
  return { seconds, formula };
}

/** Validates a calibration input; throws CalibrationInputInvalidError naming every bad field. */
export function parseCalibrationInput(input: unknown): CalibrationInput {
  const parsed = calibrationInputSchema.safeParse(input, { error: unknownKeysError });
  if (!parsed.success) throw new CalibrationInputInvalidError(inputIssues(parsed.error.issues));
  return parsed.data;
}

/** zod's "Unrecognized key" says which key; this also says which are accepted (the object's own keys). */
function unknownKeysError(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code !== 'unrecognized_keys') return undefined;
  const shape = (issue.inst as { _zod?: { def?: { shape?: object } } } | undefined)?._zod?.def?.shape;
  return `unknown key${shape === undefined ? '' : `; accepted: ${Object.keys(shape).join(', ')}`}`;
}

/** One issue per unknown key, at its own path (`plan.ratez: unknown key; accepted: ...`). */
function inputIssues(issues: readonly z.core.$ZodIssue[]): InputIssue[] {
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => toConfigIssues('', [{ ...issue, path: [...issue.path, key] }])[0] as InputIssue)
      : toConfigIssues('', [issue]),
  );
}
