import { aggregate, scale, vllmGauge } from '../metrics/index.js';
import { describe, fromBuilder, fromCatalog, LEGENDS } from './panels.js';
import { GRAFANA_UNITS, type DashboardSpec } from './types.js';

/** The guide's KV-cache levels: attention above 80 %, act at once above 95 % (preemptions, OOM). */
const KV_THRESHOLDS = [
  { value: 80, color: 'orange' },
  { value: 95, color: 'red' },
] as const;

/**
 * Tier 2 of the monitoring guide (section 3): vLLM's internal state, for performance tuning. KV-cache usage reads
 * `vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc`, so the panels work before, during and after vLLM's rename.
 */
export const TIER2_ENGINE: DashboardSpec = {
  uid: 'vllm-eks-pilot-tier2-engine',
  title: 'vLLM / Tier 2: engine internals',
  tier: 2,
  description:
    'vLLM internal state of one model (monitoring guide, Tier 2): KV-cache usage, preemptions, token throughput, ' +
    'batch efficiency and prefix caching.',
  rows: [
    {
      title: 'KV cache',
      panels: [
        {
          title: 'KV-cache usage (fullest Pod)',
          description:
            'The fullest engine across the Pods (vllm:kv_cache_usage_perc, formerly gpu_cache_usage_perc, a 0-1 ' +
            'fraction shown x100). Attention above 80 %, act above 95 %: the VLLMKVCacheFull alert.',
          kind: 'gauge',
          unit: GRAFANA_UNITS.percent,
          queries: [
            fromBuilder(
              (target) => scale(100, aggregate('max', [], vllmGauge(target, { renamed: 'kvCacheUsage' }))),
              'max',
            ),
          ],
          thresholds: KV_THRESHOLDS,
          min: 0,
          max: 100,
          width: 8,
        },
        {
          title: 'KV-cache usage per Pod',
          description: describe('kv_cache_usage_pod'),
          kind: 'timeseries',
          unit: GRAFANA_UNITS.percent,
          queries: [fromCatalog('kv_cache_usage_pod', LEGENDS.pod)],
          thresholds: KV_THRESHOLDS,
          min: 0,
          max: 100,
          width: 16,
        },
      ],
    },
    {
      title: 'Preemptions and throughput',
      panels: [
        {
          title: 'Preemptions per second',
          description: describe('preemptions_rate'),
          kind: 'timeseries',
          unit: GRAFANA_UNITS.perSecond,
          queries: [fromCatalog('preemptions_rate', 'preemptions')],
          // The VLLMPreemptionSpike alert's level.
          thresholds: [{ value: 5, color: 'red' }],
          min: 0,
        },
        {
          title: 'Token throughput',
          description:
            'Prompt (prefill) and generated tokens per second (vllm:prompt_tokens_total, ' +
            'vllm:generation_tokens_total), for capacity planning.',
          kind: 'timeseries',
          unit: GRAFANA_UNITS.tokensPerSecond,
          queries: [fromCatalog('prompt_tokens_rate', 'prompt'), fromCatalog('generation_tokens_rate', 'generation')],
          min: 0,
        },
      ],
    },
    {
      title: 'Batching and caching',
      panels: [
        {
          title: 'Tokens per engine step (mean)',
          description: describe('iteration_tokens_mean'),
          kind: 'timeseries',
          unit: GRAFANA_UNITS.count,
          queries: [fromCatalog('iteration_tokens_mean', 'tokens/step')],
          min: 0,
        },
        {
          title: 'Prefix-cache hit rate',
          description: describe('prefix_cache_hit_rate'),
          kind: 'timeseries',
          unit: GRAFANA_UNITS.percent,
          queries: [fromCatalog('prefix_cache_hit_rate', 'hit rate')],
          min: 0,
          max: 100,
        },
      ],
    },
  ],
};
