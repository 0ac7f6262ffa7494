import { describe, expect, it } from '@jest/globals';
import { VirtualClock } from '../../clock/index.js';
import type { ClusterClient, KubeObject } from '../../kube/index.js';
import { silentLogger } from '../../log/index.js';
import type { MetricsSource, RangeSeries } from '../../metrics/index.js';
import { CalibrationStepEvidenceError } from '../errors.js';
import { T0_MS, testInput } from '../testing/steps.js';
import type { StepMeasurement } from '../types.js';
import { measureStep } from './measureStep.js';
import { planNextStep } from './planNextStep.js';

// A window AMP holds no sample of (a scrape gap across all of it) is failed evidence like any other: the step is
// repeated at its rate, and a second empty window ends the run with CalibrationStepEvidenceError. It once threw
// CalibrationMeasurementError from MeasureStep and ended the run at the first empty window, with no repeat (a
// clean-clone CI run of test/calibration-evidence.test.ts, the scrape-gap fault on a loaded machine).

const input = testInput({ plan: { rates: [10, 40], holdSeconds: 10 } });
const execution = { id: 'arn:aws:states:us-east-2:1:execution:m:run', name: 'run', startTime: '2025-06-02T09:00:00Z' };
const POD = 'vllm-inference-app-1';
const CONTAINER_START = new Date(T0_MS - 600_000).toISOString();

const kubePod: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: POD, namespace: 'default', uid: `uid-${POD}`, labels: { app: 'vllm' } },
  status: {
    conditions: [{ type: 'Ready', status: 'True' }],
    containerStatuses: [{ restartCount: 0, state: { running: { startedAt: CONTAINER_START } } }],
  },
};
const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'vllm-inference-app', namespace: 'default' },
  spec: { selector: { matchLabels: { app: 'vllm' } } },
} as unknown as KubeObject;
/** The Deployment and its one Ready Pod, unchanged since the step's start: only AMP's data is missing. */
const cluster = { get: () => Promise.resolve(deployment), listPods: () => Promise.resolve([kubePod]) };

/** AMP as a scrape gap across the whole window leaves it: `before` seconds of samples before the window, none in it. */
function ampWithGap(before: number): MetricsSource {
  const series: RangeSeries[] =
    before === 0
      ? []
      : [
          {
            labels: { pod: POD },
            points: Array.from({ length: before }, (_, i) => {
              const t = T0_MS - (before - i) * 1000;
              return { timestampMs: t, value: t / 1000 };
            }),
          },
        ];
  return {
    instant: () => Promise.resolve([]),
    // Only the evidence's sample-time query is a range over `timestamp(...)`; the queue's range is empty.
    range: (query) => Promise.resolve(query.startsWith('timestamp(') ? series : []),
  };
}

function ports(source: MetricsSource) {
  return {
    clock: new VirtualClock(T0_MS + 60_000),
    logger: silentLogger,
    cluster: () => Promise.resolve(cluster as unknown as ClusterClient),
    metricsSource: () => source,
  };
}

/** Step `index` at `rateRps`, ended early by WatchLoadStep at 5 s (so no k6 summary is read), served by the Pod. */
function event(index: number, rateRps: number, steps: StepMeasurement[]) {
  const job = `run-load-${index}`;
  return {
    input,
    execution,
    load: {
      job: { namespace: 'default', name: job, component: 'load' as const, createdAtMs: T0_MS, boundSeconds: 60 },
      index,
      rateRps,
      k6RateRps: rateRps,
      backgroundRps: 0,
      holdSeconds: 10,
      servedBy: {
        deployment: 'vllm-inference-app',
        pods: [{ name: POD, uid: `uid-${POD}`, restartCount: 0, containerStartMs: Date.parse(CONTAINER_START) }],
      },
    },
    watch: {
      status: 'ended' as const,
      job,
      reason: 'stable early',
      waitSeconds: 1,
      loadStartMs: T0_MS,
      ending: { kind: 'stable-early' as const, reason: 'stable early', heldSeconds: 5, plannedHoldSeconds: 10 },
      windowEndMs: T0_MS + 5_000,
      k6Readings: [],
    },
    stepData: null,
    steps,
  };
}

describe('Function: measureStep (workflow), a window AMP holds no sample of', () => {
  it.each([
    { case: 'no vLLM series at all', before: 0, coverage: `AMP holds no sample of Pod ${POD} in the window` },
    {
      case: 'samples up to the window, none in it',
      before: 30,
      coverage: `AMP's last sample of Pod ${POD} is 6 s before the window's end`,
    },
  ])('fails its evidence with the reason, not the run: $case', async ({ before, coverage }) => {
    // Act
    const steps = await measureStep(ports(ampWithGap(before)), event(0, 10, []));

    // Assess
    const [step] = steps;
    expect(step?.evidence).toMatchObject({ ok: false, attempt: 1 });
    expect(step?.evidence?.reasons[0]).toMatch(/^step 1 \(10 req\/s\): AMP has no vLLM series for default\//);
    // The coverage check's own reason follows: which Pod, and how far its samples stop short.
    expect(step?.evidence?.reasons).toContain(coverage);
    // Never judged: the verdict says why, and the plan repeats the rate.
    expect(step?.verdict).toEqual({ saturated: false, reasons: [expect.stringMatching(/^not judged: step 1/)] });
    expect(planNextStep(ports(ampWithGap(before)), { input, execution, steps })).toMatchObject({
      done: false,
      index: 1,
      rateRps: 10,
      reason: expect.stringMatching(/^repeating step 1: step 1 \(10 req\/s\): AMP has no vLLM series/),
    });
  });

  it('ends the run with CalibrationStepEvidenceError when the repeat is empty too', async () => {
    // Prepare
    const first = await measureStep(ports(ampWithGap(30)), event(0, 10, []));

    // Act
    const steps = await measureStep(ports(ampWithGap(30)), event(1, 10, first));

    // Assess
    expect(steps.map((step) => step.evidence?.attempt)).toEqual([1, 2]);
    const act = () => planNextStep(ports(ampWithGap(30)), { input, execution, steps });
    expect(act).toThrow(CalibrationStepEvidenceError);
    expect(act).toThrow(/step 2 \(10 req\/s\) failed its evidence checks 2 times \(steps 1, 2\)/);
  });
});
