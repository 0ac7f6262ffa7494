import type { NotifyReason } from './message.js';
import { AlertEvaluationInvalidError } from './pipelineErrors.js';
import type { AlertContent, AlertState, AlertStateRecord } from './alertState.js';
import { type FiringAlert, inhibitorOf } from './inhibitions.js';
import {
  ALERT_NAMES,
  type AlertInstance,
  type AlertName,
  type AlertStatus,
  type Severity,
  type TargetEvaluation,
} from './types.js';

/**
 * The decision stage (Alertmanager's inhibit and dedup stages, with the state in the store instead of a notification
 * log): the stored records of one target and its latest evaluation in, one decision per instance out, each with a
 * reason. Pure: `nowMs` is a parameter.
 */

/** Why an instance gets no notification this cycle (for the logs). */
export const QUIET_REASONS = ['still-firing', 'rule-failed', 'rule-not-evaluated', 'claimed', 'inhibited'] as const;
export type QuietReason = (typeof QUIET_REASONS)[number];

interface DecisionBase {
  target: string;
  fingerprint: string;
  alertname: AlertName;
  severity: Severity;
  status: AlertStatus;
  /** One line a person reads in the logs: what was decided and why. */
  text: string;
}

/** Send a notification: claim the record with `state`, publish, commit. */
export interface NotifyDecision extends DecisionBase {
  action: 'notify';
  reason: NotifyReason;
  /** The state to store with the claim; the message is built from it. */
  state: AlertState;
  /** The version the decision read (null: no record). A follow-up uses the version its predecessor committed. */
  expectedVersion: number | null;
  /**
   * True for a new incident that waits for the resolved notification of the previous one (same fingerprint) to be
   * committed in this cycle, so subscribers see RESOLVED before the new FIRING.
   */
  followsUp: boolean;
}

/** No notification; the record stays as it is. */
export interface QuietDecision extends DecisionBase {
  action: 'none';
  reason: QuietReason;
}

export type AlertDecision = NotifyDecision | QuietDecision;

export interface DecideInput {
  /** Every stored record of the evaluation's target. */
  records: readonly AlertStateRecord[];
  evaluation: TargetEvaluation;
  /** A firing alert is notified again after this long (AlertSettings.repeatIntervalSeconds). */
  repeatIntervalSeconds: number;
  nowMs: number;
}

/**
 * Compares the stored state with the evaluation and decides, per instance: first notification, repeat, retry of a
 * notification that did not go out, resolved, or none (with the reason). A notification of an alert inhibited by a
 * firing alert of the same Pod (`rules/inhibitions.ts`) is held back, as Alertmanager's inhibition does. Decisions
 * come in a stable order (`ALERT_NAMES` order, then fingerprint); a follow-up comes after its predecessor.
 */
export function decide(input: DecideInput): AlertDecision[] {
  const { evaluation, nowMs } = input;
  const target = evaluation.target.name;
  const repeatMs = input.repeatIntervalSeconds * 1000;
  if (!(repeatMs > 0))
    throw new AlertEvaluationInvalidError(target, `repeatIntervalSeconds ${input.repeatIntervalSeconds} is not > 0`);

  const records = new Map<string, AlertStateRecord>();
  for (const record of input.records) {
    if (record.target !== target)
      throw new AlertEvaluationInvalidError(target, `record ${record.fingerprint} belongs to target ${record.target}`);
    records.set(record.fingerprint, record);
  }
  const firing = new Map<string, AlertInstance>();
  for (const instance of evaluation.firing) {
    if (instance.target !== target)
      throw new AlertEvaluationInvalidError(target, `instance ${instance.fingerprint} names target ${instance.target}`);
    if (firing.has(instance.fingerprint))
      throw new AlertEvaluationInvalidError(
        target,
        `two ${instance.alertname} instances share fingerprint ${instance.fingerprint}`,
      );
    firing.set(instance.fingerprint, instance);
  }
  const failedRules = new Map(evaluation.failures.map((failure) => [failure.alertname, failure.error]));
  const evaluatedRules = new Set(evaluation.evaluatedRules);

  const decisions: AlertDecision[] = [];
  for (const instance of firing.values()) {
    decisions.push(...decideFiring(instance, records.get(instance.fingerprint), evaluation.timeMs, nowMs, repeatMs));
  }
  for (const record of records.values()) {
    if (firing.has(record.fingerprint)) continue;
    const decision = decideAbsent(record, evaluation.timeMs, nowMs, failedRules, evaluatedRules);
    if (decision !== undefined) decisions.push(decision);
  }
  const sources = firingAfterThisCycle(firing, records, failedRules);
  return decisions.map((decision) => inhibit(decision, sources)).sort(byDisplayOrder);
}

/**
 * The alerts that fire once this cycle is decided: the evaluation's, and those of a rule that failed to evaluate
 * whose record says firing (a failed query keeps an alert's state, so it keeps inhibiting too). Alertmanager's
 * inhibitor likewise counts a source alert whether or not its own notification went out.
 */
function firingAfterThisCycle(
  firing: ReadonlyMap<string, AlertInstance>,
  records: ReadonlyMap<string, AlertStateRecord>,
  failedRules: ReadonlyMap<AlertName, Error>,
): FiringAlert[] {
  const kept = [...records.values()].filter(
    (record) => !firing.has(record.fingerprint) && record.status === 'firing' && failedRules.has(record.alertname),
  );
  return [...firing.values(), ...kept];
}

/**
 * Holds back a notification of an inhibited alert, as Alertmanager's inhibition does: while its source fires, no
 * first, repeat, retry or resolved notification goes out and the record stays as it is. Once the source stops
 * firing, whatever is still due goes out (a first notification for a warning still firing; a resolved one for a
 * warning that was notified and has cleared); a warning that fired and cleared only while inhibited is never told,
 * as Alertmanager never tells a receiver about an alert it did not notify.
 */
function inhibit(decision: AlertDecision, sources: readonly FiringAlert[]): AlertDecision {
  if (decision.action !== 'notify') return decision;
  const by = inhibitorOf(decision.alertname, decision.state.labels, sources);
  if (by === undefined) return decision;
  const { target, fingerprint, alertname, severity, status } = decision;
  return {
    action: 'none',
    target,
    fingerprint,
    alertname,
    severity,
    status,
    reason: 'inhibited',
    text:
      `inhibited: ${by.source.alertname} fires on the same Pod (${by.source.fingerprint}); the ${decision.status} ` +
      `notification (${decision.reason}) waits until it stops, the alert keeps its state`,
  };
}

/** The instance is in the evaluation's result. */
function decideFiring(
  instance: AlertInstance,
  record: AlertStateRecord | undefined,
  timeMs: number,
  nowMs: number,
  repeatMs: number,
): AlertDecision[] {
  const content = contentOf(instance);
  if (record === undefined)
    return [
      notify(
        { ...content, status: 'firing', startsAtMs: timeMs, endsAtMs: null },
        'first',
        `first notification: firing since ${iso(timeMs)}`,
        null,
      ),
    ];
  const claimed = liveClaim(record, nowMs);
  if (claimed !== undefined) return [claimed];

  if (record.status === 'firing') {
    const state: AlertState = { ...content, status: 'firing', startsAtMs: record.startsAtMs, endsAtMs: null };
    if (!wasNotified(record))
      return [
        notify(
          state,
          'retry',
          `retry: the firing notification (firing since ${iso(record.startsAtMs)}) has not gone out yet`,
          record.version,
        ),
      ];
    const sinceMs = nowMs - (record.lastNotification?.atMs ?? 0);
    if (sinceMs >= repeatMs)
      return [
        notify(
          state,
          'repeat',
          `repeat: still firing since ${iso(record.startsAtMs)}; last notified ${seconds(sinceMs)} ago (repeat interval ${seconds(repeatMs)})`,
          record.version,
        ),
      ];
    return [
      quiet(
        record,
        'still-firing',
        `no notification: still firing since ${iso(record.startsAtMs)}; notified ${seconds(sinceMs)} ago, repeat in ${seconds(repeatMs - sinceMs)}`,
      ),
    ];
  }

  // The record is resolved and the condition holds again: a new incident of the same instance.
  const incident: AlertState = { ...content, status: 'firing', startsAtMs: timeMs, endsAtMs: null };
  if (wasNotified(record))
    return [
      notify(
        incident,
        'first',
        `first notification: firing again since ${iso(timeMs)} (the previous incident resolved at ${iso(record.endsAtMs ?? timeMs)})`,
        record.version,
      ),
    ];
  // Its resolved notification has not gone out: send it first, then the new incident.
  return [
    notify(
      stateOf(record),
      'retry',
      `retry: the resolved notification (resolved at ${iso(record.endsAtMs ?? timeMs)}) has not gone out yet; it goes before the new incident`,
      record.version,
    ),
    {
      ...notify(
        incident,
        'first',
        `first notification: firing again since ${iso(timeMs)}, sent after the previous incident's resolved notification`,
        null,
      ),
      followsUp: true,
    },
  ];
}

/** The instance is not in the evaluation's result. */
function decideAbsent(
  record: AlertStateRecord,
  timeMs: number,
  nowMs: number,
  failedRules: ReadonlyMap<AlertName, Error>,
  evaluatedRules: ReadonlySet<AlertName>,
): AlertDecision | undefined {
  // Resolved and told: history, kept until its TTL.
  if (record.status === 'resolved' && wasNotified(record)) return undefined;
  const claimed = liveClaim(record, nowMs);
  if (claimed !== undefined) return claimed;
  // A failed query says nothing about the condition: it must never resolve an alert.
  const failure = failedRules.get(record.alertname);
  if (failure !== undefined)
    return quiet(
      record,
      'rule-failed',
      `skipped: rule failed to evaluate (${failure.name}: ${failure.message}); the alert keeps its state`,
    );
  if (!evaluatedRules.has(record.alertname))
    return quiet(
      record,
      'rule-not-evaluated',
      'skipped: rule not evaluated this cycle (disabled for the target?); the alert keeps its state',
    );
  if (record.status === 'firing') {
    const text = wasNotified(record)
      ? `resolved at ${iso(timeMs)} (fired since ${iso(record.startsAtMs)})`
      : `resolved at ${iso(timeMs)} (fired since ${iso(record.startsAtMs)}; its firing notification never went out)`;
    return notify({ ...stateOf(record), status: 'resolved', endsAtMs: timeMs }, 'resolved', text, record.version);
  }
  return notify(
    stateOf(record),
    'retry',
    `retry: the resolved notification (resolved at ${iso(record.endsAtMs ?? timeMs)}) has not gone out yet`,
    record.version,
  );
}

/** True when the last notification that went out is about the record's current status and incident. */
export function wasNotified(record: AlertStateRecord): boolean {
  const last = record.lastNotification;
  return last !== null && last.status === record.status && last.startsAtMs === record.startsAtMs;
}

function liveClaim(record: AlertStateRecord, nowMs: number): QuietDecision | undefined {
  if (record.claim === null || record.claim.untilMs <= nowMs) return undefined;
  return quiet(
    record,
    'claimed',
    `skipped: another evaluator holds the claim (${record.claim.id}) until ${iso(record.claim.untilMs)}`,
  );
}

function notify(state: AlertState, reason: NotifyReason, text: string, expectedVersion: number | null): NotifyDecision {
  return {
    action: 'notify',
    target: state.target,
    fingerprint: state.fingerprint,
    alertname: state.alertname,
    severity: state.severity,
    status: state.status,
    reason,
    text,
    state,
    expectedVersion,
    followsUp: false,
  };
}

function quiet(record: AlertStateRecord, reason: QuietReason, text: string): QuietDecision {
  return {
    action: 'none',
    target: record.target,
    fingerprint: record.fingerprint,
    alertname: record.alertname,
    severity: record.severity,
    status: record.status,
    reason,
    text,
  };
}

/** What the state keeps of an instance, so a resolved message can be written once its series is gone. */
export function contentOf(instance: AlertInstance): AlertContent {
  return {
    target: instance.target,
    fingerprint: instance.fingerprint,
    alertname: instance.alertname,
    severity: instance.severity,
    labels: { ...instance.labels },
    value: instance.value,
    threshold: instance.threshold,
    unit: instance.unit,
    forSeconds: instance.forSeconds,
    summary: instance.summary,
    description: instance.description,
    runbook: instance.runbook,
    runbookUrl: instance.runbookUrl ?? null,
    dashboardUrl: instance.dashboardUrl ?? null,
  };
}

function stateOf(record: AlertStateRecord): AlertState {
  const { lastNotification: _last, claim: _claim, version: _version, expiresAt: _expiresAt, ...state } = record;
  return state;
}

function byDisplayOrder(a: AlertDecision, b: AlertDecision): number {
  return (
    ALERT_NAMES.indexOf(a.alertname) - ALERT_NAMES.indexOf(b.alertname) ||
    compare(a.fingerprint, b.fingerprint) ||
    Number(a.action === 'notify' && a.followsUp) - Number(b.action === 'notify' && b.followsUp)
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}
