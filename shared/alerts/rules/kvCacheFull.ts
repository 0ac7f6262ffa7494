import { aggregate, overVllmNames } from '../../metrics/index.js';
import { byLabels, scopedSelector } from './scope.js';
import { defineAlertRule, heldText } from './text.js';

const IDENTIFYING_LABELS = ['namespace', 'pod', 'model_name'] as const;

/**
 * VLLMKVCacheFull: `gpu_cache_usage_perc > 95 % for 30 s`, critical (monitoring guide, section 6). Per Pod: the
 * fullest engine. vLLM renamed the series (0.9 `gpu_cache_usage_perc`, 0.11 both, later `kv_cache_usage_perc`);
 * both are 0-1 fractions despite `_perc`, and `overVllmNames` reads whichever a Pod exposes, once.
 */
export const kvCacheFull = defineAlertRule({
  name: 'VLLMKVCacheFull',
  severity: 'critical',
  condition: 'KV-cache usage per Pod (`vllm:kv_cache_usage_perc`, `vllm:gpu_cache_usage_perc` before 0.11) > 95 %',
  meaning: 'Preemption/OOM imminent',
  unit: 'ratio',
  defaults: { threshold: 0.95, forSeconds: 30, windowSeconds: 0 },
  identifyingLabels: IDENTIFYING_LABELS,
  valueQuery(scope) {
    const usage = overVllmNames({ renamed: 'kvCacheUsage' }, (name) => scopedSelector(name, scope.vllm));
    return aggregate('max', byLabels(IDENTIFYING_LABELS, scope), usage);
  },
  summaryText: (p) =>
    `KV cache ${p.value} full on pod ${p.label('namespace')}/${p.label('pod')} (model ${p.label('model_name')})`,
  descriptionText: (p) =>
    `The KV cache of pod ${p.label('namespace')}/${p.label('pod')} (model ${p.label('model_name')}) is ${p.value} ` +
    `full, above ${p.threshold}${heldText(p)}. Preemption and OOM are imminent: with a full cache vLLM preempts ` +
    'running requests and recomputes them later, which slows every request on the replica.',
  runbook: [
    '1. Check preemptions (VLLMPreemptionSpike, `vllm:num_preemptions_total`) and the queue: a full cache with a growing queue means the replica is overloaded; scale out (VLLMHighQueueDepth runbook).',
    '2. Admit fewer concurrent requests per replica (--max-num-seqs), or shorten --max-model-len if long contexts are not needed.',
    '3. Raise --gpu-memory-utilization only if the GPU has room (VLLMGPUMemoryCritical far away; the guide recommends 0.85).',
    '4. For a lasting shortage, use a GPU with more memory or tensor parallelism for the model.',
  ].join('\n'),
});
