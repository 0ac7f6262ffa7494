import type { NotifyReason } from './message.js';
import type { AlertName, AlertStatus, AlertValueUnit, Severity } from './types.js';

/**
 * The alert state port: one record per alert instance (target + fingerprint) holding what notifications need. The
 * pipeline writes only through claim → commit | release, each a conditional write, so two evaluators at once send
 * one notification and a failed publish is retried by the next run (docs/adr/0010).
 */

/** What a notification says about an instance; kept so that a resolved message can be built once the series is gone. */
export interface AlertContent {
  /** The target's name (the partition key). */
  target: string;
  /** The instance's stable id (the sort key). */
  fingerprint: string;
  alertname: AlertName;
  severity: Severity;
  /** The identifying labels plus target, cluster and namespace. */
  labels: Record<string, string>;
  /** The last value sent (for a resolved alert: the value while it fired). */
  value: number;
  threshold: number;
  unit: AlertValueUnit;
  forSeconds: number;
  summary: string;
  description: string;
  runbook: string;
  runbookUrl: string | null;
  dashboardUrl: string | null;
}

/** The state of one instance as the pipeline decided it. */
export interface AlertState extends AlertContent {
  status: AlertStatus;
  /** Epoch ms of the first evaluation that found this incident firing. */
  startsAtMs: number;
  /** Epoch ms of the first evaluation that found it gone; null while firing. */
  endsAtMs: number | null;
}

/** The last notification that SNS accepted for an instance. */
export interface SentNotification {
  status: AlertStatus;
  /** The incident it was about (its startsAtMs): a new incident of the same instance has another. */
  startsAtMs: number;
  /** When it was sent (epoch ms). */
  atMs: number;
  reason: NotifyReason;
}

/** An evaluator's lease on a record while it publishes; expires so that a crashed evaluator blocks nobody for long. */
export interface AlertClaim {
  id: string;
  untilMs: number;
}

/** One stored record. */
export interface AlertStateRecord extends AlertState {
  lastNotification: SentNotification | null;
  claim: AlertClaim | null;
  /** Grows on every write; a claim names the version it read (optimistic concurrency). */
  version: number;
  /** DynamoDB TTL (epoch seconds), set once the resolved notification went out; null otherwise. */
  expiresAt: number | null;
}

export interface ClaimRequest {
  /** The state to store together with the claim. */
  state: AlertState;
  /** The version read before deciding; null when there was no record. */
  expectedVersion: number | null;
  claimId: string;
  /** A claim whose `untilMs` is at or before this is expired. */
  nowMs: number;
  claimUntilMs: number;
}

export interface CommitRequest {
  target: string;
  fingerprint: string;
  claimId: string;
  notification: SentNotification;
  /** The TTL to set (epoch seconds): for a resolved notification; null keeps the record. */
  expiresAt: number | null;
}

export interface ReleaseRequest {
  target: string;
  fingerprint: string;
  claimId: string;
}

/** The alert state store; adapter: DynamoDbAlertStateStore (AWS and the twin's dynalite). */
export interface AlertStateStore {
  /** Every record of the target (a strongly consistent read). */
  list(target: string): Promise<AlertStateRecord[]>;
  /**
   * Stores `state` and the claim at once if the record's version is still `expectedVersion` (or the record is still
   * absent) and no live claim exists. Returns the stored record, or undefined when another evaluator got there first.
   */
  claim(request: ClaimRequest): Promise<AlertStateRecord | undefined>;
  /** Records the sent notification and drops the claim, if the claim is still ours; undefined when it is not. */
  commit(request: CommitRequest): Promise<AlertStateRecord | undefined>;
  /** Drops the claim (the state change stays, so the next run retries); false when the claim was no longer ours. */
  release(request: ReleaseRequest): Promise<boolean>;
}

/** A resolved record stays this long after its resolved notification (to show what happened), then TTL deletes it. */
export const RESOLVED_RETENTION_SECONDS = 7 * 24 * 60 * 60;

/** How long a claim lives: far longer than one publish; a crashed evaluator delays a notification by about one run. */
export const DEFAULT_CLAIM_TTL_MS = 60_000;
