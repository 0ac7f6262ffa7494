import * as z from 'zod';
import { ConfigInvalidError, toConfigIssues } from '../config/index.js';

/**
 * A target's drift settings (the `drift` key of a target in the drift-detector's TARGETS):
 *
 * ```yaml
 * drift:
 *   mode: auto                 # off | notify (default) | auto: re-calibrate inside the maintenance window
 *   windowSeconds: 600         # the live window read from AMP
 *   maintenanceWindow: { days: [sat, sun], start: "02:00", end: "05:00" }   # UTC; required for auto
 *   cooldownHours: 24          # no second automatic re-calibration of the target sooner
 *   calibration: { plan: { strategy: adaptive } }   # the re-calibration's input beside the target (ValidateInput judges it)
 * ```
 */
export const DRIFT_MODES = ['off', 'notify', 'auto'] as const;
export type DriftMode = (typeof DRIFT_MODES)[number];
export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;

const clock = z
  .string({ error: 'must be a time "HH:MM" (UTC)' })
  .regex(/^([01]\d|2[0-3]):[0-5]\d$|^24:00$/, { error: 'must be a time "HH:MM" from "00:00" to "24:00" (UTC)' });

export const driftSettingsSchema = z
  .strictObject({
    mode: z
      .enum(DRIFT_MODES, {
        error: (i) => `${JSON.stringify(i.input)} is not a mode; accepted: ${DRIFT_MODES.join(', ')}`,
      })
      .default('notify'),
    windowSeconds: z
      .number({ error: 'must be a number of seconds from 60 to 3600' })
      .int({ error: 'must be a whole number of seconds from 60 to 3600' })
      .min(60, { error: 'must be at least 60 s (a queue trend needs a minute of scrapes)' })
      .max(3600, { error: 'must be at most 3600 s (an hour: older evidence is not "now")' })
      .default(600),
    maintenanceWindow: z
      .strictObject({
        days: z
          .array(z.enum(WEEKDAYS, { error: `must be a weekday; accepted: ${WEEKDAYS.join(', ')}` }))
          .min(1, { error: 'must list at least one day' })
          .optional(),
        start: clock,
        end: clock,
      })
      .refine((w) => w.start < w.end, { error: 'start must be before end (a window within one UTC day)' })
      .optional(),
    cooldownHours: z
      .number({ error: 'must be a number of hours' })
      .min(1, { error: 'must be at least 1 hour' })
      .default(24),
    calibration: z
      .record(z.string(), z.unknown(), { error: 'must be an object (calibration input fields)' })
      .optional(),
  })
  .superRefine((settings, ctx) => {
    if (settings.mode === 'auto' && settings.maintenanceWindow === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['maintenanceWindow'],
        message: 'is required with mode auto: a re-calibration loads a GPU for minutes, say when it may',
      });
    if (settings.calibration !== undefined && 'target' in settings.calibration)
      ctx.addIssue({
        code: 'custom',
        path: ['calibration', 'target'],
        message: 'is the drifted target itself; accepted: the other calibration input fields',
      });
  });

export type DriftSettings = z.output<typeof driftSettingsSchema>;

/** Parses a target's drift settings (undefined: notify, 600 s); throws ConfigInvalidError naming the field. */
export function parseDriftSettings(input: unknown, path = 'drift'): DriftSettings {
  const parsed = driftSettingsSchema.safeParse(input ?? {});
  if (!parsed.success) throw new ConfigInvalidError(path, toConfigIssues(path, parsed.error.issues));
  return parsed.data;
}

/** Is `timeMs` inside the maintenance window (UTC)? */
export function inMaintenanceWindow(window: NonNullable<DriftSettings['maintenanceWindow']>, timeMs: number): boolean {
  const date = new Date(timeMs);
  const day = WEEKDAYS[date.getUTCDay()] as (typeof WEEKDAYS)[number];
  if (window.days !== undefined && !window.days.includes(day)) return false;
  const hhmm = `${String(date.getUTCHours()).padStart(2, '0')}:${String(date.getUTCMinutes()).padStart(2, '0')}`;
  return hhmm >= window.start && hhmm < window.end;
}

/** "sat, sun 02:00-05:00 UTC" */
export function describeWindow(window: NonNullable<DriftSettings['maintenanceWindow']>): string {
  return `${window.days === undefined ? 'every day' : window.days.join(', ')} ${window.start}-${window.end} UTC`;
}
