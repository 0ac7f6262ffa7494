import { ALERT_NAMES, type AlertName } from '../types.js';
import { gpuMemoryCritical } from './gpuMemoryCritical.js';
import { highLatency } from './highLatency.js';
import { highQueueDepth } from './highQueueDepth.js';
import { kvCacheFull } from './kvCacheFull.js';
import { preemptionSpike } from './preemptionSpike.js';
import type { ExportableAlertRule } from './text.js';

/**
 * The five alert rules of the monitoring guide (section 6), in the guide's order: the one source the evaluator,
 * the exported Prometheus/AMP rule files, the promtool tests and the README table are built from.
 * A rule whose `defaults.windowSeconds` is 0 reads a gauge and has no rate window.
 */
export const ALERT_RULES: readonly ExportableAlertRule[] = Object.freeze([
  highQueueDepth,
  highLatency,
  gpuMemoryCritical,
  kvCacheFull,
  preemptionSpike,
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

/** `<runbookBaseUrl>#<alertname lower-case>`, or undefined without a base URL. */
export function runbookUrl(runbookBaseUrl: string | undefined, name: AlertName): string | undefined {
  return runbookBaseUrl === undefined ? undefined : `${runbookBaseUrl}#${name.toLowerCase()}`;
}
