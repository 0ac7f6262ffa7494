import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CalibrationReport } from '../shared/calibration/index.js';
import { CALIBRATION_ANNOTATIONS, EXECUTION_LABEL, executionNames } from '../shared/calibration/workflow/index.js';
import type { KubeObject } from '../shared/kube/index.js';
import { startTwinCalibration, withTwinTarget, type Twin, type WorkflowOutcome } from '../sim/harness/index.js';
import { DEMO_SHAPE, startDemoTwin } from './helpers/twin.js';

// A step is evidence, or it is repeated (issue 15, docs/calibration.md): each of the twin's faults injected during a
// step of a short linear plan leads to a repeated step and the undisturbed run's result; injected again on the repeat,
// to CalibrationStepEvidenceError with the cleanup done. The faults are timed from the step's StartLoadStep (its load
// starts within a second of it; the hold is 10 s).
//
// Steps are held whole (no early ending) for 10 s: the capacity is read from the saturated step's second half, and the
// twin's replicas answer /metrics on the test's event loop, which a loaded machine delays by up to a few hundred ms
// after Prometheus stamped the scrape. Over 2.5 s (a 5 s hold, or an early ending at 5 s) that skew moved the capacity
// of undisturbed runs by up to 5 % (34.96-36.71 req/s, 6 runs with the loop blocked 0-250 ms every 400 ms) and one
// clean-clone CI run's outage case by 7.9 %; over 5 s, by 2 % (34.96-35.65 req/s, the same 6 runs).

const NAMESPACE = 'default';
const WAIT_SCALE = 0.25;
const LONG = 300_000;
/** Demo saturates between 20 and 40 req/s: 10 is stable, 40 saturated. */
const RATES = [10, 40];
const HOLD_SECONDS = 10;

let twin: Twin;
let reportsDir: string;

interface RunResult {
  outcome: WorkflowOutcome;
  report: CalibrationReport | null;
  injectErrors: unknown[];
}

/** One fault, injected `delayMs` after StartLoadStep is entered for the steps whose index is in `steps`. */
interface Injection {
  fault: { kind: string } & Record<string, unknown>;
  delayMs: number;
  steps: readonly number[];
}

async function calibrate(name: string, injection?: Injection): Promise<RunResult> {
  let started = 0;
  const injectErrors: unknown[] = [];
  const pending: Promise<unknown>[] = [];
  const calibration = await startTwinCalibration(twin.state, {
    input: withTwinTarget(
      {
        target: { namespace: NAMESPACE, deployment: twin.profile.deployment, model: twin.profile.model },
        // adopt: the fault hits the Pod the load goes to.
        deploy: { mode: 'adopt' },
        testReplicas: 1,
        request: { promptTokens: DEMO_SHAPE.promptTokens, maxTokens: DEMO_SHAPE.maxTokens },
        warmup: { requests: 10 },
        plan: { rates: RATES, holdSeconds: HOLD_SECONDS, restSeconds: 1, earlyStop: { enabled: false } },
        rollout: { timeoutSeconds: 60, pollSeconds: 1 },
        readiness: { timeoutSeconds: 120, pollSeconds: 1 },
      },
      twin.state,
    ),
    executionName: name,
    reportsDir,
    ports: { cluster: () => Promise.resolve(twin.cluster) },
    waitScale: WAIT_SCALE,
    retryIntervalMs: 10,
    onEvent: (event) => {
      if (event.type !== 'StateEntered' || event.state.name !== 'StartLoadStep') return;
      const index = started++;
      if (injection === undefined || !injection.steps.includes(index)) return;
      pending.push(
        new Promise((resolve) => setTimeout(resolve, injection.delayMs)).then(async () => {
          try {
            // inject may become async as the fault kinds grow.
            await Promise.resolve(twin.faults.inject(injection.fault as never));
          } catch (error) {
            injectErrors.push(error);
          }
        }),
      );
    },
  });
  let outcome: WorkflowOutcome;
  try {
    outcome = await calibration.run.result;
  } finally {
    calibration.close();
  }
  await Promise.all(pending);
  const stored = outcome.status === 'succeeded' ? (outcome.output as { report?: { reportLocation: string } }) : null;
  const report =
    stored?.report === undefined
      ? null
      : (JSON.parse(await readFile(stored.report.reportLocation, 'utf8')) as CalibrationReport);
  return { outcome, report, injectErrors };
}

/** What the cleanup must leave: no Job or ConfigMap of the execution, the Deployment released. */
async function leftOver(name: string): Promise<{ jobs: string[]; configMaps: string[]; held: boolean }> {
  const labelSelector = { [EXECUTION_LABEL]: executionNames(name).label };
  const names = (objects: KubeObject[]) => objects.map((o) => o.metadata.name).sort();
  const deployment = await twin.cluster.get({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    namespace: NAMESPACE,
    name: twin.profile.deployment,
  });
  return {
    jobs: names(await twin.cluster.list({ apiVersion: 'batch/v1', kind: 'Job', namespace: NAMESPACE, labelSelector })),
    configMaps: names(
      await twin.cluster.list({ apiVersion: 'v1', kind: 'ConfigMap', namespace: NAMESPACE, labelSelector }),
    ),
    held: deployment?.metadata.annotations?.[CALIBRATION_ANNOTATIONS.execution] !== undefined,
  };
}

/** `succeeded`, or how the run ended with its error and cause (what a failed assertion shows). */
function ending(outcome: WorkflowOutcome): string {
  return outcome.status === 'failed' ? `failed: ${outcome.error}: ${outcome.cause}` : outcome.status;
}

function saturationOf(report: CalibrationReport | null): number | null {
  const saturation = report?.analysis.saturation;
  return saturation?.found === true ? saturation.rateRps : null;
}

describe('Workflow: a step is evidence, or it is repeated (twin faults)', () => {
  let baseline: RunResult;

  beforeAll(async () => {
    twin = await startDemoTwin();
    reportsDir = await mkdtemp(join(tmpdir(), 'vllm-pilot-evidence-'));
    baseline = await calibrate('calib-evidence-undisturbed');
  }, LONG);

  afterAll(async () => {
    await twin?.stop();
    if (reportsDir) await rm(reportsDir, { recursive: true, force: true });
  });

  it('an undisturbed run: every step is evidence, saturation found', () => {
    // Assess
    expect(ending(baseline.outcome)).toBe('succeeded');
    expect(baseline.report?.steps.map((step) => step.evidence)).toEqual(
      RATES.map(() => ({ ok: true, reasons: [], attempt: 1 })),
    );
    expect(saturationOf(baseline.report)).toBe(40);
  });

  // Each case: the fault, when in step 1 (10 req/s) it is injected, and what the repeated step's reasons name.
  const FAULTS = [
    // Prometheus frozen from 7 s into the step for 8 s: across the window's end (its last sample before it).
    {
      name: 'a Prometheus outage across the end',
      fault: { kind: 'amp-outage', seconds: 8 },
      delayMs: 7_000,
      reason: /gap of|last sample/,
    },
    // The Pod's /metrics answering 503 for 10 s from 1 s in: its samples missing (the queries answer). Early in the
    // window on purpose: the check once estimated the scrape interval from the window's own samples, and a gap from 1 s
    // in made itself the yardstick (spacings 1 s and 11 s, a "median" of 11 s); it reads the 2 minutes before too.
    {
      name: 'AMP answering with a gap',
      fault: { kind: 'scrape-gap', seconds: 10 },
      delayMs: 1_000,
      reason: /gap of|last sample/,
    },
    // The vLLM Pod deleted 2.5 s in: a cold replacement comes.
    { name: 'the Pod replaced', fault: { kind: 'pod-replace' }, delayMs: 2_500, reason: /gone|new since/ },
    // The vLLM container restarts 2.5 s in.
    {
      name: 'the container crashing',
      fault: { kind: 'pod-crash' },
      delayMs: 2_500,
      reason: /restarted|started again|no longer Ready/,
    },
  ] as const;

  for (const { name, fault, delayMs, reason } of FAULTS) {
    describe(name, () => {
      const slug = fault.kind;

      it(
        'once: the step is repeated with the reason, and the result matches the run without a fault',
        async () => {
          // Act
          const run = await calibrate(`calib-evidence-${slug}-once`, { fault, delayMs, steps: [0] });

          // Assess
          expect(run.injectErrors).toEqual([]);
          expect(ending(run.outcome)).toBe('succeeded');
          const steps = run.report?.steps ?? [];
          const [first, repeat] = steps;
          expect(first?.evidence).toMatchObject({ ok: false, attempt: 1 });
          expect(first?.evidence?.reasons.join('\n')).toMatch(reason);
          expect(repeat).toMatchObject({ rateRps: first?.rateRps, evidence: { ok: true, attempt: 2 } });
          expect(run.report?.analysis.notes.join('\n')).toMatch(/step 1 at 10 req\/s was repeated and is not used/);
          // The same saturated rate as the undisturbed run (linear), and its capacity within 5 %.
          expect(saturationOf(run.report)).toBe(saturationOf(baseline.report));
          const capacity = run.report?.analysis.capacityRps?.value ?? Number.NaN;
          const undisturbed = baseline.report?.analysis.capacityRps?.value ?? Number.NaN;
          const off = Math.abs(capacity - undisturbed) / undisturbed;
          // On failure: both figures and how each was derived.
          expect(
            off <= 0.05
              ? 'within 5 %'
              : { off, run: run.report?.analysis.capacityRps, baseline: baseline.report?.analysis.capacityRps },
          ).toBe('within 5 %');
        },
        LONG,
      );

      it(
        'persistent: injected again on the repeat, the run fails with CalibrationStepEvidenceError, cleaned up',
        async () => {
          // Act
          const run = await calibrate(`calib-evidence-${slug}-twice`, { fault, delayMs, steps: [0, 1] });

          // Assess
          expect(run.injectErrors).toEqual([]);
          expect(run.outcome).toMatchObject({ status: 'failed', error: 'CalibrationStepEvidenceError' });
          expect(run.outcome.status === 'failed' ? run.outcome.cause : '').toMatch(reason);
          expect(await leftOver(`calib-evidence-${slug}-twice`)).toEqual({ jobs: [], configMaps: [], held: false });
        },
        LONG,
      );
    });
  }
});
