import { VLLM } from '../metrics/index.js';

/** What identifies each trigger: the vLLM series its query reads. */
export const THRESHOLD_TRIGGERS = {
  queueDepth: {
    label: 'queue depth',
    mentions: VLLM.numRequestsWaiting,
    // Not `vllm:num_requests_waiting_by_reason`, a different series.
    pattern: new RegExp(`${escapeRegExp(VLLM.numRequestsWaiting)}(?![A-Za-z0-9_:])`),
  },
  p95Latency: {
    label: 'p95 latency',
    mentions: VLLM.e2eRequestLatency.replace(/^vllm:/, ''),
    // Also matches a recording rule or the `_bucket` series.
    pattern: new RegExp(escapeRegExp(VLLM.e2eRequestLatency.replace(/^vllm:/, ''))),
  },
} as const;

export type ThresholdTriggerKind = keyof typeof THRESHOLD_TRIGGERS;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
