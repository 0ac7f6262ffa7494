import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock/index.js';
import { mapWithConcurrency } from '../util/index.js';
import { buildAlertMessage } from './buildMessage.js';
import { decide, type AlertDecision, type NotifyDecision } from './decide.js';
import { groupNotifications, type AlertGroup } from './group.js';
import type { AlertMessage, NotifyReason } from './message.js';
import type { AlertPublisher, PublishOutcome } from './publisher.js';
import { AlertPipelineInputInvalidError, AlertPublishError, describeCause } from './pipelineErrors.js';
import {
  type AlertStateRecord,
  type AlertStateStore,
  DEFAULT_CLAIM_TTL_MS,
  RESOLVED_RETENTION_SECONDS,
} from './alertState.js';
import type { AlertName, AlertSettings, AlertStatus, Severity, TargetEvaluation } from './types.js';
import type { LoggerPort } from '../log/index.js';
import type { Silence } from './silences/index.js';

/**
 * The notification pipeline, written out in one place like Alertmanager's notify.go: per target, read the state →
 * decide → build and validate messages → claim (conditional write) → group per target and severity → publish →
 * commit what SNS accepted, release what it did not (the state change stays, so the next run retries). A resolved
 * notification that must precede a new incident of the same instance goes first; the new incident follows only once
 * the resolved one is committed.
 */

export interface RunAlertCycleInput {
  /** One evaluation per target (target names must be unique). */
  evaluations: readonly TargetEvaluation[];
  /** The target's alert settings (only the repeat interval is used here). */
  settingsFor(targetName: string): Pick<AlertSettings, 'repeatIntervalSeconds'>;
  store: AlertStateStore;
  publisher: AlertPublisher;
  clock: Clock;
  /** Who runs this cycle (the Lambda request id): part of every claim id, for the logs. */
  evaluatorId: string;
  log?: LoggerPort;
  /** How long a claim lives. Default DEFAULT_CLAIM_TTL_MS (60 s). */
  claimTtlMs?: number;
  /** Targets processed at once. Default 4. */
  concurrency?: number;
  /**
   * The silence muting a target now (a calibration holding it, or a person's), or null. A muted target's
   * notifications are not sent and their state is not changed (so they go out once the silence ends, if still due):
   * each is reported in `muted` with the silence. Default: none.
   */
  silenceFor?: (targetName: string) => Silence | null;
}

export const TARGET_CYCLE_STATUS = { ok: 'ok', partial: 'partial', failed: 'failed' } as const;
export type TargetCycleStatus = (typeof TARGET_CYCLE_STATUS)[keyof typeof TARGET_CYCLE_STATUS];

/** One decision as the logs and the result show it. */
export interface DecisionReport {
  fingerprint: string;
  alertname: AlertName;
  severity: Severity;
  status: AlertStatus;
  action: AlertDecision['action'];
  reason: AlertDecision['reason'];
  text: string;
}

/** A notification the cycle tried to send. */
export interface NotificationReport {
  fingerprint: string;
  alertname: AlertName;
  severity: Severity;
  status: AlertStatus;
  reason: NotifyReason;
}

export interface TargetCycleResult {
  target: string;
  /** failed: nothing could be done (state unreadable, every rule failed, every send failed); partial: some of it. */
  status: TargetCycleStatus;
  /** Instances the evaluation found firing. */
  firing: number;
  decisions: DecisionReport[];
  sent: Array<NotificationReport & { messageId: string }>;
  /** Not sent this cycle; the next cycle retries them. */
  failed: Array<NotificationReport & { errorName: string; error: string; retryable: boolean }>;
  /** Left to another evaluator (it holds or won the claim), or waiting for the notification that must go first. */
  skipped: Array<{ fingerprint: string; alertname: AlertName; severity: Severity; status: AlertStatus; why: string }>;
  ruleFailures: Array<{ alertname: AlertName; error: string }>;
  /** Target-level problems in words (a store failure, a commit that was lost after a send). */
  problems: string[];
  /** Not sent because a silence muted the target: what would have gone out, and the silence. */
  muted: Array<NotificationReport & { silence: Pick<Silence, 'id' | 'kind' | 'reason' | 'endsAtMs'> }>;
}

export interface AlertCycleResult {
  evaluatorId: string;
  /** The "now" the decisions used (epoch ms). */
  nowMs: number;
  targets: TargetCycleResult[];
}

const DEFAULT_CONCURRENCY = 4;

/** Runs one notification cycle over the evaluations; one target's failure never stops the others, and this never throws for one. */
export async function runAlertCycle(input: RunAlertCycleInput): Promise<AlertCycleResult> {
  const claimTtlMs = input.claimTtlMs ?? DEFAULT_CLAIM_TTL_MS;
  if (!Number.isFinite(claimTtlMs) || claimTtlMs <= 0)
    throw new AlertPipelineInputInvalidError('claimTtlMs', `${claimTtlMs} is not > 0`, 'a positive number of ms');
  const concurrency = input.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new AlertPipelineInputInvalidError('concurrency', `${concurrency} is not valid`, 'an integer >= 1');
  if (typeof input.evaluatorId !== 'string' || input.evaluatorId === '')
    throw new AlertPipelineInputInvalidError('evaluatorId', 'is empty', 'a non-empty id (the Lambda request id)');
  const names = input.evaluations.map((evaluation) => evaluation.target.name);
  const duplicate = names.find((name, index) => names.indexOf(name) !== index);
  if (duplicate !== undefined)
    throw new AlertPipelineInputInvalidError(
      'evaluations',
      `target ${duplicate} appears more than once`,
      'one evaluation per target',
    );

  const nowMs = input.clock.now();
  const targets = await mapWithConcurrency(input.evaluations, concurrency, (evaluation) =>
    new TargetCycle(input, evaluation, nowMs, claimTtlMs).run(),
  );
  return { evaluatorId: input.evaluatorId, nowMs, targets };
}

/** A claimed notification, ready to publish. */
interface Prepared {
  decision: NotifyDecision;
  message: AlertMessage;
  claimId: string;
}

/** The cycle of one target; it records every outcome instead of throwing. */
class TargetCycle {
  readonly #input: RunAlertCycleInput;
  readonly #evaluation: TargetEvaluation;
  readonly #nowMs: number;
  readonly #claimTtlMs: number;
  readonly #result: TargetCycleResult;

  constructor(input: RunAlertCycleInput, evaluation: TargetEvaluation, nowMs: number, claimTtlMs: number) {
    this.#input = input;
    this.#evaluation = evaluation;
    this.#nowMs = nowMs;
    this.#claimTtlMs = claimTtlMs;
    this.#result = {
      target: evaluation.target.name,
      status: TARGET_CYCLE_STATUS.ok,
      firing: evaluation.firing.length,
      decisions: [],
      sent: [],
      failed: [],
      skipped: [],
      ruleFailures: evaluation.failures.map((f) => ({
        alertname: f.alertname,
        error: `${f.error.name}: ${f.error.message}`,
      })),
      problems: [],
      muted: [],
    };
  }

  async run(): Promise<TargetCycleResult> {
    const result = this.#result;
    try {
      await this.#process();
    } catch (error) {
      // A store read or a decision that failed: nothing was claimed, so nothing is left half done.
      result.problems.push(describeCause(error));
      this.#log('error', 'alert cycle failed for the target', { problem: describeCause(error) });
      result.status = TARGET_CYCLE_STATUS.failed;
      return result;
    }
    const everyRuleFailed = this.#evaluation.evaluatedRules.length === 0 && this.#evaluation.failures.length > 0;
    const everySendFailed = result.failed.length > 0 && result.sent.length === 0;
    if (everyRuleFailed || everySendFailed) result.status = TARGET_CYCLE_STATUS.failed;
    else if (result.ruleFailures.length > 0 || result.failed.length > 0 || result.problems.length > 0)
      result.status = TARGET_CYCLE_STATUS.partial;
    return result;
  }

  async #process(): Promise<void> {
    const target = this.#evaluation.target.name;
    const records = await this.#input.store.list(target);
    const decisions = decide({
      records,
      evaluation: this.#evaluation,
      repeatIntervalSeconds: this.#input.settingsFor(target).repeatIntervalSeconds,
      nowMs: this.#nowMs,
    });
    this.#result.decisions = decisions.map(
      ({ fingerprint, alertname, severity, status, action, reason, text }): DecisionReport => ({
        fingerprint,
        alertname,
        severity,
        status,
        action,
        reason,
        text,
      }),
    );
    for (const decision of decisions)
      if (decision.action === 'none' && decision.reason === 'claimed') this.#skip(decision, decision.text);
    const due = decisions.filter((d): d is NotifyDecision => d.action === 'notify');
    const silence = this.#input.silenceFor?.(target) ?? null;
    if (silence !== null) {
      for (const decision of due) this.#mute(decision, silence);
      return;
    }
    const notifications = due;
    const committed = await this.#send(notifications.filter((d) => !d.followsUp));

    const followUps: NotifyDecision[] = [];
    for (const decision of notifications.filter((d) => d.followsUp)) {
      const previous = committed.get(decision.fingerprint);
      if (previous === undefined)
        this.#skip(decision, 'waits until the resolved notification of the previous incident has gone out');
      else followUps.push({ ...decision, expectedVersion: previous.version });
    }
    await this.#send(followUps);
  }

  /** Claims, publishes and commits `decisions` (at most one per fingerprint); returns the committed records. */
  async #send(decisions: readonly NotifyDecision[]): Promise<Map<string, AlertStateRecord>> {
    const committed = new Map<string, AlertStateRecord>();
    const claimed = await Promise.all(decisions.map((decision) => this.#claim(decision)));
    const prepared = new Map<string, Prepared>();
    for (const item of claimed) if (item !== undefined) prepared.set(item.decision.fingerprint, item);

    for (const group of groupNotifications([...prepared.values()].map((p) => p.message))) {
      const outcomes = await this.#publish(group);
      await Promise.all(
        group.items.map(async (message, index) => {
          const item = prepared.get(message.fingerprint) as Prepared;
          const outcome = outcomes[index] ?? missingOutcome();
          if (outcome.ok) {
            const record = await this.#commit(item, outcome.messageId);
            if (record !== undefined) committed.set(item.decision.fingerprint, record);
          } else {
            this.#fail(item.decision, outcome.error);
            await this.#release(item);
          }
        }),
      );
    }
    return committed;
  }

  /** Builds the message (a message that cannot be built is never claimed), then claims the record. */
  async #claim(decision: NotifyDecision): Promise<Prepared | undefined> {
    let message: AlertMessage;
    try {
      message = buildAlertMessage(decision);
    } catch (error) {
      this.#fail(decision, error);
      return undefined;
    }
    const claimId = `${this.#input.evaluatorId}/${randomUUID()}`;
    const nowMs = this.#input.clock.now();
    try {
      const record = await this.#input.store.claim({
        state: decision.state,
        expectedVersion: decision.expectedVersion,
        claimId,
        nowMs,
        claimUntilMs: nowMs + this.#claimTtlMs,
      });
      if (record === undefined) {
        this.#skip(decision, 'another evaluator changed or claimed the alert first; it sends the notification');
        return undefined;
      }
    } catch (error) {
      this.#fail(decision, error);
      return undefined;
    }
    return { decision, message, claimId };
  }

  async #publish(group: AlertGroup<AlertMessage>): Promise<PublishOutcome[]> {
    try {
      return await this.#input.publisher.publish(group);
    } catch (error) {
      // The port reports per message; a publisher that throws anyway failed every message of the group.
      const failure = new AlertPublishError('PublisherFailed', describeCause(error), true, true, { cause: error });
      return group.items.map(() => ({ ok: false, error: failure }));
    }
  }

  async #commit(item: Prepared, messageId: string): Promise<AlertStateRecord | undefined> {
    const { decision } = item;
    this.#result.sent.push({ ...notificationOf(decision), messageId });
    this.#log('info', 'alert notification sent', { ...notificationOf(decision), messageId, text: decision.text });
    const atMs = this.#input.clock.now();
    try {
      const record = await this.#input.store.commit({
        target: decision.target,
        fingerprint: decision.fingerprint,
        claimId: item.claimId,
        notification: { status: decision.status, startsAtMs: decision.state.startsAtMs, atMs, reason: decision.reason },
        expiresAt: decision.status === 'resolved' ? Math.floor(atMs / 1000) + RESOLVED_RETENTION_SECONDS : null,
      });
      if (record === undefined)
        this.#problem(
          decision,
          'was sent, but its claim expired and was taken before the commit: it may be sent again',
        );
      return record;
    } catch (error) {
      this.#problem(decision, `was sent, but recording it failed (${describeCause(error)}): it may be sent again`);
      return undefined;
    }
  }

  async #release(item: Prepared): Promise<void> {
    try {
      await this.#input.store.release({
        target: item.decision.target,
        fingerprint: item.decision.fingerprint,
        claimId: item.claimId,
      });
    } catch (error) {
      // The claim then expires on its own; the next run after that retries.
      this.#problem(item.decision, `could not be released (${describeCause(error)}); its claim expires by itself`);
    }
  }

  #fail(decision: NotifyDecision, error: unknown): void {
    const e = error as { name?: unknown; message?: unknown; retryable?: unknown };
    const entry = {
      ...notificationOf(decision),
      errorName: typeof e.name === 'string' ? e.name : 'Error',
      error: typeof e.message === 'string' ? e.message : String(error),
      retryable: e.retryable !== false,
    };
    this.#result.failed.push(entry);
    this.#log('error', 'alert notification not sent; the next run retries it', { ...entry, text: decision.text });
  }

  #mute(decision: NotifyDecision, silence: Silence): void {
    const entry = {
      ...notificationOf(decision),
      silence: { id: silence.id, kind: silence.kind, reason: silence.reason, endsAtMs: silence.endsAtMs },
    };
    this.#result.muted.push(entry);
    this.#log('info', 'alert notification muted by a silence', { ...entry, text: decision.text });
  }

  #skip(decision: AlertDecision, why: string): void {
    const { fingerprint, alertname, severity, status } = decision;
    this.#result.skipped.push({ fingerprint, alertname, severity, status, why });
    this.#log('info', 'alert notification left to another evaluator or deferred', {
      fingerprint,
      alertname,
      status,
      reason: decision.reason,
      why,
    });
  }

  #problem(decision: NotifyDecision, problem: string): void {
    const text = `${decision.alertname} ${decision.status} notification for ${decision.fingerprint} ${problem}`;
    this.#result.problems.push(text);
    this.#log('warn', 'alert state not updated', { problem: text });
  }

  #log(level: 'info' | 'warn' | 'error', message: string, fields: Record<string, unknown>): void {
    this.#input.log?.[level](message, {
      target: this.#evaluation.target.name,
      evaluatorId: this.#input.evaluatorId,
      ...fields,
    });
  }
}

function notificationOf(decision: NotifyDecision): NotificationReport {
  return {
    fingerprint: decision.fingerprint,
    alertname: decision.alertname,
    severity: decision.severity,
    status: decision.status,
    reason: decision.reason,
  };
}

function missingOutcome(): PublishOutcome {
  return {
    ok: false,
    error: new AlertPublishError('NoResult', 'the publisher reported no outcome for the message', true, false),
  };
}

/** A compact, JSON-friendly view of a cycle for the handler's return value and summary log line. */
export interface AlertCycleSummary {
  evaluatorId: string;
  /** ISO time the decisions used. */
  at: string;
  totals: {
    targets: number;
    failedTargets: number;
    firing: number;
    sent: number;
    failed: number;
    skipped: number;
    muted: number;
  };
  targets: Array<{
    target: string;
    status: TargetCycleStatus;
    firing: number;
    /** `<alertname> <status> (<reason>) <fingerprint>` per notification sent. */
    sent: string[];
    failed: string[];
    skipped: number;
    /** `<alertname> <status> (<reason>) <fingerprint>: muted by <kind> silence <id> (<reason>)` per muted one. */
    muted: string[];
    ruleFailures: string[];
    problems: string[];
  }>;
}

/** Summarises a cycle: counts, and one short line per notification sent or failed. */
export function summarizeAlertCycle(result: AlertCycleResult): AlertCycleSummary {
  const line = (n: NotificationReport) => `${n.alertname} ${n.status} (${n.reason}) ${n.fingerprint}`;
  const sum = (pick: (t: TargetCycleResult) => number) => result.targets.reduce((total, t) => total + pick(t), 0);
  return {
    evaluatorId: result.evaluatorId,
    at: new Date(result.nowMs).toISOString(),
    totals: {
      targets: result.targets.length,
      failedTargets: result.targets.filter((t) => t.status === TARGET_CYCLE_STATUS.failed).length,
      firing: sum((t) => t.firing),
      sent: sum((t) => t.sent.length),
      failed: sum((t) => t.failed.length),
      skipped: sum((t) => t.skipped.length),
      muted: sum((t) => t.muted.length),
    },
    targets: result.targets.map((t) => ({
      target: t.target,
      status: t.status,
      firing: t.firing,
      sent: t.sent.map(line),
      failed: t.failed.map((f) => `${line(f)}: ${f.errorName}: ${f.error}`),
      skipped: t.skipped.length,
      muted: t.muted.map((m) => `${line(m)}: muted by ${m.silence.kind} silence ${m.silence.id} (${m.silence.reason})`),
      ruleFailures: t.ruleFailures.map((f) => `${f.alertname}: ${f.error}`),
      problems: t.problems,
    })),
  };
}

/**
 * The cycles of one invocation (the evaluator runs several, an interval apart) as one summary: what any cycle sent,
 * failed to send, skipped or muted (summed, in order), and each target's status, firing count, rule failures and
 * problems as the last cycle found them (a failure of an earlier cycle that the last one no longer had is in that
 * cycle's own summary). One cycle merges to itself.
 */
export function mergeAlertCycleSummaries(cycles: readonly AlertCycleSummary[]): AlertCycleSummary {
  const [first] = cycles;
  const last = cycles.at(-1);
  if (first === undefined || last === undefined)
    throw new AlertPipelineInputInvalidError('cycles', 'is empty', 'the summaries of the cycles an invocation ran');
  const sum = (pick: (totals: AlertCycleSummary['totals']) => number) =>
    cycles.reduce((total, cycle) => total + pick(cycle.totals), 0);
  const ofTarget = (name: string) =>
    cycles.flatMap((cycle) => cycle.targets.filter((target) => target.target === name));
  return {
    evaluatorId: first.evaluatorId,
    at: first.at,
    totals: {
      targets: last.totals.targets,
      failedTargets: last.totals.failedTargets,
      firing: last.totals.firing,
      sent: sum((t) => t.sent),
      failed: sum((t) => t.failed),
      skipped: sum((t) => t.skipped),
      muted: sum((t) => t.muted),
    },
    targets: last.targets.map((target) => {
      const all = ofTarget(target.target);
      return {
        ...target,
        sent: all.flatMap((t) => t.sent),
        failed: all.flatMap((t) => t.failed),
        skipped: all.reduce((total, t) => total + t.skipped, 0),
        muted: all.flatMap((t) => t.muted),
      };
    }),
  };
}
