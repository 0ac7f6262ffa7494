import { aggregate, type LabelMatcher, scale, VLLM } from '../../metrics/index.js';
import { scopedSelector } from './scope.js';
import { defineAlertRule, heldText, type TextParts } from './text.js';

/**
 * The labels `absent(<selector>)` puts on its answer: each label with exactly one matcher, an equality to a
 * non-empty value (Prometheus promql/functions.go, `createLabelsForAbsentFunction`: a regex matcher, a second matcher
 * of the same label or an empty value leaves the label out). For a target: `namespace`, `model_name` and the cluster
 * label when it has one; the Pod regex is left out. For the generic rule: none.
 */
export function absentLabels(matchers: readonly LabelMatcher[]): string[] {
  const count = new Map<string, number>();
  for (const m of matchers) count.set(m.name, (count.get(m.name) ?? 0) + 1);
  return matchers.filter((m) => m.op === '=' && m.value !== '' && count.get(m.name) === 1).map((m) => m.name);
}

/** " for model M in namespace N", or what of it the labels hold (nothing for the generic rule). */
function where(p: TextParts): string {
  return (
    p.optional('model_name', (model) => ` for model ${model}`) +
    p.optional('namespace', (namespace) => ` in namespace ${namespace}`)
  );
}

/**
 * VLLMMetricsAbsent: the target's vLLM series are absent for 5 min, critical. Not in the guide: it watches the
 * alerting itself. Every other rule of the target reads vLLM (or DCGM) series and answers "nothing" when they are
 * gone, so a broken scrape or a model name that does not match would keep every alert silent. It reads
 * `vllm:num_requests_running`, which every vLLM version exposes (never renamed), with the target's own selector.
 *
 * The value: `absent()` answers 1 when no series matches and nothing otherwise; the second branch answers 0 with the
 * same labels (`absentLabels`) while the series exist. So the value exists at every step and the evaluator's held-for
 * subquery sees a reappearance as a break, as Prometheus resets a pending alert; the exported rule fires on the same
 * condition (`> 0`). The unit: the message contract has no yes/no unit; `requests` prints the bare number (1 = absent,
 * threshold 0), and the threshold is fixed.
 *
 * `for` 5 min: longer than any of the guide's (2 min), so a scrape that fails a few times in a row, a Prometheus
 * restart or a delayed remote write does not page, yet a target that stopped reporting is known within minutes, not
 * when someone opens a dashboard. Critical: while it fires, the target has no alerting at all. A target scaled to
 * zero on purpose has no series either: disable the rule for it.
 */
export const metricsAbsent = defineAlertRule({
  name: 'VLLMMetricsAbsent',
  severity: 'critical',
  condition: "no `vllm:num_requests_running` series (every vLLM version exposes it) in the target's selector",
  meaning: 'Alerting blind: broken scrape or model name mismatch',
  unit: 'requests',
  // No keep-firing time: a failed scrape cannot interrupt an absence (it only prolongs it), and the evaluator, asking
  // the history without state, would fire a kept absence back from before a target's first samples (a new target, a
  // new workspace) for 90 s after they arrive, which AMP's ruler, with its state, never does.
  defaults: { threshold: 0, forSeconds: 300, windowSeconds: 0, keepFiringForSeconds: 0 },
  thresholdFixed: true,
  identifyingLabels: ['namespace', 'model_name'],
  valueQuery(scope) {
    const series = scopedSelector(VLLM.numRequestsRunning, scope.vllm);
    return `absent(${series}) or ${scale(0, aggregate('max', absentLabels(scope.vllm), series))}`;
  },
  summaryText: (p) => `No vLLM metrics${where(p)}${heldText(p)}`,
  descriptionText: (p) =>
    `No \`vllm:num_requests_running\` series (every vLLM version exposes it)${where(p)}${heldText(p)}. Every ` +
    'other vLLM alert on these series answers nothing and stays silent: the alerting is blind. Likely cause: the ' +
    "scrape is broken (the ServiceMonitor or PodMonitor, the Pod's /metrics port, remote write to AMP), the " +
    "target's model name does not match vLLM's model_name label (--served-model-name), or no Pod of the " +
    'Deployment runs (crash loop, Pending for a GPU, scaled to zero).',
  runbook: [
    '1. Are the Pods running? `kubectl get deploy,pods -n <namespace> -o wide`: none Ready (a crash loop, Pending for a GPU node) means nothing serves either; read their events and logs.',
    "2. Does vLLM expose the series with the expected labels? `kubectl port-forward -n <namespace> pod/<pod> 8000` and `curl -s localhost:8000/metrics | grep num_requests_running`: model_name must equal the target's `model` (vLLM's --served-model-name, else --model).",
    '3. Is the Pod scraped? The ServiceMonitor/PodMonitor (`kubectl get servicemonitor,podmonitor -A`), its target in Prometheus (/targets) and `up{namespace="<namespace>"}`; preflight check 2 checks the same.',
    '4. Does AMP receive it? The remote-write (or AMP managed collector) logs, and `count by (namespace, model_name) (vllm:num_requests_running)` in the workspace.',
    '5. A target scaled to zero on purpose has no series: disable this rule for it (`alerts.rules.VLLMMetricsAbsent.enabled: false`).',
  ].join('\n'),
});
