import { ALERT_NAMES, ALERT_STATUSES, SEVERITIES, type AlertName, type AlertStatus, type Severity } from './types.js';

/**
 * The grouping stage (Alertmanager's `group_by: [target, severity]`): notifications of one target and severity go
 * out together, in one PublishBatch where they fit. The order is stable, so logs and tests read the same every run.
 */

/** What grouping needs to know of a notification (an AlertMessage has all of it). */
export interface Groupable {
  target: string;
  severity: Severity;
  alertname: AlertName;
  fingerprint: string;
  status: AlertStatus;
}

/** The notifications of one target and severity. */
export interface AlertGroup<T extends Groupable = Groupable> {
  /** `<target>/<severity>`: a name for logs. */
  key: string;
  target: string;
  severity: Severity;
  items: T[];
}

/**
 * Groups notifications per target and severity. Groups are ordered by target name, then severity (critical first);
 * items by the guide's alert order, then fingerprint, then status (resolved before firing).
 */
export function groupNotifications<T extends Groupable>(items: readonly T[]): AlertGroup<T>[] {
  const groups = new Map<string, AlertGroup<T>>();
  for (const item of items) {
    const key = `${item.target}/${item.severity}`;
    let group = groups.get(key);
    if (group === undefined) {
      group = { key, target: item.target, severity: item.severity, items: [] };
      groups.set(key, group);
    }
    group.items.push(item);
  }
  const result = [...groups.values()].sort(
    (a, b) => compare(a.target, b.target) || SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity),
  );
  for (const group of result) group.items.sort(byItemOrder);
  return result;
}

function byItemOrder(a: Groupable, b: Groupable): number {
  return (
    ALERT_NAMES.indexOf(a.alertname) - ALERT_NAMES.indexOf(b.alertname) ||
    compare(a.fingerprint, b.fingerprint) ||
    // ALERT_STATUSES is firing, resolved: resolved first tells subscribers an incident ended before a new one starts.
    ALERT_STATUSES.indexOf(b.status) - ALERT_STATUSES.indexOf(a.status)
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
