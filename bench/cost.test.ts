import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HttpMetricsSource } from '../shared/metrics/index.js';
import { cloudWatchMetricsUsd, monthlyBill, priceOf, runsPerMonth } from './bill.js';
import { readStackFunctions } from './stackFunctions.js';
import { calibrationTransitions } from './transitions.js';
import {
  AMP_FREE_TIER_QUERY_SAMPLES,
  distinctSeries,
  durationSeconds,
  MINUTE_RUNS_PER_MONTH,
  monthlyRow,
  recordingFetch,
  replayWithStats,
  requiredHistorySeconds,
  samplesPerPod,
  TYPICAL_CALIBRATION,
  WEEKLY_RUNS_PER_MONTH,
  type RecordedQuery,
} from './cost.js';
import { BenchError } from './errors.js';

/** One twin's figures with only what the monthly arithmetic reads. */
const twinCost = (pods: number, collector: number, evaluator: number) => ({
  pods,
  collector: {
    queries: 25,
    samples: collector,
    largestQuery: 0,
    medianRunMs: 0,
    runs: 1,
    publishedDatums: 0,
    series: 0,
    putMetricDataRequests: 0,
  },
  evaluator: { queries: 5, samples: evaluator, largestQuery: 0, medianRunMs: 0, runs: 1 },
});

describe('Constants: schedules per month', () => {
  it('a one-minute schedule fires 43,800 times and a weekly one about 4.35 times in an average month', () => {
    // Assess
    expect(MINUTE_RUNS_PER_MONTH).toBeCloseTo(43_800, 6);
    expect(WEEKLY_RUNS_PER_MONTH).toBeCloseTo(4.345, 3);
  });
});

describe('Function: monthlyRow', () => {
  it.each([
    // Per target and minute: the collector's 800 samples and four evaluation cycles of 200 (every 15 s).
    { targets: 1, total: 1_600 * 43_800 },
    { targets: 5, total: 8_000 * 43_800 },
    { targets: 20, total: 32_000 * 43_800 },
  ])('keeps one invocation a minute for $targets targets while samples grow with them', ({ targets, total }) => {
    // Act
    const row = monthlyRow(twinCost(2, 800, 200), targets);

    // Assess
    expect(row.invocations.collector).toBeCloseTo(43_800, 6);
    expect(row.invocations.evaluator).toBeCloseTo(43_800, 6);
    expect(row.invocations.preflight).toBeCloseTo(4.345, 3);
    expect(row.querySamples.total).toBeCloseTo(total, 0);
    expect(row.querySamples.collector).toBeCloseTo((total * 800) / 1_600, 0);
    expect(row.querySamples.evaluator).toBeCloseTo((total * 800) / 1_600, 0);
    expect(row.freeTierFraction).toBeCloseTo(total / AMP_FREE_TIER_QUERY_SAMPLES, 12);
  });
});

describe('Function: samplesPerPod', () => {
  it('gives what one more Pod adds to a run of each function', () => {
    // Act
    const perPod = samplesPerPod(twinCost(1, 467, 89), twinCost(4, 1_868, 352));

    // Assess
    expect(perPod.collector).toBeCloseTo(467, 6);
    expect(perPod.evaluator).toBeCloseTo(87.667, 3);
  });

  it('refuses twins that do not grow in Pods', () => {
    // Act
    const act = () => samplesPerPod(twinCost(4, 1, 1), twinCost(4, 2, 2));

    // Assess
    expect(act).toThrow(BenchError);
  });
});

describe('Function: durationSeconds', () => {
  it.each([
    { duration: '30s', seconds: 30 },
    { duration: '2m', seconds: 120 },
    { duration: '1m30s', seconds: 90 },
    { duration: '1h', seconds: 3_600 },
  ])('reads the PromQL duration $duration', ({ duration, seconds }) => {
    // Act / Assess
    expect(durationSeconds(duration)).toBe(seconds);
  });

  it.each([{ duration: '' }, { duration: '30' }, { duration: '2 m' }, { duration: '5x' }])(
    'refuses "$duration", saying what is accepted',
    ({ duration }) => {
      // Act
      const act = () => durationSeconds(duration);

      // Assess
      expect(act).toThrow('accepted');
    },
  );
});

describe('Function: requiredHistorySeconds', () => {
  it("covers the latency rule's keep-firing time, its for, their subquery steps and its 5 m window", () => {
    // Act / Assess: 90 s keep + 15 s step + 120 s for + 15 s step + 300 s window.
    expect(requiredHistorySeconds()).toBe(540);
  });

  it('follows a collector rate window longer than every rule', () => {
    // Act / Assess
    expect(requiredHistorySeconds('10m')).toBe(600);
  });
});

describe('Functions: recordingFetch and replayWithStats', () => {
  /** Bodies the crafted Prometheus received, in order. */
  const received: Array<{ path: string; body: URLSearchParams }> = [];
  let server: Server;
  let url: string;
  /** Samples the server reports per query text; a query not listed is answered without stats. */
  const samplesByQuery: Record<string, number> = { up: 3, 'rate(x_total[2m])': 40 };

  beforeAll(async () => {
    server = createServer((request, response) => {
      let text = '';
      request.on('data', (chunk: Buffer) => (text += chunk.toString()));
      request.on('end', () => {
        const body = new URLSearchParams(text);
        received.push({ path: request.url ?? '', body });
        const samples = samplesByQuery[body.get('query') ?? ''];
        const stats =
          body.get('stats') === 'all' && samples !== undefined
            ? { stats: { samples: { totalQueryableSamples: samples, peakSamples: samples } } }
            : {};
        response.setHeader('content-type', 'application/json');
        response.end(
          JSON.stringify({
            status: 'success',
            data: { resultType: 'vector', result: [{ metric: {}, value: [1, '1'] }], ...stats },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("records the product's queries as sent, and the replay sums the samples Prometheus reports for them", async () => {
    // Prepare
    const { fetch, queries } = recordingFetch();
    const source = new HttpMetricsSource({
      endpoint: url,
      region: 'us-east-2',
      credentials: { accessKeyId: 'AKIATESTTESTTESTTEST', secretAccessKey: 'test' },
      fetch,
    });
    await source.instant('up', { timeMs: 1_700_000_000_000 });
    await source.instant('rate(x_total[2m])', { timeMs: 1_700_000_000_000 });
    received.length = 0;

    // Act
    const cost = await replayWithStats(url, queries);

    // Assess
    expect(queries.map((q) => [q.path, q.params.query, q.params.stats])).toEqual([
      ['api/v1/query', 'up', undefined],
      ['api/v1/query', 'rate(x_total[2m])', undefined],
    ]);
    expect(cost).toEqual({ queries: 2, samples: 43, largestQuery: 40 });
    expect(received.map((r) => [r.body.get('time'), r.body.get('stats')])).toEqual([
      [queries[0]?.params.time, 'all'],
      [queries[1]?.params.time, 'all'],
    ]);
  });

  it('refuses a server that does not report samples, naming the query', async () => {
    // Prepare
    const query: RecordedQuery = { path: 'api/v1/query', params: { query: 'no_stats_here', time: '1' } };

    // Act
    const act = replayWithStats(url, [query]);

    // Assess
    await expect(act).rejects.toThrow('no_stats_here');
  });
});

describe('Function: cloudWatchMetricsUsd', () => {
  it.each([
    // Each of the first 10,000 at $0.30, the next 240,000 at $0.10, the next 750,000 at $0.05, the rest at $0.02.
    { metrics: 0, usd: 0 },
    { metrics: 38, usd: 11.4 },
    { metrics: 10_000, usd: 3_000 },
    { metrics: 10_001, usd: 3_000.1 },
    { metrics: 12_000, usd: 3_200 },
    { metrics: 250_000, usd: 27_000 },
    { metrics: 1_000_000, usd: 64_500 },
    { metrics: 1_500_000, usd: 74_500 },
  ])('prices $metrics metrics at $usd a month across the tiers', ({ metrics, usd }) => {
    // Act / Assess
    expect(cloudWatchMetricsUsd(metrics)).toBeCloseTo(usd, 6);
  });
});

describe('Function: runsPerMonth', () => {
  it.each([
    { schedule: 'rate(1 minute)', runs: 43_800 },
    { schedule: 'rate(5 minutes)', runs: 8_760 },
    { schedule: 'rate(10 minutes)', runs: 4_380 },
    { schedule: 'rate(1 hour)', runs: 730 },
    { schedule: 'rate(2 hours)', runs: 365 },
    { schedule: 'cron(0 8 ? * MON *)', runs: 365 / 12 / 7 },
    { schedule: 'cron(0 8,20 ? * MON,THU *)', runs: (4 * 365) / 12 / 7 },
    { schedule: 'cron(30 6 * * ? *)', runs: 365 / 12 },
  ])('counts $schedule as $runs runs in an average month', ({ schedule, runs }) => {
    // Act / Assess
    expect(runsPerMonth(schedule)).toBeCloseTo(runs, 6);
  });

  it.each([{ schedule: 'rate(30 seconds)' }, { schedule: 'cron(0/5 * * * ? *)' }, { schedule: 'every minute' }])(
    'refuses $schedule, saying what it can count',
    ({ schedule }) => {
      // Act / Assess
      expect(() => runsPerMonth(schedule)).toThrow(/accepted: rate\(N minutes\|hours\|days\)/);
    },
  );

  it('prices one PutMetricData per target and minute for 20 targets at 876,000 requests, $8.76 a month', () => {
    // Act
    const requests = runsPerMonth('rate(1 minute)') * 20;

    // Assess
    expect(requests).toBeCloseTo(876_000, 6);
    expect(priceOf('cloudWatchPutMetricData', requests)).toBeCloseTo(8.76, 6);
  });
});

describe('Function: calibrationTransitions', () => {
  const definition = JSON.parse(
    readFileSync(new URL('../statemachines/calibration.asl.json', import.meta.url), 'utf8'),
  ) as { States: Record<string, unknown> };
  const straight = {
    rolloutPolls: 0,
    warmupPolls: 0,
    readinessPolls: 0,
    loadSteps: 1,
    watchPollsPerStep: 0,
    stepDataPollsPerStep: 0,
  };

  it('counts every state of a run with no extra poll: 3 + 2 + 1 + 2 + 2 + one step of 9 + 9 = 28', () => {
    // Act / Assess
    expect(calibrationTransitions(definition, straight)).toBe(28);
  });

  it('adds wait, check and choice for each extra poll, and a step of states for each load step', () => {
    // Act
    const typical = calibrationTransitions(definition, TYPICAL_CALIBRATION);

    // Assess: 28 + 3 x (18 + 25 + 12) polls + 5 more steps of 9 + 3 x (12 + 20) polls in each of the 6 steps.
    expect(typical).toBe(28 + 3 * 55 + 5 * 9 + 6 * 3 * 32);
    expect(typical).toBe(814);
  });

  it('prices 814 transitions x 4 calibrations x 20 targets at $1.63 a month', () => {
    // Act / Assess: 65,120 transitions at $0.025 per 1,000.
    expect(priceOf('stepFunctionsTransitions', 814 * 4 * 20)).toBeCloseTo(1.628, 6);
  });

  it('refuses a definition that lacks a state of the path, naming it', () => {
    // Prepare
    const { MeasureStep: _removed, ...states } = definition.States;

    // Act / Assess
    expect(() => calibrationTransitions({ States: states }, straight)).toThrow('no state MeasureStep');
  });
});

describe('Function: monthlyBill', () => {
  /** A collector every minute and a weekly check, with round per-target figures. */
  const inputs = {
    podsPerTarget: 2,
    seriesPerTarget: 40,
    fixedSeries: 1,
    transitionsPerCalibration: 800,
    calibrationsPerTargetPerMonth: 4,
    functions: [
      {
        name: 'metricsCollector',
        schedule: 'rate(1 minute)',
        enabled: true,
        memoryMb: 512,
        fixedSeconds: 0,
        secondsPerTarget: 0.5,
        putMetricData: 1,
        dynamoDbReads: 0,
        dynamoDbWrites: 0,
        snsPublishes: 0,
        querySamples: 1_000,
        fixedPutMetricData: 0,
        fixedDynamoDbReads: 0,
        fixedDynamoDbWrites: 0,
      },
      {
        name: 'preflight',
        schedule: 'cron(0 8 ? * MON *)',
        enabled: true,
        memoryMb: 1024,
        fixedSeconds: 0,
        secondsPerTarget: 10,
        putMetricData: 0,
        dynamoDbReads: 2,
        dynamoDbWrites: 0,
        snsPublishes: 1,
        querySamples: 0,
        fixedPutMetricData: 0,
        fixedDynamoDbReads: 0,
        fixedDynamoDbWrites: 3,
      },
    ],
  };
  const line = (bill: ReturnType<typeof monthlyBill>, item: string) => bill.lines.find((l) => l.item === item);

  it('gives 200 targets 8,001 metrics ($2,400.30), 8.76 million requests ($87.60) and 8.76 billion samples', () => {
    // Act
    const bill = monthlyBill(inputs, 200);

    // Assess
    expect(line(bill, 'CloudWatch custom metrics')).toMatchObject({ quantity: 8_001 });
    expect(line(bill, 'CloudWatch custom metrics')?.usd).toBeCloseTo(2_400.3, 6);
    expect(line(bill, 'CloudWatch PutMetricData')?.quantity).toBeCloseTo(8_760_000, 3);
    expect(line(bill, 'CloudWatch PutMetricData')?.usd).toBeCloseTo(87.6, 6);
    // One invocation per run whatever the targets: 43,800 + 4.35.
    expect(line(bill, 'Lambda requests')?.quantity).toBeCloseTo(43_800 + 365 / 12 / 7, 6);
    // 43,800 x 0.5 GB x (0.5 s x 200) + 4.35 x 1 GB x (10 s x 200).
    expect(line(bill, 'Lambda duration')?.quantity).toBeCloseTo(2_190_000 + (365 / 12 / 7) * 2_000, 3);
    expect(line(bill, 'Step Functions')).toMatchObject({ quantity: 640_000 });
    expect(line(bill, 'Step Functions')?.usd).toBeCloseTo(16, 6);
    expect(line(bill, 'AMP query samples')?.quantity).toBeCloseTo(43_800 * 200_000, 0);
    expect(line(bill, 'AMP ingestion')).toMatchObject({ quantity: 0, usd: 0 });
    expect(bill.totalUsd).toBeCloseTo(
      bill.lines.reduce((sum, l) => sum + l.usd, 0),
      9,
    );
  });

  it('drops the collector series, requests and invocations when its schedule is off, and keeps the rest', () => {
    // Act
    const off = monthlyBill(
      {
        ...inputs,
        functions: inputs.functions.map((f) => (f.name === 'metricsCollector' ? { ...f, enabled: false } : f)),
      },
      20,
    );

    // Assess
    expect(line(off, 'CloudWatch custom metrics')).toMatchObject({ quantity: 1 });
    expect(line(off, 'CloudWatch PutMetricData')).toMatchObject({ quantity: 0, usd: 0 });
    expect(line(off, 'Lambda requests')?.quantity).toBeCloseTo(365 / 12 / 7, 6);
    expect(line(off, 'DynamoDB reads')?.quantity).toBeCloseTo((2 * 20 * 365) / 12 / 7, 6);
    // The weekly run's three writes whatever the targets: 3 x 4.35.
    expect(line(off, 'DynamoDB writes')?.quantity).toBeCloseTo((3 * 365) / 12 / 7, 6);
  });
});

describe('Function: readStackFunctions', () => {
  const root = fileURLToPath(new URL('..', import.meta.url));

  it("reads each scheduled function's schedule and memory from serverless.yml and the stack it builds", async () => {
    // Act
    const functions = await readStackFunctions(root);

    // Assess
    expect(functions.map((f) => [f.name, f.schedule, f.enabled, f.memoryMb])).toEqual([
      ['metricsCollector', 'rate(1 minute)', true, 512],
      ['alertEvaluator', 'rate(1 minute)', true, 512],
      ['preflight', 'cron(0 8 ? * MON *)', true, 512],
      ['driftDetector', 'rate(1 hour)', true, 512],
      ['calibrationSweepLeases', 'rate(10 minutes)', true, 512],
    ]);
  });

  it('follows the collector stage parameters: a 5-minute rate, or off', async () => {
    // Act
    const fewer = await readStackFunctions(root, { 'collector.schedule': 'rate(5 minutes)' });
    const off = await readStackFunctions(root, { 'collector.schedule': 'off' });

    // Assess
    expect(fewer[0]).toMatchObject({ name: 'metricsCollector', schedule: 'rate(5 minutes)', enabled: true });
    expect(off[0]).toMatchObject({ name: 'metricsCollector', enabled: false });
  });
});

describe('Function: distinctSeries', () => {
  it('counts name + dimensions once however many datums and whatever the dimension order', () => {
    // Prepare
    const datum = (metricName: string, dimensions: Record<string, string>) => ({
      namespace: 'vLLM/EKSPilot',
      metricName,
      dimensions,
    });

    // Act
    const series = distinctSeries([
      datum('QueueDepth', { Cluster: 'a', Pod: 'p1' }),
      datum('QueueDepth', { Pod: 'p1', Cluster: 'a' }),
      datum('QueueDepth', { Cluster: 'a', Pod: 'p2' }),
      datum('KVCacheUsage', { Cluster: 'a', Pod: 'p1' }),
    ]);

    // Assess
    expect(series).toBe(3);
  });
});
