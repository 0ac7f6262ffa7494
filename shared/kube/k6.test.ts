import { describe, expect, it } from '@jest/globals';
import { K6MetricsInvalidError } from './errors.js';
import { parseK6Metrics } from './k6.js';

/** A `GET /v1/metrics` answer as k6 serves it mid-run (JSON:API; trends in ms, counter rates per second of test). */
const LIVE = {
  data: [
    {
      type: 'metrics',
      id: 'vus',
      attributes: { type: 'gauge', contains: 'default', tainted: null, sample: { value: 12 } },
    },
    {
      type: 'metrics',
      id: 'vus_max',
      attributes: { type: 'gauge', contains: 'default', tainted: null, sample: { value: 50 } },
    },
    {
      type: 'metrics',
      id: 'iterations',
      attributes: { type: 'counter', contains: 'default', tainted: null, sample: { count: 380, rate: 19.6 } },
    },
    {
      type: 'metrics',
      id: 'http_reqs',
      attributes: { type: 'counter', contains: 'default', tainted: null, sample: { count: 380, rate: 19.6 } },
    },
    {
      type: 'metrics',
      id: 'http_req_failed',
      attributes: { type: 'rate', contains: 'default', tainted: false, sample: { rate: 0.0025 } },
    },
    {
      type: 'metrics',
      id: 'http_req_duration',
      attributes: {
        type: 'trend',
        contains: 'time',
        tainted: null,
        sample: { avg: 610.2, min: 402.1, med: 598.4, max: 1204.9, 'p(90)': 801.3, 'p(95)': 912.6 },
      },
    },
  ],
};

function withMetric(id: string, attributes: Record<string, unknown>) {
  return JSON.stringify({
    data: [...LIVE.data.filter((m) => m.id !== id), { type: 'metrics', id, attributes }],
  });
}

describe('Function: parseK6Metrics', () => {
  it("reads the figures of k6's /v1/metrics answer", () => {
    // Act
    const metrics = parseK6Metrics(JSON.stringify(LIVE));

    // Assess
    expect(metrics).toEqual({
      vus: 12,
      vusMax: 50,
      iterations: 380,
      droppedIterations: 0,
      httpReqs: 380,
      httpReqFailedRate: 0.0025,
      httpReqDurationMs: { avg: 610.2, min: 402.1, med: 598.4, max: 1204.9, p90: 801.3, p95: 912.6 },
    });
  });

  it('counts dropped iterations once k6 reports them (it lists only metrics it has a sample of)', () => {
    // Act
    const metrics = parseK6Metrics(
      withMetric('dropped_iterations', {
        type: 'counter',
        contains: 'default',
        tainted: null,
        sample: { count: 7, rate: 0.4 },
      }),
    );

    // Assess
    expect(metrics.droppedIterations).toBe(7);
  });

  it('reads the first seconds of a run: VUs busy, nothing finished yet', () => {
    // Act
    const metrics = parseK6Metrics(JSON.stringify({ data: LIVE.data.slice(0, 1) }));

    // Assess
    expect(metrics).toEqual({
      vus: 12,
      vusMax: null,
      iterations: 0,
      droppedIterations: 0,
      httpReqs: 0,
      httpReqFailedRate: null,
      httpReqDurationMs: null,
    });
  });

  it.each([
    { case: 'not JSON (an HTML error page)', body: '<html>502 Bad Gateway</html>', field: 'body' },
    {
      case: 'a JSON:API error document',
      body: '{"errors":[{"status":"500","title":"Encoding error"}]}',
      field: 'data',
    },
    {
      case: 'a resource of another type',
      body: JSON.stringify({ data: [{ ...LIVE.data[0], type: 'groups' }] }),
      field: 'data.0.type',
    },
    {
      case: 'vus as a counter',
      body: withMetric('vus', { type: 'counter', contains: 'default', tainted: null, sample: { count: 3, rate: 1 } }),
      field: 'vus',
    },
    {
      case: 'a trend without its p(95)',
      body: withMetric('http_req_duration', {
        type: 'trend',
        contains: 'time',
        tainted: null,
        sample: { avg: 1, min: 1, med: 1, max: 1, 'p(90)': 1 },
      }),
      field: 'http_req_duration.sample.p(95)',
    },
    {
      case: 'a negative count',
      body: withMetric('iterations', {
        type: 'counter',
        contains: 'default',
        tainted: null,
        sample: { count: -1, rate: 0 },
      }),
      field: 'iterations.sample.count',
    },
    { case: 'no vus gauge (the test has not started)', body: '{"data":[]}', field: 'vus' },
  ])('throws K6MetricsInvalidError naming the field for $case', ({ body, field }) => {
    // Act
    let error: unknown;
    try {
      parseK6Metrics(body);
    } catch (caught) {
      error = caught;
    }

    // Assess
    expect(error).toBeInstanceOf(K6MetricsInvalidError);
    expect((error as K6MetricsInvalidError).field).toBe(field);
    expect((error as K6MetricsInvalidError).message).toMatch(/accepted: /);
    expect((error as K6MetricsInvalidError).retryable).toBe(false);
  });
});
