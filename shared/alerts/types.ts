import type { LabelMatcher, MetricsSource } from '../metrics/index.js';
import type { Target } from '../config/index.js';

/**
 * The alerting contracts: the seven rules (the monitoring guide's five of section 6, its 80 % KV-cache early warning,
 * and an alert on the target's vLLM series being absent), the instances they produce, and the settings a target may
 * override. The rules exist once (`rules/registry.ts`); the evaluator, the exported Prometheus/AMP rule files, the
 * README table and the promtool tests all come from them.
 */

/**
 * The alert names: the guide's five in the guide's order (section 6), then its early warning (KV cache above 80 %,
 * "essential" in its KV-cache settings notes), then the watch on the alerting itself (the target's series absent).
 */
export const ALERT_NAMES = [
  'VLLMHighQueueDepth',
  'VLLMHighLatency',
  'VLLMGPUMemoryCritical',
  'VLLMKVCacheFull',
  'VLLMPreemptionSpike',
  'VLLMKVCacheHigh',
  'VLLMMetricsAbsent',
] as const;
export type AlertName = (typeof ALERT_NAMES)[number];

export const SEVERITIES = ['critical', 'warning'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const ALERT_STATUSES = ['firing', 'resolved'] as const;
export type AlertStatus = (typeof ALERT_STATUSES)[number];

/** How a rule's value reads to a person: the unit decides formatting (`0.97` ratio → "97 %"). */
export type AlertValueUnit = 'requests' | 'seconds' | 'ratio' | 'per-second';

/** One rule's settings for one target, after defaults are applied. */
export interface AlertRuleSettings {
  enabled: boolean;
  /** The value above which the condition holds (a 0-1 fraction for ratios; seconds for latency). */
  threshold: number;
  /** How long the condition must hold before the alert fires (the rule's `for`); 0 = at once. */
  forSeconds: number;
  /** The rate window of a rule that uses `rate()` (latency, preemptions); ignored by gauge rules. */
  windowSeconds: number;
  /**
   * How long a firing alert stays firing after its condition was last met (Prometheus's `keep_firing_for`), so that a
   * failed scrape, which leaves the series absent until the next one, neither resolves it nor opens it again.
   */
  keepFiringForSeconds: number;
  /** True when the target's settings give the threshold: a calibration's derived threshold never replaces it. */
  thresholdPinned?: boolean;
  /** Where the threshold comes from when a calibration derived it (shown in the notification); absent otherwise. */
  thresholdFrom?: ThresholdOrigin;
}

/** The calibration a derived alert threshold comes from, and why it has this value. */
export interface ThresholdOrigin {
  /** The calibration's execution name. */
  execution: string;
  /** When it finished (ISO 8601). */
  finishedAt: string;
  reason: string;
  formula: string;
}

/** The alert settings of one target (defaults: the guide's; see `settings.ts`). */
export interface AlertSettings {
  rules: Record<AlertName, AlertRuleSettings>;
  /** A firing alert is notified again after this long (Alertmanager's repeat_interval; default 4 h). */
  repeatIntervalSeconds: number;
  /** Grafana (or any) dashboard URL for the target; alerts link to it. */
  dashboardUrl: string | undefined;
  /** Where the team's runbooks live; each alert links to `<runbookBaseUrl>#<alertname lower-case>`. */
  runbookBaseUrl: string | undefined;
}

/**
 * Where a rule looks: label matchers for the vLLM series and for the DCGM series. A target gives its own
 * (`vllmMatchers(target)`, `dcgmMatchers(target)`); an exported generic rule file gives empty lists (every series).
 */
export interface AlertScope {
  vllm: LabelMatcher[];
  dcgm: LabelMatcher[];
  /** Labels that stay on every result besides the rule's own (e.g. the target's cluster label). */
  extraByLabels: string[];
}

/** Context for the texts of one instance. */
export interface AlertTextContext {
  labels: Record<string, string>;
  value: number;
  settings: AlertRuleSettings;
}

/** One alert rule. One file per rule under `rules/`, one registry. */
export interface AlertRule {
  name: AlertName;
  severity: Severity;
  /** The guide's condition in words, for the README table ("num_requests_waiting > 50"). */
  condition: string;
  /** Why it matters (the guide's "Meaning" column). */
  meaning: string;
  unit: AlertValueUnit;
  /**
   * The guide's threshold, `for` and rate window; `keepFiringForSeconds` is the product's
   * (DEFAULT_KEEP_FIRING_FOR_SECONDS) unless the rule gives its own, with its reason.
   */
  defaults: Omit<AlertRuleSettings, 'enabled' | 'keepFiringForSeconds'> & { keepFiringForSeconds?: number };
  /**
   * True when the threshold is part of the rule's meaning, not a level to tune (the absent rule: `absent()` answers 1,
   * the threshold is 0): a target may not set one.
   */
  thresholdFixed?: boolean;
  /** The labels that identify one instance (e.g. `namespace`, `pod`, `model_name`; `UUID` for a GPU). */
  identifyingLabels: readonly string[];
  /**
   * The PromQL of the rule's value per instance, without the threshold: one sample per instance, labelled with
   * `identifyingLabels` (+ `scope.extraByLabels`). Values are escaped by the builders in `shared/metrics/promql.ts`.
   */
  valueQuery(scope: AlertScope, settings: AlertRuleSettings): string;
  /** One line for a pager: what and where ("Queue depth 73 on pod x (model y)"). */
  summary(context: AlertTextContext): string;
  /** The value and the threshold, and the likely cause. */
  description(context: AlertTextContext): string;
  /** What to do, as steps a person on call can follow. */
  runbook: string;
}

/** One firing instance of a rule for a target, as the evaluator found it. */
export interface AlertInstance {
  alertname: AlertName;
  severity: Severity;
  /** The target's name (Target.name). */
  target: string;
  /** The identifying labels plus `target`, `cluster`, `namespace`. */
  labels: Record<string, string>;
  /** A stable id of (target, alertname, identifying labels): the state store's key. */
  fingerprint: string;
  value: number;
  threshold: number;
  unit: AlertValueUnit;
  forSeconds: number;
  summary: string;
  description: string;
  runbook: string;
  dashboardUrl: string | undefined;
  runbookUrl: string | undefined;
}

/** The outcome of evaluating every enabled rule of one target. */
export interface TargetEvaluation {
  target: Target;
  /** The evaluation time (epoch ms) every query used. */
  timeMs: number;
  /** Rules that evaluated; only these may resolve their alerts (a failed query must never resolve anything). */
  evaluatedRules: AlertName[];
  firing: AlertInstance[];
  failures: Array<{ alertname: AlertName; error: Error }>;
  /** The PromQL sent, per rule (for logs and the benchmark). */
  queries: Array<{ alertname: AlertName; query: string }>;
}

/** What the evaluator needs. */
export interface EvaluateDeps {
  source: MetricsSource;
}
