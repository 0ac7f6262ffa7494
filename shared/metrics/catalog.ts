/**
 * The metrics catalog: one entry per reading the monitor publishes, covering the three tiers of the AWS vLLM
 * monitoring guide (section 3): Tier 1 service quality, Tier 2 vLLM internals, Tier 3 GPU and containers.
 *
 * Conventions:
 * - Every ratio is reported as Percent (0-100), including vLLM's KV-cache usage, which vLLM exposes as a 0-1
 *   fraction under both names despite the `_perc` suffix. The guide and the alert rules state those thresholds in
 *   percent (KV > 80 % / 95 %, framebuffer > 95 %, errors < 1 %) and CloudWatch's `Percent` unit reads that way,
 *   so a dashboard or alarm never has to remember which series are fractions.
 * - Quantiles and ratios have no value while a target is idle (an empty rate window gives NaN); their queries drop
 *   NaN and the entries are marked `needsTraffic`, so idle reads as "skipped", not as a fault.
 * - Per-GPU entries aggregate `max by (UUID, pod)` so that each GPU yields exactly one series keyed by its UUID,
 *   whatever extra target labels (`instance`, `Hostname`, ...) the scrape added.
 */
import { CADVISOR, DCGM, VLLM } from './names.js';
import { MetricsUnknownCatalogEntryError } from './errors.js';
import type { Breakdown, MetricUnit } from './types.js';
import type { Target } from '../config/index.js';
import {
  DCGM_LABELS,
  aggregate,
  cadvisorSelector,
  dcgmSelector,
  dropNaN,
  matchRegex,
  plus,
  rate,
  ratio,
  scale,
  vllmGauge,
  vllmHistogramQuantile,
  vllmRate,
  type VllmMetricRef,
} from './promql.js';

export interface CatalogBuildOptions {
  /** The range of every `rate()` and quantile window, a PromQL duration such as `2m`. */
  rateWindow: string;
}

/** One reading of the catalog: what it is, how it is published, and how its PromQL is built for a target. */
export interface CatalogEntry {
  /** snake_case, unique. */
  id: string;
  /** The CloudWatch metric name (PascalCase), unique. */
  metricName: string;
  tier: 1 | 2 | 3;
  title: string;
  unit: MetricUnit;
  /** One value for the target, one per Pod (`pod` dimension) or one per GPU (`gpu` = UUID dimension). */
  breakdown: Breakdown;
  /** What the reading means and the guide's normal range. */
  description: string;
  /** An empty result is not a fault: the source series is off by default (e.g. DCGM ECC fields). */
  optional?: boolean;
  /** Empty or NaN while the target serves no requests is expected (quantiles, ratios). */
  needsTraffic?: boolean;
  /** The PromQL for `target`. */
  build(target: Target, options: CatalogBuildOptions): string;
}

const GPU_KEY = [DCGM_LABELS.uuid, DCGM_LABELS.pod] as const;

function latencyQuantile(q: number, ref: VllmMetricRef) {
  return (target: Target, { rateWindow }: CatalogBuildOptions): string =>
    vllmHistogramQuantile(target, q, ref, rateWindow);
}

function targetSum(ref: VllmMetricRef) {
  return (target: Target): string => aggregate('sum', [], vllmGauge(target, ref));
}

function targetSumRate(ref: VllmMetricRef) {
  return (target: Target, { rateWindow }: CatalogBuildOptions): string =>
    aggregate('sum', [], vllmRate(target, ref, rateWindow));
}

function perGpu(metricName: string) {
  return (target: Target): string => aggregate('max', GPU_KEY, dcgmSelector(target, metricName));
}

/** The guide's Tier 1/2/3 readings, in publishing order. */
export const CATALOG: readonly CatalogEntry[] = [
  // Tier 1: service quality (user-facing SLIs)
  {
    id: 'e2e_latency_p50',
    metricName: 'E2ELatencyP50',
    tier: 1,
    title: 'End-to-end request latency p50',
    unit: 'Seconds',
    breakdown: 'target',
    needsTraffic: true,
    description:
      'Median time from request arrival to last token (vllm:e2e_request_latency_seconds). Normal: below the SLO.',
    build: latencyQuantile(0.5, VLLM.e2eRequestLatency),
  },
  {
    id: 'e2e_latency_p95',
    metricName: 'E2ELatencyP95',
    tier: 1,
    title: 'End-to-end request latency p95',
    unit: 'Seconds',
    breakdown: 'target',
    needsTraffic: true,
    description:
      'p95 time from request arrival to last token; the secondary scale-out signal (SLO guardrail). Normal: below ' +
      'the SLO (the EKS guide measured about 2.5 s below saturation). The first default bucket is 0.3 s.',
    build: latencyQuantile(0.95, VLLM.e2eRequestLatency),
  },
  {
    id: 'e2e_latency_p99',
    metricName: 'E2ELatencyP99',
    tier: 1,
    title: 'End-to-end request latency p99',
    unit: 'Seconds',
    breakdown: 'target',
    needsTraffic: true,
    description: 'p99 time from request arrival to last token: the tail users notice. Normal: below the SLO.',
    build: latencyQuantile(0.99, VLLM.e2eRequestLatency),
  },
  {
    id: 'ttft_p95',
    metricName: 'TimeToFirstTokenP95',
    tier: 1,
    title: 'Time to first token p95',
    unit: 'Seconds',
    breakdown: 'target',
    needsTraffic: true,
    description:
      'p95 time until the first token (queueing + prefill), directly tied to UX. Normal: < 1-3 s by input length.',
    build: latencyQuantile(0.95, VLLM.timeToFirstToken),
  },
  {
    id: 'inter_token_latency_p95',
    metricName: 'InterTokenLatencyP95',
    tier: 1,
    title: 'Inter-token latency (TPOT) p95',
    unit: 'Seconds',
    breakdown: 'target',
    needsTraffic: true,
    description:
      'p95 time between output tokens (vllm:inter_token_latency_seconds, formerly time_per_output_token_seconds). ' +
      'Normal: 30-100 ms by model size and tensor parallelism.',
    build: latencyQuantile(0.95, { renamed: 'interTokenLatency' }),
  },
  {
    id: 'queue_depth',
    metricName: 'QueueDepth',
    tier: 1,
    title: 'Queue depth (requests waiting)',
    unit: 'Count',
    breakdown: 'target',
    description:
      'Requests waiting across all Pods: the primary scale-out signal. Normal: 0-5; the guide alerts above 50 for ' +
      '2 min and scales out above the calibrated threshold (25 in the EKS guide).',
    build: targetSum(VLLM.numRequestsWaiting),
  },
  {
    id: 'queue_depth_pod',
    metricName: 'PodQueueDepth',
    tier: 1,
    title: 'Queue depth per Pod',
    unit: 'Count',
    breakdown: 'pod',
    description:
      'Requests waiting in each Pod (summed over its engines): shows uneven load balancing that the total hides. ' +
      'Normal: 0-5.',
    build: (target) => aggregate('sum', ['pod'], vllmGauge(target, VLLM.numRequestsWaiting)),
  },
  {
    id: 'requests_running',
    metricName: 'RequestsRunning',
    tier: 1,
    title: 'Requests running',
    unit: 'Count',
    breakdown: 'target',
    description: 'Requests in the running batches across all Pods; bounded by --max-num-seqs per engine.',
    build: targetSum(VLLM.numRequestsRunning),
  },
  {
    id: 'requests_completed_rate',
    metricName: 'CompletedRequestsPerSecond',
    tier: 1,
    title: 'Completed requests per second',
    unit: 'Count/Second',
    breakdown: 'target',
    description:
      'Finished requests per second (rate of vllm:request_success_total, which counts every finish reason, ' +
      'aborts and errors included): the throughput to compare with the offered rate.',
    build: targetSumRate(VLLM.requestSuccess),
  },
  {
    id: 'error_rate',
    metricName: 'ErrorRate',
    tier: 1,
    title: 'Error rate',
    unit: 'Percent',
    breakdown: 'target',
    needsTraffic: true,
    description:
      'Share of finished requests that ended as abort or error (finished_reason), in percent. Normal: < 1 %.',
    build: (target, { rateWindow }) => {
      const failed = vllmRate(target, VLLM.requestSuccess, rateWindow, [matchRegex('finished_reason', 'abort|error')]);
      const all = vllmRate(target, VLLM.requestSuccess, rateWindow);
      return dropNaN(scale(100, ratio(aggregate('sum', [], failed), aggregate('sum', [], all))));
    },
  },

  // Tier 2: vLLM internal state
  {
    id: 'kv_cache_usage_pod',
    metricName: 'KVCacheUsage',
    tier: 2,
    title: 'KV-cache usage per Pod',
    unit: 'Percent',
    breakdown: 'pod',
    description:
      'Share of KV-cache blocks in use (vllm:kv_cache_usage_perc, formerly gpu_cache_usage_perc, a 0-1 fraction ' +
      'reported here x100), the fullest engine of each Pod. Attention above 80 %, act above 95 % (preemptions).',
    build: (target) => scale(100, aggregate('max', ['pod'], vllmGauge(target, { renamed: 'kvCacheUsage' }))),
  },
  {
    id: 'preemptions_rate',
    metricName: 'PreemptionsPerSecond',
    tier: 2,
    title: 'Preemptions per second',
    unit: 'Count/Second',
    breakdown: 'target',
    description: 'Sequences evicted for lack of KV-cache blocks. Normal: 0; a spike signals GPU memory shortage.',
    build: targetSumRate(VLLM.numPreemptions),
  },
  {
    id: 'prompt_tokens_rate',
    metricName: 'PromptTokensPerSecond',
    tier: 2,
    title: 'Prompt (prefill) tokens per second',
    unit: 'Count/Second',
    breakdown: 'target',
    description: 'Input token throughput, for capacity planning.',
    build: targetSumRate(VLLM.promptTokens),
  },
  {
    id: 'generation_tokens_rate',
    metricName: 'GenerationTokensPerSecond',
    tier: 2,
    title: 'Generation tokens per second',
    unit: 'Count/Second',
    breakdown: 'target',
    description: 'Output token throughput, for capacity planning.',
    build: targetSumRate(VLLM.generationTokens),
  },
  {
    id: 'iteration_tokens_mean',
    metricName: 'IterationTokensMean',
    tier: 2,
    title: 'Tokens per engine step (mean)',
    unit: 'Count',
    breakdown: 'target',
    needsTraffic: true,
    description:
      'Mean tokens processed per engine step (rate of vllm:iteration_tokens_total _sum over _count; a histogram ' +
      'despite its name), for analysing batch efficiency.',
    build: (target, { rateWindow }) =>
      dropNaN(
        ratio(
          aggregate('sum', [], vllmRate(target, `${VLLM.iterationTokens}_sum`, rateWindow)),
          aggregate('sum', [], vllmRate(target, `${VLLM.iterationTokens}_count`, rateWindow)),
        ),
      ),
  },
  {
    id: 'prefix_cache_hit_rate',
    metricName: 'PrefixCacheHitRate',
    tier: 2,
    title: 'Prefix-cache hit rate',
    unit: 'Percent',
    breakdown: 'target',
    needsTraffic: true,
    description:
      'Share of queried prompt tokens found in the prefix cache (rate of hits over queries), in percent. Depends on ' +
      'how much prompts share; near 0 for unique prompts.',
    build: (target, { rateWindow }) =>
      dropNaN(
        scale(
          100,
          ratio(
            aggregate('sum', [], vllmRate(target, { renamed: 'prefixCacheHits' }, rateWindow)),
            aggregate('sum', [], vllmRate(target, { renamed: 'prefixCacheQueries' }, rateWindow)),
          ),
        ),
      ),
  },

  // Tier 3: GPU (per GPU UUID) and containers (per Pod)
  {
    id: 'gpu_utilization',
    metricName: 'GPUUtilization',
    tier: 3,
    title: 'GPU utilization',
    unit: 'Percent',
    breakdown: 'gpu',
    description:
      'GPU compute utilization (DCGM_FI_DEV_GPU_UTIL). 30-50 % is normal: continuous batching is memory-bound.',
    build: perGpu(DCGM.gpuUtil),
  },
  {
    id: 'gpu_memory_copy_utilization',
    metricName: 'GPUMemoryCopyUtilization',
    tier: 3,
    title: 'GPU memory bandwidth utilization',
    unit: 'Percent',
    breakdown: 'gpu',
    description: 'GPU memory copy (bandwidth) utilization (DCGM_FI_DEV_MEM_COPY_UTIL).',
    build: perGpu(DCGM.memCopyUtil),
  },
  {
    id: 'gpu_fb_used',
    metricName: 'GPUFramebufferUsed',
    tier: 3,
    title: 'GPU framebuffer used',
    unit: 'Megabytes',
    breakdown: 'gpu',
    description:
      'VRAM in use, in MiB as DCGM reports it (DCGM_FI_DEV_FB_USED). vLLM pre-allocates --gpu-memory-utilization ' +
      '(0.9 by default) of the GPU at start, so this is high and flat by design.',
    build: perGpu(DCGM.fbUsed),
  },
  {
    id: 'gpu_fb_free',
    metricName: 'GPUFramebufferFree',
    tier: 3,
    title: 'GPU framebuffer free',
    unit: 'Megabytes',
    breakdown: 'gpu',
    description: 'VRAM free, in MiB (DCGM_FI_DEV_FB_FREE).',
    build: perGpu(DCGM.fbFree),
  },
  {
    id: 'gpu_fb_used_percent',
    metricName: 'GPUFramebufferUsedPercent',
    tier: 3,
    title: 'GPU framebuffer used (percent)',
    unit: 'Percent',
    breakdown: 'gpu',
    description:
      'FB_USED / (FB_USED + FB_FREE) x 100: DCGM has no total field, so the total is used + free (reserved memory ' +
      'excluded). The guide alerts above 95 % for 1 min (OOM imminent).',
    build: (target) => {
      const used = perGpu(DCGM.fbUsed)(target);
      const free = perGpu(DCGM.fbFree)(target);
      return scale(100, ratio(used, plus(used, free)));
    },
  },
  {
    id: 'gpu_power',
    metricName: 'GPUPowerUsage',
    tier: 3,
    title: 'GPU power draw (W)',
    unit: 'None',
    breakdown: 'gpu',
    description: 'Power draw in watts (DCGM_FI_DEV_POWER_USAGE; CloudWatch has no watt unit), for cost tracking.',
    build: perGpu(DCGM.powerUsage),
  },
  {
    id: 'gpu_ecc_sbe_volatile',
    metricName: 'GPUEccSbeVolatileTotal',
    tier: 3,
    title: 'GPU single-bit ECC errors (volatile)',
    unit: 'Count',
    breakdown: 'gpu',
    optional: true,
    description:
      'Single-bit ECC errors since the last driver load (DCGM_FI_DEV_ECC_SBE_VOL_TOTAL): hardware fault ' +
      'detection, normally 0. Commented out in dcgm-exporter default-counters.csv: absent unless enabled.',
    build: perGpu(DCGM.eccSbeVolTotal),
  },
  {
    id: 'container_cpu_cores',
    metricName: 'ContainerCPUCores',
    tier: 3,
    title: 'Container CPU (cores)',
    unit: 'None',
    breakdown: 'pod',
    description: "CPU cores used by the Pod's containers (rate of container_cpu_usage_seconds_total).",
    build: (target, { rateWindow }) =>
      aggregate('sum', ['pod'], rate(cadvisorSelector(target, CADVISOR.containerCpuUsageSeconds), rateWindow)),
  },
  {
    id: 'container_memory_working_set',
    metricName: 'ContainerMemoryWorkingSet',
    tier: 3,
    title: 'Container memory working set',
    unit: 'Bytes',
    breakdown: 'pod',
    description:
      "Working-set memory of the Pod's containers (container_memory_working_set_bytes), what the OOM killer " +
      'compares with the limit.',
    build: (target) => aggregate('sum', ['pod'], cadvisorSelector(target, CADVISOR.containerMemoryWorkingSetBytes)),
  },
];

/** Returns the catalog entry with `id`, or throws `MetricsUnknownCatalogEntryError` naming the known ids. */
export function catalogEntry(id: string, catalog: readonly CatalogEntry[] = CATALOG): CatalogEntry {
  const entry = catalog.find((candidate) => candidate.id === id);
  if (entry === undefined) {
    throw new MetricsUnknownCatalogEntryError(
      id,
      catalog.map((e) => e.id),
    );
  }
  return entry;
}
