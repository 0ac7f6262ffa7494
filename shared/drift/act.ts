import { createHash } from 'node:crypto';
import type { Target } from '../config/index.js';
import type { DriftCheck } from './checkDrift.js';
import { describeWindow, type DriftSettings, inMaintenanceWindow } from './settings.js';

/** The calibration executions of a state machine, as drift needs them (adapter: SfnCalibrationExecutions). */
export interface CalibrationExecutions {
  /** Executions whose name starts with `prefix`, newest first: their status and start. */
  list(prefix: string): Promise<Array<{ name: string; status: string; startMs: number }>>;
  /** Starts one; returns its ARN. */
  start(name: string, input: Record<string, unknown>): Promise<string>;
}

/** What drift detection did about one target. */
export type DriftAction =
  | { kind: 'none'; reason: string }
  | { kind: 'notified'; reason: string }
  | { kind: 'recalibrationStarted'; reason: string; executionName: string; executionArn: string };

/** The name prefix of the re-calibrations drift starts for `target` (Step Functions names: at most 80 characters). */
export function driftExecutionPrefix(target: string): string {
  const short =
    target.length <= 40
      ? target
      : `${target.slice(0, 31)}-${createHash('sha256').update(target).digest('hex').slice(0, 8)}`;
  return `drift-${short}-`;
}

/**
 * Decides and does what a drift check calls for. No finding: nothing. `notify`: the message only. `auto`: a
 * re-calibration through Step Functions, but only inside the maintenance window, never while one of this target's
 * drift re-calibrations runs, and not again within the cooldown (a re-calibration that keeps failing would otherwise
 * load the GPU every hour); otherwise the message says why it waits. Every decision carries its reason; the caller
 * publishes the message for every action but `none`.
 */
export async function actOnDrift(
  check: DriftCheck,
  target: Target & { region?: string; ampWorkspaceUrl?: string },
  settings: DriftSettings,
  executions: CalibrationExecutions | undefined,
  timeMs: number,
): Promise<DriftAction> {
  if (check.findings.length === 0) return { kind: 'none', reason: 'no drift found' };
  if (settings.mode !== 'auto') return { kind: 'notified', reason: `mode ${settings.mode}: notify only` };
  const window = settings.maintenanceWindow;
  if (window === undefined || executions === undefined)
    return { kind: 'notified', reason: 'no state machine or maintenance window to re-calibrate with' };
  if (!inMaintenanceWindow(window, timeMs))
    return {
      kind: 'notified',
      reason: `a re-calibration waits for the maintenance window (${describeWindow(window)})`,
    };
  const prefix = driftExecutionPrefix(target.name);
  const recent = await executions.list(prefix);
  const runningNow = recent.find((e) => e.status === 'RUNNING');
  if (runningNow !== undefined)
    return { kind: 'notified', reason: `re-calibration ${runningNow.name} of this target still runs` };
  const cooldownMs = settings.cooldownHours * 3_600_000;
  const latest = recent[0];
  if (latest !== undefined && timeMs - latest.startMs < cooldownMs)
    return {
      kind: 'notified',
      reason: `re-calibration ${latest.name} (${latest.status}) started less than ${settings.cooldownHours} h ago: no other before ${new Date(latest.startMs + cooldownMs).toISOString()}`,
    };
  const executionName = `${prefix}${new Date(timeMs).toISOString().replace(/[-:]/g, '').slice(0, 15)}`;
  const input = {
    ...settings.calibration,
    target: {
      cluster: target.cluster,
      ...(target.region === undefined ? {} : { region: target.region }),
      namespace: target.namespace,
      deployment: target.deployment,
      model: target.model,
      ...(target.ampWorkspaceUrl === undefined ? {} : { ampWorkspaceUrl: target.ampWorkspaceUrl }),
    },
  };
  const executionArn = await executions.start(executionName, input);
  return {
    kind: 'recalibrationStarted',
    reason: `mode auto, inside the maintenance window (${describeWindow(window)})`,
    executionName,
    executionArn,
  };
}

/** The SNS message about a drifted target (JSON, version 1) and its subject. */
export function driftMessage(check: DriftCheck, action: DriftAction): { subject: string; message: string } {
  const kinds = [...new Set(check.findings.map((f) => f.kind))].join(', ');
  const subject = `[DRIFT] ${check.target}: ${kinds}`.slice(0, 100);
  return {
    subject,
    message: JSON.stringify({
      version: 1,
      kind: 'drift',
      target: check.target,
      calibration: check.calibration,
      findings: check.findings,
      notJudged: check.notJudged,
      live: check.live,
      action,
    }),
  };
}
