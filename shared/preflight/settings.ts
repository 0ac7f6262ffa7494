/**
 * Preflight settings: the tunables of the eleven checks, parsed once with zod (strict: an unknown key is refused)
 * and completed with defaults suited to AWS.
 *
 * ```json
 * { "freshnessSeconds": 120, "scaleCycleLookbackSeconds": 604800, "scaleCycleStepSeconds": 60,
 *   "gpuMemoryUtilizationWarnAbove": 0.9, "warmupRequests": 100, "alertingEngine": "lambda",
 *   "dashboardLabel": { "name": "grafana_dashboard", "value": "1" } }
 * ```
 *
 * `ampRuleNamespace` (the AMP engine's rule groups namespace) has no default: the stack sets it for its stage.
 */
import * as z from 'zod';
import { formatPath } from '../config/index.js';
import { PreflightSettingsInvalidError } from './errors.js';
import { ALERTING_ENGINES, type PreflightSettings } from './types.js';

/** The defaults: each documented on `PreflightSettings` (shared/preflight/types.ts). */
export const DEFAULT_PREFLIGHT_SETTINGS: Readonly<PreflightSettings> = Object.freeze({
  freshnessSeconds: 120,
  scaleCycleLookbackSeconds: 7 * 86_400,
  scaleCycleStepSeconds: 60,
  gpuMemoryUtilizationWarnAbove: 0.9,
  warmupRequests: 100,
  alertingEngine: ALERTING_ENGINES.lambda,
  dashboardLabel: Object.freeze({ name: 'grafana_dashboard', value: '1' }),
});

function positiveSeconds(what: string) {
  return z
    .number({ error: `must be a number of seconds (${what})` })
    .positive({ error: `must be > 0; accepted: a number of seconds (${what})` });
}

const settingsSchema = z.strictObject({
  freshnessSeconds: positiveSeconds('a scrape older than this is stale').default(
    DEFAULT_PREFLIGHT_SETTINGS.freshnessSeconds,
  ),
  scaleCycleLookbackSeconds: positiveSeconds('how far back to look for a scale-out and scale-in').default(
    DEFAULT_PREFLIGHT_SETTINGS.scaleCycleLookbackSeconds,
  ),
  scaleCycleStepSeconds: positiveSeconds('the range query step').default(
    DEFAULT_PREFLIGHT_SETTINGS.scaleCycleStepSeconds,
  ),
  gpuMemoryUtilizationWarnAbove: z
    .number({ error: 'must be a number; accepted: a fraction in (0, 1]' })
    .gt(0, { error: 'must be > 0; accepted: a fraction in (0, 1]' })
    .max(1, { error: 'must be <= 1; accepted: a fraction in (0, 1]' })
    .default(DEFAULT_PREFLIGHT_SETTINGS.gpuMemoryUtilizationWarnAbove),
  warmupRequests: z
    .number({ error: 'must be a number; accepted: an integer >= 0' })
    .int({ error: 'must be an integer; accepted: an integer >= 0' })
    .min(0, { error: 'must be >= 0; accepted: an integer >= 0' })
    .default(DEFAULT_PREFLIGHT_SETTINGS.warmupRequests),
  alertingEngine: z
    .enum(Object.values(ALERTING_ENGINES), {
      error: `must be one of ${Object.values(ALERTING_ENGINES).join(', ')} (who evaluates the alert rules)`,
    })
    .default(DEFAULT_PREFLIGHT_SETTINGS.alertingEngine),
  ampRuleNamespace: z
    .string({ error: 'must be the AMP rule groups namespace name' })
    .regex(/^[0-9A-Za-z][-.0-9A-Z_a-z]{0,127}$/, {
      error: 'must be 1-128 letters, digits, "-", "." or "_", starting with a letter or digit (AMP)',
    })
    .optional(),
  dashboardLabel: z
    .strictObject({
      name: z.string({ error: 'must be a label name' }).min(1, { error: 'must not be empty' }),
      value: z.string({ error: 'must be a string' }),
    })
    .default(() => ({ ...DEFAULT_PREFLIGHT_SETTINGS.dashboardLabel })),
});

/** Parses settings (absent fields take the defaults); throws PreflightSettingsInvalidError naming each bad field. */
export function parsePreflightSettings(input: unknown, path = 'preflight settings'): PreflightSettings {
  const result = settingsSchema.safeParse(input ?? {});
  if (result.success) return result.data;
  throw new PreflightSettingsInvalidError(
    path,
    result.error.issues.map((issue) => ({
      path: formatPath('', issue.path) || '(root)',
      message:
        issue.code === 'unrecognized_keys'
          ? `unknown key(s) ${issue.keys.join(', ')}; accepted: ${Object.keys(settingsSchema.shape).join(', ')}`
          : issue.message,
    })),
  );
}
