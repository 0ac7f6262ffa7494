import { stringify as stringifyYaml } from 'yaml';
import { formatDurationSeconds } from '../format.js';
import { heldForQuery } from '../heldFor.js';
import {
  ALERT_RULES,
  alertScopeForTarget,
  type AlertTarget,
  DEFAULT_ALERT_SETTINGS,
  type ExportableAlertRule,
  GENERIC_SCOPE,
  runbookUrl,
} from '../rules/index.js';
import type { AlertScope, AlertSettings } from '../types.js';

/**
 * The seven rules as Prometheus alerting rules, for rule files that run on Prometheus or AMP. Those keep pending
 * state, so the exported rules use the native `for:` instead of `heldForQuery`; the condition is the same
 * `(value) > threshold` the evaluator checks, from the same registry, and `< +Inf`: a value the evaluator's answer
 * guard refuses never fires here either (and never reaches the alert manager's JSON message as a bare `+Inf`). Inhibition is not in the rules: it is
 * Alertmanager's (`inhibit_rules` in `ampAlertManagerDefinition.ts`), so a warning keeps firing in Prometheus while
 * a critical alert of its Pod holds back its notifications (docs/alerts.md, "Inhibition").
 */

/** One alerting rule of a Prometheus rules file. */
export interface PrometheusAlertingRule {
  alert: string;
  expr: string;
  for?: string;
  /** Prometheus 2.42+ and AMP: a firing alert stays firing this long after its expression last returned it. */
  keep_firing_for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** One rule group of a Prometheus rules file. */
export interface PrometheusRuleGroup {
  name: string;
  rules: PrometheusAlertingRule[];
}

/** What to export: the generic rules (every series, the guide's defaults) or one group per target. */
export interface AlertExportOptions {
  /** Targets with their settings (`parseAlertTargets`); omitted or empty: the generic rules. */
  targets?: readonly AlertTarget[];
}

/** The generic group's name, and the prefix of a target's group (`vllm-eks-pilot-alerts-<target>`). */
export const RULE_GROUP_NAME = 'vllm-eks-pilot-alerts';

/** The Go-template text `{{` written literally, so a URL holding it is not read as a template. */
function literal(text: string): string {
  return text.replace(/\{\{/g, '{{ "{{" }}');
}

/** One rule as a Prometheus alerting rule for `scope` and `settings`; `labels` are added to the alert's labels. */
export function alertingRule(
  rule: ExportableAlertRule,
  scope: AlertScope,
  settings: AlertSettings,
  labels: Record<string, string> = {},
): PrometheusAlertingRule {
  const ruleSettings = settings.rules[rule.name];
  const templates = rule.annotationTemplates(ruleSettings);
  const annotations: Record<string, string> = {
    summary: templates.summary,
    description: templates.description,
    runbook: rule.runbook,
  };
  const runbook = runbookUrl(settings.runbookBaseUrl, rule.name);
  if (runbook !== undefined) annotations.runbook_url = literal(runbook);
  if (settings.dashboardUrl !== undefined) annotations.dashboard_url = literal(settings.dashboardUrl);
  // value, threshold and unit let the AMP alert manager's JSON message carry what the product's own message does.
  annotations.value = '{{ $value }}';
  annotations.threshold = String(ruleSettings.threshold);
  annotations.unit = rule.unit;
  return {
    alert: rule.name,
    // `< +Inf`: never fire on +Inf, as the evaluator's answer guard refuses it (NaN and -Inf are never above).
    expr: `${heldForQuery(rule.valueQuery(scope, ruleSettings), ruleSettings.threshold, 0, 1)} < +Inf`,
    ...(ruleSettings.forSeconds > 0 ? { for: formatDurationSeconds(ruleSettings.forSeconds) } : {}),
    ...(ruleSettings.keepFiringForSeconds > 0
      ? { keep_firing_for: formatDurationSeconds(ruleSettings.keepFiringForSeconds) }
      : {}),
    labels: { severity: rule.severity, ...labels },
    annotations,
  };
}

/**
 * The rule groups: one generic group (no matchers, the guide's defaults) without targets, else one group per
 * target (its matchers, its settings, its enabled rules; labels `target` and `cluster` on every alert).
 */
export function alertRuleGroups(options: AlertExportOptions = {}): PrometheusRuleGroup[] {
  const targets = options.targets ?? [];
  if (targets.length === 0)
    return [
      {
        name: RULE_GROUP_NAME,
        rules: ALERT_RULES.map((rule) => alertingRule(rule, GENERIC_SCOPE, DEFAULT_ALERT_SETTINGS)),
      },
    ];
  return targets
    .map(({ target, settings }) => ({
      name: `${RULE_GROUP_NAME}-${target.name}`,
      rules: ALERT_RULES.filter((rule) => settings.rules[rule.name].enabled).map((rule) =>
        alertingRule(rule, alertScopeForTarget(target), settings, { target: target.name, cluster: target.cluster }),
      ),
    }))
    .filter((group) => group.rules.length > 0);
}

/** YAML as the exported files use it: no line folding (a folded PromQL line is hard to read and diff). */
export function toYaml(value: unknown): string {
  return stringifyYaml(value, { lineWidth: 0, aliasDuplicateObjects: false, singleQuote: true });
}
