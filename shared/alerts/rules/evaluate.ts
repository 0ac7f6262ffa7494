import {
  VALUE_DOMAIN,
  guardSamples,
  guardSeriesCount,
  type InstantSample,
  type ValueDomain,
} from '../../metrics/index.js';
import type { Target } from '../../config/index.js';
import { AlertQueryFailedError } from '../errors.js';
import { alertFingerprint } from '../fingerprint.js';
import { formatAlertValue } from '../format.js';
import { alertConditionQuery } from '../heldFor.js';
import { ALERT_RULES, runbookUrl } from './registry.js';
import { alertScopeForTarget } from './scope.js';
import type { ExportableAlertRule } from './text.js';
import {
  ALERT_NAMES,
  type AlertInstance,
  type AlertName,
  type AlertRuleSettings,
  type AlertSettings,
  type AlertValueUnit,
  type EvaluateDeps,
  type TargetEvaluation,
} from '../types.js';

/**
 * Firing instances one rule may produce for one target. A rule fires per Pod or per GPU: a target with 200 of
 * either is far beyond one deployment; more means a broken query or answer (half a million instances were seen),
 * which becomes one named failure of the rule instead of a flood of notifications.
 */
export const MAX_INSTANCES_PER_RULE = 200;

/** The domain of a rule's value from its unit: a ratio is a 0-1 fraction, requests, seconds and rates are >= 0. */
const DOMAIN_OF_ALERT_UNIT: Readonly<Record<AlertValueUnit, ValueDomain>> = {
  ratio: VALUE_DOMAIN.fraction,
  requests: VALUE_DOMAIN.nonNegative,
  seconds: VALUE_DOMAIN.nonNegative,
  'per-second': VALUE_DOMAIN.nonNegative,
};

type RuleOutcome =
  | { alertname: AlertName; query: string; firing: AlertInstance[] }
  | { alertname: AlertName; query: string | undefined; error: Error };

/**
 * Evaluates every enabled rule of `target` at `timeMs`: one instant query per rule (run concurrently), each the
 * rule's value held above its threshold for its `for` and kept firing for its keep-firing time (`alertConditionQuery`),
 * so no pending state is needed. A failed query is reported in `failures` and its rule left out of `evaluatedRules`
 * (it must not resolve anything); it never stops the other rules.
 */
export async function evaluateTarget(
  target: Target,
  settings: AlertSettings,
  deps: EvaluateDeps,
  timeMs: number,
): Promise<TargetEvaluation> {
  const enabled = ALERT_RULES.filter((rule) => settings.rules[rule.name].enabled);
  const outcomes = await Promise.all(enabled.map((rule) => evaluateRule(rule, target, settings, deps, timeMs)));
  const evaluation: TargetEvaluation = {
    target,
    timeMs,
    evaluatedRules: [],
    firing: [],
    failures: [],
    queries: [],
  };
  for (const outcome of outcomes) {
    if (outcome.query !== undefined) evaluation.queries.push({ alertname: outcome.alertname, query: outcome.query });
    if ('error' in outcome) {
      evaluation.failures.push({ alertname: outcome.alertname, error: outcome.error });
      continue;
    }
    evaluation.evaluatedRules.push(outcome.alertname);
    evaluation.firing.push(...outcome.firing);
  }
  return evaluation;
}

async function evaluateRule(
  rule: ExportableAlertRule,
  target: Target,
  settings: AlertSettings,
  deps: EvaluateDeps,
  timeMs: number,
): Promise<RuleOutcome> {
  const ruleSettings = settings.rules[rule.name];
  let query: string | undefined;
  try {
    const value = rule.valueQuery(alertScopeForTarget(target), ruleSettings);
    query = alertConditionQuery(
      value,
      ruleSettings.threshold,
      ruleSettings.forSeconds,
      ruleSettings.keepFiringForSeconds,
    );
    const answer = await deps.source.instant(query, { timeMs });
    // The whole rule fails on a bad answer: nothing fires on a value outside its domain, nothing resolves either.
    guardSeriesCount(answer.length, MAX_INSTANCES_PER_RULE, query);
    const samples = guardSamples(answer, DOMAIN_OF_ALERT_UNIT[rule.unit], query);
    const firing = samples
      .filter((sample) => !Number.isNaN(sample.value))
      .map((sample) => toInstance(rule, target, settings, sample))
      .sort((a, b) => a.fingerprint.localeCompare(b.fingerprint));
    return { alertname: rule.name, query, firing };
  } catch (error) {
    return {
      alertname: rule.name,
      query,
      error: new AlertQueryFailedError(rule.name, target.name, query, { cause: error }),
    };
  }
}

function toInstance(
  rule: ExportableAlertRule,
  target: Target,
  settings: AlertSettings,
  sample: InstantSample,
): AlertInstance {
  const ruleSettings = settings.rules[rule.name];
  const labels: Record<string, string> = {};
  for (const name of rule.identifyingLabels) {
    const value = sample.labels[name];
    if (value !== undefined && value !== '') labels[name] = value;
  }
  // A GPU without a Pod has no namespace label: the target's namespace still tells a person where to look.
  labels.namespace = sample.labels.namespace || target.namespace;
  labels.target = target.name;
  labels.cluster = target.cluster;
  const context = { labels: sample.labels, value: sample.value, settings: ruleSettings };
  return {
    alertname: rule.name,
    severity: rule.severity,
    target: target.name,
    labels,
    fingerprint: alertFingerprint(target.name, rule.name, sample.labels, rule.identifyingLabels),
    value: sample.value,
    threshold: ruleSettings.threshold,
    unit: rule.unit,
    forSeconds: ruleSettings.forSeconds,
    summary: rule.summary(context),
    description: rule.description(context) + thresholdOriginText(ruleSettings, rule.unit),
    runbook: rule.runbook,
    dashboardUrl: settings.dashboardUrl,
    runbookUrl: runbookUrl(settings.runbookBaseUrl, rule.name),
  };
}

/** An evaluation in which every enabled rule failed with `error`: nothing resolves, nothing new fires. */
export function failedEvaluation(
  target: Target,
  settings: AlertSettings,
  timeMs: number,
  error: unknown,
): TargetEvaluation {
  const cause = error instanceof Error ? error : new Error(String(error));
  return {
    target,
    timeMs,
    evaluatedRules: [],
    firing: [],
    failures: ALERT_NAMES.filter((name) => settings.rules[name].enabled).map((alertname) => ({
      alertname,
      error: cause,
    })),
    queries: [],
  };
}

/** " The threshold (N) comes from calibration X (at): why." when a calibration derived it; "" otherwise. */
function thresholdOriginText(settings: AlertRuleSettings, unit: AlertValueUnit): string {
  const from = settings.thresholdFrom;
  if (from === undefined) return '';
  const reason = from.reason.replace(/\.$/, '');
  return (
    ` The threshold (${formatAlertValue(settings.threshold, unit)}) comes from calibration ${from.execution} ` +
    `(${from.finishedAt}): ${reason}; ${from.formula}.`
  );
}
