import { afterEach, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  HttpMetricsSource,
  MetricsHttpError,
  MetricsMultipleSeriesError,
  MetricsNonFiniteValueError,
  MetricsValueOutOfDomainError,
} from '../metrics/index.js';
import { K6_SUMMARY_MARKER } from '../kube/index.js';
import {
  CalibrationDependencyUnavailableError,
  CalibrationInputInvalidError,
  CalibrationJobFailedError,
  CalibrationMeasurementError,
} from './errors.js';
import {
  classifyStep,
  leastSquaresSlope,
  measureStep,
  parseK6SummaryFromLog,
  podsWithoutSeries,
  readinessCheck,
} from './measure.js';
import { calibrationTarget, readinessQueries, scrapeSamplesQuery, stepQueries } from './stepQueries.js';
import {
  failure,
  matrix,
  startFakePrometheus,
  vector,
  type FakeAnswer,
  type FakePrometheus,
  type FakeRequest,
} from './testing/fakePrometheus.js';
import { T0_MS, ampStable, k6Summary, testInput } from './testing/steps.js';
import { counterWindowQueries } from './counterWindow.js';

const POD = 'vllm-inference-app-7d9c8b6f5d-x2k4q';
const input = testInput();
const target = calibrationTarget(input);
const WINDOW = { index: 3, rateRps: 40, holdSeconds: 60, startMs: T0_MS, endMs: T0_MS + 60_000 };

let servers: FakePrometheus[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function sourceFor(answer: (request: FakeRequest) => FakeAnswer) {
  const server = await startFakePrometheus(answer);
  servers.push(server);
  const source = new HttpMetricsSource({
    endpoint: server.url,
    region: 'us-east-2',
    credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'test-secret' },
    maxAttempts: 1,
  });
  return { server, source };
}

type CounterKey = keyof ReturnType<typeof counterWindowQueries>;

/**
 * Answers each step query from a table keyed by the query text the product builds; the per-Pod counter readings
 * (counterWindow.ts) from `counters(key, time)`, by default nothing (so the step falls back to `increase`).
 */
function stepAnswers(
  values: Partial<Record<keyof ReturnType<typeof stepQueries>, FakeAnswer>>,
  counters: (key: CounterKey, timeS: number) => FakeAnswer = () => vector([]),
) {
  const queries = stepQueries(target, 60);
  const byText = new Map(Object.entries(queries).map(([key, text]) => [text, key as keyof typeof queries]));
  const counterText = new Map(
    Object.entries(counterWindowQueries(target)).map(([key, text]) => [text, key as CounterKey]),
  );
  return (request: FakeRequest): FakeAnswer => {
    const text = request.params.get('query') ?? '';
    const counter = counterText.get(text);
    if (counter !== undefined) return counters(counter, Number(request.params.get('time')));
    const key = byText.get(text);
    if (key === undefined) return failure(400, 'bad_data', `unexpected query ${text}`);
    return values[key] ?? vector([]);
  };
}

/** A queue that grows 1.11 requests per second once the batch is full (after 5 s) up to 61, sampled every 2 s. */
function growingQueue(): FakeAnswer {
  const start = T0_MS / 1000;
  const points: Array<[number, number]> = [];
  for (let t = 0; t <= 60; t += 2) points.push([start + t, Math.max(0, Math.round(1.11 * (t - 5)))]);
  return matrix([{ points }]);
}

describe('Function: measureStep', () => {
  it('measures the hold window from AMP and classifies the step', async () => {
    // Prepare
    const { server, source } = await sourceFor(
      stepAnswers({
        queue: growingQueue(),
        pods: vector([{ value: 1 }]),
        completed: vector([{ value: 2160 }]),
        p95E2e: vector([{ value: 6.2 }]),
        p95Ttft: vector([{ value: 3.1 }]),
        p95InterToken: vector([{ value: 0.045 }]),
        kvCacheMax: vector([{ value: 0.46 }]),
        kvCacheMean: vector([{ value: 0.41 }]),
        kvCacheLast: vector([{ value: 0.46 }]),
        kvCacheLatestHalfStart: vector([{ value: 0.45 }]),
        preemptions: vector([{ value: 3 }]),
        runningMean: vector([{ value: 96 }]),
        runningLatestHalfMean: vector([{ value: 128 }]),
      }),
    );

    // Act
    const step = await measureStep({ source }, input, WINDOW, k6Summary(40));

    // Assess
    expect(step).toMatchObject({
      index: 3,
      rateRps: 40,
      holdSeconds: 60,
      windowStart: '2025-06-02T09:00:00.000Z',
      windowEnd: '2025-06-02T09:01:00.000Z',
    });
    expect(step.amp.queueMax).toBe(61);
    // Least squares over the whole hold, the flat start included.
    expect(step.amp.queueSlopePerSecond).toBeCloseTo(1.08, 2);
    expect(step.amp.queueMean).toBeCloseTo(28.5, 0);
    expect(step.amp).toMatchObject({
      p95E2eSeconds: 6.2,
      p95TtftSeconds: 3.1,
      p95InterTokenSeconds: 0.045,
      kvCacheUsageMax: 0.46,
      kvCacheUsageMean: 0.41,
      kvCacheUsageLast: 0.46,
      kvCacheUsageLatestHalfStart: 0.45,
      preemptions: 3,
      completedRps: 36,
      pods: 1,
      runningMean: 96,
      runningLatestHalfMean: 128,
    });
    expect(step.verdict.saturated).toBe(true);
    expect(step.verdict.reasons[0]).toMatch(/^queue grew 1\.1 req\/s \(max 61\) at 40 req\/s offered/);
    expect(step.verdict.reasons).toContainEqual(expect.stringContaining('vLLM preempted 3 sequences'));
    // Every instant query is evaluated at the end of the window; the queue is a range over the window.
    const range = server.requests.filter((r) => r.api === 'query_range');
    expect(range).toHaveLength(1);
    expect(range[0]?.params.get('start')).toBe(String(T0_MS / 1000));
    expect(range[0]?.params.get('end')).toBe(String((T0_MS + 60_000) / 1000));
    expect(range[0]?.params.get('step')).toBe('2');
    const counterTexts = new Set(Object.values(counterWindowQueries(target)));
    const instants = server.requests.filter((r) => r.api === 'query' && !counterTexts.has(r.params.get('query') ?? ''));
    expect(instants).toHaveLength(14);
    expect(new Set(instants.map((r) => r.params.get('time')))).toEqual(new Set([String((T0_MS + 60_000) / 1000)]));
  });

  it('reads a mean lifetime below 0 (mean e2e − mean TTFT of different requests) as 0, not as a refused answer', async () => {
    // Prepare: the TTFT histogram also counts requests still decoding, so its mean can exceed the finished ones' e2e.
    const { source } = await sourceFor(
      stepAnswers({ queue: growingQueue(), pods: vector([{ value: 1 }]), meanLifetime: vector([{ value: -0.3 }]) }),
    );

    // Act
    const step = await measureStep({ source }, input, WINDOW, k6Summary(40));

    // Assess
    expect(step.amp.meanLifetimeSeconds).toBe(0);
  });

  it('reads the completions at the window samples when a 30 s scrape leaves one sample in it', async () => {
    // Prepare: scrapes at T0 − 10 s, T0 + 20 s and T0 + 50 s. `increase` over the 60 s window sees two samples only
    // when the scrape phase allows, here it answers nothing; the counters read at the samples cover 50 s of load.
    const scrapes = [-10, 20, 50].map((t) => T0_MS / 1000 + t);
    const at = (timeS: number) => scrapes.filter((t) => t <= timeS).pop() as number;
    const counter: Record<CounterKey, (t: number) => number> = {
      scrapedAt: (t) => t,
      completed: (t) => 1000 + Math.max(0, t - T0_MS / 1000 - 2) * 30,
      preemptions: () => 0,
      e2eSum: (t) => 500 + Math.max(0, t - T0_MS / 1000 - 2) * 30 * 2,
      e2eCount: (t) => 1000 + Math.max(0, t - T0_MS / 1000 - 2) * 30,
      ttftSum: (t) => 100 + Math.max(0, t - T0_MS / 1000 - 2) * 30 * 0.5,
      ttftCount: (t) => 1000 + Math.max(0, t - T0_MS / 1000 - 2) * 30,
      inferenceSum: (t) => Math.max(0, t - T0_MS / 1000 - 2) * 30 * 1.6,
      inferenceCount: (t) => 1000 + Math.max(0, t - T0_MS / 1000 - 2) * 30,
    };
    const flat = matrix([{ points: [[T0_MS / 1000 + 20, 0] as const] }]);
    const { source } = await sourceFor(
      stepAnswers({ queue: flat, pods: vector([{ value: 1 }]) }, (key, timeS) =>
        vector([{ labels: { pod: POD }, value: counter[key](at(timeS)) }]),
      ),
    );

    // Act
    const step = await measureStep({ source }, input, { ...WINDOW, rateRps: 30 }, k6Summary(30));

    // Assess: the requests live 2 s, so 48 s × 30 completions over the 50 s from the load's start to the last sample.
    expect(step.amp.completedRps).toBeCloseTo(28.8, 6);
    expect(step.amp.completedSpanSeconds).toBe(50);
    // The late half: the middle sample (T0 + 20 s) to the last one (T0 + 50 s), 30 completions/s.
    expect(step.amp.completedRpsLateHalf).toBeCloseTo(30, 6);
    expect(step.amp.completedLateHalfFromSeconds).toBe(20);
    // Mean e2e 2 s − mean TTFT 0.5 s of the requests finished in between.
    expect(step.amp.meanLifetimeSeconds).toBeCloseTo(1.5, 6);
    expect(step.amp.meanInferenceSeconds).toBeCloseTo(1.6, 6);
    // Not behind: 28.8 req/s is what 30 req/s leaves with k6's 2 s of requests in flight at the last sample.
    expect(step.verdict.reasons.filter((r) => r.startsWith('vLLM completed'))).toEqual([]);
  });

  it('reports no latency (null) when no request finished, and a stable queue', async () => {
    // Prepare
    const flat = matrix([{ points: [0, 2, 4, 6].map((t) => [T0_MS / 1000 + t, 0] as const) }]);
    const { source } = await sourceFor(stepAnswers({ queue: flat, pods: vector([{ value: 1 }]) }));

    // Act
    const step = await measureStep({ source }, input, WINDOW, k6Summary(40, 60, { httpReqs: 0, iterations: 0 }));

    // Assess
    expect(step.amp).toMatchObject({ p95E2eSeconds: null, p95TtftSeconds: null, completedRps: 0, queueMax: 0 });
    expect(step.verdict.reasons).toContainEqual(expect.stringContaining('vLLM completed 0 req/s at 40 req/s offered'));
  });

  it.each([
    { case: 'a 503 from AMP', answer: failure(503, 'unavailable', 'try later') },
    { case: 'a 429 from AMP', answer: failure(429, 'throttled', 'rate exceeded') },
  ])('throws CalibrationDependencyUnavailableError (retryable) on $case', async ({ answer }) => {
    // Prepare
    const { source } = await sourceFor(() => answer);

    // Act
    const result = measureStep({ source }, input, WINDOW, k6Summary(40));

    // Assess
    await expect(result).rejects.toThrow(CalibrationDependencyUnavailableError);
    await expect(result).rejects.toMatchObject({ retryable: true, cause: expect.any(MetricsHttpError) });
  });

  it('throws CalibrationDependencyUnavailableError when AMP cannot be reached', async () => {
    // Prepare: a port that was just free, so nothing listens on it.
    const probe = http.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const source = new HttpMetricsSource({
      endpoint: `http://127.0.0.1:${port}/`,
      region: 'us-east-2',
      credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'test-secret' },
      maxAttempts: 1,
    });

    // Act
    const result = measureStep({ source }, input, WINDOW, k6Summary(40));

    // Assess
    await expect(result).rejects.toThrow(CalibrationDependencyUnavailableError);
    await expect(result).rejects.toThrow(/could not reach/);
  });

  it('lets a refused query (HTTP 400) through as the metrics error it is: retrying cannot fix it', async () => {
    // Prepare
    const { source } = await sourceFor(() => failure(400, 'bad_data', 'parse error'));

    // Act
    const result = measureStep({ source }, input, WINDOW, k6Summary(40));

    // Assess
    await expect(result).rejects.toThrow(MetricsHttpError);
  });

  it('throws CalibrationMeasurementError when AMP has no vLLM series for the window', async () => {
    // Prepare
    const { source } = await sourceFor(stepAnswers({ queue: matrix([]) }));

    // Act
    const result = measureStep({ source }, input, WINDOW, k6Summary(40));

    // Assess
    await expect(result).rejects.toThrow(CalibrationMeasurementError);
    await expect(result).rejects.toThrow(
      'step 4 (40 req/s): AMP has no vLLM series for default/vllm-inference-app (model ' +
        '"mistralai/Ministral-3-8B-Instruct-2512") from 2025-06-02T09:00:00.000Z to 2025-06-02T09:01:00.000Z',
    );
  });

  it('throws CalibrationMeasurementError when the queue series is missing although Pods reported', async () => {
    // Prepare
    const { source } = await sourceFor(stepAnswers({ queue: matrix([]), pods: vector([{ value: 1 }]) }));

    // Act / Assess
    await expect(measureStep({ source }, input, WINDOW, k6Summary(40))).rejects.toThrow(
      /no vllm:num_requests_waiting samples/,
    );
  });

  it.each([
    { case: 'an end before the start', window: { ...WINDOW, endMs: T0_MS - 1 }, field: 'window.endMs' },
    { case: 'a zero rate', window: { ...WINDOW, rateRps: 0 }, field: 'window.rateRps' },
    { case: 'a negative index', window: { ...WINDOW, index: -1 }, field: 'window.index' },
  ])('refuses $case naming the field', async ({ window, field }) => {
    // Prepare
    const { source } = await sourceFor(() => vector([]));

    // Act
    const result = measureStep({ source }, input, window, k6Summary(40));

    // Assess
    await expect(result).rejects.toThrow(CalibrationInputInvalidError);
    await expect(result).rejects.toThrow(field);
  });
});

describe('Function: classifyStep', () => {
  const slo = testInput({ slo: { p95LatencySeconds: 5 } });
  const latency = (avg: number) => ({
    avg,
    min: 500,
    med: avg,
    max: avg * 2,
    p90: avg * 1.3,
    p95: avg * 1.5,
    p99: avg * 1.8,
  });

  it.each([
    {
      case: 'a growing queue',
      amp: ampStable(40, { queueSlopePerSecond: 4.8, queueMax: 61, queueMean: 20 }),
      k6: k6Summary(40),
      rate: 40,
      reason: 'queue grew 4.8 req/s (max 61) at 40 req/s offered: more than 0.8 req/s with at least 5 queued',
    },
    {
      case: 'completions behind the rate (beyond what is in flight)',
      amp: ampStable(50, { completedRps: 44 }),
      k6: k6Summary(50, 60, { httpReqDurationMs: latency(2500) }),
      rate: 50,
      reason: 'vLLM completed 44 req/s at 50 req/s offered, below 45.5 req/s (95 % of the rate, less the 2.5 s',
    },
    {
      case: 'k6 getting too few successful responses',
      amp: ampStable(50),
      k6: k6Summary(50, 60, { httpReqs: 3000, httpReqFailed: 300 }),
      rate: 50,
      reason: 'k6 got 45 successful responses/s at 50 req/s offered (90 %), below 95 %; 300 of 3000 requests failed',
    },
    {
      case: 'k6 dropping more than 1 % of the iterations',
      amp: ampStable(50),
      k6: k6Summary(50, 60, { droppedIterations: 31 }),
      rate: 50,
      reason: 'k6 dropped 31 of 3000 planned iterations (1 %) at 50 req/s offered, more than 1 %',
    },
    {
      case: 'p95 above the SLO',
      amp: ampStable(50, { p95E2eSeconds: 6.2 }),
      k6: k6Summary(50),
      rate: 50,
      reason: 'p95 end-to-end latency 6.2 s at 50 req/s offered exceeds the SLO of 5 s',
    },
    {
      // A KV-bound replica: the queue is still empty, but vLLM evicted sequences for want of blocks.
      case: 'preemptions in the window',
      amp: ampStable(50, {
        preemptions: 14,
        kvCacheUsageMax: 0.97,
        kvCacheUsageLast: 0.96,
        kvCacheUsageLatestHalfStart: 0.95,
      }),
      k6: k6Summary(50),
      rate: 50,
      reason: 'vLLM preempted 14 sequences at 50 req/s offered: the KV cache could not hold',
    },
    {
      // The probe above capacity: two lifetimes in, the cache nearly full and still filling.
      case: 'a KV cache near full and still rising',
      amp: ampStable(50, { kvCacheUsageMax: 0.93, kvCacheUsageLast: 0.93, kvCacheUsageLatestHalfStart: 0.78 }),
      k6: k6Summary(50),
      rate: 50,
      reason: "KV cache 93 % full and still rising (78 % → 93 % over the window's latest half) at 50 req/s offered",
    },
    {
      case: 'a KV cache filling fast enough to pass 90 % within another half window',
      amp: ampStable(50, { kvCacheUsageMax: 0.72, kvCacheUsageLast: 0.72, kvCacheUsageLatestHalfStart: 0.5 }),
      k6: k6Summary(50),
      rate: 50,
      reason:
        "KV cache still filling (50 % → 72 % over the window's latest half): at that pace it passes 90 % within 30 s",
    },
  ])('calls a step saturated for $case, with the numbers', ({ amp, k6, rate, reason }) => {
    // Act
    const verdict = classifyStep(amp, k6, rate, slo);

    // Assess
    expect(verdict.saturated).toBe(true);
    expect(verdict.reasons).toHaveLength(1);
    expect(verdict.reasons[0]).toContain(reason);
  });

  it.each([
    { case: 'the guide at 50 req/s', amp: ampStable(50, { completedRps: 48.6, queueMax: 2 }), k6: k6Summary(50) },
    {
      case: 'a fast-growing queue that never held 5 requests',
      amp: ampStable(50, { queueSlopePerSecond: 2, queueMax: 4 }),
      k6: k6Summary(50),
    },
    {
      case: 'a queue of 30 that is not growing',
      amp: ampStable(50, { queueSlopePerSecond: 0.4, queueMax: 30, queueMean: 15 }),
      k6: k6Summary(50),
    },
    {
      case: '94 % completed with 2.9 s of requests in flight (the twin at 50 req/s)',
      amp: ampStable(50, { completedRps: 47 }),
      k6: k6Summary(50, 60, { httpReqDurationMs: latency(2900) }),
    },
    { case: 'a 1 % drop', amp: ampStable(50), k6: k6Summary(50, 60, { droppedIterations: 30 }) },
    { case: 'p95 at the SLO', amp: ampStable(50, { p95E2eSeconds: 5 }), k6: k6Summary(50) },
    {
      case: 'a KV cache levelled off at 85 % without preemptions',
      amp: ampStable(50, { kvCacheUsageMax: 0.86, kvCacheUsageLast: 0.85, kvCacheUsageLatestHalfStart: 0.84 }),
      k6: k6Summary(50),
    },
    {
      case: 'a KV cache still filling but far from full (30 % → 40 %)',
      amp: ampStable(50, { kvCacheUsageMax: 0.4, kvCacheUsageLast: 0.4, kvCacheUsageLatestHalfStart: 0.3 }),
      k6: k6Summary(50),
    },
    {
      case: 'a report without the KV-cache trend (measured before it)',
      amp: ampStable(50, { kvCacheUsageMax: 0.95 }),
      k6: k6Summary(50),
    },
  ])('calls $case stable', ({ amp, k6 }) => {
    // Act
    const verdict = classifyStep(amp, k6, 50, slo);

    // Assess
    expect(verdict).toEqual({ saturated: false, reasons: [] });
  });

  it('ignores latency when no SLO is set', () => {
    // Act
    const verdict = classifyStep(ampStable(50, { p95E2eSeconds: 30 }), k6Summary(50), 50, testInput());

    // Assess
    expect(verdict.saturated).toBe(false);
  });

  it('classifies a step that ended early without its k6 summary from AMP alone, allowing its p95 as in flight', () => {
    // Prepare: 18 s measured; 0.95 × 40 × (1 − 2.5 / 18) = 32.7 req/s is the least that counts as keeping up.
    const amp = ampStable(40, { completedRps: 33 });

    // Act
    const verdict = classifyStep(amp, null, 40, testInput(), 18);

    // Assess
    expect(verdict).toEqual({ saturated: false, reasons: [] });
  });

  it('counts a step ended early as saturated with the early ending as its reason', () => {
    // Prepare: the queue grew, but its maximum stayed under the floor of rule 1.
    const ending = {
      kind: 'saturated-early' as const,
      reason: 'queue slope 3 ± 0.2 req/s is significantly above the saturation limit 0.8 req/s',
      heldSeconds: 20,
      plannedHoldSeconds: 60,
    };

    // Act
    const verdict = classifyStep(
      ampStable(40, { queueSlopePerSecond: 3, queueMax: 4 }),
      null,
      40,
      testInput(),
      20,
      ending,
    );

    // Assess
    expect(verdict).toEqual({
      saturated: true,
      reasons: [
        'the step was ended after 20 s of its 60 s hold at 40 req/s offered: queue slope 3 ± 0.2 req/s is ' +
          'significantly above the saturation limit 0.8 req/s',
      ],
    });
  });

  it('gives every reason that holds', () => {
    // Prepare
    const amp = ampStable(60, { queueSlopePerSecond: 5.6, queueMax: 350, completedRps: 40, p95E2eSeconds: 9 });

    // Act
    const verdict = classifyStep(amp, k6Summary(60, 60, { droppedIterations: 200 }), 60, slo);

    // Assess
    expect(verdict.reasons.map((r) => r.split(' ').slice(0, 2).join(' '))).toEqual([
      'queue grew',
      'vLLM completed',
      'k6 dropped',
      'p95 end-to-end',
    ]);
  });
});

describe('Function: leastSquaresSlope', () => {
  it.each([
    { case: 'a straight line', points: [0, 1, 2, 3].map((t) => ({ t, value: 2 * t + 1 })), slope: 2 },
    { case: 'a flat line', points: [0, 1, 2].map((t) => ({ t, value: 7 })), slope: 0 },
    { case: 'a single point', points: [{ t: 5, value: 3 }], slope: 0 },
  ])('fits $case', ({ points, slope }) => {
    // Act / Assess
    expect(leastSquaresSlope(points)).toBeCloseTo(slope);
  });
});

describe('Function: parseK6SummaryFromLog', () => {
  const summary = k6Summary(20);

  it('reads the last summary line of the log', () => {
    // Prepare
    const log = [
      '     execution: local',
      `${K6_SUMMARY_MARKER}${JSON.stringify({ ...summary, httpReqs: 1 })}`,
      'running (1m02.0s), 000/050 VUs, 1200 complete and 0 interrupted iterations',
      `${K6_SUMMARY_MARKER}${JSON.stringify(summary)}`,
      '',
    ].join('\n');

    // Act / Assess
    expect(parseK6SummaryFromLog(log)).toEqual(summary);
  });

  it.each([
    {
      case: 'no summary line',
      log: 'time="2025-06-02T09:00:00Z" level=error msg="connection refused"\n',
      message:
        'the k6 log has no summary line (a line starting with "K6_SUMMARY "): the script did not reach ' +
        'handleSummary; last log line: "time=\\"2025-06-02T09:00:00Z\\" level=error msg=\\"connection refused\\""',
    },
    {
      case: 'a line that is not JSON',
      log: `${K6_SUMMARY_MARKER}{"rate": 2`,
      message: 'the k6 summary line is not JSON',
    },
    {
      case: 'a summary without a field',
      log: `${K6_SUMMARY_MARKER}${JSON.stringify({ ...summary, httpReqs: undefined })}`,
      message: 'the k6 summary line does not have the expected fields: httpReqs:',
    },
  ])('throws CalibrationJobFailedError for $case', ({ log, message }) => {
    // Act / Assess
    expect(() => parseK6SummaryFromLog(log)).toThrow(CalibrationJobFailedError);
    expect(() => parseK6SummaryFromLog(log)).toThrow(message);
  });
});

describe('Function: readinessCheck', () => {
  const warmup = k6Summary(1, 100, {
    executor: 'shared-iterations',
    rate: null,
    durationSeconds: 120,
    httpReqDurationMs: { avg: 1200, min: 1100, med: 1130, max: 2600, p90: 1200, p95: 1300, p99: 2600 },
  });
  const warmupEndedMs = T0_MS;

  /** AMP scraping every 30 s (2 samples in 60 s): the tail is max(2.5 × 30 s, 25 % of 120 s) = 75 s. */
  function readinessAnswers(answers: { pods: string[]; recentMean?: number; recentCount?: number }) {
    const tail = readinessQueries(target, 75);
    return (request: FakeRequest): FakeAnswer => {
      const query = request.params.get('query');
      if (query === tail.podsWithSeries) return vector(answers.pods.map((pod) => ({ labels: { pod }, value: 1 })));
      if (query === scrapeSamplesQuery(target, 60)) return vector([{ value: 2 }]);
      if (query === tail.recentMeanE2e) {
        return vector(answers.recentMean === undefined ? [] : [{ value: answers.recentMean }]);
      }
      if (query === tail.recentCount) return vector([{ value: answers.recentCount ?? 0 }]);
      return failure(400, 'bad_data', `unexpected query ${query}`);
    };
  }

  it('opens when every Pod has series and the last warmup requests are as fast as the median', async () => {
    // Prepare
    const { server, source } = await sourceFor(readinessAnswers({ pods: [POD], recentMean: 1.14, recentCount: 66 }));

    // Act
    const result = await readinessCheck({ source }, input, {
      pods: [POD],
      warmup,
      nowMs: T0_MS + 90_000,
      warmupEndedMs,
    });

    // Assess
    expect(result).toEqual({
      ready: true,
      reasons: [
        'all 1 Ready Pods have vLLM series in AMP',
        'the last 66 warmup requests (the 75 s before 2025-06-02T09:00:30.000Z) took 1.14 s on average, within ' +
          "25 % of the warmup's median of 1.13 s: the first-request slowness is over",
      ],
    });
    // The latency is read one scrape after the warmup ended, whatever the time of the poll.
    const latency = server.requests.find((r) => r.params.get('query') === readinessQueries(target, 75).recentMeanE2e);
    expect(latency?.params.get('time')).toBe(String((warmupEndedMs + 30_000) / 1000));
  });

  it('stays closed, naming them, while Pods have no series in AMP', async () => {
    // Prepare
    const other = 'vllm-inference-app-7d9c8b6f5d-zz9pq';
    const { source } = await sourceFor(readinessAnswers({ pods: [POD], recentMean: 1.14, recentCount: 66 }));

    // Act
    const result = await readinessCheck({ source }, input, { pods: [POD, other], warmup, nowMs: T0_MS + 90_000 });

    // Assess
    expect(result.ready).toBe(false);
    expect(result.reasons[0]).toBe(
      `1 of 2 Ready Pods have no vLLM series in AMP yet (${other}): waiting for their first scrapes to be ` +
        'remote-written (AMP can lag by about a minute)',
    );
  });

  it('stays closed while the last warmup requests are still slow', async () => {
    // Prepare
    const { source } = await sourceFor(readinessAnswers({ pods: [POD], recentMean: 2.1, recentCount: 40 }));

    // Act
    const result = await readinessCheck({ source }, input, {
      pods: [POD],
      warmup,
      nowMs: T0_MS + 90_000,
      warmupEndedMs,
    });

    // Assess
    expect(result.ready).toBe(false);
    expect(result.reasons[1]).toContain(
      "took 2.1 s on average, more than 25 % above the warmup's median of 1.13 s: the GPU is still warming up",
    );
  });

  it('stays closed while AMP has none of the warmup requests yet', async () => {
    // Prepare
    const { source } = await sourceFor(readinessAnswers({ pods: [POD] }));

    // Act
    const result = await readinessCheck({ source }, input, {
      pods: [POD],
      warmup,
      nowMs: T0_MS + 90_000,
      warmupEndedMs,
    });

    // Assess
    expect(result.ready).toBe(false);
    expect(result.reasons[1]).toContain('no warmup request finished in AMP in the 75 s before');
  });

  it('skips the latency check when no warmup was sent, and says so', async () => {
    // Prepare
    const { source } = await sourceFor(readinessAnswers({ pods: [POD] }));
    const none = { ...warmup, httpReqs: 0, iterations: 0 };

    // Act
    const result = await readinessCheck({ source }, input, { pods: [POD], warmup: none, nowMs: T0_MS });

    // Assess
    expect(result.ready).toBe(true);
    expect(result.reasons[1]).toContain('no warmup requests were sent');
  });

  it('throws CalibrationDependencyUnavailableError when AMP answers 503', async () => {
    // Prepare
    const { source } = await sourceFor(() => failure(503, 'unavailable', 'busy'));

    // Act / Assess
    await expect(readinessCheck({ source }, input, { pods: [POD], warmup, nowMs: T0_MS })).rejects.toThrow(
      CalibrationDependencyUnavailableError,
    );
  });
});

describe('Function: podsWithoutSeries', () => {
  const query = readinessQueries(target, 1).podsWithSeries;
  const series = (pod: string, value = 1, labels: Record<string, string> = {}) => ({
    labels: { pod, ...labels },
    value,
    timestampMs: T0_MS,
  });

  it('names the Pods with no series in the per-Pod answer', () => {
    // Act & Assess
    expect(podsWithoutSeries([POD, 'other'], [series(POD, 2)], query)).toEqual(['other']);
    expect(podsWithoutSeries([POD], [series(POD)], query)).toEqual([]);
  });

  it('refuses two series for one Pod with a named error naming both label sets', () => {
    // Prepare
    const twice = [series(POD, 1, { cluster: 'a' }), series(POD, 1, { cluster: 'b' })];

    // Act & Assess
    expect(() => podsWithoutSeries([POD], twice, query)).toThrow(
      new MetricsMultipleSeriesError(
        twice.map((s) => s.labels),
        'one series per pod',
        { query },
      ),
    );
  });

  it.each([
    { case: 'a negative count', value: -1, error: MetricsValueOutOfDomainError },
    { case: '+Inf', value: Infinity, error: MetricsNonFiniteValueError },
  ])('refuses $case with a named error, never counting the Pod as seen', ({ value, error }) => {
    expect(() => podsWithoutSeries([POD], [series(POD, value)], query)).toThrow(error);
  });
});
