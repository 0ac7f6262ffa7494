import { aggregate, VLLM } from '../../metrics/index.js';
import { byLabels, scopedSelector } from './scope.js';
import { defineAlertRule, heldText } from './text.js';

const IDENTIFYING_LABELS = ['namespace', 'pod', 'model_name'] as const;

/**
 * VLLMHighQueueDepth: `num_requests_waiting > 50 for 2 min`, warning (monitoring guide, section 6). Per Pod: the
 * largest queue of the Pod's engines, so one overloaded replica is named even when the others are idle.
 */
export const highQueueDepth = defineAlertRule({
  name: 'VLLMHighQueueDepth',
  severity: 'warning',
  condition: 'waiting requests per Pod (`vllm:num_requests_waiting`) > 50',
  meaning: 'Scaling delay or load exceeded',
  unit: 'requests',
  defaults: { threshold: 50, forSeconds: 120, windowSeconds: 0 },
  identifyingLabels: IDENTIFYING_LABELS,
  valueQuery(scope) {
    return aggregate('max', byLabels(IDENTIFYING_LABELS, scope), scopedSelector(VLLM.numRequestsWaiting, scope.vllm));
  },
  summaryText: (p) =>
    `Queue depth ${p.value} on pod ${p.label('namespace')}/${p.label('pod')} (model ${p.label('model_name')})`,
  descriptionText: (p) =>
    `${p.value} requests are waiting in the vLLM queue of pod ${p.label('namespace')}/${p.label('pod')} ` +
    `(model ${p.label('model_name')}), above the threshold of ${p.threshold}${heldText(p)}. Likely cause: scaling ` +
    'lags behind demand or the load exceeds what the replicas can serve ("scaling delay or load exceeded"); ' +
    'new requests wait before they start, so latency rises next.',
  runbook: [
    '1. Is the deployment scaling out? `kubectl get scaledobject,hpa -n <namespace>`: compare current and desired replicas with maxReplicaCount.',
    '2. Are new Pods Pending for a GPU node? `kubectl get pods -n <namespace> -o wide` and `kubectl get nodeclaims` (Karpenter); a new Pod needs 2-10 minutes to load the model.',
    "3. At maxReplicaCount: raise it (and the NodePool's GPU limit) or shed load at the gateway.",
    '4. Queue growing while the Pod is idle: look for engine errors in `kubectl logs -n <namespace> <pod>`.',
    '5. If the load pattern changed, measure the saturation point again (`vllm-pilot calibrate`): the KEDA threshold may be too high.',
  ].join('\n'),
});
