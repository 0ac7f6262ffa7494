import { aggregate, rate, VLLM } from '../../metrics/index.js';
import { formatDurationSeconds } from '../format.js';
import { byLabels, scopedSelector } from './scope.js';
import { defineAlertRule, heldText } from './text.js';

const IDENTIFYING_LABELS = ['namespace', 'pod', 'model_name'] as const;

/**
 * VLLMPreemptionSpike: `rate(preemptions[5m]) > 5`, warning, no `for` (monitoring guide, section 6). `rate()` is
 * per second, as the guide writes it. Per Pod: the sum over the Pod's engines.
 */
export const preemptionSpike = defineAlertRule({
  name: 'VLLMPreemptionSpike',
  severity: 'warning',
  condition: '`rate(vllm:num_preemptions_total[5m])` per Pod > 5 per second',
  meaning: 'Requests interrupted due to memory shortage',
  unit: 'per-second',
  defaults: { threshold: 5, forSeconds: 0, windowSeconds: 300 },
  identifyingLabels: IDENTIFYING_LABELS,
  valueQuery(scope, settings) {
    const preemptions = rate(
      scopedSelector(VLLM.numPreemptions, scope.vllm),
      formatDurationSeconds(settings.windowSeconds),
    );
    return aggregate('sum', byLabels(IDENTIFYING_LABELS, scope), preemptions);
  },
  summaryText: (p) =>
    `Preemptions at ${p.value} on pod ${p.label('namespace')}/${p.label('pod')} (model ${p.label('model_name')})`,
  descriptionText: (p) =>
    `vLLM on pod ${p.label('namespace')}/${p.label('pod')} (model ${p.label('model_name')}) preempts requests at ` +
    `${p.value} over the last ${p.window}, above ${p.threshold}${heldText(p)}. Requests are interrupted for lack of ` +
    'KV-cache memory and recomputed later, which raises latency.',
  runbook: [
    '1. Check the KV cache of the Pod (VLLMKVCacheFull, `vllm:kv_cache_usage_perc`): preemptions start when it is full.',
    '2. Reduce concurrency per replica (--max-num-seqs) or scale out so each replica gets fewer requests.',
    '3. Look for unusually long prompts or outputs (`vllm:request_prompt_tokens`, `vllm:request_generation_tokens`).',
    '4. Review --gpu-memory-utilization and --max-model-len (the guide recommends 0.85 and the context you actually use).',
  ].join('\n'),
});
