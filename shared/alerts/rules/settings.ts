import * as z from 'zod';
import { ConfigInvalidError, type ConfigIssue, parseTargets, type Target, toConfigIssues } from '../../config/index.js';
import { ALERT_RULES, hasTunableThreshold, ruleByName, usesRateWindow } from './registry.js';
import { ALERT_NAMES, type AlertName, type AlertRule, type AlertRuleSettings, type AlertSettings } from '../types.js';

/**
 * A target's alert settings as a user writes them (YAML or JSON), and the defaults (the monitoring guide's):
 *
 * ```yaml
 * repeatInterval: 4h            # notify a still-firing alert again after this long (Alertmanager's default)
 * dashboardUrl: https://grafana.example.com/d/vllm
 * runbookBaseUrl: https://wiki.example.com/vllm-runbooks   # each alert links to <base>#<alertname lower-case>
 * rules:
 *   VLLMHighLatency: { threshold: 2.5, for: 2m, window: 5m, keepFiringFor: 2m, enabled: true }
 *   VLLMPreemptionSpike: { enabled: false }
 * ```
 * Durations are PromQL durations ("30s", "2m", "1h30m"). Unknown keys and unknown alert names are refused.
 */

/** Alertmanager's default `repeat_interval`. */
export const DEFAULT_REPEAT_INTERVAL_SECONDS = 4 * 3600;

/**
 * How long a firing alert keeps firing after its condition was last met, unless a target sets `keepFiringFor`.
 *
 * Why 90 s: a failed scrape makes Prometheus mark the Pod's series stale, so every rule on them returns nothing until
 * the next successful scrape, 30 s later with the product's ServiceMonitor (`VLLM_SCRAPE`). Without a keep-firing time,
 * one failed scrape resolves a critical alert and the next scrape opens it again: two false pages. The evaluator, which
 * holds `for` in PromQL without state, also needs the `for` refilled after the gap before its condition holds again:
 * 30 s of gap plus the shortest `for` (30 s, VLLMKVCacheFull) is 60 s, and 30 s more is the margin. It delays every
 * resolved notification by as much.
 */
export const DEFAULT_KEEP_FIRING_FOR_SECONDS = 90;

/** A rule's keep-firing time when its target sets none: its own default (with its reason), else the product's. */
export function defaultKeepFiringFor(rule: Pick<AlertRule, 'defaults'>): number {
  return rule.defaults.keepFiringForSeconds ?? DEFAULT_KEEP_FIRING_FOR_SECONDS;
}

/** PromQL durations as Prometheus parses them (`model.ParseDuration`): units in this order, each at most once. */
const DURATION = /^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/;
const UNIT_SECONDS = [365 * 86_400, 7 * 86_400, 86_400, 3_600, 60, 1, 0.001] as const;
const DURATION_ACCEPTED = 'a PromQL duration in whole seconds such as "30s", "2m", "1h30m" or "4h"';

/** Seconds of a PromQL duration (`"2m"` → 120), or undefined when `text` is not one or is not whole seconds. */
export function parseDurationSeconds(text: string): number | undefined {
  const match = DURATION.exec(text);
  if (!match || text === '') return undefined;
  let ms = 0;
  UNIT_SECONDS.forEach((seconds, index) => {
    const count = match[index + 1];
    if (count !== undefined) ms += Number(count) * seconds * 1000;
  });
  return Number.isInteger(ms / 1000) ? ms / 1000 : undefined;
}

function duration(min: 0 | 1) {
  return z.string({ error: `must be a string; accepted: ${DURATION_ACCEPTED}` }).transform((text, ctx) => {
    const seconds = parseDurationSeconds(text);
    if (seconds === undefined || seconds < min) {
      ctx.addIssue({
        code: 'custom',
        message: `${JSON.stringify(text)} is not valid; accepted: ${min === 0 ? `"0s" or ` : ''}${DURATION_ACCEPTED}`,
      });
      return z.NEVER;
    }
    return seconds;
  });
}

const httpUrl = z
  .string({ error: 'must be a string (an http or https URL)' })
  .refine((text) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol), {
    error: (issue) => `${JSON.stringify(issue.input)} is not valid; accepted: an http or https URL`,
  });

/** Names the unknown keys and what is accepted, instead of zod's bare "Unrecognized key". */
function strictKeys(accepted: readonly string[]) {
  return (issue: z.core.$ZodRawIssue): string | undefined => {
    if (issue.code === 'unrecognized_keys') {
      const keys = (issue as { keys?: string[] }).keys ?? [];
      return `unknown key${keys.length === 1 ? '' : 's'} ${keys.map((k) => JSON.stringify(k)).join(', ')}; accepted: ${accepted.join(', ')}`;
    }
    if (issue.code === 'invalid_type') return `must be an object with the keys ${accepted.join(', ')}`;
    return undefined;
  };
}

const RULE_KEYS = ['enabled', 'threshold', 'for', 'window', 'keepFiringFor'] as const;

const ruleInputSchema = z.strictObject(
  {
    enabled: z.boolean({ error: 'must be true or false' }).optional(),
    threshold: z
      .number({ error: 'must be a number' })
      .refine((n) => Number.isFinite(n) && n >= 0, { error: 'must be a finite number >= 0' })
      .optional(),
    for: duration(0).optional(),
    window: duration(1).optional(),
    keepFiringFor: duration(0).optional(),
  },
  { error: strictKeys(RULE_KEYS) },
);

const SETTINGS_KEYS = ['repeatInterval', 'dashboardUrl', 'runbookBaseUrl', 'rules'] as const;

/** The alert settings of one target as written by a user; `parseAlertSettings` applies the defaults. */
export const alertSettingsInputSchema = z.strictObject(
  {
    repeatInterval: duration(1).optional(),
    dashboardUrl: httpUrl.optional(),
    runbookBaseUrl: httpUrl
      .refine((text) => !text.includes('#'), {
        error: 'must not contain "#": the alert name is appended as the fragment (<base>#<alertname>)',
      })
      .optional(),
    rules: z
      .strictObject(
        Object.fromEntries(ALERT_NAMES.map((name) => [name, ruleInputSchema.optional()])) as Record<
          AlertName,
          z.ZodOptional<typeof ruleInputSchema>
        >,
        { error: strictKeys(ALERT_NAMES) },
      )
      .optional(),
  },
  { error: strictKeys(SETTINGS_KEYS) },
);

export type AlertSettingsInput = z.input<typeof alertSettingsInputSchema>;

function defaultRules(): Record<AlertName, AlertRuleSettings> {
  return Object.fromEntries(
    ALERT_RULES.map((rule) => [
      rule.name,
      { enabled: true, ...rule.defaults, keepFiringForSeconds: defaultKeepFiringFor(rule) },
    ]),
  ) as Record<AlertName, AlertRuleSettings>;
}

/**
 * The guide's settings: every rule enabled with its threshold, `for` and window; the product's keep-firing time;
 * repeat every 4 h; no links.
 */
export const DEFAULT_ALERT_SETTINGS: AlertSettings = Object.freeze({
  rules: Object.freeze(
    Object.fromEntries(Object.entries(defaultRules()).map(([name, rule]) => [name, Object.freeze(rule)])),
  ) as Record<AlertName, AlertRuleSettings>,
  repeatIntervalSeconds: DEFAULT_REPEAT_INTERVAL_SECONDS,
  dashboardUrl: undefined,
  runbookBaseUrl: undefined,
});

/**
 * Parses a target's alert settings (an object, or `undefined` for the defaults) and fills in the guide's defaults.
 * Throws `ConfigInvalidError` whose issues name the path (`alerts.rules.VLLMHighLatency.for`) and what is accepted.
 */
export function parseAlertSettings(input: unknown, path = 'alerts'): AlertSettings {
  const parsed = alertSettingsInputSchema.safeParse(input ?? {});
  if (!parsed.success) throw new ConfigInvalidError(path, toConfigIssues(path, parsed.error.issues));
  const value = parsed.data;
  const issues: ConfigIssue[] = [];
  const rules = defaultRules();
  for (const name of ALERT_NAMES) {
    const given = value.rules?.[name];
    if (given === undefined) continue;
    const rule = ruleByName(name);
    const at = `${path}.rules.${name}`;
    if (given.threshold !== undefined && !hasTunableThreshold(rule))
      issues.push({
        path: `${at}.threshold`,
        message: `${name} has no threshold to set (it fires when the series are absent); accepted: enabled and for`,
      });
    else if (given.threshold !== undefined && rule.unit === 'ratio' && given.threshold > 1)
      issues.push({
        path: `${at}.threshold`,
        message: `${given.threshold} is not valid; accepted: a 0-1 fraction (0.95 means 95 %)`,
      });
    if (given.window !== undefined && !usesRateWindow(rule))
      issues.push({
        path: `${at}.window`,
        message: `${name} reads a gauge and has no rate window; accepted only for ${ALERT_RULES.filter(usesRateWindow)
          .map((r) => r.name)
          .join(', ')}`,
      });
    rules[name] = {
      enabled: given.enabled ?? true,
      threshold: given.threshold ?? rule.defaults.threshold,
      forSeconds: given.for ?? rule.defaults.forSeconds,
      windowSeconds: given.window ?? rule.defaults.windowSeconds,
      keepFiringForSeconds: given.keepFiringFor ?? defaultKeepFiringFor(rule),
      // A threshold someone wrote down wins over one a calibration derives (withCalibratedThresholds).
      ...(given.threshold === undefined ? {} : { thresholdPinned: true }),
    };
  }
  if (issues.length > 0) throw new ConfigInvalidError(path, issues);
  return {
    rules,
    repeatIntervalSeconds: value.repeatInterval ?? DEFAULT_REPEAT_INTERVAL_SECONDS,
    dashboardUrl: value.dashboardUrl,
    runbookBaseUrl: value.runbookBaseUrl,
  };
}

/** One target with its alert settings (defaults filled in). */
export interface AlertTarget {
  target: Target;
  settings: AlertSettings;
}

/**
 * Parses a targets list: the list `shared/config/targets.ts` accepts, where each target may also carry its
 * `alerts` settings. Input: JSON text (the evaluator's TARGETS) or the parsed value (the CLI reads YAML files itself:
 * a Lambda needs no YAML parser).
 *
 * ```yaml
 * - name: prod-ministral
 *   cluster: prod
 *   namespace: llm
 *   deployment: ministral
 *   model: mistralai/Ministral-8B-Instruct-2410
 *   alerts:
 *     rules: { VLLMHighLatency: { threshold: 2.5 } }
 * ```
 * Throws `ConfigInvalidError` naming every bad field (`targets[1].alerts.rules.VLLMKVCacheFull.threshold`).
 */
export function parseAlertTargets(input: unknown): AlertTarget[] {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch (error) {
      const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
      throw new ConfigInvalidError(
        'targets',
        [{ path: 'targets', message: `is not valid JSON (${reason}); accepted: a JSON array of targets` }],
        { cause: error },
      );
    }
  }
  if (!Array.isArray(value)) {
    // parseTargets names the problem ("must be a JSON array of targets").
    parseTargets(value);
    throw new ConfigInvalidError('targets', [{ path: 'targets', message: 'must be a list of targets' }]);
  }
  const entries = value as unknown[];
  const alertInputs = entries.map((entry) => (isObject(entry) ? entry.alerts : undefined));
  const targetInputs = entries.map((entry) => {
    if (!isObject(entry)) return entry;
    const { alerts: _alerts, ...target } = entry;
    return target;
  });
  const issues: ConfigIssue[] = [];
  let targets: Target[] = [];
  try {
    targets = parseTargets(targetInputs);
  } catch (error) {
    if (!(error instanceof ConfigInvalidError)) throw error;
    issues.push(...error.issues);
  }
  const settings = alertInputs.map((alerts, index) => {
    try {
      return parseAlertSettings(alerts, `targets[${index}].alerts`);
    } catch (error) {
      if (!(error instanceof ConfigInvalidError)) throw error;
      issues.push(...error.issues);
      return DEFAULT_ALERT_SETTINGS;
    }
  });
  if (issues.length > 0) throw new ConfigInvalidError('targets', issues);
  return targets.map((target, index) => ({ target, settings: settings[index] ?? DEFAULT_ALERT_SETTINGS }));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
