import type { AlertName, AlertSettings } from '../types.js';
import { hasTunableThreshold, ruleByName } from './registry.js';

/**
 * Alert thresholds a calibration derived for one target (issue 17: the queue alert from the replica's capacity, the
 * latency alert from the SLO or the p95 guardrail), as the calibration history holds them.
 */
export interface CalibratedAlertThresholds {
  /** The calibration's execution name and when it finished. */
  execution: string;
  finishedAt: string;
  thresholds: Partial<Record<AlertName, { value: number; reason: string; formula: string }>>;
}

/** What withCalibratedThresholds did with each derived threshold, for the log. */
export interface CalibratedThresholdOutcome {
  alertname: AlertName;
  used: boolean;
  why: string;
}

/**
 * The settings with a calibration's derived thresholds in place of the guide's defaults. A threshold the target's
 * settings give (`thresholdPinned`) wins: a person wrote it down. A rule whose threshold cannot be set, or a value
 * that is no threshold (not finite, negative, a fraction above 1), is left as it was, with why.
 */
export function withCalibratedThresholds(
  settings: AlertSettings,
  calibrated: CalibratedAlertThresholds | undefined,
): { settings: AlertSettings; outcomes: CalibratedThresholdOutcome[] } {
  if (calibrated === undefined) return { settings, outcomes: [] };
  const rules = { ...settings.rules };
  const outcomes: CalibratedThresholdOutcome[] = [];
  for (const [name, derived] of Object.entries(calibrated.thresholds) as Array<
    [AlertName, NonNullable<CalibratedAlertThresholds['thresholds'][AlertName]>]
  >) {
    const rule = ruleByName(name);
    const current = rules[name];
    const refuse = (why: string) => outcomes.push({ alertname: name, used: false, why });
    if (!hasTunableThreshold(rule)) refuse('its threshold cannot be set');
    else if (current.thresholdPinned === true) refuse(`the target's settings pin it at ${current.threshold}`);
    else if (!Number.isFinite(derived.value) || derived.value < 0 || (rule.unit === 'ratio' && derived.value > 1))
      refuse(`${derived.value} is not a threshold for ${rule.unit}`);
    else {
      rules[name] = {
        ...current,
        threshold: derived.value,
        thresholdFrom: {
          execution: calibrated.execution,
          finishedAt: calibrated.finishedAt,
          reason: derived.reason,
          formula: derived.formula,
        },
      };
      outcomes.push({ alertname: name, used: true, why: `calibration ${calibrated.execution}: ${derived.formula}` });
    }
  }
  return { settings: { ...settings, rules }, outcomes };
}
