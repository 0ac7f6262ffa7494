import { describe, expect, it } from '@jest/globals';
import { actOnDrift, type CalibrationExecutions, driftExecutionPrefix, driftMessage } from './act.js';
import type { DriftCheck } from './checkDrift.js';
import { parseDriftSettings } from './settings.js';

const TARGET = { name: 'prod-ministral', cluster: 'prod', namespace: 'llm', deployment: 'ministral', model: 'm' };
const NOW = Date.parse('2026-12-05T03:00:00Z'); // a Saturday
const DRIFTED: DriftCheck = {
  target: 'prod-ministral',
  calibration: { execution: 'calib-1', finishedAt: '2026-12-01T00:00:00Z', capacityPerPodRps: 20 },
  findings: [{ kind: 'template', evidence: 'the Pod template changed since calibration calib-1: image: a → b' }],
  notJudged: [],
  live: { windowSeconds: 600, pods: 2, completedPerPodRps: 5, queueSlopePerSecond: 0, queueMean: 0, p95E2eSeconds: 1 },
};
const AUTO = parseDriftSettings({
  mode: 'auto',
  maintenanceWindow: { days: ['sat', 'sun'], start: '02:00', end: '05:00' },
  calibration: { plan: { strategy: 'adaptive' } },
});

/** Executions in memory: what exists, and what was started. */
function executions(existing: Array<{ name: string; status: string; startMs: number }> = []) {
  const started: Array<{ name: string; input: Record<string, unknown> }> = [];
  const port: CalibrationExecutions = {
    list: (prefix) => Promise.resolve(existing.filter((e) => e.name.startsWith(prefix))),
    start: (name, input) => {
      started.push({ name, input });
      return Promise.resolve(`arn:aws:states:us-east-2:123456789012:execution:calibration:${name}`);
    },
  };
  return { port, started };
}

describe('Function: actOnDrift', () => {
  it('starts a re-calibration inside the window, with the target and the configured input', async () => {
    // Prepare
    const { port, started } = executions();

    // Act
    const action = await actOnDrift(
      DRIFTED,
      { ...TARGET, region: 'us-east-2', ampWorkspaceUrl: 'https://aps' },
      AUTO,
      port,
      NOW,
    );

    // Assess
    expect(action).toMatchObject({
      kind: 'recalibrationStarted',
      executionName: 'drift-prod-ministral-20261205T030000',
    });
    expect(started).toEqual([
      {
        name: 'drift-prod-ministral-20261205T030000',
        input: {
          plan: { strategy: 'adaptive' },
          target: {
            cluster: 'prod',
            region: 'us-east-2',
            namespace: 'llm',
            deployment: 'ministral',
            model: 'm',
            ampWorkspaceUrl: 'https://aps',
          },
        },
      },
    ]);
  });

  it.each([
    {
      case: 'no finding',
      check: { ...DRIFTED, findings: [] },
      settings: AUTO,
      now: NOW,
      existing: [],
      kind: 'none',
      reason: /^no drift found$/,
    },
    {
      case: 'notify mode',
      check: DRIFTED,
      settings: parseDriftSettings({}),
      now: NOW,
      existing: [],
      kind: 'notified',
      reason: /^mode notify: notify only$/,
    },
    {
      case: 'outside the window (a Monday)',
      check: DRIFTED,
      settings: AUTO,
      now: Date.parse('2026-12-07T03:00:00Z'),
      existing: [],
      kind: 'notified',
      reason: /^a re-calibration waits for the maintenance window \(sat, sun 02:00-05:00 UTC\)$/,
    },
    {
      case: 'one still running',
      check: DRIFTED,
      settings: AUTO,
      now: NOW,
      existing: [{ name: 'drift-prod-ministral-20261205T020000', status: 'RUNNING', startMs: NOW - 3_600_000 }],
      kind: 'notified',
      reason: /^re-calibration drift-prod-ministral-20261205T020000 of this target still runs$/,
    },
    {
      case: 'within the cooldown',
      check: DRIFTED,
      settings: AUTO,
      now: NOW,
      existing: [{ name: 'drift-prod-ministral-20261204T030000', status: 'FAILED', startMs: NOW - 23 * 3_600_000 }],
      kind: 'notified',
      reason: /^re-calibration drift-prod-ministral-20261204T030000 \(FAILED\) started less than 24 h ago/,
    },
  ])('starts nothing for $case, and says why', async ({ check, settings, now, existing, kind, reason }) => {
    // Prepare
    const { port, started } = executions(existing);

    // Act
    const action = await actOnDrift(check, TARGET, settings, port, now);

    // Assess
    expect(action.kind).toBe(kind);
    expect(action.reason).toMatch(reason);
    expect(started).toEqual([]);
  });

  it('keeps execution names within Step Functions’ 80 characters for a long target name', () => {
    // Act
    const prefix = driftExecutionPrefix('a'.repeat(128));

    // Assess
    expect(`${prefix}20261205T030000`.length).toBeLessThanOrEqual(80);
    expect(prefix).toMatch(/^drift-a{31}-[0-9a-f]{8}-$/);
  });

  it('writes a message whose subject names the kinds and whose body carries the evidence and the action', () => {
    // Act
    const { subject, message } = driftMessage(DRIFTED, { kind: 'notified', reason: 'mode notify: notify only' });

    // Assess
    expect(subject).toBe('[DRIFT] prod-ministral: template');
    expect(JSON.parse(message)).toMatchObject({
      version: 1,
      kind: 'drift',
      findings: DRIFTED.findings,
      action: { kind: 'notified' },
    });
  });
});

describe('Function: parseDriftSettings', () => {
  it.each([
    { input: { mode: 'auto' }, message: /drift\.maintenanceWindow: is required with mode auto/ },
    { input: { mode: 'sometimes' }, message: /drift\.mode: "sometimes" is not a mode; accepted: off, notify, auto/ },
    { input: { windowSeconds: 10 }, message: /drift\.windowSeconds: must be at least 60 s/ },
    {
      input: { maintenanceWindow: { start: '2am', end: '05:00' } },
      message: /drift\.maintenanceWindow\.start: must be a time "HH:MM"/,
    },
    { input: { maintenanceWindow: { start: '05:00', end: '02:00' } }, message: /start must be before end/ },
    {
      input: { maintenanceWindow: { days: ['saturday'], start: '02:00', end: '05:00' } },
      message: /must be a weekday; accepted: sun, mon/,
    },
    { input: { calibration: { target: {} } }, message: /drift\.calibration\.target: is the drifted target itself/ },
    { input: { cooldown: 3 }, message: /drift: .*cooldown/ },
  ])('refuses $input naming the field', ({ input, message }) => {
    // Act
    const attempt = () => parseDriftSettings(input);

    // Assess
    expect(attempt).toThrow(message);
  });
});
