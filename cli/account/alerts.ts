import type { AlertName, Severity, TargetEvaluation } from '../../shared/alerts/index.js';
import {
  type AlertTarget,
  evaluateTarget,
  inhibitorOf,
  parseAlertTargets,
  withCalibratedThresholds,
} from '../../shared/alerts/rules/index.js';
import { type CalibrationHistoryStore, lastCalibratedAlertThresholds } from '../../shared/calibration/history/index.js';
import type { MetricsSource } from '../../shared/metrics/index.js';
import { formatNumber } from '../output.js';
import { type AccountFlagGroups, type AccountFlags, accountRequest, targetSelection } from './options.js';
import { probeModel } from './probes.js';
import { openAccount } from './session.js';
import { readTargets } from './targets.js';

/** The flags `alerts evaluate --dry-run` takes against an account: the target, the workspace, the history table. */
export const ALERTS_ACCOUNT_FLAGS: AccountFlagGroups = { amp: true, history: true };

/** One alert that is firing now (held for its `for`), and whether a firing critical alert inhibits it. */
export interface DryRunAlert {
  alertname: AlertName;
  severity: Severity;
  labels: Record<string, string>;
  value: number;
  threshold: number;
  unit: TargetEvaluation['firing'][number]['unit'];
  forSeconds: number;
  summary: string;
  /** The alert that inhibits it on the same Pod (it would not notify), or null. */
  inhibitedBy: AlertName | null;
}

/** What the evaluator would do for one target now, without notifying or writing its state. */
export interface DryRunTarget {
  target: string;
  at: string;
  firing: DryRunAlert[];
  /** Rules that could not be evaluated (nothing fires or resolves for them). */
  failures: Array<{ alertname: AlertName; error: string }>;
  /** Thresholds the target's last calibration set, and those it could not (a pinned setting). */
  calibrated: Array<{ alertname: AlertName; used: boolean; why: string }>;
}

/**
 * The evaluator's decisions without its side effects: each target's settings with its last calibration's thresholds
 * (when a history is given), the rules evaluated at `timeMs` exactly as the alert evaluator does (evaluateTarget),
 * and the inhibitions applied. No SNS, no state table, no heartbeat.
 */
export async function dryRunAlerts(
  targets: readonly AlertTarget[],
  ports: { source: MetricsSource; history?: CalibrationHistoryStore },
  timeMs: number,
): Promise<DryRunTarget[]> {
  const results: DryRunTarget[] = [];
  for (const entry of targets) {
    const calibrated =
      ports.history === undefined ? undefined : await lastCalibratedAlertThresholds(ports.history, entry.target);
    const { settings, outcomes } = withCalibratedThresholds(entry.settings, calibrated);
    const evaluation = await evaluateTarget(entry.target, settings, { source: ports.source }, timeMs);
    results.push({
      target: entry.target.name,
      at: new Date(timeMs).toISOString(),
      firing: evaluation.firing.map((alert) => ({
        alertname: alert.alertname,
        severity: alert.severity,
        labels: alert.labels,
        value: alert.value,
        threshold: alert.threshold,
        unit: alert.unit,
        forSeconds: alert.forSeconds,
        summary: alert.summary,
        inhibitedBy: inhibitorOf(alert.alertname, alert.labels, evaluation.firing)?.source.alertname ?? null,
      })),
      failures: evaluation.failures.map((f) => ({ alertname: f.alertname, error: f.error.message })),
      calibrated: outcomes.map((o) => ({ alertname: o.alertname, used: o.used, why: o.why })),
    });
  }
  return results;
}

/** The dry run on the user's account: their targets, their AMP workspace, their stack's history when named. */
export async function dryRunAlertsOnAccount(
  flags: AccountFlags,
  alerts: unknown,
  timeMs: number,
): Promise<DryRunTarget[]> {
  const targets = await readTargets(
    targetSelection(flags, alerts === undefined ? undefined : { alerts }),
    'alertEvaluator',
    parseAlertTargets,
  );
  const account = await openAccount(accountRequest(flags, ALERTS_ACCOUNT_FLAGS));
  try {
    const source = account.metrics();
    for (const { target } of targets) await probeModel(source, target);
    return await dryRunAlerts(
      targets,
      { source, ...(account.history === undefined ? {} : { history: account.history }) },
      timeMs,
    );
  } finally {
    account.close();
  }
}

/** The dry run as text: per target, what would notify and why, what is inhibited, what could not be evaluated. */
export function formatDryRun(results: readonly DryRunTarget[]): string {
  const lines: string[] = [];
  for (const result of results) {
    const notify = result.firing.filter((a) => a.inhibitedBy === null);
    lines.push(
      `${result.target} at ${result.at} (dry run: nothing sent, no state written): ${notify.length} would notify, ` +
        `${result.firing.length - notify.length} inhibited, ${result.failures.length} not evaluated`,
    );
    for (const alert of result.firing) {
      const where = alert.labels.pod ?? alert.labels.UUID ?? alert.labels.namespace ?? '';
      const why = `${formatNumber(alert.value)} vs threshold ${formatNumber(alert.threshold)} ${alert.unit}, held ${alert.forSeconds} s`;
      const head = alert.inhibitedBy === null ? 'would notify' : `inhibited by ${alert.inhibitedBy}`;
      lines.push(`  ${head}: ${alert.alertname} (${alert.severity}) on ${where}: ${why}: ${alert.summary}`);
    }
    for (const failure of result.failures) lines.push(`  not evaluated: ${failure.alertname}: ${failure.error}`);
    for (const outcome of result.calibrated)
      lines.push(`  calibrated threshold ${outcome.used ? 'used' : 'not used'}: ${outcome.alertname}: ${outcome.why}`);
  }
  return `${lines.join('\n')}\n`;
}
