import { VLLM, vllmHistogramQuantile } from '../metrics/index.js';
import { describe, fromBuilder, fromCatalog, LEGENDS } from './panels.js';
import { GRAFANA_UNITS, type DashboardSpec } from './types.js';

/**
 * Tier 1 of the monitoring guide (section 3): service quality, the user-facing SLIs. Thresholds are the guide's
 * normal ranges: queue 0-5 (alert above 50), TTFT below 1-3 s, inter-token latency 30-100 ms, errors below 1 %.
 */
export const TIER1_SERVICE: DashboardSpec = {
  uid: 'vllm-eks-pilot-tier1-service',
  title: 'vLLM / Tier 1: service quality',
  tier: 1,
  description:
    'User-facing SLIs of one vLLM model (monitoring guide, Tier 1): latency, time to first token, inter-token ' +
    'latency, queue depth, throughput and errors.',
  rows: [
    {
      title: 'Demand and queue',
      panels: [
        {
          title: 'Queue depth (requests waiting)',
          description: describe('queue_depth'),
          kind: 'stat',
          unit: GRAFANA_UNITS.count,
          queries: [fromCatalog('queue_depth', 'waiting')],
          thresholds: [
            { value: 5, color: 'yellow' },
            { value: 50, color: 'red' },
          ],
          width: 6,
        },
        {
          title: 'Requests running',
          description: describe('requests_running'),
          kind: 'stat',
          unit: GRAFANA_UNITS.count,
          queries: [fromCatalog('requests_running', 'running')],
          width: 6,
        },
        {
          title: 'Queue depth per Pod',
          description: describe('queue_depth_pod'),
          kind: 'timeseries',
          unit: GRAFANA_UNITS.count,
          queries: [fromCatalog('queue_depth_pod', LEGENDS.pod)],
          thresholds: [
            { value: 5, color: 'yellow' },
            { value: 50, color: 'red' },
          ],
          min: 0,
        },
      ],
    },
    {
      title: 'Latency',
      panels: [
        {
          title: 'End-to-end request latency',
          description: describe('e2e_latency_p95'),
          kind: 'timeseries',
          unit: GRAFANA_UNITS.seconds,
          queries: [
            fromCatalog('e2e_latency_p50', 'p50'),
            fromCatalog('e2e_latency_p95', 'p95'),
            fromCatalog('e2e_latency_p99', 'p99'),
          ],
          min: 0,
        },
        {
          title: 'Time to first token (TTFT)',
          description: describe('ttft_p95'),
          kind: 'timeseries',
          unit: GRAFANA_UNITS.seconds,
          queries: [
            fromBuilder(
              (target, { rateWindow }) => vllmHistogramQuantile(target, 0.5, VLLM.timeToFirstToken, rateWindow),
              'p50',
            ),
            fromCatalog('ttft_p95', 'p95'),
            fromBuilder(
              (target, { rateWindow }) => vllmHistogramQuantile(target, 0.99, VLLM.timeToFirstToken, rateWindow),
              'p99',
            ),
          ],
          thresholds: [
            { value: 1, color: 'yellow' },
            { value: 3, color: 'red' },
          ],
          min: 0,
        },
        {
          title: 'Inter-token latency (TPOT) p95',
          description: describe('inter_token_latency_p95'),
          kind: 'gauge',
          unit: GRAFANA_UNITS.seconds,
          queries: [fromCatalog('inter_token_latency_p95', 'p95')],
          thresholds: [
            { value: 0.1, color: 'yellow' },
            { value: 0.2, color: 'red' },
          ],
          min: 0,
          max: 0.3,
          width: 8,
        },
        {
          title: 'Inter-token latency (TPOT)',
          description:
            'Time between output tokens, p50 and p99 (vllm:inter_token_latency_seconds, formerly ' +
            'time_per_output_token_seconds: the query asks for both names). Normal: 30-100 ms.',
          kind: 'timeseries',
          unit: GRAFANA_UNITS.seconds,
          queries: [
            fromBuilder(
              (target, { rateWindow }) =>
                vllmHistogramQuantile(target, 0.5, { renamed: 'interTokenLatency' }, rateWindow),
              'p50',
            ),
            fromBuilder(
              (target, { rateWindow }) =>
                vllmHistogramQuantile(target, 0.99, { renamed: 'interTokenLatency' }, rateWindow),
              'p99',
            ),
          ],
          min: 0,
          width: 16,
        },
      ],
    },
    {
      title: 'Throughput and errors',
      panels: [
        {
          title: 'Completed requests per second',
          description: describe('requests_completed_rate'),
          kind: 'timeseries',
          unit: GRAFANA_UNITS.requestsPerSecond,
          queries: [fromCatalog('requests_completed_rate', 'completed')],
          min: 0,
          width: 16,
        },
        {
          title: 'Error rate',
          description: describe('error_rate'),
          kind: 'stat',
          unit: GRAFANA_UNITS.percent,
          queries: [fromCatalog('error_rate', 'errors')],
          thresholds: [
            { value: 0.5, color: 'yellow' },
            { value: 1, color: 'red' },
          ],
          width: 8,
        },
      ],
    },
  ],
};
