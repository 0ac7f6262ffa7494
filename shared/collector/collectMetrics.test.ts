import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { type CloudWatchTwin, startCloudWatchTwin } from '../../sim/harness/index.js';
import { VirtualClock } from '../clock/index.js';
import { CloudWatchMetricsSink } from '../cloudwatch/index.js';
import { CATALOG, DCGM_LABELS, type InstantSample, MetricsNetworkError, type MetricsSource } from '../metrics/index.js';
import type { Target } from '../config/index.js';
import { collectMetrics } from './collectMetrics.js';
import type { CollectorDeps } from './types.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');

const healthy: Target = {
  name: 'prod-ministral',
  cluster: 'prod',
  namespace: 'inference',
  deployment: 'vllm-inference-app',
  model: 'mistralai/Ministral-8B-Instruct-2410',
};
const broken: Target = { ...healthy, name: 'staging-ministral', cluster: 'staging' };

/** Answers every query with one series that carries the labels every breakdown needs. */
function answeringSource(failWhen: (query: string) => boolean = () => false): MetricsSource {
  return {
    instant: (query, options): Promise<InstantSample[]> => {
      if (failWhen(query)) return Promise.reject(new MetricsNetworkError('http://127.0.0.1:9/api/v1/query'));
      const labels = { pod: 'vllm-inference-app-7d9c8b6f5d-x2k4q', [DCGM_LABELS.uuid]: 'GPU-6f1c' };
      return Promise.resolve([{ labels, value: 0.5, timestampMs: options?.timeMs ?? NOW }]);
    },
    range: () => Promise.resolve([]),
  };
}

/** A source whose AMP workspace is unreachable: every query fails. */
const unreachableSource = answeringSource(() => true);

describe('Function: collectMetrics', () => {
  let twin: CloudWatchTwin;
  let client: CloudWatchClient;
  let sink: CloudWatchMetricsSink;
  const clock = new VirtualClock(NOW);

  beforeAll(async () => {
    twin = await startCloudWatchTwin();
    client = new CloudWatchClient({
      region: twin.region,
      endpoint: twin.endpoint,
      credentials: { accessKeyId: 'AKIDTWIN', secretAccessKey: 'twin-secret' },
      maxAttempts: 1,
    });
    sink = new CloudWatchMetricsSink({ client });
  });

  afterAll(async () => {
    client.destroy();
    await twin.stop();
  });

  beforeEach(() => twin.clear());

  function deps(sources: Record<string, MetricsSource>): CollectorDeps {
    return {
      sourceFor: (target) => {
        const source = sources[target.name];
        if (source === undefined) throw new Error(`no source for ${target.name}`);
        return source;
      },
      sink,
      clock,
    };
  }

  it('publishes the healthy target and names the broken one with its reason', async () => {
    // Act
    const result = await collectMetrics(
      deps({ [healthy.name]: answeringSource(), [broken.name]: unreachableSource }),
      [broken, healthy],
      { namespace: 'vLLM/EKSPilot', rateWindow: '2m', concurrency: 2 },
    );

    // Assess
    expect(result.timeMs).toBe(NOW);
    const [brokenResult, healthyResult] = result.targets;
    expect(healthyResult).toEqual({
      target: 'prod-ministral',
      status: 'ok',
      published: CATALOG.length,
      skipped: [],
      failures: [],
    });
    expect(brokenResult).toMatchObject({ target: 'staging-ministral', status: 'failed', published: 0 });
    expect(brokenResult?.reason).toBe(
      `no query returned a value: ${CATALOG.length} of ${CATALOG.length} failed (first: MetricsNetworkError: could not reach http://127.0.0.1:9/api/v1/query)`,
    );
    expect(brokenResult?.failures).toHaveLength(CATALOG.length);
    expect(brokenResult?.failures[0]).toEqual({
      queryId: CATALOG[0]?.id,
      error: 'could not reach http://127.0.0.1:9/api/v1/query',
      name: 'MetricsNetworkError',
    });

    const datums = twin.datums();
    expect(datums).toHaveLength(CATALOG.length);
    expect(new Set(datums.map((d) => d.dimensions.Cluster))).toEqual(new Set(['prod']));
    expect(datums.every((d) => d.namespace === 'vLLM/EKSPilot' && d.timestampMs === NOW)).toBe(true);
  });

  it.each([
    {
      case: 'a target-level reading carries the four target dimensions',
      queryId: 'e2e_latency_p95',
      extra: {},
    },
    {
      case: 'a per-Pod reading adds Pod',
      queryId: 'queue_depth_pod',
      extra: { Pod: 'vllm-inference-app-7d9c8b6f5d-x2k4q' },
    },
    {
      case: 'a per-GPU reading adds GPU, and Pod when DCGM knows it',
      queryId: 'gpu_utilization',
      extra: { GPU: 'GPU-6f1c', Pod: 'vllm-inference-app-7d9c8b6f5d-x2k4q' },
    },
  ])('$case', async ({ queryId, extra }) => {
    // Prepare
    const entry = CATALOG.find((e) => e.id === queryId);
    if (entry === undefined) throw new Error(`catalog has no ${queryId}`);

    // Act
    await collectMetrics(deps({ [healthy.name]: answeringSource() }), [healthy], { namespace: 'vLLM/EKSPilot' });

    // Assess
    const datum = twin.datums().find((d) => d.metricName === entry.metricName);
    expect(datum).toMatchObject({ unit: entry.unit, value: 0.5 });
    expect(datum?.dimensions).toMatchObject({
      Cluster: 'prod',
      Namespace: 'inference',
      Deployment: 'vllm-inference-app',
      Model: 'mistralai/Ministral-8B-Instruct-2410',
      ...extra,
    });
    if (!('Pod' in extra) && !('GPU' in extra)) expect(Object.keys(datum?.dimensions ?? {})).toHaveLength(4);
  });

  it('queries and publishes only the metrics it is given: fewer CloudWatch series, fewer AMP queries', async () => {
    // Prepare
    const queries: string[] = [];
    const inner = answeringSource();
    const counting: MetricsSource = {
      ...inner,
      instant: (query, options) => {
        queries.push(query);
        return inner.instant(query, options);
      },
    };

    // Act
    const result = await collectMetrics(deps({ [healthy.name]: counting }), [healthy], {
      namespace: 'vLLM/EKSPilot',
      metrics: ['QueueDepth', 'KVCacheUsage'],
    });

    // Assess
    expect(result.targets[0]).toMatchObject({ status: 'ok', published: 2 });
    expect(queries).toHaveLength(2);
    expect(twin.datums().map((d) => d.metricName)).toEqual(['QueueDepth', 'KVCacheUsage']);
  });

  it('refuses a metric the catalog does not have, naming it', async () => {
    // Act
    const act = collectMetrics(deps({ [healthy.name]: answeringSource() }), [healthy], {
      namespace: 'vLLM/EKSPilot',
      metrics: ['QueueDepth', 'QueueDepht'],
    });

    // Assess
    await expect(act).rejects.toThrow(/metrics: QueueDepht not in the catalog; accepted: .*QueueDepth/);
    expect(twin.datums()).toHaveLength(0);
  });

  it('reports a target as partial when some of its queries fail, and publishes the rest', async () => {
    // Prepare: only the DCGM power query fails.
    const source = answeringSource((query) => query.includes('DCGM_FI_DEV_POWER_USAGE'));

    // Act
    const result = await collectMetrics(deps({ [healthy.name]: source }), [healthy], { namespace: 'vLLM/EKSPilot' });

    // Assess
    expect(result.targets[0]).toMatchObject({
      status: 'partial',
      published: CATALOG.length - 1,
      reason: `1 of ${CATALOG.length} queries failed`,
      failures: [{ queryId: 'gpu_power', name: 'MetricsNetworkError' }],
    });
  });

  it.each([
    {
      case: 'a negative queue depth',
      queryPart: 'vllm:num_requests_waiting',
      value: -5,
      name: 'MetricsValueOutOfDomainError',
    },
    { case: 'an infinite p95 latency', queryPart: '0.95', value: Infinity, name: 'MetricsNonFiniteValueError' },
  ])('never publishes $case: the query is a named failure of its target, the rest is published', async (c) => {
    // Prepare: one query of the healthy target answers a value outside its domain; the other target is untouched.
    const good = answeringSource();
    const bad: MetricsSource = {
      instant: async (query, options) => {
        const samples = await good.instant(query, options);
        return query.includes(c.queryPart) ? samples.map((s) => ({ ...s, value: c.value })) : samples;
      },
      range: () => Promise.resolve([]),
    };

    // Act
    const result = await collectMetrics(deps({ [healthy.name]: bad, [broken.name]: good }), [healthy, broken], {
      namespace: 'vLLM/EKSPilot',
    });

    // Assess
    const [mixed, clean] = result.targets;
    expect(mixed?.status).toBe('partial');
    expect(mixed?.failures.length).toBeGreaterThan(0);
    expect(mixed?.failures.every((f) => f.name === c.name)).toBe(true);
    expect(clean).toMatchObject({ status: 'ok', published: CATALOG.length });
    const values = twin.datums().map((d) => d.value);
    expect(values).not.toContain(c.value);
  });

  it('reports a target as failed when CloudWatch refuses its publish, naming the queries that were lost', async () => {
    // Prepare
    twin.failNextRequests(1);

    // Act
    const result = await collectMetrics(deps({ [healthy.name]: answeringSource() }), [healthy], {
      namespace: 'vLLM/EKSPilot',
    });

    // Assess
    const target = result.targets[0];
    expect(target?.status).toBe('failed');
    expect(target?.reason).toMatch(
      /^publishing to CloudWatch failed: PutMetricData batch 1 of 1 .* InternalServiceFault \(HTTP 500\)/,
    );
    expect(target?.failures.map((f) => f.queryId)).toEqual(CATALOG.map((e) => e.id));
    expect(target?.failures[0]?.name).toBe('CloudWatchBatchFailedError');
    expect(twin.datums()).toEqual([]);
  });

  it('reports a target whose model cannot be a CloudWatch dimension, with the reason', async () => {
    // Prepare
    const target = { ...healthy, model: 'modèle-français' };

    // Act
    const result = await collectMetrics(deps({ [healthy.name]: answeringSource() }), [target], {
      namespace: 'vLLM/EKSPilot',
    });

    // Assess
    expect(result.targets[0]?.status).toBe('failed');
    expect(result.targets[0]?.reason).toMatch(
      /^no datum could be published: .*dimension Model value "modèle-français": must contain only printable ASCII/,
    );
    expect(twin.requests()).toEqual([]);
  });

  it.each([
    {
      case: 'its metrics source cannot be built',
      sources: {},
      reason: 'reading its metrics failed: Error: no source for prod-ministral',
    },
    {
      case: 'its rate window is not a PromQL duration',
      sources: { [healthy.name]: answeringSource() },
      rateWindow: '2 minutes',
      reason: /^reading its metrics failed: PromqlInvalidArgumentError: /,
    },
  ])('reports a target as failed when $case', async ({ sources, rateWindow, reason }) => {
    // Act
    const result = await collectMetrics(deps(sources), [healthy], {
      namespace: 'vLLM/EKSPilot',
      ...(rateWindow === undefined ? {} : { rateWindow }),
    });

    // Assess
    expect(result.targets[0]).toMatchObject({ target: 'prod-ministral', status: 'failed', published: 0 });
    expect(result.targets[0]?.reason).toMatch(reason);
  });

  it('does not start targets once the signal has fired', async () => {
    // Prepare
    const controller = new AbortController();
    controller.abort(new Error('Lambda deadline in 3 s'));

    // Act
    const result = await collectMetrics(deps({ [healthy.name]: answeringSource() }), [healthy], {
      namespace: 'vLLM/EKSPilot',
      signal: controller.signal,
    });

    // Assess
    expect(result.targets[0]).toMatchObject({
      status: 'failed',
      reason: 'not started: the run was aborted (Error: Lambda deadline in 3 s)',
    });
    expect(twin.requests()).toEqual([]);
  });
});
