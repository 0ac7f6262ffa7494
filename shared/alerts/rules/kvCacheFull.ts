import { KV_CACHE_IDENTIFYING_LABELS, kvCacheUsagePerPod } from './kvCacheUsage.js';
import { defineAlertRule, heldText } from './text.js';

/**
 * VLLMKVCacheFull: `gpu_cache_usage_perc > 95 % for 30 s`, critical (monitoring guide, section 6). Per Pod: the
 * fullest engine, under either vLLM name (`kvCacheUsage.ts`). While it fires it inhibits VLLMKVCacheHigh and
 * VLLMPreemptionSpike on the same Pod (`inhibitions.ts`): they are its early sign and its consequence.
 */
export const kvCacheFull = defineAlertRule({
  name: 'VLLMKVCacheFull',
  severity: 'critical',
  condition: 'KV-cache usage per Pod (`vllm:kv_cache_usage_perc`, `vllm:gpu_cache_usage_perc` before 0.11) > 95 %',
  meaning: 'Preemption/OOM imminent',
  unit: 'ratio',
  defaults: { threshold: 0.95, forSeconds: 30, windowSeconds: 0 },
  identifyingLabels: KV_CACHE_IDENTIFYING_LABELS,
  valueQuery: (scope) => kvCacheUsagePerPod(scope),
  summaryText: (p) =>
    `KV cache ${p.value} full on pod ${p.label('namespace')}/${p.label('pod')} (model ${p.label('model_name')})`,
  descriptionText: (p) =>
    `The KV cache of pod ${p.label('namespace')}/${p.label('pod')} (model ${p.label('model_name')}) is ${p.value} ` +
    `full, above ${p.threshold}${heldText(p)}. Preemption and OOM are imminent: with a full cache vLLM preempts ` +
    'running requests and recomputes them later, which slows every request on the replica.',
  runbook: [
    '1. Check preemptions (`vllm:num_preemptions_total`: VLLMPreemptionSpike and VLLMKVCacheHigh of this Pod are not notified while this alert fires) and the queue: a full cache with a growing queue means the replica is overloaded; scale out (VLLMHighQueueDepth runbook).',
    '2. Admit fewer concurrent requests per replica (--max-num-seqs), or shorten --max-model-len if long contexts are not needed.',
    '3. Raise --gpu-memory-utilization only if the GPU has room (VLLMGPUMemoryCritical far away; the guide recommends 0.85).',
    '4. For a lasting shortage, use a GPU with more memory or tensor parallelism for the model.',
  ].join('\n'),
});
