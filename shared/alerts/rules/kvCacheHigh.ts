import { KV_CACHE_IDENTIFYING_LABELS, kvCacheUsagePerPod } from './kvCacheUsage.js';
import { defineAlertRule, heldText } from './text.js';

/**
 * VLLMKVCacheHigh: KV-cache usage > 80 %, warning: the guide's early warning ("Alert at > 80%, respond immediately at
 * > 95%" in its Tier 2 table; "Setting a vllm:gpu_cache_usage_perc > 80% alert is essential" in its KV-cache notes).
 * Per Pod, the same value as VLLMKVCacheFull (`kvCacheUsage.ts`).
 *
 * `for` 2 min: the guide gives none for it. vLLM fills its cache under load by design (a busy replica runs near its
 * limit for seconds at a time); 2 min is the guide's `for` for its other load warning (VLLMHighQueueDepth), so the
 * warning means "this replica stays close to full", not "a burst went by". Nothing is lost by waiting: the critical
 * VLLMKVCacheFull still pages 30 s after 95 %, and while it fires this warning is inhibited (`inhibitions.ts`).
 */
export const kvCacheHigh = defineAlertRule({
  name: 'VLLMKVCacheHigh',
  severity: 'warning',
  condition: 'KV-cache usage per Pod (`vllm:kv_cache_usage_perc`, `vllm:gpu_cache_usage_perc` before 0.11) > 80 %',
  meaning: 'Early warning: the KV cache fills; preemptions start near full',
  unit: 'ratio',
  defaults: { threshold: 0.8, forSeconds: 120, windowSeconds: 0 },
  identifyingLabels: KV_CACHE_IDENTIFYING_LABELS,
  valueQuery: (scope) => kvCacheUsagePerPod(scope),
  summaryText: (p) =>
    `KV cache ${p.value} used on pod ${p.label('namespace')}/${p.label('pod')} (model ${p.label('model_name')})`,
  descriptionText: (p) =>
    `The KV cache of pod ${p.label('namespace')}/${p.label('pod')} (model ${p.label('model_name')}) is ${p.value} ` +
    `used, above ${p.threshold}${heldText(p)}: the guide's early warning. Near full, vLLM preempts running ` +
    'requests and recomputes them later (VLLMKVCacheFull at 95 %). Likely cause: more or longer concurrent ' +
    'requests per replica than its cache holds comfortably (load above the calibrated saturation point, long ' +
    'prompts or outputs, a --max-model-len that reserves context nobody uses).',
  runbook: [
    '1. Is the load rising? Check the queue (VLLMHighQueueDepth, `vllm:num_requests_waiting`) and whether KEDA scales out (`kubectl get scaledobject,hpa -n <namespace>`): more replicas spread the sequences over more caches.',
    '2. Look at the request mix: long prompts or outputs fill the cache faster (`vllm:request_prompt_tokens`, `vllm:request_generation_tokens`).',
    '3. Review the settings the guide names: --gpu-memory-utilization 0.85, --max-model-len at the context you actually use, --max-num-seqs.',
    '4. If usage reaches 95 %, VLLMKVCacheFull fires (and this warning is inhibited while it does): follow its runbook.',
    '5. If the Pod stays above 80 % at its normal load, calibrate again (`vllm-pilot calibrate`): the KEDA threshold may let replicas run too full.',
  ].join('\n'),
});
