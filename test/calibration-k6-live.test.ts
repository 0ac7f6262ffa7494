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

// Early step ending from k6's live metrics on a twin as slow as the guide's AWS setup: Prometheus scrapes every 30 s
// and samples reach "AMP" 60 s late (remote write through the lagging relay). AMP cannot hold the queue samples an
// ending needs within the step, so only k6's REST API, read through the API server's Pod proxy at each look, can end a
// saturated step early; and the step is measured only once AMP holds its whole window (AwaitStepData).

const LAG_SECONDS = 60;
const LONG = 480_000;
let twin: Twin;
let reportsDir: string;

beforeAll(async () => {
  const demo = await loadProfile('demo');
  twin = await startTwin({
    profile: {
      ...demo,
      replicas: 1,
      prometheus: { ...demo.prometheus, scrapeIntervalSeconds: 30 },
      amp: { ingestionLagSeconds: LAG_SECONDS, ingestionJitterSeconds: 0 },
    },
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
    'ends a step at 50 req/s on a 35 req/s replica early with evidence k6, and measures it once AMP holds its window',
    async () => {
      // Prepare: in flight grows about 15 per second; no ending before 24 s, looks every 3 s, a 120 s hold.
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
          plan: { rates: [50], holdSeconds: 120, restSeconds: 1, earlyStop: { minSeconds: 24, watchSeconds: 3 } },
          // The shadow copy's Pod (the default mode) is rolled out once AMP holds its first scrape: a scrape and a
          // lag after it is Ready.
          rollout: { timeoutSeconds: 240, pollSeconds: 1 },
          readiness: { timeoutSeconds: 240, pollSeconds: 1 },
          ingestion: { timeoutSeconds: 180, pollSeconds: 2 },
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
      expect(outcome).toMatchObject({ status: 'succeeded' });
      const output = (outcome.status === 'succeeded' ? outcome.output : {}) as {
        steps: StepMeasurement[];
        report: { reportLocation: string };
      };
      const report = JSON.parse(await readFile(output.report.reportLocation, 'utf8')) as CalibrationReport;
      // The accepted attempt: a step whose evidence failed (a scrape gap on a loaded machine) is repeated.
      const step = report.steps.find((attempt) => attempt.evidence?.ok !== false) as StepMeasurement;
      expect(step.ending).toMatchObject({ kind: 'saturated-early', evidence: 'k6', plannedHoldSeconds: 120 });
      // k6 saw the saturation from 24 s on; the step went on until AMP's window held a 30 s scrape at least 24 s into
      // the load (its completions are read at that sample): 55 s, before two scrapes (61 s).
      expect(step.ending?.heldSeconds).toBeGreaterThanOrEqual(55);
      expect(step.ending?.heldSeconds).toBeLessThan(61);
      // By then the in-flight requests may have grown to k6's maxVUs (500): either k6 rule may be the one that speaks.
      expect(step.ending?.reason).toMatch(
        /^k6: (requests in flight rose from \d+ to \d+ over \d+ s \(\+[\d.]+\/s, t = |\d+ iteration\(s\) dropped)/,
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
      // The stopped Job printed no summary: what k6 had dropped is its last live reading's count, kept on the ending.
      expect(step.k6).toBeNull();
      expect(step.ending?.droppedIterations).toBe(ended.k6Readings?.at(-1)?.droppedIterations);
      expect(looks.filter((l) => l.status === 'continue' && /; k6: /.test(l.reason)).length).toBeGreaterThan(0);
      expect(
        looks.some((l) =>
          /held on until \d+ s of load, so that AMP's window holds a scrape \(about every 30 s\) \d+ s in or later/.test(
            l.reason,
          ),
        ),
      ).toBe(true);

      // No judging before AMP held the window: AwaitStepData first waited, and the step records when AMP had it.
      const dataLooks = stepDataLooks(calibration.run.events);
      expect(dataLooks[0]?.status).toBe('waiting');
      expect(dataLooks.at(-1)?.status).toBe('in');
      expect(dataLooks.at(-1)?.latestSampleMs).toBeGreaterThanOrEqual(Date.parse(step.windowEnd));
      expect(step.ingestion?.reason).toMatch(/^AMP held samples past the window's end \d+ s after it/);
      expect(step.ingestion?.waitedSeconds).toBeGreaterThanOrEqual(LAG_SECONDS - 5);
    },
    LONG,
  );
});

/** The part of WatchLoadStep's `$.watch` this test reads. */
interface WatchLook {
  status: string;
  reason: string;
  k6Readings?: Array<{ droppedIterations: number }>;
}

function watches(events: WorkflowEvent[]): WatchLook[] {
  return events.flatMap((e) =>
    e.type === 'StateExited' && e.state.name === 'WatchLoadStep'
      ? [(e.state.output as unknown as { watch: WatchLook }).watch]
      : [],
  );
}

/** AwaitStepData's looks, in order. */
function stepDataLooks(events: WorkflowEvent[]): Array<{ status: string; latestSampleMs: number | null }> {
  return events.flatMap((e) =>
    e.type === 'StateExited' && e.state.name === 'AwaitStepData'
      ? [(e.state.output as unknown as { stepData: { status: string; latestSampleMs: number | null } }).stepData]
      : [],
  );
}
