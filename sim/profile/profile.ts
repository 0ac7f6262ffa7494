import * as z from 'zod';

/**
 * A twin profile: the model, the engine's shape and the world around it. Strict: an unknown key is an error that
 * names it, so a typo in a profile file never silently falls back to a default.
 */
const positive = z.number().positive();
const positiveInt = z.number().int().positive();

export const VLLM_VERSIONS = ['0.9', '0.11', 'latest'] as const;
export type VllmVersion = (typeof VLLM_VERSIONS)[number];

const profileFields = z.strictObject({
  /** Profile name, shown in the state file and the demo. */
  name: z.string().min(1),
  /** `--served-model-name`: the `model_name` label and the `model` field of completions. */
  model: z.string().min(1),
  /** Kubernetes namespace and Deployment the replicas belong to (Pod names derive from the Deployment). */
  namespace: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS-1123 label')
    .max(63)
    .default('default'),
  deployment: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS-1123 label')
    .max(47)
    .default('vllm-inference-app'),
  replicas: positiveInt.max(64),
  /** Which vLLM metric names the replicas expose: `0.9` legacy only, `0.11` both, `latest` current only. */
  vllmVersion: z.enum(VLLM_VERSIONS),
  engine: z.strictObject({
    /** `--max-num-seqs`: the most sequences decoded together in one step. */
    maxNumSeqs: positiveInt,
    /** KV-cache blocks available on the GPU once the model is loaded. */
    kvCacheBlocks: positiveInt,
    /** Tokens per KV-cache block (vLLM's default is 16). */
    blockSize: positiveInt,
    /** `--max-num-batched-tokens`: the token budget of one step (decode tokens + prefill tokens). */
    maxNumBatchedTokens: positiveInt,
    /** Prefill speed: a step that prefills P tokens takes P / prefillTokensPerSecond seconds longer. */
    prefillTokensPerSecond: positive,
    /** Decode step time = base + perSequence x running sequences (milliseconds). */
    decodeStepMs: z.strictObject({ base: positive, perSequence: z.number().nonnegative() }),
    /** `--max-model-len`: the longest prompt + output a request may have. */
    maxModelLen: positiveInt,
  }),
  gpu: z.strictObject({
    /** DCGM `modelName` label, e.g. "NVIDIA L40S". */
    model: z.string().min(1),
    /** Framebuffer size of one card in MiB. */
    memoryMiB: positiveInt,
    /** `--gpu-memory-utilization`: the fraction of the card vLLM pre-allocates (weights + KV cache). */
    gpuMemoryUtilization: z.number().gt(0).lte(1),
    /** Power draw at idle and at full utilisation (W); power follows utilisation between them. */
    idlePowerWatts: positive.default(80),
    maxPowerWatts: positive.default(350),
  }),
  startup: z.strictObject({
    /** Seconds from Pod start until the model is loaded and `/health` answers 200. */
    modelLoadSeconds: z.number().nonnegative(),
    /** The first N requests after start are slower (CUDA graph capture, kernel compilation). */
    warmupRequests: z.number().int().nonnegative(),
    /** How much slower a step is while warming up (1 = not slower). */
    warmupSlowdown: z.number().gte(1),
  }),
  prometheus: z.strictObject({ scrapeIntervalSeconds: positive.max(60) }),
  /**
   * Amazon Managed Prometheus between the scrape and the queries. With a lag above 0, a Prometheus in agent mode
   * scrapes and remote-writes through a relay that holds each batch `ingestionLagSeconds` (± `ingestionJitterSeconds`,
   * never out of order) to the Prometheus that answers queries, as samples reach AMP up to about a minute late. 0:
   * the scraping Prometheus answers queries itself (fast, and kinder than AWS).
   */
  amp: z
    .strictObject({
      ingestionLagSeconds: z.number().nonnegative().max(300).default(0),
      ingestionJitterSeconds: z.number().nonnegative().max(120).default(0),
    })
    .default({ ingestionLagSeconds: 0, ingestionJitterSeconds: 0 }),
  /**
   * Production traffic on the target beside any test: a constant arrival rate through the Service, optionally varying
   * slowly (a sine of `variationFraction` × rate over `periodSeconds`), with its own request shape. Absent: nobody
   * else talks to the replicas.
   */
  traffic: z
    .strictObject({
      rateRps: positive.max(10_000),
      promptTokens: positiveInt.default(35),
      maxTokens: positiveInt.default(100),
      variationFraction: z.number().min(0).max(0.9).default(0),
      periodSeconds: positive.default(600),
    })
    .optional(),
  keda: z
    .strictObject({
      /** Whether the KEDA operator and its CRDs are installed in the twin's cluster. */
      installed: z.boolean().default(true),
      pollingIntervalSeconds: positive.max(300),
    })
    .default({ installed: true, pollingIntervalSeconds: 30 }),
  /**
   * The guide's Karpenter NodePool `gpu-inf`. `gpuLimit` is its `limits: nvidia.com/gpu`: each g6e.4xlarge node has
   * one GPU, so it is the most GPU nodes at once; a vLLM Pod beyond it stays Pending (Unschedulable) until a GPU node
   * goes away. Absent: no limit, every vLLM Pod gets a node at once (kinder than AWS, where capacity can run short).
   */
  karpenter: z.strictObject({ gpuLimit: positiveInt.optional() }).optional(),
});

export const profileSchema = profileFields.superRefine((profile, ctx) => {
  const gpuLimit = profile.karpenter?.gpuLimit;
  // `twin up` waits for every replica to be Ready: a limit below them would only surface as a start-up timeout.
  if (gpuLimit !== undefined && gpuLimit < profile.replicas)
    ctx.addIssue({
      code: 'custom',
      path: ['karpenter', 'gpuLimit'],
      message: `must be at least replicas (${profile.replicas}): the twin starts that many vLLM Pods, one GPU node each, and waits for all of them`,
    });
});

export type Profile = z.infer<typeof profileSchema>;
/** What a profile file may contain: every field optional when it `extends` a built-in profile. */
export type ProfileInput = z.input<typeof profileSchema>;
