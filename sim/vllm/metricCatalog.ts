import { VLLM, VLLM_RENAMED } from '../../shared/metrics/index.js';
import type { VllmVersion } from '../profile/profile.js';
import {
  type EngineHistogramKey,
  type EngineMetrics,
  FINISH_REASONS,
  type FinishReason,
  PROMPT_TOKEN_SOURCES,
} from './engineMetrics.js';

/**
 * Which vLLM series a replica exposes, in the order vLLM's `PrometheusStatLogger` registers them, with the
 * reference HELP texts. Only what a replica WITHOUT LoRA, speculative decoding, KV connectors, `--kv-cache-metrics`
 * or VLLM_COMPUTE_NANS_IN_LOGITS exposes (so no lora_requests_info, spec_decode_*, external_prefix_cache_*,
 * kv_block_*, corrupted_requests).
 *
 * Sources: vllm-project/vllm `vllm/v1/metrics/loggers.py` @ f4518d5d (newest), @ 005a810b (v0.10-era) and the
 * v0.11-era file (show_hidden_metrics gates); the deprecation policy in docs/usage/metrics.md.
 */

/** When a series exists. */
export type MetricEra =
  /** In every supported version. */
  | 'all'
  /** A new name of one of the four renamed series (`VLLM_RENAMED[*].current`). */
  | 'current'
  /** An old name of one of the four renamed series (`VLLM_RENAMED[*].legacy`). */
  | 'legacy'
  /** Added after the v0.9/v0.10 line. */
  | 'newer';

/**
 * THE per-version table: which eras of series, and which `finished_reason` values, each `vllmVersion` exposes.
 * - `0.9`: legacy names only. The current names came as renames in v0.9.2 and v0.11 (PR #18354, #24110); the
 *   twin's 0.9 is the era before them. loggers.py @ 005a810b (v0.10-era) has none of the `newer` series
 *   (waiting_by_reason, engine_sleep_state, mm_cache_*, prompt_tokens_by_source / _cached,
 *   request_time_per_output_token, request_prefill_kv_computed_tokens), and its FinishReason is stop/length/abort
 *   (`error` and `repetition` came later).
 * - `0.11`: both name eras. In v0.11 `vllm:time_per_output_token_seconds` is deprecated but still shown, and
 *   `vllm:gpu_cache_usage_perc` / `vllm:gpu_prefix_cache_*` are hidden but re-enabled by
 *   `--show-hidden-metrics-for-version=0.10` (PR #24245), which the twin assumes. Per the project's design the
 *   0.11 replica otherwise carries the current table, `newer` series included (real v0.11 lacked most of them).
 * - `latest`: current names only (the legacy ones were hidden in v0.12 by PR #29330 and removed by PR #32661).
 */
export const VLLM_VERSION_TABLE: Readonly<
  Record<VllmVersion, { eras: readonly MetricEra[]; finishReasons: readonly FinishReason[] }>
> = {
  '0.9': { eras: ['all', 'legacy'], finishReasons: ['stop', 'length', 'abort'] },
  '0.11': { eras: ['all', 'current', 'legacy', 'newer'], finishReasons: FINISH_REASONS },
  latest: { eras: ['all', 'current', 'newer'], finishReasons: FINISH_REASONS },
};

/** What a family's samples are computed from at scrape time. */
export interface ExpositionState {
  metrics: EngineMetrics;
  running: number;
  waiting: number;
  kvCacheUsage: number;
  version: VllmVersion;
}

/** A sample's labels beyond `model_name` and `engine`, and its value. */
export interface ExtraLabeledValue {
  labels: Record<string, string>;
  value: number;
}

interface FamilyBase {
  /** The exposed name (counters end in `_total`). */
  name: string;
  help: string;
  era: MetricEra;
}

export type FamilyDef =
  | (FamilyBase & { type: 'gauge' | 'counter'; samples: (state: ExpositionState) => ExtraLabeledValue[] })
  | (FamilyBase & { type: 'histogram'; histogram: EngineHistogramKey });

const one = (value: number): ExtraLabeledValue[] => [{ labels: {}, value }];
const histogram = (name: string, help: string, key: EngineHistogramKey, era: MetricEra = 'all'): FamilyDef => ({
  type: 'histogram',
  name,
  help,
  era,
  histogram: key,
});

/** The families in registration order (legacy names sit where v0.11's loggers.py registers them). */
export const VLLM_FAMILIES: readonly FamilyDef[] = [
  {
    type: 'gauge',
    name: VLLM.numRequestsRunning,
    help: 'Number of requests in model execution batches.',
    era: 'all',
    samples: (s) => one(s.running),
  },
  {
    type: 'gauge',
    name: VLLM.numRequestsWaiting,
    help: 'Number of requests waiting to be processed.',
    era: 'all',
    samples: (s) => one(s.waiting),
  },
  {
    type: 'gauge',
    name: VLLM.numRequestsWaitingByReason,
    help:
      "Number of waiting requests by reason. Reason labels: 'capacity' = waiting for scheduling capacity; " +
      "'deferred' = deferred by transient constraints (LoRA budget, KV transfer, blocked status). " +
      'Sum of all reasons equals vllm:num_requests_waiting.',
    era: 'newer',
    // Without LoRA or KV transfer nothing is ever deferred: every waiting request waits for capacity.
    samples: (s) => [
      { labels: { reason: 'capacity' }, value: s.waiting },
      { labels: { reason: 'deferred' }, value: 0 },
    ],
  },
  {
    type: 'gauge',
    name: VLLM.engineSleepState,
    help:
      'Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; ' +
      'weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.',
    era: 'newer',
    samples: () => [
      { labels: { sleep_state: 'awake' }, value: 1 },
      { labels: { sleep_state: 'weights_offloaded' }, value: 0 },
      { labels: { sleep_state: 'discard_all' }, value: 0 },
    ],
  },
  {
    type: 'gauge',
    name: VLLM_RENAMED.kvCacheUsage.legacy,
    // The missing space before DEPRECATED is vLLM's own.
    help: 'GPU KV-cache usage. 1 means 100 percent usage.DEPRECATED: Use vllm:kv_cache_usage_perc instead.',
    era: 'legacy',
    samples: (s) => one(s.kvCacheUsage),
  },
  {
    type: 'counter',
    name: VLLM_RENAMED.prefixCacheQueries.legacy,
    help: 'GPU prefix cache queries, in terms of number of queriedtokens. DEPRECATED: Use vllm:prefix_cache_queries instead.',
    era: 'legacy',
    samples: (s) => one(s.metrics.prefixCacheQueries),
  },
  {
    type: 'counter',
    name: VLLM_RENAMED.prefixCacheHits.legacy,
    help: 'GPU prefix cache hits, in terms of number of cached tokens. DEPRECATED: Use vllm:prefix_cache_hits instead.',
    era: 'legacy',
    samples: (s) => one(s.metrics.prefixCacheHits),
  },
  {
    type: 'gauge',
    name: VLLM_RENAMED.kvCacheUsage.current,
    help: 'KV-cache usage. 1 means 100 percent usage.',
    era: 'current',
    samples: (s) => one(s.kvCacheUsage),
  },
  {
    type: 'counter',
    name: VLLM_RENAMED.prefixCacheQueries.current,
    help: 'Prefix cache queries, in terms of number of queried tokens.',
    era: 'current',
    samples: (s) => one(s.metrics.prefixCacheQueries),
  },
  {
    type: 'counter',
    name: VLLM_RENAMED.prefixCacheHits.current,
    help: 'Prefix cache hits, in terms of number of cached tokens.',
    era: 'current',
    samples: (s) => one(s.metrics.prefixCacheHits),
  },
  {
    type: 'counter',
    name: VLLM.mmCacheQueries,
    help: 'Multi-modal cache queries, in terms of number of queried items.',
    era: 'newer',
    samples: (s) => one(s.metrics.mmCacheQueries),
  },
  {
    type: 'counter',
    name: VLLM.mmCacheHits,
    help: 'Multi-modal cache hits, in terms of number of cached items.',
    era: 'newer',
    samples: (s) => one(s.metrics.mmCacheHits),
  },
  {
    type: 'counter',
    name: VLLM.numPreemptions,
    help: 'Cumulative number of preemption from the engine.',
    era: 'all',
    samples: (s) => one(s.metrics.numPreemptions),
  },
  {
    type: 'counter',
    name: VLLM.promptTokens,
    help: 'Number of prefill tokens processed.',
    era: 'all',
    samples: (s) => one(s.metrics.promptTokens),
  },
  {
    type: 'counter',
    name: VLLM.promptTokensBySource,
    help: 'Number of prompt tokens by source.',
    era: 'newer',
    samples: (s) =>
      PROMPT_TOKEN_SOURCES.map((source) => ({ labels: { source }, value: s.metrics.promptTokensBySource[source] })),
  },
  {
    type: 'counter',
    name: VLLM.promptTokensCached,
    help: 'Number of cached prompt tokens (local + external).',
    era: 'newer',
    samples: (s) => one(s.metrics.promptTokensCached),
  },
  {
    type: 'counter',
    name: VLLM.generationTokens,
    help: 'Number of generation tokens processed.',
    era: 'all',
    samples: (s) => one(s.metrics.generationTokens),
  },
  {
    type: 'counter',
    name: VLLM.requestSuccess,
    help: 'Count of successfully processed requests.',
    era: 'all',
    samples: (s) =>
      VLLM_VERSION_TABLE[s.version].finishReasons.map((reason) => ({
        labels: { finished_reason: reason },
        value: s.metrics.requestSuccess[reason],
      })),
  },
  histogram(VLLM.requestPromptTokens, 'Number of prefill tokens processed.', 'requestPromptTokens'),
  histogram(VLLM.requestGenerationTokens, 'Number of generation tokens processed.', 'requestGenerationTokens'),
  histogram(VLLM.iterationTokens, 'Histogram of number of tokens per engine_step.', 'iterationTokens'),
  histogram(
    VLLM.requestMaxNumGenerationTokens,
    'Histogram of maximum number of requested generation tokens.',
    'requestMaxNumGenerationTokens',
  ),
  histogram(VLLM.requestParamsN, 'Histogram of the n request parameter.', 'requestParamsN'),
  histogram(VLLM.requestParamsMaxTokens, 'Histogram of the max_tokens request parameter.', 'requestParamsMaxTokens'),
  histogram(VLLM.timeToFirstToken, 'Histogram of time to first token in seconds.', 'timeToFirstToken'),
  // Legacy and current inter-token latency observe the same per-token values (v0.11 loggers.py `record`).
  histogram(
    VLLM_RENAMED.interTokenLatency.legacy,
    'Histogram of time per output token in seconds.DEPRECATED: Use vllm:inter_token_latency_seconds instead.',
    'interTokenLatency',
    'legacy',
  ),
  histogram(
    VLLM_RENAMED.interTokenLatency.current,
    'Histogram of inter-token latency in seconds.',
    'interTokenLatency',
    'current',
  ),
  histogram(
    VLLM.requestTimePerOutputToken,
    'Histogram of time_per_output_token_seconds per request.',
    'requestTimePerOutputToken',
    'newer',
  ),
  histogram(VLLM.e2eRequestLatency, 'Histogram of e2e request latency in seconds.', 'e2eRequestLatency'),
  histogram(VLLM.requestQueueTime, 'Histogram of time spent in WAITING phase for request.', 'requestQueueTime'),
  histogram(VLLM.requestInferenceTime, 'Histogram of time spent in RUNNING phase for request.', 'requestInferenceTime'),
  histogram(VLLM.requestPrefillTime, 'Histogram of time spent in PREFILL phase for request.', 'requestPrefillTime'),
  histogram(VLLM.requestDecodeTime, 'Histogram of time spent in DECODE phase for request.', 'requestDecodeTime'),
  histogram(
    VLLM.requestPrefillKvComputedTokens,
    'Histogram of new KV tokens computed during prefill (excluding cached tokens).',
    'requestPrefillKvComputedTokens',
    'newer',
  ),
];

/** HELP of `vllm:cache_config_info`, the info-style gauge registered when the engine is initialised. */
export const CACHE_CONFIG_INFO_HELP = 'Information of the LLMEngine CacheConfig';

/** The families a given version exposes, in order. */
export function familiesFor(version: VllmVersion): FamilyDef[] {
  const { eras } = VLLM_VERSION_TABLE[version];
  return VLLM_FAMILIES.filter((family) => eras.includes(family.era));
}
