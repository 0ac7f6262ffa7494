import { DCGM, eq, formatMatchers, selector, VLLM, VLLM_RENAMED } from '../../metrics/index.js';
import { formatDurationSeconds, goFormatFloat } from '../format.js';
import { alertConditionQuery } from '../heldFor.js';
import { ALERT_INHIBITIONS, DEFAULT_ALERT_SETTINGS, GENERIC_SCOPE, ruleByName } from '../rules/index.js';
import type { AlertName } from '../types.js';
import { toYaml } from './ruleGroups.js';

/**
 * The `promtool test rules` file of the generic rules (infra/prometheus/vllm-alerts.test.yaml): for each alert,
 * synthetic series that cross the threshold, checks just before the `for` has elapsed (nothing fires), right
 * after (it fires, with its labels and texts), and after the condition clears (resolved). The expected texts are
 * the evaluator's own (`summary()`/`description()` in TypeScript), so promtool also proves that the exported
 * annotation templates render exactly what the product's evaluator sends.
 *
 * Every rule keeps firing for its keep-firing time (90 s) after its condition was last met, so each scenario checks
 * the alert still firing just after the condition clears and resolved once that time has passed; one Pod's scrape
 * fails while its alert fires, which must not resolve it.
 *
 * Two more kinds of check tie the two engines together. For the rules marked so, the Lambda evaluator's own query
 * (`alertConditionQuery`: the `for` held in PromQL, kept firing for the keep-firing time) runs as a
 * `promql_expr_test` at the same times and must return the same instances as the rule's native `for` and
 * `keep_firing_for`. And the inhibition: promtool cannot run Alertmanager, so the inhibit rules
 * (`rules/inhibitions.ts`, the table Alertmanager and the evaluator's decision stage both apply) are written as PromQL
 * over the `ALERTS` series the rules produce, and the test shows which firing alerts are notified at each step.
 */

/** Sample spacing and rule evaluation interval of every test: a common kube-prometheus-stack setting. */
const STEP_SECONDS = 15;

interface InputSeries {
  metric: string;
  labels: Record<string, string>;
  /**
   * promtool's expanding notation: `a x n` is n + 1 samples of a; `a+b x n` counts up; `_` is a missing sample (`_x n`
   * is n of them); `stale` ends the series as a failed scrape does.
   */
  values: string;
}

interface Check {
  atSeconds: number;
  why: string;
  /** The alerts expected to fire then: identifying labels and the value. */
  firing: Array<{ labels: Record<string, string>; value: number }>;
}

interface Scenario {
  alert: AlertName;
  about: string;
  series: InputSeries[];
  checks: Check[];
  /**
   * Also run the Lambda evaluator's query (`alertConditionQuery`) at each check: it must find the same instances. Set
   * for the rules whose value was written for it (the absent rule's value must exist at every step). Not for a 30 s
   * `for`: its 7 s subquery steps are aligned to multiples of 7 s, so the evaluator may fire up to one step later.
   */
  evaluatorChecks?: true;
}

/** One step of the inhibition test: what the rules fire, and what is notified once the inhibit rules apply. */
interface InhibitionCheck {
  atSeconds: number;
  why: string;
  firing: Array<{ alert: AlertName; labels: Record<string, string>; value: number }>;
  /** The firing alerts left after inhibition: what Alertmanager (and the evaluator) notifies. */
  notified: Array<{ alert: AlertName; labels: Record<string, string> }>;
}

const NAMESPACE = 'llm';
const MODEL = 'mistralai/Ministral-8B-Instruct-2410';
const POD_A = 'ministral-7d9c8b6f5d-x2k4q';
const POD_B = 'ministral-7d9c8b6f5d-h8w2m';
const POD_C = 'ministral-7d9c8b6f5d-q7n4z';
const POD_D = 'ministral-7d9c8b6f5d-v5t8w';
const POD_E = 'ministral-7d9c8b6f5d-r3m6p';
const pod = (name: string) => ({ namespace: NAMESPACE, pod: name, model_name: MODEL });

/** dcgm-exporter 4.8.2 labels of a GPU allocated to a vLLM Pod (render_metrics.go order). */
const GPU_ALLOCATED = {
  gpu: '0',
  UUID: 'GPU-1c7f2a9e-5b3d-4e8f-a0c2-7d9e6b4f3a21',
  pci_bus_id: '00000000:30:00.0',
  device: 'nvidia0',
  modelName: 'NVIDIA L40S',
  Hostname: 'ip-192-168-131-77.us-east-2.compute.internal',
  DCGM_FI_DRIVER_VERSION: '580.126.09',
  container: 'vllm',
  namespace: NAMESPACE,
  pod: POD_A,
};
/** A GPU no Pod uses (no namespace/pod labels), from an exporter built from master (`hostname`, lower case). */
const GPU_FREE = {
  gpu: '1',
  UUID: 'GPU-9a2e4c6b-1d3f-4a5b-8c7d-0e1f2a3b4c5d',
  pci_bus_id: '00000000:31:00.0',
  device: 'nvidia1',
  modelName: 'NVIDIA L40S',
  hostname: 'ip-192-168-131-77.us-east-2.compute.internal',
  DCGM_FI_DRIVER_VERSION: '580.126.09',
};

const FB_TOTAL_MIB = 46_068;

const SCENARIOS: Scenario[] = [
  {
    alert: 'VLLMHighQueueDepth',
    about: 'pod A: 73 waiting from 2m; pod C: 80 with one dip at 1m30s (the dip restarts its 2m); pod B below 50',
    series: [
      { metric: VLLM.numRequestsWaiting, labels: { ...pod(POD_A), engine: '0' }, values: '3x7 73x23 4x10' },
      { metric: VLLM.numRequestsWaiting, labels: { ...pod(POD_A), engine: '1' }, values: '2x40' },
      { metric: VLLM.numRequestsWaiting, labels: { ...pod(POD_B), engine: '0' }, values: '40x40' },
      { metric: VLLM.numRequestsWaiting, labels: { ...pod(POD_C), engine: '0' }, values: '80x5 10 80x20 4x10' },
    ],
    checks: [
      { atSeconds: 120, why: 'pod C would fire here without its dip', firing: [] },
      { atSeconds: 210, why: 'pod C held 1m45s since the dip, pod A 1m30s', firing: [] },
      { atSeconds: 225, why: 'pod C held 2m', firing: [{ labels: pod(POD_C), value: 80 }] },
      {
        atSeconds: 240,
        why: 'pod A held 2m (one alert per Pod: the largest engine queue)',
        firing: [
          { labels: pod(POD_A), value: 73 },
          { labels: pod(POD_C), value: 80 },
        ],
      },
      {
        atSeconds: 480,
        why: 'pod C drained at 7m, pod A at 8m: both kept firing with their last values',
        firing: [
          { labels: pod(POD_A), value: 73 },
          { labels: pod(POD_C), value: 80 },
        ],
      },
      { atSeconds: 510, why: 'pod C kept firing 90s: resolved', firing: [{ labels: pod(POD_A), value: 73 }] },
      { atSeconds: 570, why: 'pod A kept firing 90s: resolved', firing: [] },
    ],
  },
  {
    alert: 'VLLMHighLatency',
    about: 'model M idle for 10m (NaN: no alert), then every request takes 5-10 s (p95 9.75 s) until 20m; model F fast',
    series: [
      ...['1', '5'].map((le) => ({
        metric: `${VLLM.e2eRequestLatency}_bucket`,
        labels: { ...pod(POD_A), le },
        values: '0x120',
      })),
      ...['10', '+Inf'].map((le) => ({
        metric: `${VLLM.e2eRequestLatency}_bucket`,
        labels: { ...pod(POD_A), le },
        values: '0x40 15+15x39 600x40',
      })),
      ...['1', '5', '10', '+Inf'].map((le) => ({
        metric: `${VLLM.e2eRequestLatency}_bucket`,
        labels: { namespace: NAMESPACE, pod: 'fast-5c6d7e8f9a-b2c3d', model_name: 'fast', le },
        values: '0+15x120',
      })),
    ],
    checks: [
      { atSeconds: 300, why: 'no request finished (NaN) and model F is fast', firing: [] },
      { atSeconds: 720, why: 'slow since 10m15s: held 1m45s', firing: [] },
      {
        atSeconds: 735,
        why: 'held 2m',
        firing: [{ labels: { namespace: NAMESPACE, model_name: MODEL }, value: 9.75 }],
      },
      { atSeconds: 1620, why: 'no request in the last 5m, and kept firing 90s: resolved', firing: [] },
    ],
  },
  {
    alert: 'VLLMGPUMemoryCritical',
    about: 'GPU 0 (pod A) at 44000 of 46068 MiB from 2m to 8m; GPU 1 (no Pod) at 45000 MiB from the start to 5m',
    series: [
      { metric: DCGM.fbUsed, labels: GPU_ALLOCATED, values: '41000x7 44000x23 30000x10' },
      { metric: DCGM.fbFree, labels: GPU_ALLOCATED, values: '5068x7 2068x23 16068x10' },
      { metric: DCGM.fbUsed, labels: GPU_FREE, values: '45000x19 30000x20' },
      { metric: DCGM.fbFree, labels: GPU_FREE, values: '1068x19 16068x20' },
    ],
    checks: [
      { atSeconds: 45, why: 'GPU 1 held 45s', firing: [] },
      { atSeconds: 165, why: 'GPU 1 held 1m; GPU 0 only 45s', firing: [gpuFree()] },
      { atSeconds: 180, why: 'GPU 0 held 1m', firing: [gpuAllocated(44_000), gpuFree()] },
      { atSeconds: 300, why: 'GPU 1 back to 30000 MiB: kept firing', firing: [gpuAllocated(44_000), gpuFree()] },
      { atSeconds: 390, why: 'GPU 1 kept firing 90s: resolved', firing: [gpuAllocated(44_000)] },
      { atSeconds: 480, why: 'GPU 0 back to 30000 MiB: kept firing', firing: [gpuAllocated(44_000)] },
      { atSeconds: 570, why: 'GPU 0 kept firing 90s: resolved', firing: [] },
    ],
  },
  {
    alert: 'VLLMKVCacheFull',
    about:
      'KV cache at 97 % from 2m to 4m45s on a vLLM 0.9 Pod (legacy name), a 0.11 Pod (both names) and a latest ' +
      'Pod; at the same times +Inf on pod D and NaN on pod E (a broken exporter: never fires, as the evaluator ' +
      "refuses such answers, and +Inf would not be a JSON number in the alert manager's message)",
    series: [
      { metric: VLLM_RENAMED.kvCacheUsage.legacy, labels: pod(POD_A), values: '0.5x7 0.97x11 0.5x10' },
      { metric: VLLM_RENAMED.kvCacheUsage.legacy, labels: pod(POD_B), values: '0.5x7 0.97x11 0.5x10' },
      { metric: VLLM_RENAMED.kvCacheUsage.current, labels: pod(POD_B), values: '0.5x7 0.97x11 0.5x10' },
      { metric: VLLM_RENAMED.kvCacheUsage.current, labels: pod(POD_C), values: '0.5x7 0.97x11 0.5x10' },
      // promtool's notation has no `Infx11`: each special value is written out.
      { metric: VLLM_RENAMED.kvCacheUsage.current, labels: pod(POD_D), values: `0.5x7 ${'Inf '.repeat(12)}0.5x10` },
      { metric: VLLM_RENAMED.kvCacheUsage.current, labels: pod(POD_E), values: `0.5x7 ${'NaN '.repeat(12)}0.5x10` },
    ],
    checks: [
      { atSeconds: 135, why: 'held 15s', firing: [] },
      {
        atSeconds: 150,
        why: 'held 30s: one alert per Pod, whichever name it exposes (pod B once); none for +Inf or NaN',
        firing: [POD_A, POD_B, POD_C].map((name) => ({ labels: pod(name), value: 0.97 })),
      },
      {
        atSeconds: 300,
        why: 'back to 50 %: kept firing with the last value',
        firing: [POD_A, POD_B, POD_C].map((name) => ({ labels: pod(name), value: 0.97 })),
      },
      { atSeconds: 390, why: 'kept firing 90s: resolved', firing: [] },
    ],
  },
  {
    alert: 'VLLMPreemptionSpike',
    about: 'pod A: a burst of 1800 preemptions at 5m15s (6/s over 5m); pod B: a steady 4/s; no `for`',
    series: [
      { metric: VLLM.numPreemptions, labels: { ...pod(POD_A), engine: '0' }, values: '0x20 1800x40' },
      { metric: VLLM.numPreemptions, labels: { ...pod(POD_B), engine: '0' }, values: '0+60x60' },
    ],
    checks: [
      { atSeconds: 300, why: 'no preemption yet on pod A; pod B below 5/s', firing: [] },
      { atSeconds: 315, why: 'the burst: fires at once (no `for`)', firing: [{ labels: pod(POD_A), value: 6 }] },
      { atSeconds: 600, why: 'the burst still in the 5m window', firing: [{ labels: pod(POD_A), value: 6 }] },
      { atSeconds: 615, why: 'the burst left the window: kept firing', firing: [{ labels: pod(POD_A), value: 6 }] },
      { atSeconds: 705, why: 'kept firing 90s: resolved', firing: [] },
    ],
  },
  {
    alert: 'VLLMKVCacheHigh',
    evaluatorChecks: true,
    about:
      'pod A (vLLM 0.9 name) at 85 % from 1m to 6m, its scrape failed at 3m30s (stale, then no sample at 3m45s); ' +
      'pod C (latest name) at 82 % with a dip at 1m45s; pod B at 79 %',
    series: [
      { metric: VLLM_RENAMED.kvCacheUsage.legacy, labels: pod(POD_A), values: '0.5x3 0.85x9 stale _ 0.85x7 0.5x8' },
      { metric: VLLM_RENAMED.kvCacheUsage.current, labels: pod(POD_B), values: '0.79x34' },
      { metric: VLLM_RENAMED.kvCacheUsage.current, labels: pod(POD_C), values: '0.82x6 0.7 0.82x22 0.5x4' },
    ],
    checks: [
      { atSeconds: 120, why: 'pod C would fire here without its dip; pod A held 1m', firing: [] },
      { atSeconds: 165, why: 'pod A held 1m45s', firing: [] },
      { atSeconds: 180, why: 'pod A held 2m', firing: [{ labels: pod(POD_A), value: 0.85 }] },
      {
        atSeconds: 225,
        why: "pod A's series absent since its failed scrape at 3m30s: kept firing, not resolved",
        firing: [{ labels: pod(POD_A), value: 0.85 }],
      },
      {
        atSeconds: 240,
        why: 'pod C held 2m since its dip; pod B never crosses 80 %',
        firing: [
          { labels: pod(POD_A), value: 0.85 },
          { labels: pod(POD_C), value: 0.82 },
        ],
      },
      {
        atSeconds: 360,
        why: 'pod A back to 50 %: kept firing',
        firing: [
          { labels: pod(POD_A), value: 0.85 },
          { labels: pod(POD_C), value: 0.82 },
        ],
      },
      { atSeconds: 450, why: 'pod A kept firing 90s: resolved', firing: [{ labels: pod(POD_C), value: 0.82 }] },
      {
        atSeconds: 480,
        why: 'pod C back to 50 % at 7m45s: kept firing',
        firing: [{ labels: pod(POD_C), value: 0.82 }],
      },
      { atSeconds: 570, why: 'pod C kept firing 90s (the evaluator one step more): resolved', firing: [] },
    ],
  },
  {
    alert: 'VLLMMetricsAbsent',
    evaluatorChecks: true,
    about:
      'the only vLLM series goes stale at 2m15s, is back from 4m15s to 5m, stale again at 5m15s, back at 16m ' +
      '(no vLLM series at all: the generic rule has no target)',
    series: [
      {
        metric: VLLM.numRequestsRunning,
        labels: { ...pod(POD_A), engine: '0' },
        values: '2x8 stale _x7 2x3 stale _x42 2x5',
      },
    ],
    checks: [
      { atSeconds: 120, why: 'the series exists', firing: [] },
      { atSeconds: 420, why: 'absent since 5m15s: held 1m45s', firing: [] },
      {
        atSeconds: 435,
        why: 'absent now and 5m ago, but back in between: the `for` restarted at 5m15s',
        firing: [],
      },
      { atSeconds: 615, why: 'absent for 5m', firing: [{ labels: {}, value: 1 }] },
      { atSeconds: 960, why: 'the series is back at 16m: resolved (the absent rule keeps no firing time)', firing: [] },
    ],
  },
];

/**
 * The inhibition, on one scenario of the guide's kind: pod A's KV cache at 85 % (the warning fires), then 97 % (the
 * critical fires: pod A's warning and its preemption spike are inhibited), then 50 % (both resolve); pod B at 85 %
 * all along (another Pod: never inhibited). Every Pod exposes `vllm:num_requests_running`, so the absent rule stays
 * quiet.
 */
const INHIBITION_SCENARIO = {
  about:
    'pod A: KV cache 85 % from 1m, 97 % from 4m, 50 % from 11m, a burst of 1800 preemptions at 5m15s; pod B: 85 % ' +
    'from 1m to 12m',
  series: [
    { metric: VLLM_RENAMED.kvCacheUsage.current, labels: pod(POD_A), values: '0.5x3 0.85x11 0.97x27 0.5x12' },
    { metric: VLLM_RENAMED.kvCacheUsage.current, labels: pod(POD_B), values: '0.5x3 0.85x43 0.5x8' },
    { metric: VLLM.numPreemptions, labels: { ...pod(POD_A), engine: '0' }, values: '0x20 1800x40' },
    { metric: VLLM.numRequestsRunning, labels: { ...pod(POD_A), engine: '0' }, values: '8x60' },
    { metric: VLLM.numRequestsRunning, labels: { ...pod(POD_B), engine: '0' }, values: '8x60' },
  ] satisfies InputSeries[],
  checks: [
    {
      atSeconds: 165,
      why: 'both Pods at 85 % for 1m45s: nothing yet',
      firing: [],
      notified: [],
    },
    {
      atSeconds: 180,
      why: 'the warning fires on both Pods and is notified',
      firing: [
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_A), value: 0.85 },
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_B), value: 0.85 },
      ],
      notified: [
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_A) },
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_B) },
      ],
    },
    {
      atSeconds: 255,
      why: 'pod A at 97 % for 15s: the critical is pending, nothing inhibited yet',
      firing: [
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_A), value: 0.97 },
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_B), value: 0.85 },
      ],
      notified: [
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_A) },
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_B) },
      ],
    },
    {
      atSeconds: 270,
      why: "the critical fires on pod A: pod A's warning still fires but is inhibited; pod B's is not",
      firing: [
        { alert: 'VLLMKVCacheFull', labels: pod(POD_A), value: 0.97 },
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_A), value: 0.97 },
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_B), value: 0.85 },
      ],
      notified: [
        { alert: 'VLLMKVCacheFull', labels: pod(POD_A) },
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_B) },
      ],
    },
    {
      atSeconds: 360,
      why: 'preemptions on pod A (6/s over 5m): the spike fires and is inhibited too',
      firing: [
        { alert: 'VLLMKVCacheFull', labels: pod(POD_A), value: 0.97 },
        { alert: 'VLLMPreemptionSpike', labels: pod(POD_A), value: 6 },
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_A), value: 0.97 },
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_B), value: 0.85 },
      ],
      notified: [
        { alert: 'VLLMKVCacheFull', labels: pod(POD_A) },
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_B) },
      ],
    },
    {
      atSeconds: 630,
      why: 'the burst left the 5m window at 10m15s: the spike keeps firing 90s, still inhibited',
      firing: [
        { alert: 'VLLMKVCacheFull', labels: pod(POD_A), value: 0.97 },
        { alert: 'VLLMPreemptionSpike', labels: pod(POD_A), value: 6 },
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_A), value: 0.97 },
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_B), value: 0.85 },
      ],
      notified: [
        { alert: 'VLLMKVCacheFull', labels: pod(POD_A) },
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_B) },
      ],
    },
    {
      atSeconds: 705,
      why: 'the spike resolved while inhibited (never notified); pod A back to 50 % at 11m: its critical and warning kept firing',
      firing: [
        { alert: 'VLLMKVCacheFull', labels: pod(POD_A), value: 0.97 },
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_A), value: 0.97 },
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_B), value: 0.85 },
      ],
      notified: [
        { alert: 'VLLMKVCacheFull', labels: pod(POD_A) },
        { alert: 'VLLMKVCacheHigh', labels: pod(POD_B) },
      ],
    },
    {
      atSeconds: 750,
      why: "pod A's critical and warning resolve at the same step; pod B's warning (back to 50 % at 12m) is kept firing",
      firing: [{ alert: 'VLLMKVCacheHigh', labels: pod(POD_B), value: 0.85 }],
      notified: [{ alert: 'VLLMKVCacheHigh', labels: pod(POD_B) }],
    },
    {
      atSeconds: 810,
      why: "pod B's warning kept firing 90s: resolved",
      firing: [],
      notified: [],
    },
  ] satisfies InhibitionCheck[],
};

/** The alerts the inhibition test checks: every inhibition's source and targets. */
const INHIBITION_ALERTS: readonly AlertName[] = [
  ...new Set(ALERT_INHIBITIONS.flatMap((inhibition) => [inhibition.source, ...inhibition.targets])),
];

/**
 * The firing alerts that are notified, as PromQL over `ALERTS`: each inhibition removes its targets that have a
 * firing source with the same `equal` labels (Alertmanager's inhibitor; a label missing on both sides matches).
 */
export function notifiedAlertsQuery(): string {
  const firing = (matcher: string) => `ALERTS{alertstate="firing"${matcher}}`;
  return ALERT_INHIBITIONS.reduce(
    (query, inhibition) =>
      `${query} unless (${firing(`, alertname=~"${inhibition.targets.join('|')}"`)} and on (${inhibition.equal.join(', ')}) ` +
      `${firing(`, alertname="${inhibition.source}"`)})`,
    firing(''),
  );
}

function gpuAllocated(usedMiB: number) {
  const { gpu, UUID, modelName, Hostname, namespace, pod: podName } = GPU_ALLOCATED;
  return { labels: { UUID, gpu, Hostname, modelName, namespace, pod: podName }, value: usedMiB / FB_TOTAL_MIB };
}

function gpuFree() {
  const { gpu, UUID, modelName, hostname } = GPU_FREE;
  // Computed as PromQL does (used / (used + free)), so the floating-point value is the same.
  return { labels: { UUID, gpu, hostname, modelName }, value: 45_000 / (45_000 + 1_068) };
}

/** The annotations Prometheus renders for one firing instance, from the evaluator's own text functions. */
function expectedAnnotations(alert: AlertName, labels: Record<string, string>, value: number) {
  const rule = ruleByName(alert);
  const settings = DEFAULT_ALERT_SETTINGS.rules[alert];
  const context = { labels, value, settings };
  return {
    summary: rule.summary(context),
    description: rule.description(context),
    runbook: rule.runbook,
    value: goFormatFloat(value),
    threshold: String(settings.threshold),
    unit: rule.unit,
  };
}

function inputSeries(series: readonly InputSeries[]) {
  return series.map((s) => ({
    series: selector(
      s.metric,
      Object.entries(s.labels).map(([name, value]) => eq(name, value)),
    ),
    values: s.values,
  }));
}

/** A promql_expr_test sample: the metric name and labels as promtool parses them, and the value. */
function sample(metric: string, labels: Record<string, string>, value: number) {
  return { labels: `${metric}${formatMatchers(Object.entries(labels).map(([name, v]) => eq(name, v)))}`, value };
}

/** The Lambda evaluator's query for the rule with the guide's settings (every series: the generic scope). */
function evaluatorQuery(alert: AlertName): string {
  const settings = DEFAULT_ALERT_SETTINGS.rules[alert];
  const value = ruleByName(alert).valueQuery(GENERIC_SCOPE, settings);
  return alertConditionQuery(value, settings.threshold, settings.forSeconds, settings.keepFiringForSeconds);
}

function alertCheck(alert: AlertName, atSeconds: number, firing: Check['firing']) {
  const rule = ruleByName(alert);
  return {
    eval_time: formatDurationSeconds(atSeconds),
    alertname: alert,
    exp_alerts: firing.map(({ labels, value }) => ({
      exp_labels: { ...labels, severity: rule.severity },
      exp_annotations: expectedAnnotations(alert, labels, value),
    })),
  };
}

function testCase(scenario: Scenario) {
  return {
    interval: `${STEP_SECONDS}s`,
    input_series: inputSeries(scenario.series),
    alert_rule_test: scenario.checks.map((check) => alertCheck(scenario.alert, check.atSeconds, check.firing)),
    // The evaluator's held-for query finds the same instances, with the same values, at the same times.
    ...(scenario.evaluatorChecks
      ? {
          promql_expr_test: scenario.checks.map((check) => ({
            expr: evaluatorQuery(scenario.alert),
            eval_time: formatDurationSeconds(check.atSeconds),
            exp_samples: check.firing.map(({ labels, value }) => sample('', labels, value)),
          })),
        }
      : {}),
  };
}

function inhibitionTestCase() {
  const { series, checks } = INHIBITION_SCENARIO;
  return {
    interval: `${STEP_SECONDS}s`,
    input_series: inputSeries(series),
    alert_rule_test: checks.flatMap((check) =>
      INHIBITION_ALERTS.map((alert) =>
        alertCheck(
          alert,
          check.atSeconds,
          check.firing.filter((f) => f.alert === alert),
        ),
      ),
    ),
    promql_expr_test: checks.map((check) => ({
      expr: notifiedAlertsQuery(),
      eval_time: formatDurationSeconds(check.atSeconds),
      exp_samples: check.notified.map(({ alert, labels }) =>
        sample(
          'ALERTS',
          { alertname: alert, alertstate: 'firing', ...labels, severity: ruleByName(alert).severity },
          1,
        ),
      ),
    })),
  };
}

function indent(text: string, spaces: number): string {
  const pad = ' '.repeat(spaces);
  return text
    .split('\n')
    .map((line) => (line === '' ? line : pad + line))
    .join('\n');
}

/** The promtool test file for the generic rules file `rulesFile` (a path relative to the test file). */
export function promtoolTestFile(rulesFile = 'vllm-alerts.rules.yaml'): string {
  const header = [
    '# Generated by `vllm-pilot alerts rules --format promtool-test` (shared/alerts/export/promtoolTests.ts). Do not',
    '# edit: change the scenarios and generate again. Run: promtool test rules vllm-alerts.test.yaml',
    '# Each test: an alert is not firing before its `for` has elapsed, fires right after, and resolves; the Lambda',
    "# evaluator's held-for query (promql_expr_test, on the new rules) finds the same instances at the same times. The",
    '# last test shows the inhibition (Alertmanager inhibit_rules, as PromQL over ALERTS): what is notified when.',
    toYaml({ rule_files: [rulesFile], evaluation_interval: `${STEP_SECONDS}s` }).trimEnd(),
    'tests:',
  ];
  const comment = (title: string, checks: ReadonlyArray<{ atSeconds: number; why: string }>) =>
    [title, ...checks.map((c) => `#   ${formatDurationSeconds(c.atSeconds)}: ${c.why}`)]
      .map((line) => `  ${line}`)
      .join('\n');
  const tests = SCENARIOS.map(
    (scenario) =>
      `${comment(`# ${scenario.alert}: ${scenario.about}`, scenario.checks)}\n${indent(toYaml([testCase(scenario)]), 2)}`,
  );
  const inhibition = `${comment(`# Inhibition (${notifiedAlertsQuery()}): ${INHIBITION_SCENARIO.about}`, INHIBITION_SCENARIO.checks)}\n${indent(toYaml([inhibitionTestCase()]), 2)}`;
  return `${header.join('\n')}\n${[...tests, inhibition].join('\n')}`;
}
