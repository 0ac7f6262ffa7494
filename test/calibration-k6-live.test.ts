import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CalibrationReport, StepMeasurement } from '../shared/calibration/index.js';
import {
  loadProfile,
  startTwin,
  startTwinCalibration,
  TWIN_CLUSTER,
  TWIN_REGION,
  type Twin,
  type WorkflowEvent,
} from '../sim/harness/index.js';
import { DEMO_SHAPE } from './helpers/twin.js';

// Early step ending from k6's live metrics on a twin whose Prometheus scrapes every 15 s (as slow as AWS's 30 s
// scrapes make AMP, in kind): AMP cannot hold the six queue samples an ending needs within the step, so only k6's
// REST API, read through the API server's Pod proxy at each look, can end a saturated step early.

const LONG = 300_000;
let twin: Twin;
let reportsDir: string;

beforeAll(async () => {
  const demo = await loadProfile('demo');
  twin = await startTwin({
    profile: { ...demo, replicas: 1, prometheus: { ...demo.prometheus, scrapeIntervalSeconds: 15 } },
    allowInstallPrometheus: false,
  });
  reportsDir = await mkdtemp(join(tmpdir(), 'vllm-pilot-k6-live-'));
}, 120_000);

afterAll(async () => {
  await twin?.stop();
  if (reportsDir) await rm(reportsDir, { recursive: true, force: true });
});

describe("Workflow: calibration ending a step early from k6's live metrics", () => {
  it(
    'ends a step at 50 req/s on a 35 req/s replica as saturated early with evidence k6, before AMP could',
    async () => {
      // Prepare: in flight grows about 15 per second; no ending before 24 s, looks every 3 s, a 60 s hold.
      const calibration = await startTwinCalibration(twin.state, {
        input: {
          target: {
            cluster: TWIN_CLUSTER,
            region: TWIN_REGION,
            namespace: 'default',
            deployment: twin.profile.deployment,
            model: twin.profile.model,
            ampWorkspaceUrl: twin.prometheus.url,
          },
          testReplicas: 1,
          request: { promptTokens: DEMO_SHAPE.promptTokens, maxTokens: DEMO_SHAPE.maxTokens },
          warmup: { requests: 10 },
          plan: { rates: [50], holdSeconds: 60, restSeconds: 1, earlyStop: { minSeconds: 24, watchSeconds: 3 } },
          rollout: { timeoutSeconds: 60, pollSeconds: 1 },
          readiness: { timeoutSeconds: 120, pollSeconds: 1 },
        },
        executionName: 'calib-k6-live',
        reportsDir,
        ports: { cluster: () => Promise.resolve(twin.cluster) },
        waitScale: 0.25,
        retryIntervalMs: 10,
      });

      // Act
      let outcome;
      try {
        outcome = await calibration.run.result;
      } finally {
        calibration.close();
      }

      // Assess
      expect(outcome.status).toBe('succeeded');
      const output = (outcome.status === 'succeeded' ? outcome.output : {}) as {
        steps: StepMeasurement[];
        report: { reportLocation: string };
      };
      const report = JSON.parse(await readFile(output.report.reportLocation, 'utf8')) as CalibrationReport;
      const step = report.steps[0] as StepMeasurement;
      expect(step.ending).toMatchObject({ kind: 'saturated-early', evidence: 'k6', plannedHoldSeconds: 60 });
      expect(step.ending?.heldSeconds).toBeGreaterThanOrEqual(24);
      expect(step.ending?.heldSeconds).toBeLessThan(40);
      expect(step.ending?.reason).toMatch(
        /^k6: requests in flight rose from \d+ to \d+ over \d+ s \(\+[\d.]+\/s, t = /,
      );
      // The window MeasureStep measured in AMP runs from the load's start to the Job's stop; AMP judged the verdict.
      const windowSeconds = (Date.parse(step.windowEnd) - Date.parse(step.windowStart)) / 1000;
      expect(Math.abs(windowSeconds - (step.ending?.heldSeconds ?? 0))).toBeLessThan(1);
      expect(step.verdict.saturated).toBe(true);

      // Every look before the ending carried k6's readings; the ending look read k6 live.
      const looks = watches(calibration.run.events);
      const ended = looks.at(-1) as WatchLook;
      expect(ended.status).toBe('ended');
      expect(ended.k6Readings?.length).toBeGreaterThanOrEqual(5);
      expect(looks.filter((l) => l.status === 'continue' && /; k6: /.test(l.reason)).length).toBeGreaterThan(0);
    },
    LONG,
  );
});

/** The part of WatchLoadStep's `$.watch` this test reads. */
interface WatchLook {
  status: string;
  reason: string;
  k6Readings?: unknown[];
}

function watches(events: WorkflowEvent[]): WatchLook[] {
  return events.flatMap((e) =>
    e.type === 'StateExited' && e.state.name === 'WatchLoadStep'
      ? [(e.state.output as unknown as { watch: WatchLook }).watch]
      : [],
  );
}
