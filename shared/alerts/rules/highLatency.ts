import { aggregate, dropNaN, histogramQuantile, rate, VLLM } from '../../metrics/index.js';
import { formatDurationSeconds } from '../format.js';
import { byLabels, scopedSelector } from './scope.js';
import { defineAlertRule, heldText } from './text.js';

/**
 * The default latency SLO: 5 s, the p95 threshold of the guide's KEDA latency trigger (section 5, "adjust to your
 * SLO"). Every target should set its own (`alerts.rules.VLLMHighLatency.threshold`): it depends on the model, the
 * prompt lengths and the use case.
 */
export const DEFAULT_LATENCY_SLO_SECONDS = 5;

const IDENTIFYING_LABELS = ['namespace', 'model_name'] as const;

/**
 * VLLMHighLatency: `p95(e2e_latency) > SLO for 2 min`, critical (monitoring guide, section 6). Per model and
 * namespace, from the summed bucket rates (the Prometheus docs' form of an aggregated quantile). NaN (no request
 * finished in the window) is dropped: no traffic is not an SLO violation.
 */
export const highLatency = defineAlertRule({
  name: 'VLLMHighLatency',
  severity: 'critical',
  condition: `p95 of \`vllm:e2e_request_latency_seconds\` per model > SLO (default ${DEFAULT_LATENCY_SLO_SECONDS} s)`,
  meaning: 'SLO violation',
  unit: 'seconds',
  defaults: { threshold: DEFAULT_LATENCY_SLO_SECONDS, forSeconds: 120, windowSeconds: 300 },
  identifyingLabels: IDENTIFYING_LABELS,
  valueQuery(scope, settings) {
    const buckets = rate(
      scopedSelector(`${VLLM.e2eRequestLatency}_bucket`, scope.vllm),
      formatDurationSeconds(settings.windowSeconds),
    );
    const by = ['le', ...byLabels(IDENTIFYING_LABELS, scope)];
    return dropNaN(histogramQuantile(0.95, aggregate('sum', by, buckets)));
  },
  summaryText: (p) =>
    `p95 latency ${p.value} for model ${p.label('model_name')} in ${p.label('namespace')} (SLO ${p.threshold})`,
  descriptionText: (p) =>
    `The 95th percentile of end-to-end request latency of model ${p.label('model_name')} in namespace ` +
    `${p.label('namespace')} over the last ${p.window} is ${p.value}, above the SLO of ${p.threshold}${heldText(p)}. ` +
    'Users see slow responses (SLO violation). Likely cause: saturated replicas (requests queue), longer prompts ' +
    'or outputs, or slow decoding after a GPU or engine problem.',
  runbook: [
    '1. Is it queueing? Check `vllm:num_requests_waiting` and VLLMHighQueueDepth for the model: if the queue is high, scale out (its runbook).',
    '2. Split the latency: a high time to first token (`vllm:time_to_first_token_seconds`) means queueing or prefill; a high time per output token (`vllm:inter_token_latency_seconds`, `vllm:time_per_output_token_seconds` before vLLM 0.11) means slow decoding.',
    '3. Look for preemptions or a full KV cache (VLLMPreemptionSpike, VLLMKVCacheFull): recomputation slows every request.',
    '4. Check the request mix: longer prompts or outputs raise latency without a fault (`vllm:request_prompt_tokens`, `vllm:request_generation_tokens`).',
    "5. If the SLO does not fit this model, set the target's own threshold (`alerts.rules.VLLMHighLatency.threshold`).",
  ].join('\n'),
});
