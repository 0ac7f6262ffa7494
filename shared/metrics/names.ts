/**
 * The metric names this product reads, in one place. Every PromQL query, the twin's exporters and the alert rules
 * take their names from here.
 *
 * Sources: vLLM `vllm/v1/metrics/loggers.py` (names, types, labels), NVIDIA dcgm-exporter `etc/default-counters.csv`,
 * and the kubelet's cAdvisor endpoint. Counter names are the *exposed* names (prometheus_client appends `_total`).
 */

/** vLLM series whose name did not change across the versions this product supports (0.9 to latest). */
export const VLLM = {
  numRequestsRunning: 'vllm:num_requests_running',
  numRequestsWaiting: 'vllm:num_requests_waiting',
  numRequestsWaitingByReason: 'vllm:num_requests_waiting_by_reason',
  engineSleepState: 'vllm:engine_sleep_state',
  numPreemptions: 'vllm:num_preemptions_total',
  promptTokens: 'vllm:prompt_tokens_total',
  promptTokensBySource: 'vllm:prompt_tokens_by_source_total',
  promptTokensCached: 'vllm:prompt_tokens_cached_total',
  generationTokens: 'vllm:generation_tokens_total',
  requestSuccess: 'vllm:request_success_total',
  mmCacheQueries: 'vllm:mm_cache_queries_total',
  mmCacheHits: 'vllm:mm_cache_hits_total',
  requestPromptTokens: 'vllm:request_prompt_tokens',
  requestGenerationTokens: 'vllm:request_generation_tokens',
  /** A histogram despite the `_total` suffix: tokens per engine step. */
  iterationTokens: 'vllm:iteration_tokens_total',
  requestMaxNumGenerationTokens: 'vllm:request_max_num_generation_tokens',
  requestParamsN: 'vllm:request_params_n',
  requestParamsMaxTokens: 'vllm:request_params_max_tokens',
  timeToFirstToken: 'vllm:time_to_first_token_seconds',
  requestTimePerOutputToken: 'vllm:request_time_per_output_token_seconds',
  e2eRequestLatency: 'vllm:e2e_request_latency_seconds',
  requestQueueTime: 'vllm:request_queue_time_seconds',
  requestInferenceTime: 'vllm:request_inference_time_seconds',
  requestPrefillTime: 'vllm:request_prefill_time_seconds',
  requestDecodeTime: 'vllm:request_decode_time_seconds',
  requestPrefillKvComputedTokens: 'vllm:request_prefill_kv_computed_tokens',
  cacheConfigInfo: 'vllm:cache_config_info',
} as const;

/**
 * vLLM series that were renamed. `current` is the name from the release that introduced it on; `legacy` is the old
 * name (deprecated in 0.9/0.10, hidden in 0.11, removed in 0.12/0.13). A workspace can hold either or both, so
 * queries ask for both (see `shared/metrics/promql.ts`).
 */
export const VLLM_RENAMED = {
  /** KV-cache usage, a 0-1 fraction under both names despite the `_perc` suffix. */
  kvCacheUsage: { current: 'vllm:kv_cache_usage_perc', legacy: 'vllm:gpu_cache_usage_perc' },
  /** Per-token decode latency histogram. Not to be confused with `vllm:request_time_per_output_token_seconds`. */
  interTokenLatency: { current: 'vllm:inter_token_latency_seconds', legacy: 'vllm:time_per_output_token_seconds' },
  prefixCacheQueries: { current: 'vllm:prefix_cache_queries_total', legacy: 'vllm:gpu_prefix_cache_queries_total' },
  prefixCacheHits: { current: 'vllm:prefix_cache_hits_total', legacy: 'vllm:gpu_prefix_cache_hits_total' },
} as const;

export type RenamedVllmMetric = keyof typeof VLLM_RENAMED;

/** NVIDIA dcgm-exporter fields (default counters file). Framebuffer values are MiB; there is no total field. */
export const DCGM = {
  smClock: 'DCGM_FI_DEV_SM_CLOCK',
  memClock: 'DCGM_FI_DEV_MEM_CLOCK',
  memoryTemp: 'DCGM_FI_DEV_MEMORY_TEMP',
  gpuTemp: 'DCGM_FI_DEV_GPU_TEMP',
  powerUsage: 'DCGM_FI_DEV_POWER_USAGE',
  totalEnergyConsumption: 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION',
  pcieReplayCounter: 'DCGM_FI_DEV_PCIE_REPLAY_COUNTER',
  gpuUtil: 'DCGM_FI_DEV_GPU_UTIL',
  memCopyUtil: 'DCGM_FI_DEV_MEM_COPY_UTIL',
  encUtil: 'DCGM_FI_DEV_ENC_UTIL',
  decUtil: 'DCGM_FI_DEV_DEC_UTIL',
  xidErrors: 'DCGM_FI_DEV_XID_ERRORS',
  fbFree: 'DCGM_FI_DEV_FB_FREE',
  fbUsed: 'DCGM_FI_DEV_FB_USED',
  fbReserved: 'DCGM_FI_DEV_FB_RESERVED',
  nvlinkBandwidthTotal: 'DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL',
  vgpuLicenseStatus: 'DCGM_FI_DEV_VGPU_LICENSE_STATUS',
  uncorrectableRemappedRows: 'DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS',
  correctableRemappedRows: 'DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS',
  rowRemapFailure: 'DCGM_FI_DEV_ROW_REMAP_FAILURE',
  grEngineActive: 'DCGM_FI_PROF_GR_ENGINE_ACTIVE',
  pipeTensorActive: 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE',
  dramActive: 'DCGM_FI_PROF_DRAM_ACTIVE',
  pcieTxBytes: 'DCGM_FI_PROF_PCIE_TX_BYTES',
  pcieRxBytes: 'DCGM_FI_PROF_PCIE_RX_BYTES',
  /** Not in the default counters file (commented out there); present only when the operator enables ECC fields. */
  eccSbeVolTotal: 'DCGM_FI_DEV_ECC_SBE_VOL_TOTAL',
  eccDbeVolTotal: 'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL',
} as const;

/** Kubelet cAdvisor series (per container) used by Tier 3. */
export const CADVISOR = {
  containerCpuUsageSeconds: 'container_cpu_usage_seconds_total',
  containerMemoryWorkingSetBytes: 'container_memory_working_set_bytes',
} as const;

/** The range a metric's values can take; a value outside it is a fault, never a number to publish or alert on. */
export interface ValueDomain {
  /** How the domain reads in an error, e.g. `a fraction in [0, 1]`. */
  readonly name: string;
  readonly min: number;
  readonly max: number;
}

/** The domains the product's readings fall in. */
export const VALUE_DOMAIN = {
  nonNegative: { name: '>= 0: a count, rate, size or latency', min: 0, max: Number.POSITIVE_INFINITY },
  fraction: { name: 'a fraction in [0, 1]', min: 0, max: 1 },
  percent: { name: 'a percentage in [0, 100]', min: 0, max: 100 },
  /** What PromQL's `timestamp()` returns: a sample's time in Unix seconds. */
  timestamp: { name: '>= 0: a sample time in Unix seconds', min: 0, max: Number.POSITIVE_INFINITY },
  /**
   * A difference of two means over different requests (mean end-to-end − mean TTFT: the TTFT histogram also counts
   * requests still decoding), which can fall below 0: only ±Inf is refused.
   */
  difference: {
    name: 'a finite difference',
    min: Number.NEGATIVE_INFINITY,
    max: Number.POSITIVE_INFINITY,
  },
} as const satisfies Record<string, ValueDomain>;

/**
 * Series narrower than >= 0; every other name in this file is a count, rate, size, temperature or latency (>= 0).
 * vLLM's KV-cache usage is a 0-1 fraction under both names; dcgm-exporter's `*_UTIL` fields are percent and its
 * `DCGM_FI_PROF_*_ACTIVE` fields are 0-1 ratios (dcgm-exporter `etc/dcp-metrics-included.csv`).
 */
const NARROW_DOMAINS: Readonly<Record<string, ValueDomain>> = {
  [VLLM_RENAMED.kvCacheUsage.current]: VALUE_DOMAIN.fraction,
  [VLLM_RENAMED.kvCacheUsage.legacy]: VALUE_DOMAIN.fraction,
  [DCGM.gpuUtil]: VALUE_DOMAIN.percent,
  [DCGM.memCopyUtil]: VALUE_DOMAIN.percent,
  [DCGM.encUtil]: VALUE_DOMAIN.percent,
  [DCGM.decUtil]: VALUE_DOMAIN.percent,
  [DCGM.grEngineActive]: VALUE_DOMAIN.fraction,
  [DCGM.pipeTensorActive]: VALUE_DOMAIN.fraction,
  [DCGM.dramActive]: VALUE_DOMAIN.fraction,
};

/** The domain of a metric named here, by name or by its renamed vLLM key (`{ renamed: 'kvCacheUsage' }`). */
export function domainOfMetric(ref: string | { renamed: RenamedVllmMetric }): ValueDomain {
  const name = typeof ref === 'string' ? ref : VLLM_RENAMED[ref.renamed].current;
  return NARROW_DOMAINS[name] ?? VALUE_DOMAIN.nonNegative;
}
