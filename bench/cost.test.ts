import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HttpMetricsSource } from '../shared/metrics/index.js';
import {
  AMP_FREE_TIER_QUERY_SAMPLES,
  durationSeconds,
  MINUTE_RUNS_PER_MONTH,
  monthlyRow,
  recordingFetch,
  replayWithStats,
  requiredHistorySeconds,
  samplesPerPod,
  WEEKLY_RUNS_PER_MONTH,
  type RecordedQuery,
} from './cost.js';
import { BenchError } from './errors.js';

/** One twin's figures with only what the monthly arithmetic reads. */
const twinCost = (pods: number, collector: number, evaluator: number) => ({
  pods,
  collector: { queries: 25, samples: collector, largestQuery: 0, medianRunMs: 0, runs: 1, publishedDatums: 0 },
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
  it("covers the latency rule's for, its subquery step and its 5 m window with the guide's defaults", () => {
    // Act / Assess: 120 s for + 15 s step + 300 s window.
    expect(requiredHistorySeconds()).toBe(435);
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
