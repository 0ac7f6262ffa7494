import { alertValueTemplate, formatAlertValue, formatDurationSeconds } from '../format.js';
import type { AlertRule, AlertRuleSettings, AlertTextContext, AlertValueUnit } from '../types.js';

/**
 * The pieces a rule's texts are written with. The same text function yields the evaluator's text (labels and value
 * filled in) and the exported rule's annotation template (Prometheus template syntax), so both read the same.
 */
export interface TextParts {
  /** The instance's value with the rule's unit: `73`, `6.5s`, `97.12%`, `6/s`. */
  value: string;
  /** The threshold with the rule's unit. */
  threshold: string;
  /** The `for` duration (`2m`); `0s` for a rule without one. */
  forDuration: string;
  /** The rate window (`5m`); empty for a gauge rule. */
  window: string;
  /** A label's value; empty when the series lacks it (as Prometheus prints a missing label). */
  label(name: string): string;
  /** `text(value)` when the series has the label (non-empty), else nothing. */
  optional(name: string, text: (value: string) => string): string;
}

/** A rule as written in its file: the contract's fields, with texts written against `TextParts`. */
export interface AlertRuleSpec extends Omit<AlertRule, 'summary' | 'description'> {
  summaryText: (parts: TextParts) => string;
  descriptionText: (parts: TextParts) => string;
}

/** An `AlertRule` that can also render its texts as Prometheus annotation templates (for the exported files). */
export interface ExportableAlertRule extends AlertRule {
  /** The summary and description as Prometheus templates (`{{ $labels.pod }}`, `{{ $value | humanize }}`). */
  annotationTemplates(settings: AlertRuleSettings): { summary: string; description: string };
}

function settingsParts(unit: AlertValueUnit, settings: AlertRuleSettings) {
  return {
    threshold: formatAlertValue(settings.threshold, unit),
    forDuration: formatDurationSeconds(settings.forSeconds),
    window: settings.windowSeconds > 0 ? formatDurationSeconds(settings.windowSeconds) : '',
  };
}

/** The parts for one instance, as the evaluator sees it. */
export function instanceParts(unit: AlertValueUnit, context: AlertTextContext): TextParts {
  const { labels } = context;
  return {
    ...settingsParts(unit, context.settings),
    value: formatAlertValue(context.value, unit),
    label: (name) => labels[name] ?? '',
    optional: (name, text) => {
      const value = labels[name];
      return value === undefined || value === '' ? '' : text(value);
    },
  };
}

/** The parts as Prometheus templates: `{{ $labels.<name> }}`, `{{ with $labels.<name> }}...{{ end }}`. */
export function templateParts(unit: AlertValueUnit, settings: AlertRuleSettings): TextParts {
  return {
    ...settingsParts(unit, settings),
    value: alertValueTemplate(unit),
    label: (name) => `{{ $labels.${name} }}`,
    optional: (name, text) => `{{ with $labels.${name} }}${text('{{ . }}')}{{ end }}`,
  };
}

/** Builds a rule from its spec: `summary`/`description` for the evaluator, `annotationTemplates` for the export. */
export function defineAlertRule(spec: AlertRuleSpec): ExportableAlertRule {
  const { summaryText, descriptionText, ...rule } = spec;
  return Object.freeze({
    ...rule,
    summary: (context: AlertTextContext) => summaryText(instanceParts(spec.unit, context)),
    description: (context: AlertTextContext) => descriptionText(instanceParts(spec.unit, context)),
    annotationTemplates: (settings: AlertRuleSettings) => {
      const parts = templateParts(spec.unit, settings);
      return { summary: summaryText(parts), description: descriptionText(parts) };
    },
  });
}

/** " for at least 2m" or, for a rule that fires at once, nothing. */
export function heldText(parts: TextParts): string {
  return parts.forDuration === '0s' ? '' : ` for at least ${parts.forDuration}`;
}
