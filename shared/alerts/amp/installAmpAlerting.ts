import { setTimeout as sleepFor } from 'node:timers/promises';
import type { Clock } from '../../clock/index.js';
import {
  AMP_FAILED_STATUSES,
  AMP_STATUS,
  AMP_TRANSITIONAL_STATUSES,
  describeAmpResource,
  type AmpAlertingControlPlane,
  type AmpAlertingResource,
  type AmpResourceDescription,
} from './AmpAlertingControlPlane.js';
import type { DesiredAmpAlerting } from './desiredAmpAlerting.js';
import {
  AmpAlertingError,
  AmpAlertingInstallFailedError,
  AmpResourceFailedError,
  AmpResourceWaitTimeoutError,
} from './errors.js';
import { sameAmpData } from './sameAmpData.js';

/** What the installer did to one resource. */
export const AMP_INSTALL_ACTIONS = { created: 'created', updated: 'updated', unchanged: 'unchanged' } as const;
export type AmpInstallAction = (typeof AMP_INSTALL_ACTIONS)[keyof typeof AMP_INSTALL_ACTIONS];

/** The decision for one resource, with its reason (what AMP held and why that calls for this). */
export interface AmpInstallDecision {
  action: 'create' | 'put' | 'none';
  reason: string;
}

/** One resource installed: what was done, why, and how long AMP took to make it ACTIVE. */
export interface AmpResourceOutcome {
  resource: string;
  action: AmpInstallAction;
  reason: string;
  waitedMs: number;
}

export interface AmpInstallResult {
  workspaceId: string;
  resources: AmpResourceOutcome[];
}

export interface AmpInstallOptions {
  clock: Clock;
  /** Between two Describe calls while waiting (default 5 s). */
  pollIntervalMs?: number;
  /** How long a resource may take to become ACTIVE (default 4 min); the signal may end the wait sooner. */
  waitTimeoutMs?: number;
  /** The invocation's deadline: aborts a call under way and ends the wait (AmpResourceWaitTimeoutError). */
  signal?: AbortSignal;
  /** Waits `ms` (aborted by `signal`); tests pass one that advances a virtual clock. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** One line per decision, with its reason. */
  log?: (message: string, fields: Record<string, unknown>) => void;
}

export const AMP_INSTALL_DEFAULTS = { pollIntervalMs: 5_000, waitTimeoutMs: 240_000 } as const;

/**
 * Installs the desired rule groups namespace and Alertmanager definition in the workspace and keeps them in step:
 * create when missing, put when different (or failed), nothing when equal and ACTIVE; then waits until each is ACTIVE
 * holding the desired data. Both resources are handled side by side; a failure of one does not stop the other.
 * Throws AmpResourceFailedError (AMP's statusReason) or AmpResourceWaitTimeoutError for one resource,
 * AmpAlertingInstallFailedError when both failed, AmpRequestError when a call failed.
 */
export async function installAmpAlerting(
  controlPlane: AmpAlertingControlPlane,
  desired: DesiredAmpAlerting,
  options: AmpInstallOptions,
): Promise<AmpInstallResult> {
  const settled = await Promise.allSettled([
    installOne(controlPlane, desired.ruleGroupsNamespace.resource, desired.ruleGroupsNamespace.data, options),
    installOne(controlPlane, desired.alertManagerDefinition.resource, desired.alertManagerDefinition.data, options),
  ]);
  const failures = settled.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) {
    const named = failures.filter((failure): failure is AmpAlertingError => failure instanceof AmpAlertingError);
    // Something that is not ours (a bug) is thrown as it is, not hidden in a summary.
    if (named.length < failures.length) throw failures.find((failure) => !(failure instanceof AmpAlertingError));
    throw new AmpAlertingInstallFailedError(named);
  }
  return {
    workspaceId: controlPlane.workspaceId,
    resources: settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : [])),
  };
}

/** What to do about one resource, given what AMP holds (null: nothing) and the desired data. */
export function decideAmpInstall(
  resource: AmpAlertingResource,
  held: AmpResourceDescription | null,
  desired: string,
): AmpInstallDecision {
  if (held === null) return { action: 'create', reason: 'missing in the workspace' };
  const { code, reason } = held.status;
  if (AMP_FAILED_STATUSES.includes(code))
    return { action: 'put', reason: `${code} (${reason ?? 'no statusReason'}): the desired data is put again` };
  if (!sameAmpData(resource, held.data, desired))
    return { action: 'put', reason: `${code} but holding other data (a rule change, or drift)` };
  if (code === AMP_STATUS.active) return { action: 'none', reason: 'ACTIVE and equal to the desired data' };
  // Equal data still being created or updated (by an earlier run): wait for it, do not change it again.
  return { action: 'none', reason: `${code} with the desired data: waiting for ACTIVE` };
}

async function installOne(
  controlPlane: AmpAlertingControlPlane,
  resource: AmpAlertingResource,
  data: string,
  options: AmpInstallOptions,
): Promise<AmpResourceOutcome> {
  const label = describeAmpResource(resource);
  const { signal } = options;
  let held = await controlPlane.describe(resource, { signal });
  // AMP refuses a change while the resource is CREATING, UPDATING or DELETING: let it settle first.
  if (held !== null && AMP_TRANSITIONAL_STATUSES.includes(held.status.code) && !sameAmpData(resource, held.data, data))
    held = await waitUntilSettled(controlPlane, resource, options);
  const decision = decideAmpInstall(resource, held, data);
  options.log?.(`${label}: ${decision.action === 'none' ? 'nothing to change' : decision.action}`, {
    workspaceId: controlPlane.workspaceId,
    resource: label,
    action: decision.action,
    reason: decision.reason,
  });
  if (decision.action === 'create') await controlPlane.create(resource, data, { signal });
  else if (decision.action === 'put') await controlPlane.put(resource, data, { signal });
  const action =
    decision.action === 'create'
      ? AMP_INSTALL_ACTIONS.created
      : decision.action === 'put'
        ? AMP_INSTALL_ACTIONS.updated
        : AMP_INSTALL_ACTIONS.unchanged;
  if (decision.action === 'none' && held?.status.code === AMP_STATUS.active)
    return { resource: label, action, reason: decision.reason, waitedMs: 0 };
  const waitedMs = await waitUntilActive(controlPlane, resource, data, options, decision.action !== 'none');
  return { resource: label, action, reason: decision.reason, waitedMs };
}

/**
 * Polls until the resource is ACTIVE holding `data`. A failed status is this change's failure once AMP has shown it
 * working on it (a transitional status) or holds `data`; before that it may be the previous failure, still read back.
 */
async function waitUntilActive(
  controlPlane: AmpAlertingControlPlane,
  resource: AmpAlertingResource,
  data: string,
  options: AmpInstallOptions,
  changed: boolean,
): Promise<number> {
  let sawWork = !changed;
  return poll(controlPlane, resource, options, 'waiting for ACTIVE', (held) => {
    if (held === null) return false;
    const same = sameAmpData(resource, held.data, data);
    if (AMP_TRANSITIONAL_STATUSES.includes(held.status.code)) sawWork = true;
    if (AMP_FAILED_STATUSES.includes(held.status.code) && (sawWork || same))
      throw new AmpResourceFailedError(resource, held.status);
    return held.status.code === AMP_STATUS.active && same;
  }).then(({ waitedMs }) => waitedMs);
}

/** Polls until the resource is no longer CREATING, UPDATING or DELETING; returns what AMP then holds. */
async function waitUntilSettled(
  controlPlane: AmpAlertingControlPlane,
  resource: AmpAlertingResource,
  options: AmpInstallOptions,
): Promise<AmpResourceDescription | null> {
  const { held } = await poll(
    controlPlane,
    resource,
    options,
    'waiting for an earlier change to settle',
    (current) => current === null || !AMP_TRANSITIONAL_STATUSES.includes(current.status.code),
  );
  return held;
}

async function poll(
  controlPlane: AmpAlertingControlPlane,
  resource: AmpAlertingResource,
  options: AmpInstallOptions,
  detail: string,
  done: (held: AmpResourceDescription | null) => boolean,
): Promise<{ held: AmpResourceDescription | null; waitedMs: number }> {
  const { clock, signal } = options;
  const pollIntervalMs = options.pollIntervalMs ?? AMP_INSTALL_DEFAULTS.pollIntervalMs;
  const waitTimeoutMs = options.waitTimeoutMs ?? AMP_INSTALL_DEFAULTS.waitTimeoutMs;
  const sleep = options.sleep ?? ((ms: number, s?: AbortSignal) => sleepFor(ms, undefined, { signal: s }));
  const startedMs = clock.now();
  let last: AmpResourceDescription | null = null;
  const timedOut = (why: string, cause?: unknown) =>
    new AmpResourceWaitTimeoutError(
      resource,
      clock.now() - startedMs,
      last?.status ?? null,
      why,
      cause === undefined ? undefined : { cause },
    );
  for (;;) {
    if (signal?.aborted) throw timedOut(`${detail}; the invocation's deadline came`, signal.reason);
    try {
      last = await controlPlane.describe(resource, { signal });
    } catch (error) {
      // A call the deadline aborted is the wait running out, not AMP failing.
      if (signal?.aborted) throw timedOut(`${detail}; the invocation's deadline came`, error);
      throw error;
    }
    if (done(last)) return { held: last, waitedMs: clock.now() - startedMs };
    const leftMs = startedMs + waitTimeoutMs - clock.now();
    if (leftMs <= 0) throw timedOut(`${detail}; gave up after the ${Math.round(waitTimeoutMs / 1000)} s allowed`);
    try {
      await sleep(Math.min(pollIntervalMs, leftMs), signal);
    } catch (error) {
      throw timedOut(`${detail}; the invocation's deadline came`, error);
    }
  }
}

/** What removing did to one resource. */
export interface AmpRemoveOutcome {
  resource: string;
  action: 'deleted' | 'absent';
}

/**
 * Removes what the AMP engine installed (the stack's custom resource is deleted: the stack is removed, or the stage
 * went back to the Lambda engine, which would otherwise notify twice). "Not there" counts as removed.
 */
export async function removeAmpAlerting(
  controlPlane: AmpAlertingControlPlane,
  desired: Pick<DesiredAmpAlerting, 'ruleGroupsNamespace' | 'alertManagerDefinition'>,
  options: Pick<AmpInstallOptions, 'signal' | 'log'> = {},
): Promise<AmpRemoveOutcome[]> {
  const outcomes: AmpRemoveOutcome[] = [];
  for (const { resource } of [desired.ruleGroupsNamespace, desired.alertManagerDefinition]) {
    const label = describeAmpResource(resource);
    const held = await controlPlane.describe(resource, { signal: options.signal });
    if (held === null) {
      outcomes.push({ resource: label, action: 'absent' });
      continue;
    }
    await controlPlane.delete(resource, { signal: options.signal });
    options.log?.(`${label}: deleted`, { workspaceId: controlPlane.workspaceId, resource: label });
    outcomes.push({ resource: label, action: 'deleted' });
  }
  return outcomes;
}
