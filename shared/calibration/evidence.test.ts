import { describe, expect, it } from '@jest/globals';
import type { ClusterClient, KubeObject } from '../kube/index.js';
import {
  MetricsNonFiniteValueError,
  MetricsValueOutOfDomainError,
  type InstantSample,
  type MetricsSource,
  type RangeSeries,
} from '../metrics/index.js';
import {
  attemptOf,
  checkCompletions,
  checkCoverage,
  checkPods,
  checkStepEvidence,
  podRecord,
  type PodRecord,
} from './evidence.js';
import { buildSteps, k6Summary, T0_MS, testInput } from './testing/steps.js';
import type { StepMeasurement } from './types.js';

const input = testInput();
const window = { startMs: T0_MS, endMs: T0_MS + 60_000 };

/** Sample times every `everyS` seconds from `fromS` to `toS` (seconds from the window's start), minus `skip`. */
function samples(fromS: number, toS: number, everyS = 5, skip: readonly number[] = []): number[] {
  const times: number[] = [];
  for (let t = fromS; t <= toS; t += everyS) if (!skip.includes(t)) times.push(T0_MS + t * 1000);
  return times;
}

const pod = (name: string, overrides: Partial<PodRecord> = {}): PodRecord => ({
  name,
  uid: `uid-${name}`,
  restartCount: 0,
  containerStartMs: T0_MS - 600_000,
  ...overrides,
});

function heldStep(rateRps: number, spec: Parameters<typeof buildSteps>[0][number] = { rateRps }): StepMeasurement {
  return buildSteps([{ ...spec, rateRps }], input)[0] as StepMeasurement;
}

describe('Function: checkCoverage', () => {
  it.each([
    // Every 5 s from before the start to past the end: covered.
    { name: 'a scrape every interval', times: samples(-3, 65), reasons: 0 },
    // One missed scrape (a 10 s gap at a 5 s interval) is ordinary.
    { name: 'one missed scrape', times: samples(-3, 65, 5, [32]), reasons: 0 },
    // Prometheus paused across the end: the last sample 8 s before it, nothing after (yet).
    { name: 'a pause across the end', times: samples(-3, 52), reasons: 1 },
    // ... and AMP answers again after it: the gap across the end counts.
    { name: 'a pause across the end, samples after it', times: [...samples(-3, 52), ...samples(67, 77)], reasons: 1 },
    // Samples missing for 15 s inside the window (three scrapes), the queries answer.
    { name: 'a gap inside the window', times: samples(-3, 65, 5, [22, 27, 32]), reasons: 1 },
    // A Pod whose first sample came 20 s into the window (it was not scraped at the start).
    { name: 'a late first sample', times: samples(22, 65), reasons: 1 },
    { name: 'no sample at all', times: [], reasons: 1 },
  ])('$name → $reasons reason(s)', ({ times, reasons }) => {
    // Act
    const found = checkCoverage(new Map([['vllm-a', times]]), window, 5, ['vllm-a']);

    // Assess
    expect(found).toHaveLength(reasons);
  });

  it('names the Pod, the gap and the bound', () => {
    // Act
    const [reason] = checkCoverage(new Map([['vllm-a', samples(-3, 65, 5, [22, 27, 32])]]), window, 5, ['vllm-a']);

    // Assess
    expect(reason).toBe(
      "AMP's samples of Pod vllm-a have a gap of 20 s from 17 s into the window (longer than 2 scrape intervals of 5 s)",
    );
  });
});

describe('Function: checkPods', () => {
  const before = [pod('vllm-a')];
  it.each([
    {
      name: 'the same Pod, Ready, no restart',
      now: [pod('vllm-a')],
      ready: [pod('vllm-a')],
      amp: ['vllm-a'],
      reasons: [],
    },
    {
      // The Pod deleted during the step; its replacement Ready (cold) and in AMP.
      name: 'a replaced Pod',
      now: [pod('vllm-b')],
      ready: [pod('vllm-b')],
      amp: ['vllm-a', 'vllm-b'],
      reasons: [
        "Pod vllm-a that served the step's start is gone (deleted or replaced)",
        "Pod vllm-b is new since the step's start (a replacement is cold: not warmed up)",
        "AMP shows Pod vllm-b serving in the window, which was not Ready at the step's start",
      ],
    },
    {
      name: 'a restarted container',
      now: [pod('vllm-a', { restartCount: 1, containerStartMs: T0_MS + 20_000 })],
      ready: [pod('vllm-a', { restartCount: 1 })],
      amp: ['vllm-a'],
      reasons: ['Pod vllm-a restarted 1 time(s) during the step (a restarted engine is cold: not warmed up)'],
    },
    {
      name: 'a Pod no longer Ready',
      now: [pod('vllm-a')],
      ready: [],
      amp: ['vllm-a'],
      reasons: ['Pod vllm-a is no longer Ready'],
    },
  ])('$name', ({ now, ready, amp, reasons }) => {
    // Act
    const found = checkPods(before, { pods: now, ready }, amp);

    // Assess
    expect(found).toEqual(reasons);
  });
});

describe('Function: checkCompletions', () => {
  const context = { backgroundRps: 0, k6RateRps: 20, requestTimeoutSeconds: 60 };
  const slowK6 = { avg: 4_500, min: 3_000, med: 4_400, max: 6_000, p90: 5_500, p95: 5_800, p99: 6_000 };

  it.each([
    { name: 'AMP agrees with k6 (98 %)', step: heldStep(20), reasons: 0 },
    // Prometheus paused across the end: AMP read 12.6/s where k6 got every one of 1200 answers.
    { name: 'AMP reads 12.6/s of 20', step: heldStep(20, { rateRps: 20, amp: { completedRps: 12.6 } }), reasons: 1 },
    // The Pod deleted 3 s in: 100 of 240 failed in under a second each (connections refused).
    {
      name: 'fast failures',
      step: heldStep(20, {
        rateRps: 20,
        holdSeconds: 12,
        k6: { httpReqs: 240, httpReqFailed: 100, iterations: 240 },
        amp: { completedRps: 140 / 12 },
      }),
      reasons: 1,
    },
    // A saturated replica: failures are timeouts (k6's p95 at the timeout), its queue holds what k6 counts later.
    {
      name: 'timeouts at saturation',
      step: heldStep(20, {
        rateRps: 20,
        k6: {
          httpReqs: 1200,
          httpReqFailed: 100,
          httpReqDurationMs: { avg: 30_000, min: 900, med: 30_000, max: 60_000, p90: 58_000, p95: 60_000, p99: 60_000 },
        },
        amp: { completedRps: 12, queueMax: 300 },
      }),
      reasons: 0,
    },
    // k6 short of CPU: its requests took 4.5 s where the replica, with no queue, served them in 0.9 s at its p95.
    {
      name: 'a starved k6',
      step: heldStep(20, { rateRps: 20, k6: { httpReqDurationMs: slowK6 }, amp: { p95E2eSeconds: 0.9, queueMax: 0 } }),
      reasons: 1,
    },
    // Just within 2 × p95 + 1 s: network and k6's own time are allowed.
    {
      name: 'k6 a little slower than vLLM',
      step: heldStep(20, {
        rateRps: 20,
        k6: { httpReqDurationMs: { ...slowK6, avg: 2_700 } },
        amp: { p95E2eSeconds: 0.9, queueMax: 0 },
      }),
      reasons: 0,
    },
    // The same k6 figures with a queue at the replica: requests queued at the window's end finish after it.
    {
      name: 'slow in k6 behind a queue',
      step: heldStep(20, { rateRps: 20, k6: { httpReqDurationMs: slowK6 }, amp: { p95E2eSeconds: 0.9, queueMax: 12 } }),
      reasons: 0,
    },
  ])('$name → $reasons reason(s)', ({ step, reasons }) => {
    // Act
    const found = checkCompletions(step, context);

    // Assess
    expect(found).toHaveLength(reasons);
  });

  it('counts the users beside k6 (background)', () => {
    // Prepare: k6 sent 10 req/s of 20, the users the other 10; AMP saw all 20.
    const step = heldStep(20, { rateRps: 20, k6: k6Summary(10), amp: { completedRps: 19.8 } });

    // Act / Assess
    expect(checkCompletions(step, { ...context, backgroundRps: 10, k6RateRps: 10 })).toEqual([]);
    expect(checkCompletions(step, { ...context, backgroundRps: 0, k6RateRps: 10 })).toHaveLength(1);
  });

  it('says where the time went and what to change when k6 did not keep up', () => {
    // Prepare
    const step = heldStep(20, { rateRps: 20, k6: { httpReqDurationMs: slowK6 }, amp: { p95E2eSeconds: 0.9 } });

    // Act
    const [reason] = checkCompletions({ ...step, amp: { ...step.amp, queueMax: 0 } }, context);

    // Assess
    expect(reason).toBe(
      "k6's requests took 4.5 s on average where vLLM served them in 0.9 s at its p95 with at most 0 queued (more " +
        'than 2 × p95 + 1 s): the time went to the load generator or the network, not the replica; give k6 more CPU ' +
        '(k6.resources, a node of its own through k6.nodeSelector) or run it nearer the target',
    );
  });

  it('skips a step that ended early (no k6 summary)', () => {
    // Act
    const found = checkCompletions({ ...heldStep(20), k6: null }, context);

    // Assess
    expect(found).toEqual([]);
  });
});

describe('Function: checkStepEvidence', () => {
  function kubePod(name: string, restartCount = 0): KubeObject {
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', uid: `uid-${name}`, labels: { app: 'vllm' } },
      status: {
        conditions: [{ type: 'Ready', status: 'True' }],
        containerStatuses: [
          { restartCount, state: { running: { startedAt: new Date(T0_MS - 600_000).toISOString() } } },
        ],
      },
    };
  }
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'vllm-inference-app', namespace: 'default' },
    spec: { selector: { matchLabels: { app: 'vllm' } } },
  } as unknown as KubeObject;
  const cluster = (pods: KubeObject[]) =>
    ({ get: () => Promise.resolve(deployment), listPods: () => Promise.resolve(pods) }) as unknown as Pick<
      ClusterClient,
      'get' | 'listPods'
    >;
  const source = (series: RangeSeries[]): MetricsSource => ({
    instant: () => Promise.resolve([]),
    range: () => Promise.resolve(series),
  });
  const timestamps = (podName: string, times: number[]): RangeSeries => ({
    labels: { pod: podName },
    points: times.map((t) => ({ timestampMs: t, value: t / 1000 })),
  });
  const servedBy = { deployment: 'vllm-inference-app', pods: [podRecord(kubePod('vllm-inference-app-1'))] };
  const context = {
    window,
    nowMs: window.endMs + 120_000,
    namespace: 'default',
    backgroundRps: 0,
    k6RateRps: 20,
    requestTimeoutSeconds: 60,
    attempt: 1,
    servedBy,
  };

  it('holds for an undisturbed step', async () => {
    // Act
    const evidence = await checkStepEvidence(
      {
        source: source([timestamps('vllm-inference-app-1', samples(-3, 70))]),
        cluster: cluster([kubePod('vllm-inference-app-1')]),
      },
      input,
      heldStep(20),
      context,
    );

    // Assess
    expect(evidence).toEqual({ ok: true, reasons: [], attempt: 1 });
  });

  it('fails with every reason when the Pod restarted and AMP paused across the end', async () => {
    // Act
    const evidence = await checkStepEvidence(
      {
        source: source([timestamps('vllm-inference-app-1', [...samples(-3, 50), ...samples(70, 80)])]),
        cluster: cluster([kubePod('vllm-inference-app-1', 1)]),
      },
      input,
      heldStep(20),
      { ...context, attempt: 2 },
    );

    // Assess
    expect(evidence.ok).toBe(false);
    expect(evidence.attempt).toBe(2);
    expect(evidence.reasons.join('\n')).toMatch(/gap of 23 s from 47 s into the window/);
    expect(evidence.reasons.join('\n')).toMatch(/restarted 1 time/);
  });

  it('names a gap early in a short window: the scrape interval comes from the samples before it too', async () => {
    // Prepare: a 5 s window at 1 s scrapes, the Pod's samples missing from 1 s to 12 s in. AMP answers what the asked
    // range holds: read from the window's start alone, the spacings are 1 s and 11 s (a "median" of 11 s).
    const short = { startMs: T0_MS, endMs: T0_MS + 5_000 };
    const all = [...samples(-120, 1, 1), ...samples(12, 30, 1)];
    const answering: MetricsSource = {
      instant: () => Promise.resolve([]),
      range: (_query, range) =>
        Promise.resolve([
          timestamps(
            'vllm-inference-app-1',
            all.filter((t) => t >= range.startMs && t <= range.endMs),
          ),
        ]),
    };

    // Act
    const evidence = await checkStepEvidence(
      { source: answering, cluster: cluster([kubePod('vllm-inference-app-1')]) },
      input,
      { ...heldStep(20), holdSeconds: 5 },
      { ...context, window: short, nowMs: short.endMs + 7_500 },
    );

    // Assess
    expect(evidence.reasons.join('\n')).toMatch(
      /gap of 11 s from 1 s into the window \(longer than 2 scrape intervals of 1 s\)/,
    );
  });

  it('fails a step that started on fewer Ready Pods than the test runs', async () => {
    // Act
    const evidence = await checkStepEvidence(
      {
        source: source([timestamps('vllm-inference-app-1', samples(-3, 70))]),
        cluster: cluster([kubePod('vllm-inference-app-1')]),
      },
      testInput({ testReplicas: 2 }),
      heldStep(20),
      context,
    );

    // Assess
    expect(evidence.reasons).toContain("1 of the 2 test replica(s) were Ready at the step's start");
  });

  it('skips the Pod check for a state written before servedBy', async () => {
    // Prepare
    const { servedBy: _, ...old } = context;

    // Act
    const evidence = await checkStepEvidence(
      { source: source([timestamps('vllm-inference-app-1', samples(-3, 70))]), cluster: cluster([]) },
      input,
      heldStep(20),
      old,
    );

    // Assess
    expect(evidence.ok).toBe(true);
  });

  it.each([
    { case: 'a negative sample time', value: -5, error: MetricsValueOutOfDomainError },
    { case: 'a +Inf sample time', value: Infinity, error: MetricsNonFiniteValueError },
  ])("refuses $case in the range answer with a named error naming the Pod's series", async ({ value, error }) => {
    // Prepare: one bad point among good ones.
    const bad = timestamps('vllm-inference-app-1', samples(-3, 70));
    bad.points[10] = { timestampMs: T0_MS + 7_000, value };

    // Act
    const checked = checkStepEvidence(
      { source: source([bad]), cluster: cluster([kubePod('vllm-inference-app-1')]) },
      input,
      heldStep(20),
      context,
    );

    // Assess
    await expect(checked).rejects.toThrow(error);
    await expect(checked).rejects.toThrow(/\{"pod":"vllm-inference-app-1"\}/);
  });

  it("refuses a -Inf newest sample time in the instant answer, never counting it as the Pod's last sample", async () => {
    // Prepare
    const latest: InstantSample[] = [
      { labels: { pod: 'vllm-inference-app-1' }, value: -Infinity, timestampMs: context.nowMs },
    ];
    const answering: MetricsSource = {
      instant: () => Promise.resolve(latest),
      range: () => Promise.resolve([timestamps('vllm-inference-app-1', samples(-3, 70))]),
    };

    // Act & Assess
    await expect(
      checkStepEvidence(
        { source: answering, cluster: cluster([kubePod('vllm-inference-app-1')]) },
        input,
        heldStep(20),
        context,
      ),
    ).rejects.toThrow(MetricsNonFiniteValueError);
  });
});

describe('Function: attemptOf', () => {
  it('counts the earlier failed tries of the rate', () => {
    // Prepare
    const [a, b] = buildSteps([{ rateRps: 10 }, { rateRps: 20 }], input) as [StepMeasurement, StepMeasurement];
    const failed = { ...b, evidence: { ok: false, reasons: ['x'], attempt: 1 } };

    // Act / Assess
    expect(attemptOf(20, [a, b])).toBe(1);
    expect(attemptOf(20, [a, failed])).toBe(2);
    expect(attemptOf(10, [a, failed])).toBe(1);
  });
});
