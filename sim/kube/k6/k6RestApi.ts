import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { K6_METRICS, K6_REST, type K6MetricsDocument } from '../../../shared/kube/index.js';
import { mean, quantile } from '../../../shared/util/index.js';

/** What a k6 run has counted so far: the figures its REST API reports. */
export interface K6LiveFigures {
  /** Milliseconds since the test started (k6 divides counters by it for their `rate`). */
  elapsedMs: number;
  /** VUs running an iteration now. */
  vus: number;
  /** VUs initialised so far. */
  vusMax: number;
  /** Iterations finished. */
  iterations: number;
  droppedIterations: number;
  /** Requests answered or failed. */
  httpReqs: number;
  httpReqFailed: number;
  /** The duration of every request that ended, ms. */
  durationsMs: readonly number[];
}

/** A k6 REST API serving one run's figures on a loopback port. */
export interface K6RestApi {
  url: string;
  stop(): Promise<void>;
}

type Resource = K6MetricsDocument['data'][number];

/**
 * The `GET /v1/metrics` document of k6's REST API for `figures` (k6's api/v1/metric_jsonapi.go, metric.go and
 * metrics/sink.go): one JSON:API resource per metric k6 has observed a sample of, so `iterations`, `http_*` appear
 * once a request ended and `dropped_iterations` once one was dropped; `vus` and `vus_max` from the start.
 */
export function k6MetricsDocument(figures: K6LiveFigures): K6MetricsDocument {
  const seconds = figures.elapsedMs / 1000;
  const resource = (
    id: string,
    type: Resource['attributes']['type'],
    contains: string,
    sample: Record<string, number>,
  ) =>
    ({
      type: 'metrics',
      id,
      attributes: { type, contains: contains as Resource['attributes']['contains'], tainted: null, sample },
    }) satisfies Resource;
  // k6's counter rate is count per second of test; at 0 s its division gives +Inf, which it cannot encode: 0 here.
  const counter = (id: string, count: number) =>
    resource(id, 'counter', 'default', { count, rate: seconds > 0 ? count / seconds : 0 });
  const data: Resource[] = [
    resource(K6_METRICS.vus, 'gauge', 'default', { value: figures.vus }),
    resource(K6_METRICS.vusMax, 'gauge', 'default', { value: figures.vusMax }),
  ];
  if (figures.iterations > 0) data.push(counter(K6_METRICS.iterations, figures.iterations));
  if (figures.droppedIterations > 0) data.push(counter(K6_METRICS.droppedIterations, figures.droppedIterations));
  if (figures.httpReqs > 0) {
    data.push(counter(K6_METRICS.httpReqs, figures.httpReqs));
    data.push(
      resource(K6_METRICS.httpReqFailed, 'rate', 'default', { rate: figures.httpReqFailed / figures.httpReqs }),
    );
  }
  const durations = figures.durationsMs;
  if (durations.length > 0)
    data.push(
      resource(K6_METRICS.httpReqDuration, 'trend', 'time', {
        avg: mean(durations),
        min: Math.min(...durations),
        med: quantile(durations, 0.5),
        max: Math.max(...durations),
        'p(90)': quantile(durations, 0.9),
        'p(95)': quantile(durations, 0.95),
      }),
    );
  return { data };
}

/**
 * Starts k6's REST API for one run on a loopback port: `GET /v1/metrics` and `GET /v1/metrics/{id}` answer from
 * `figures()` at the moment of the request (k6's answers are live too); an unknown metric is k6's JSON:API 404, any
 * other path the router's plain 404, another method 405.
 */
export async function startK6RestApi(figures: () => K6LiveFigures): Promise<K6RestApi> {
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://k6').pathname;
    const send = (status: number, body: string, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    const metrics = K6_REST.metricsPath;
    if (path !== metrics && !path.startsWith(`${metrics}/`)) return send(404, '404 page not found\n', 'text/plain');
    if (req.method !== 'GET') return send(405, 'Method Not Allowed\n', 'text/plain');
    const document = k6MetricsDocument(figures());
    if (path === metrics) return send(200, JSON.stringify(document));
    const id = decodeURIComponent(path.slice(metrics.length + 1));
    const one = document.data.find((resource) => resource.id === id);
    if (one !== undefined) return send(200, JSON.stringify({ data: one }));
    return send(
      404,
      JSON.stringify({ errors: [{ status: '404', title: 'Not Found', detail: 'No metric with that ID was found' }] }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
