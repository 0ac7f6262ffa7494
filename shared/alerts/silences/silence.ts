import { AlertSilenceInvalidError } from './errors.js';

/**
 * A silence: while it is active, the alert evaluator sends none of a target's notifications and records each as muted,
 * with the silence's reason, as Alertmanager's silences and inhibitions do. A calibration puts one on the target it
 * holds (kind `calibration`, the execution's name as the reason) and its cleanup removes it; people add their own
 * (`vllm-pilot alerts silence`). Each ends by itself at `endsAtMs` (a DynamoDB TTL deletes it later).
 */
export interface Silence {
  /** The target's key: `<cluster>/<namespace>/<deployment>` (silenceTargetKey), the same for the stack and a calibration. */
  target: string;
  /** Unique per target: `calibration:<execution label>` for a calibration's, a random id for a person's. */
  id: string;
  kind: SilenceKind;
  /** Why, in one line: the execution's name, or what the person typed. */
  reason: string;
  /** Who made it (the execution, or the person's identity as the CLI knows it). */
  createdBy: string;
  startsAtMs: number;
  endsAtMs: number;
}

export const SILENCE_KINDS = ['calibration', 'manual'] as const;
export type SilenceKind = (typeof SILENCE_KINDS)[number];

/** The longest a person's silence may last: a forgotten silence hides real incidents, so a week at most. */
export const MAX_SILENCE_SECONDS = 7 * 24 * 3600;

/** The key silences use for a target: the Deployment it watches, whoever names it (the stack's targets, a calibration). */
export function silenceTargetKey(target: { cluster: string; namespace: string; deployment: string }): string {
  return `${target.cluster}/${target.namespace}/${target.deployment}`;
}

/** The silence that mutes a target at `nowMs`: the active one ending last (a calibration's first on a tie); null none. */
export function activeSilence(silences: readonly Silence[], nowMs: number): Silence | null {
  const active = silences.filter((s) => s.startsAtMs <= nowMs && nowMs < s.endsAtMs);
  active.sort((a, b) => b.endsAtMs - a.endsAtMs || (a.kind === 'calibration' ? -1 : 1));
  return active[0] ?? null;
}

/** Checks a silence before it is stored: every field named, with what is accepted. */
export function checkSilence(silence: Silence): Silence {
  const problems: string[] = [];
  if (!/^[^/\s]+\/[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(silence.target))
    problems.push(`target: "${silence.target}" is not <cluster>/<namespace>/<deployment>`);
  if (!/^[A-Za-z0-9:_.-]{1,128}$/.test(silence.id))
    problems.push(`id: "${silence.id}" is not 1-128 of A-Z a-z 0-9 : _ . -`);
  if (!(SILENCE_KINDS as readonly string[]).includes(silence.kind))
    problems.push(`kind: "${silence.kind}" is not one of ${SILENCE_KINDS.join(', ')}`);

  if (silence.reason.trim() === '' || silence.reason.length > 500 || /[\u0000-\u001f\u007f]/.test(silence.reason))
    problems.push('reason: must be 1-500 characters on one line, without control characters');
  if (!(
    Number.isFinite(silence.startsAtMs) &&
    Number.isFinite(silence.endsAtMs) &&
    silence.endsAtMs > silence.startsAtMs
  ))
    problems.push('endsAtMs: must be a time after startsAtMs');
  if (problems.length > 0) throw new AlertSilenceInvalidError(problems);
  return silence;
}

/** The port: where silences are kept (DynamoDB in AWS, the twin's dynalite locally). */
export interface SilenceStore {
  /** Stores (or replaces) a silence. */
  put(silence: Silence): Promise<void>;
  /** The target's silences, expired ones included until DynamoDB's TTL removes them (activeSilence filters). */
  list(target: string): Promise<Silence[]>;
  /** Removes a silence; true when it was there. */
  delete(target: string, id: string): Promise<boolean>;
}
