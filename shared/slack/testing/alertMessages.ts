import type { AlertMessage } from '../../alerts/index.js';

/** A critical KV-cache alert as the pipeline publishes it (message.ts v1): the base of the Slack tests. */
export const kvCacheFiring: AlertMessage = {
  version: 1,
  alertname: 'VLLMKVCacheFull',
  severity: 'critical',
  status: 'firing',
  reason: 'first',
  target: 'prod-mistral',
  labels: {
    target: 'prod-mistral',
    cluster: 'prod-eks',
    namespace: 'inference',
    pod: 'vllm-inference-app-7d9c8b6f5d-x2k4q',
    model_name: 'mistralai/Ministral-8B-Instruct-2410',
  },
  fingerprint: '9f2c1a7be04d3e18',
  value: 0.973,
  threshold: 0.95,
  unit: 'ratio',
  startsAt: '2026-03-02T10:04:30.000Z',
  endsAt: null,
  summary:
    'KV cache 97.3 % full on pod vllm-inference-app-7d9c8b6f5d-x2k4q (model mistralai/Ministral-8B-Instruct-2410)',
  description:
    'KV-cache usage is 97.3 %, above the 95 % threshold for 30 s. New requests wait for blocks and running ones get preempted.',
  runbook: '1. Check vllm:num_preemptions_total.\n2. Lower --max-num-seqs or add replicas.',
  runbookUrl: 'https://runbooks.example.com/vllm#vllmkvcachefull',
  dashboardUrl: 'https://grafana.example.com/d/vllm?var-pod=vllm-inference-app-7d9c8b6f5d-x2k4q',
};

/** The same alert once it cleared, 12 min 30 s later. */
export const kvCacheResolved: AlertMessage = {
  ...kvCacheFiring,
  status: 'resolved',
  reason: 'resolved',
  value: 0.961,
  endsAt: '2026-03-02T10:17:00.000Z',
};

/** A warning alert without links. */
export const queueDepthWarning: AlertMessage = {
  ...kvCacheFiring,
  alertname: 'VLLMHighQueueDepth',
  severity: 'warning',
  reason: 'repeat',
  value: 73,
  threshold: 50,
  unit: 'requests',
  summary: 'Queue depth 73 on pod vllm-inference-app-7d9c8b6f5d-x2k4q',
  description: 'vllm:num_requests_waiting is 73, above 50 for 2 min.',
  runbookUrl: null,
  dashboardUrl: null,
};
