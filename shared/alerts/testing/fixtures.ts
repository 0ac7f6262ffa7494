import type { Target } from '../../config/index.js';
import { ALERT_NAMES, type AlertInstance, type TargetEvaluation } from '../types.js';
import type { AlertState, AlertStateRecord } from '../alertState.js';
import { contentOf } from '../decide.js';

/**
 * Test fixtures of the notification pipeline (used by its tests only): a target, alert instances as the evaluator
 * produces them, evaluations and stored records. Values follow the guide's VLLMKVCacheFull (> 95 % for 30 s).
 */

export const FIXTURE_TARGET: Target = {
  name: 'prod-ministral',
  cluster: 'prod',
  namespace: 'inference',
  deployment: 'vllm-inference-app',
  model: 'mistralai/Ministral-8B-Instruct-2410',
};

/** 2025-06-01T12:00:00Z */
export const FIXTURE_T0 = Date.parse('2025-06-01T12:00:00.000Z');

/** A firing VLLMKVCacheFull instance on one Pod (`pod` picks the Pod and so the fingerprint). */
export function fixtureInstance(
  pod = 'vllm-inference-app-7d9c8b6f5d-x2k4q',
  overrides: Partial<AlertInstance> = {},
): AlertInstance {
  return {
    alertname: 'VLLMKVCacheFull',
    severity: 'critical',
    target: FIXTURE_TARGET.name,
    labels: {
      namespace: FIXTURE_TARGET.namespace,
      pod,
      model_name: FIXTURE_TARGET.model,
      target: FIXTURE_TARGET.name,
      cluster: FIXTURE_TARGET.cluster,
    },
    fingerprint: `kv-${pod}`,
    value: 0.97,
    threshold: 0.95,
    unit: 'ratio',
    forSeconds: 30,
    summary: `KV cache 97 % full on pod ${pod} (model ${FIXTURE_TARGET.model})`,
    description: 'KV-cache usage is 97 %, above 95 % for 30 s: preemptions and OOM are imminent.',
    runbook: '1. Check vllm:num_preemptions_total. 2. Scale out or lower max-num-seqs.',
    dashboardUrl: 'https://grafana.example.com/d/vllm',
    runbookUrl: 'https://runbooks.example.com/vllm#vllmkvcachefull',
    ...overrides,
  };
}

/** An evaluation of the fixture target in which every rule evaluated. */
export function fixtureEvaluation(
  firing: AlertInstance[],
  timeMs: number,
  overrides: Partial<TargetEvaluation> = {},
): TargetEvaluation {
  return {
    target: FIXTURE_TARGET,
    timeMs,
    evaluatedRules: [...ALERT_NAMES],
    firing,
    failures: [],
    queries: [],
    ...overrides,
  };
}

/** The state an instance gives when it starts firing at `startsAtMs`. */
export function fixtureState(instance: AlertInstance, startsAtMs: number): AlertState {
  return {
    ...contentOf(instance),
    status: 'firing',
    startsAtMs,
    endsAtMs: null,
  };
}

/** A stored record: firing since `startsAtMs`, version 2, no notification and no claim unless overridden. */
export function fixtureRecord(
  instance: AlertInstance,
  startsAtMs: number,
  overrides: Partial<AlertStateRecord> = {},
): AlertStateRecord {
  return {
    ...fixtureState(instance, startsAtMs),
    lastNotification: null,
    claim: null,
    version: 2,
    expiresAt: null,
    ...overrides,
  };
}
