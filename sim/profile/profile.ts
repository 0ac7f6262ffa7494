import * as z from 'zod';

/**
 * A twin profile: the model, the engine's shape and the world around it. Strict: an unknown key is an error that
 * names it, so a typo in a profile file never silently falls back to a default.
 */
const positive = z.number().positive();
/** The longest context of any served model (Llama 4 Scout: 10 M tokens); more in a token count is a typo. */
const MAX_CONTEXT_TOKENS = 10_000_000;
const positiveInt = z.number().int().positive();
/**
 * A name the twin passes on as a label value, a log line and a served model name: a control character (a line break,
 * an escape) would split the log line or the Prometheus exposition, so it is refused where it is written.
 */
const label = z
  .string()
  .min(1)
  .regex(/^\P{Cc}*$/u, 'must not contain control characters (line breaks, tabs, escapes)');

export const VLLM_VERSIONS = ['0.9', '0.11', 'latest'] as const;
export type VllmVersion = (typeof VLLM_VERSIONS)[number];

const profileFields = z.strictObject({
  /** Profile name, shown in the state file and the demo. */
  name: label,
  /** `--served-model-name`: the `model_name` label and the `model` field of completions. */
  model: label,
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
  vllmVersion: z.enum(VLLM_VERSIONS, {
    // YAML reads an unquoted 0.11 as the number 0.11 (and 0.10 as 0.1): say so, or "got 0.11" reads as a riddle.
    error: (issue) =>
      `must be one of ${VLLM_VERSIONS.map((v) => `"${v}"`).join(', ')}` +
      (typeof issue.input === 'number' ? ', quoted (YAML reads an unquoted 0.11 as a number)' : ''),
  }),
  engine: z.strictObject({
    /** `--max-num-seqs`: the most sequences decoded together in one step (vLLM's default: 256 or 1024). */
    maxNumSeqs: positiveInt.max(16_384),
    /** KV-cache blocks available on the GPU once the model is loaded (10 M blocks of 16: more than any card holds). */
    kvCacheBlocks: positiveInt.max(10_000_000),
    /** Tokens per KV-cache block (vLLM's default is 16; its `--block-size` choices go up to 256). */
    blockSize: positiveInt.max(256),
    /** `--max-num-batched-tokens`: the token budget of one step (decode tokens + prefill tokens). */
    maxNumBatchedTokens: positiveInt.max(MAX_CONTEXT_TOKENS),
    /** Prefill speed: a step that prefills P tokens takes P / prefillTokensPerSecond seconds longer. */
    prefillTokensPerSecond: positive,
    /** Decode step time = base + perSequence x running sequences (milliseconds). */
    decodeStepMs: z.strictObject({ base: positive, perSequence: z.number().nonnegative() }),
    /** `--max-model-len`: the longest prompt + output a request may have; at most what the KV cache holds. */
    maxModelLen: positiveInt.max(MAX_CONTEXT_TOKENS),
  }),
  gpu: z.strictObject({
    /** DCGM `modelName` label, e.g. "NVIDIA L40S". */
    model: label,
    /** Framebuffer size of one card in MiB (at most 1 TiB: far more than any one card has). */
    memoryMiB: positiveInt.max(1_048_576),
    /** `--gpu-memory-utilization`: the fraction of the card vLLM pre-allocates (weights + KV cache). */
    gpuMemoryUtilization: z.number().gt(0).lte(1),
    /** Power draw at idle and at full utilisation (W, idle <= max); power follows utilisation between them. */
    idlePowerWatts: positive.default(80),
    maxPowerWatts: positive.default(350),
  }),
  startup: z.strictObject({
    /**
     * Seconds from Pod start until the model is loaded and `/health` answers 200. `twin up` waits that long and a
     * minute more for every replica: above an hour is a typo (a 70B model loads in minutes).
     */
    modelLoadSeconds: z.number().nonnegative().max(3600),
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
  // The refinement runs even when a field failed its own check: compare only values that passed theirs, so a bad
  // value is reported once, by its own field.
  const { replicas, engine, gpu, karpenter } = profile as Partial<typeof profile>;
  const gpuLimit = karpenter?.gpuLimit;
  // `twin up` waits for every replica to be Ready: a limit below them would only surface as a start-up timeout.
  if (isCount(gpuLimit) && isCount(replicas) && gpuLimit < replicas)
    ctx.addIssue({
      code: 'custom',
      path: ['karpenter', 'gpuLimit'],
      message: `must be at least replicas (${replicas}): the twin starts that many vLLM Pods, one GPU node each, and waits for all of them`,
    });
  // vLLM refuses to start when one max-length sequence does not fit in the KV cache ("The model's max seq len (X) is
  // larger than the maximum number of tokens that can be stored in KV cache (Y)"), and so does the twin's engine
  // (sim/vllm/engine.ts): said here, the profile is refused before anything starts, not as replicas that never load.
  const { kvCacheBlocks, blockSize, maxModelLen } = engine ?? {};
  if (isCount(kvCacheBlocks) && isCount(blockSize) && isCount(maxModelLen) && maxModelLen > kvCacheBlocks * blockSize)
    ctx.addIssue({
      code: 'custom',
      path: ['engine', 'maxModelLen'],
      message: `must be at most the tokens the KV cache holds (kvCacheBlocks ${kvCacheBlocks} x blockSize ${blockSize} = ${kvCacheBlocks * blockSize}): vLLM refuses to start when one max-length sequence does not fit`,
    });
  // Power follows utilisation from idle to max; the GPU exporter refuses the reverse (sim/dcgm/DcgmGpu.ts).
  const { idlePowerWatts, maxPowerWatts } = gpu ?? {};
  if (isPositive(idlePowerWatts) && isPositive(maxPowerWatts) && maxPowerWatts < idlePowerWatts)
    ctx.addIssue({
      code: 'custom',
      path: ['gpu', 'maxPowerWatts'],
      message: `must be at least idlePowerWatts (${idlePowerWatts})`,
    });
});

function isPositive(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

function isCount(value: unknown): value is number {
  return isPositive(value) && Number.isInteger(value);
}

export type Profile = z.infer<typeof profileSchema>;
/** What a profile file may contain: every field optional when it `extends` a built-in profile. */
export type ProfileInput = z.input<typeof profileSchema>;
