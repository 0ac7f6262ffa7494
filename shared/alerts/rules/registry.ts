import { ALERT_INHIBITIONS } from '../inhibitions.js';
import { ALERT_NAMES, type AlertName } from '../types.js';
import { gpuMemoryCritical } from './gpuMemoryCritical.js';
import { highLatency } from './highLatency.js';
import { highQueueDepth } from './highQueueDepth.js';
import { kvCacheFull } from './kvCacheFull.js';
import { kvCacheHigh } from './kvCacheHigh.js';
import { metricsAbsent } from './metricsAbsent.js';
import { preemptionSpike } from './preemptionSpike.js';
import type { ExportableAlertRule } from './text.js';

/**
 * The seven alert rules, in `ALERT_NAMES` order: the monitoring guide's five (section 6), its 80 % KV-cache early
 * warning, and the target's vLLM series being absent. The one source the evaluator, the exported Prometheus/AMP rule
 * files, the promtool tests and the README table are built from. A rule whose `defaults.windowSeconds` is 0 reads a
 * gauge and has no rate window.
 */
export const ALERT_RULES: readonly ExportableAlertRule[] = Object.freeze([
  highQueueDepth,
  highLatency,
  gpuMemoryCritical,
  kvCacheFull,
  preemptionSpike,
  kvCacheHigh,
  metricsAbsent,
]);

const BY_NAME = new Map<AlertName, ExportableAlertRule>(ALERT_RULES.map((rule) => [rule.name, rule]));

// The registry must cover the contract's names exactly, in order: a missing or extra rule is a programming error.
if (ALERT_RULES.map((rule) => rule.name).join() !== ALERT_NAMES.join())
  throw new Error(`ALERT_RULES must list ${ALERT_NAMES.join(', ')} in this order`);

/** The rule named `name`. */
export function ruleByName(name: AlertName): ExportableAlertRule {
  const rule = BY_NAME.get(name);
  if (!rule) throw new Error(`no alert rule ${name}`);
  return rule;
}

/** Does the rule use a rate window (`rate()` or a quantile over a window)? */
export function usesRateWindow(rule: ExportableAlertRule): boolean {
  return rule.defaults.windowSeconds > 0;
}

/** May a target set the rule's threshold? Not when it is part of the rule's meaning (the absent rule). */
export function hasTunableThreshold(rule: ExportableAlertRule): boolean {
  return rule.thresholdFixed !== true;
}

/** `<runbookBaseUrl>#<alertname lower-case>`, or undefined without a base URL. */
export function runbookUrl(runbookBaseUrl: string | undefined, name: AlertName): string | undefined {
  return runbookBaseUrl === undefined ? undefined : `${runbookBaseUrl}#${name.toLowerCase()}`;
}

// A source must be critical and its targets warnings of other rules, each carrying every `equal` label (an
// identifying label, or one the evaluator and the exported per-target rules add): a programming error otherwise.
const ADDED_LABELS = new Set(['target', 'cluster', 'namespace']);
for (const inhibition of ALERT_INHIBITIONS) {
  const source = ruleByName(inhibition.source);
  const problems: string[] = [];
  if (source.severity !== 'critical') problems.push(`its source ${source.name} is not critical`);
  for (const name of inhibition.targets) {
    const target = ruleByName(name);
    if (target.severity !== 'warning') problems.push(`its target ${name} is not a warning`);
    if (name === source.name) problems.push(`${name} inhibits itself`);
    for (const label of inhibition.equal)
      for (const rule of [source, target])
        if (!ADDED_LABELS.has(label) && !rule.identifyingLabels.includes(label))
          problems.push(`${rule.name} has no label ${label}`);
  }
  if (problems.length > 0) throw new Error(`inhibition of ${inhibition.source}: ${[...new Set(problems)].join('; ')}`);
}
