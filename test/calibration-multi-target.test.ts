import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BatchReport, StoredBatchReport } from '../shared/calibration/workflow/index.js';
import {
  readBatchOutcome,
  startTwinCalibration,
  type Twin,
  TWIN_CLUSTER,
  TWIN_REGION,
  type WorkflowEvent,
  type WorkflowOutcome,
} from '../sim/harness/index.js';
import { FAST_TWIN_CALIBRATION, startDemoTwin } from './helpers/twin.js';

// One execution calibrates several targets (statemachines/calibration.asl.json, the batch path): each target is a
// child execution of the same state machine, run by the local runner against the twin, at most two at once. The
// three calibratable targets are Deployments the calibration applies itself (deploy.mode apply), each with its own
// vLLM replica, Service, ServiceMonitor and series in Prometheus; a fourth names a Deployment that does not exist.

const NAMESPACE = 'default';
const CALIBRATABLE = ['vllm-a', 'vllm-b', 'vllm-c'] as const;
const MISSING = 'vllm-missing';
const LONG = 600_000;

let twin: Twin;
let reportsDir: string;
let outcome: WorkflowOutcome;
let events: WorkflowEvent[];
let childEvents: Array<{ child: string; event: WorkflowEvent }>;
let stored: StoredBatchReport;
let report: BatchReport;

/** One target of the list: the twin's cluster, a short plan, and where the load goes. */
function target(deployment: string, deploy: Record<string, unknown>): Record<string, unknown> {
  return {
    ...FAST_TWIN_CALIBRATION,
    target: {
      cluster: TWIN_CLUSTER,
      region: TWIN_REGION,
      namespace: NAMESPACE,
      deployment,
      model: `${twin.profile.model}-${deployment}`,
      ampWorkspaceUrl: twin.prometheus.url,
    },
    deploy,
    testReplicas: 1,
  };
}

beforeAll(async () => {
  twin = await startDemoTwin();
  reportsDir = await mkdtemp(join(tmpdir(), 'vllm-pilot-multi-'));
  childEvents = [];
  const calibration = await startTwinCalibration(twin.state, {
    input: {
      maxConcurrency: 2,
      targets: [
        ...CALIBRATABLE.map((name) => target(name, { mode: 'apply', maxModelLen: 2048 })),
        target(MISSING, { mode: 'adopt' }),
      ],
    },
    executionName: 'calib-multi',
    reportsDir,
    waitScale: 0.25,
    retryIntervalMs: 10,
    onChildEvent: (child, event) => childEvents.push({ child, event }),
  });
  try {
    outcome = await calibration.run.result;
    events = calibration.run.events;
  } finally {
    calibration.close();
  }
  ({ report, stored } = await readBatchOutcome(outcome));
}, LONG);

afterAll(async () => {
  await twin?.stop();
  if (reportsDir) await rm(reportsDir, { recursive: true, force: true });
});

describe('Workflow: one execution calibrates several targets on the twin', () => {
  it('ends with a combined report listing every target in list order, with its outcome', () => {
    // Assess
    expect(outcome.status).toBe('succeeded');
    expect(report.targets.map((t) => [t.target.deployment, t.outcome])).toEqual([
      ['vllm-a', 'succeeded'],
      ['vllm-b', 'succeeded'],
      ['vllm-c', 'succeeded'],
      [MISSING, 'failed'],
    ]);
    expect(report.status).toBe('partial');
    expect(stored).toMatchObject({ status: 'partial', succeeded: 3, failed: 1 });
  });

  it('gives each calibrated target its capacity, thresholds, dry run and its own report, from its own execution', async () => {
    // Assess
    for (const [i, name] of CALIBRATABLE.entries()) {
      const t = report.targets[i];
      expect(t?.execution).toBe(`calib-multi-t${i + 1}`);
      expect(t?.capacityRps).toBeGreaterThan(0);
      expect(t?.thresholds?.queueDepthPerPod).toBeGreaterThan(0);
      expect(t?.thresholds?.p95LatencySeconds).toBeGreaterThan(0);
      // Dry run (scaledObject.apply false) against no ScaledObject: nothing to change.
      expect(t?.applied).toBeNull();
      expect(t?.failure).toBeNull();
      const own = JSON.parse(await readFile(t?.report?.reportLocation ?? '', 'utf8')) as {
        provenance: { deployment: string; executionName: string };
      };
      expect(own.provenance).toMatchObject({ deployment: name, executionName: `calib-multi-t${i + 1}` });
    }
  });

  it('reports the failed target with its named error and cause, and loses none of the others', () => {
    // Assess
    const failed = report.targets[3];
    expect(failed?.failure?.error).toBe('CalibrationTargetNotFoundError');
    expect(failed?.failure?.cause).toContain(MISSING);
    expect(failed?.report).toBeNull();
  });

  it('runs at most two targets at once (from the iterations’ start and end events)', () => {
    // Prepare
    const spans = new Map<number, { start: number; end: number }>();
    for (const event of events) {
      if (event.type === 'MapIterationStarted') spans.set(event.index, { start: event.timestamp, end: Infinity });
      if (event.type === 'MapIterationSucceeded' || event.type === 'MapIterationFailed') {
        const span = spans.get(event.index);
        if (span) span.end = event.timestamp;
      }
    }

    // Act: the most iterations running at any start.
    const all = [...spans.values()];
    const most = Math.max(...all.map((s) => all.filter((o) => o.start <= s.start && s.start < o.end).length));

    // Assess
    expect(spans.size).toBe(4);
    expect(all.every((s) => Number.isFinite(s.end))).toBe(true);
    expect(most).toBe(2);
  });

  it("runs each target's whole single-target workflow in its child execution", () => {
    // Assess
    const entered = (child: string) =>
      childEvents.filter((e) => e.child === child && e.event.type === 'StateEntered').map((e) => e.event);
    const names = entered('calib-multi-t1').map((e) => (e as { state: { name: string } }).state.name);
    expect(names).toEqual(expect.arrayContaining(['ValidateInput', 'Deploy', 'MeasureStep', 'StoreReport', 'Cleanup']));
    expect(names).not.toContain('Notify');
  });

  it('sends one notification summarizing every target, and none per target', () => {
    // Act
    const notifications = twin.sns.messages(twin.state.aws.calibrationTopicArn);

    // Assess
    expect(notifications).toHaveLength(1);
    expect(notifications[0]?.attributes).toMatchObject({
      status: { dataType: 'String', value: 'partial' },
      execution: { dataType: 'String', value: 'calib-multi' },
    });
    for (const name of [...CALIBRATABLE, MISSING]) expect(notifications[0]?.message).toContain(`${NAMESPACE}/${name}`);
    expect(notifications[0]?.message).toContain('CalibrationTargetNotFoundError');
  });
});
