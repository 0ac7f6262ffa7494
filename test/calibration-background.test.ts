import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StepMeasurement } from '../shared/calibration/index.js';
import { CALIBRATION_ANNOTATIONS } from '../shared/calibration/workflow/index.js';
import type { KubeObject } from '../shared/kube/index.js';
import {
  loadProfile,
  startTwin,
  startTwinCalibration,
  withTwinTarget,
  type Twin,
  type WorkflowOutcome,
} from '../sim/harness/index.js';
import { DEMO_SHAPE } from './helpers/twin.js';

// A target that already serves users: the demo twin with production traffic through its Service (the profile's
// `traffic`), as many targets on AWS have. Deploy measures it in AMP before anything changes; `adopt` refuses it
// unless the input allows it; allowed, each step's k6 rate is the planned rate less that traffic.

const BACKGROUND_RPS = 4;
const LONG = 300_000;

let twin: Twin;
let reportsDir: string;

beforeAll(async () => {
  const demo = await loadProfile('demo');
  twin = await startTwin({
    profile: {
      ...demo,
      amp: { ingestionLagSeconds: 0, ingestionJitterSeconds: 0 },
      traffic: {
        rateRps: BACKGROUND_RPS,
        promptTokens: DEMO_SHAPE.promptTokens,
        maxTokens: DEMO_SHAPE.maxTokens,
        variationFraction: 0,
        periodSeconds: 600,
      },
    },
    allowInstallPrometheus: false,
  });
  reportsDir = await mkdtemp(join(tmpdir(), 'vllm-pilot-background-'));
  // Long enough for several 1 s scrapes of the users' completions, as a target that has served them for a while.
  await new Promise((resolve) => setTimeout(resolve, 15_000));
}, 120_000);

afterAll(async () => {
  await twin?.stop();
  if (reportsDir) await rm(reportsDir, { recursive: true, force: true });
});

async function calibrate(name: string, deploy: Record<string, unknown>): Promise<WorkflowOutcome> {
  const calibration = await startTwinCalibration(twin.state, {
    input: withTwinTarget(
      {
        deploy,
        request: { promptTokens: DEMO_SHAPE.promptTokens, maxTokens: DEMO_SHAPE.maxTokens },
        warmup: { requests: 10 },
        // Held in full (no early ending), so that k6's summary shows the rate it sent.
        plan: { rates: [12], holdSeconds: 6, restSeconds: 1, earlyStop: { enabled: false } },
        rollout: { timeoutSeconds: 60, pollSeconds: 1 },
        readiness: { timeoutSeconds: 120, pollSeconds: 1 },
        ingestion: { timeoutSeconds: 60, pollSeconds: 1 },
      },
      twin.state,
    ),
    executionName: name,
    reportsDir,
    ports: { cluster: () => Promise.resolve(twin.cluster) },
    waitScale: 0.25,
    retryIntervalMs: 10,
  });
  try {
    return await calibration.run.result;
  } finally {
    calibration.close();
  }
}

async function liveDeployment(): Promise<KubeObject> {
  const live = await twin.cluster.get({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    namespace: twin.profile.namespace,
    name: twin.profile.deployment,
  });
  if (live === undefined) throw new Error('the Deployment is gone');
  return live;
}

describe('Calibration: a target that already serves users', () => {
  it(
    'is refused in adopt mode, naming the measured rate and deploy.allowServingTraffic, before anything changes',
    async () => {
      // Prepare
      const before = await liveDeployment();

      // Act
      const outcome = await calibrate('bg-refused', { mode: 'adopt' });

      // Assess
      expect(outcome).toMatchObject({ status: 'failed', error: 'CalibrationTargetServingError' });
      const cause = outcome.status === 'failed' ? outcome.cause : '';
      const measured = Number(/served ([\d.]+) completed req\/s/.exec(cause)?.[1]);
      expect(measured).toBeGreaterThan(BACKGROUND_RPS * 0.8);
      expect(measured).toBeLessThan(BACKGROUND_RPS * 1.2);
      expect(cause).toContain('deploy.allowServingTraffic: true');
      const after = await liveDeployment();
      expect(after.spec).toEqual(before.spec);
      expect(after.metadata.annotations?.[CALIBRATION_ANNOTATIONS.execution]).toBeUndefined();
    },
    LONG,
  );

  it(
    "allowed, offers k6 the planned rate less the users' traffic and judges the total the replica served",
    async () => {
      // Act
      const outcome = await calibrate('bg-allowed', { mode: 'adopt', allowServingTraffic: true });

      // Assess
      expect(outcome).toMatchObject({ status: 'succeeded' });
      const steps = outcome.status === 'succeeded' ? (outcome.output as { steps: StepMeasurement[] }).steps : [];
      // The accepted attempt: a step whose evidence failed (a scrape gap on a loaded machine) is repeated.
      const step = steps.find((attempt) => attempt.evidence?.ok !== false);
      const users = (step?.rateRps ?? 0) - (step?.k6RateRps ?? 0);
      expect(users).toBeGreaterThan(BACKGROUND_RPS * 0.8);
      expect(users).toBeLessThan(BACKGROUND_RPS * 1.2);
      // The step offered 12 req/s in all: k6 sent the rest, and vLLM completed about the total.
      expect(step?.rateRps).toBeCloseTo(12, 2);
      expect(step?.k6?.rate).toBeCloseTo(step?.k6RateRps ?? 0, 2);
      expect(step?.amp.completedRps).toBeGreaterThan(12 * 0.8);
      expect(step?.verdict.saturated).toBe(false);
    },
    LONG,
  );
});
