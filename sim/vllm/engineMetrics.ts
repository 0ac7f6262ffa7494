import { BUCKETS, build125Buckets } from './buckets.js';
import { Histogram } from './histogram.js';

/** vLLM's `FinishReason` values in enum order; `vllm:request_success_total` pre-creates one series per reason. */
export const FINISH_REASONS = ['stop', 'length', 'abort', 'error', 'repetition'] as const;
export type FinishReason = (typeof FINISH_REASONS)[number];

/** The `source` label values of `vllm:prompt_tokens_by_source_total`. */
export const PROMPT_TOKEN_SOURCES = ['local_compute', 'local_cache_hit', 'external_kv_transfer'] as const;
export type PromptTokenSource = (typeof PROMPT_TOKEN_SOURCES)[number];

/** The histograms the engine observes, keyed like `VLLM` / `VLLM_RENAMED` in shared/metrics/names.ts. */
export type EngineHistogramKey =
  | 'requestPromptTokens'
  | 'requestGenerationTokens'
  | 'iterationTokens'
  | 'requestMaxNumGenerationTokens'
  | 'requestParamsN'
  | 'requestParamsMaxTokens'
  | 'timeToFirstToken'
  | 'interTokenLatency'
  | 'requestTimePerOutputToken'
  | 'e2eRequestLatency'
  | 'requestQueueTime'
  | 'requestInferenceTime'
  | 'requestPrefillTime'
  | 'requestDecodeTime'
  | 'requestPrefillKvComputedTokens';

/**
 * The counters and histograms one engine records, at the points vLLM's `PrometheusStatLogger.record` does:
 * token counters and iteration tokens per step, TTFT and inter-token latency per emitted token, the per-request
 * histograms and `request_success` when a request finishes. Gauges are read from the engine at scrape time.
 */
export class EngineMetrics {
  numPreemptions = 0;
  promptTokens = 0;
  readonly promptTokensBySource: Record<PromptTokenSource, number> = {
    local_compute: 0,
    local_cache_hit: 0,
    external_kv_transfer: 0,
  };
  promptTokensCached = 0;
  generationTokens = 0;
  /** Tokens looked up in the prefix cache (vLLM counts tokens, not blocks, since ~v0.9). */
  prefixCacheQueries = 0;
  /** Always 0 here: the load tests vary their prompts precisely to defeat prefix caching. */
  prefixCacheHits = 0;
  /** Text-only model: the multi-modal cache is never queried. */
  mmCacheQueries = 0;
  mmCacheHits = 0;
  readonly requestSuccess: Record<FinishReason, number> = { stop: 0, length: 0, abort: 0, error: 0, repetition: 0 };
  readonly histograms: Readonly<Record<EngineHistogramKey, Histogram>>;

  constructor(maxModelLen: number) {
    const tokens = build125Buckets(maxModelLen);
    this.histograms = {
      requestPromptTokens: new Histogram(tokens),
      requestGenerationTokens: new Histogram(tokens),
      iterationTokens: new Histogram(BUCKETS.iterationTokens),
      requestMaxNumGenerationTokens: new Histogram(tokens),
      requestParamsN: new Histogram(BUCKETS.requestParamsN),
      requestParamsMaxTokens: new Histogram(tokens),
      timeToFirstToken: new Histogram(BUCKETS.timeToFirstToken),
      interTokenLatency: new Histogram(BUCKETS.interTokenLatency),
      requestTimePerOutputToken: new Histogram(BUCKETS.interTokenLatency),
      e2eRequestLatency: new Histogram(BUCKETS.requestLatency),
      requestQueueTime: new Histogram(BUCKETS.requestLatency),
      requestInferenceTime: new Histogram(BUCKETS.requestLatency),
      requestPrefillTime: new Histogram(BUCKETS.requestLatency),
      requestDecodeTime: new Histogram(BUCKETS.requestLatency),
      requestPrefillKvComputedTokens: new Histogram(tokens),
    };
  }
}
