import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { historyTargetKey } from '../shared/calibration/history/index.js';
import { CalibrationRollbackConflictError, CalibrationRollbackNotFoundError } from '../shared/calibration/index.js';
import { liveThresholdValues, scaledObject, type ThresholdValues } from '../shared/keda/index.js';
import {
  calibrateOnTwin,
  rollbackOnTwin,
  type Twin,
  twinCalibrationPorts,
  type TwinCalibrationResult,
} from '../sim/harness/index.js';
import { FAST_TWIN_CALIBRATION, startDemoTwin } from './helpers/twin.js';

// `vllm-pilot calibrate rollback` on the twin: a real calibration writes its thresholds into the ScaledObject
// (scaledObject.apply true); the rollback restores the values it replaced exactly, records itself in the history,
// can restore a named execution's thresholds, and refuses, changing nothing, once someone edited the ScaledObject.

const LONG = 240_000;
let twin: Twin;
let reportsDir: string;
let calibration: TwinCalibrationResult;
let initial: ThresholdValues;

const soRef = () => ({
  apiVersion: 'keda.sh/v1alpha1',
  kind: 'ScaledObject',
  namespace: twin.state.namespace,
  name: twin.state.deployment,
});

async function liveValues(): Promise<ThresholdValues> {
  const live = await twin.cluster.get(soRef());
  if (live === undefined) throw new Error('the ScaledObject is gone');
  return liveThresholdValues(live);
}

describe('Command: calibrate rollback (on the twin)', () => {
  beforeAll(async () => {
    twin = await startDemoTwin();
    reportsDir = await mkdtemp(join(tmpdir(), 'vllm-pilot-rollback-'));
    await twin.cluster.apply(
      scaledObject({
        name: twin.state.deployment,
        namespace: twin.state.namespace,
        model: twin.state.model,
        ampWorkspaceUrl: twin.prometheus.url,
        authentication: false,
        minReplicaCount: 2,
        maxReplicaCount: 2,
      }),
    );
    initial = await liveValues();
    calibration = await calibrateOnTwin(twin.state, {
      input: { ...FAST_TWIN_CALIBRATION, scaledObject: { apply: true } },
      executionName: 'calib-applied',
      reportsDir,
      waitScale: 0.25,
      retryIntervalMs: 10,
    });
  }, LONG);

  afterAll(async () => {
    await twin?.stop();
    if (reportsDir) await rm(reportsDir, { recursive: true, force: true });
  });

  it('the calibration wrote thresholds that differ from the initial ones', async () => {
    // Assess
    // On failure, the analysis says why no change was applied (no stable step, a repeated step...).
    const { analysis, change } = calibration.report;
    expect({ applied: change?.applied, notes: analysis.notes, thresholds: analysis.thresholds }).toMatchObject({
      applied: true,
    });
    expect(await liveValues()).toEqual(calibration.report.change?.next);
    expect(await liveValues()).not.toEqual(initial);
  });

  it('a dry run shows the diff and changes nothing', async () => {
    // Act
    const result = await rollbackOnTwin(twin.state, { dryRun: true });

    // Assess
    expect(result).toMatchObject({ applied: false, undid: 'calib-applied', restoredFrom: null, recorded: null });
    expect(result.diff).toContain('(rolled back)');
    expect(await liveValues()).toEqual(calibration.report.change?.next);
  });

  it('restores the previous thresholds exactly, and records the rollback in the history', async () => {
    // Act
    const result = await rollbackOnTwin(twin.state);
    const { ports, close } = twinCalibrationPorts(twin.state, { reportsDir });
    const latest = await ports.history.latest(historyTargetKey({ ...twin.state, cluster: twin.state.clusterName }));
    close();

    // Assess
    expect(result).toMatchObject({ applied: true, undid: 'calib-applied', restoredFrom: null, after: initial });
    expect(await liveValues()).toEqual(initial);
    expect(latest?.executionName).toBe(result.recorded);
    expect(latest?.rollback).toMatchObject({ undid: 'calib-applied', restoredFrom: null, after: initial });
  });

  it("restores a named execution's thresholds (undoing the rollback)", async () => {
    // Act
    const result = await rollbackOnTwin(twin.state, { execution: 'calib-applied' });

    // Assess
    expect(result).toMatchObject({ applied: true, restoredFrom: 'calib-applied' });
    expect(await liveValues()).toEqual(calibration.report.change?.next);
  });

  it('refuses an execution that is not in the history, naming those that are', async () => {
    // Act
    const run = rollbackOnTwin(twin.state, { execution: 'calib-nope' });

    // Assess
    await expect(run).rejects.toThrow(CalibrationRollbackNotFoundError);
    await expect(run).rejects.toThrow(/execution calib-nope is not a calibration of .*accepted: one of calib-applied/);
  });

  it('refuses, changing nothing, when the ScaledObject was edited since the last change', async () => {
    // Prepare: someone sets the queue threshold by hand.
    const live = await twin.cluster.get(soRef());
    const spec = live?.spec as { triggers: Array<{ metadata: Record<string, string> }> };
    const queue = spec.triggers.findIndex((t) => t.metadata.query?.includes('num_requests_waiting'));
    spec.triggers[queue] = {
      ...spec.triggers[queue],
      metadata: { ...spec.triggers[queue]?.metadata, threshold: '77' },
    };
    await twin.cluster.apply({ ...(live as object), spec } as Parameters<typeof twin.cluster.apply>[0]);
    const edited = await liveValues();

    // Act
    const run = rollbackOnTwin(twin.state);

    // Assess
    await expect(run).rejects.toThrow(CalibrationRollbackConflictError);
    await expect(run).rejects.toThrow(/changed since rollback-\d+T\d+ wrote it \(queueDepthPerPod is "77", written "/);
    expect(await liveValues()).toEqual(edited);
    expect(edited.queueDepthPerPod).toBe('77');
  });
});
