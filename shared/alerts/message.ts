import * as z from 'zod';
import { ALERT_NAMES, ALERT_STATUSES, SEVERITIES } from './types.js';

/**
 * The alert notification on SNS: one JSON message per alert instance and status change, versioned so that a
 * subscriber can refuse what it does not understand. The product publishes to ONE topic; `severity`, `status`,
 * `alertname`, `target`, `cluster` and `namespace` are also MessageAttributes (String), so a subscription's filter
 * policy picks what it wants (`{"severity": ["critical"]}` for a pager). See docs/adr/0010.
 */
export const ALERT_MESSAGE_VERSION = 1;

/** The reason a notification was sent (the pipeline's decision). */
export const NOTIFY_REASONS = ['first', 'repeat', 'resolved', 'retry'] as const;
export type NotifyReason = (typeof NOTIFY_REASONS)[number];

export const alertMessageSchema = z.strictObject({
  version: z.literal(ALERT_MESSAGE_VERSION),
  alertname: z.enum(ALERT_NAMES),
  severity: z.enum(SEVERITIES),
  status: z.enum(ALERT_STATUSES),
  /** Why this message was sent now: a first notification, a repeat, a resolution, or a retry after a failed send. */
  reason: z.enum(NOTIFY_REASONS),
  target: z.string(),
  /** The identifying labels plus target, cluster and namespace (not alertname or severity: they are fields above). */
  labels: z.record(z.string(), z.string()),
  /**
   * The alert's id in the engine that sent it: the Lambda engine's alert-state key (32 hex digits), or Alertmanager's
   * label-set fingerprint (16 hex digits, `testing/alertmanagerFingerprint.ts`) from AMP. Stable for one alert.
   */
  fingerprint: z.string(),
  /**
   * The last value seen (for a resolved alert: the last value while it fired), always finite: neither engine fires on
   * NaN or ±Inf; AMP's template writes `null` for a value that is not a number, which this schema refuses.
   */
  value: z.number(),
  threshold: z.number(),
  unit: z.enum(['requests', 'seconds', 'ratio', 'per-second']),
  /** ISO 8601: when the condition had held for `for` (the first evaluation that found it firing). */
  startsAt: z.string(),
  /** ISO 8601 for a resolved alert; null while firing. */
  endsAt: z.string().nullable(),
  summary: z.string(),
  description: z.string(),
  runbook: z.string(),
  runbookUrl: z.string().nullable(),
  dashboardUrl: z.string().nullable(),
});

export type AlertMessage = z.infer<typeof alertMessageSchema>;

/**
 * The MessageAttributes every alert message carries (String values), for subscription filter policies. Each is always
 * there, so a filter policy matches the same messages from either engine: an alert without the label (a generic rule
 * has no `target`) carries ALERT_ATTRIBUTE_MISSING, since SNS refuses an empty value and AMP's Alertmanager cannot
 * leave an attribute out.
 */
export const ALERT_MESSAGE_ATTRIBUTES = ['severity', 'status', 'alertname', 'target', 'cluster', 'namespace'] as const;
export type AlertMessageAttribute = (typeof ALERT_MESSAGE_ATTRIBUTES)[number];

/** The value of a message attribute whose label the alert lacks (`{"cluster": ["none"]}` filters those). */
export const ALERT_ATTRIBUTE_MISSING = 'none';

/**
 * The longest subject: SNS takes 1 to 100 printable ASCII characters (API reference: Publish, `Subject`). Both engines
 * cut a longer one to this length, ending in `...`.
 */
export const ALERT_SUBJECT_MAX_LENGTH = 100;
