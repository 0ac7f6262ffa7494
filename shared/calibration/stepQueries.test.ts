import { describe, expect, it } from '@jest/globals';
import { PromqlInvalidArgumentError } from '../metrics/index.js';
import { calibrationTarget, readinessQueries, scrapeSamplesQuery, stepQueries, windowDuration } from './stepQueries.js';
import { testInput } from './testing/steps.js';

const SEL =
  '{namespace="default", model_name="mistralai/Ministral-3-8B-Instruct-2512", pod=~"vllm-inference-app-[a-z0-9]+-[a-z0-9]+"}';

describe('Function: calibrationTarget', () => {
  it("in shadow mode (the default) selects the copy's Pods, which the target's own matcher never does", () => {
    // Act
    const shadow = stepQueries(calibrationTarget(testInput({ deploy: { mode: 'shadow' } })), 60).queue;

    // Assess
    expect(shadow).toBe(
      'sum(vllm:num_requests_waiting{namespace="default", model_name="mistralai/Ministral-3-8B-Instruct-2512", ' +
        'pod=~"vllm-inference-app-shadow-[a-z0-9]+-[a-z0-9]+"})',
    );
    expect(calibrationTarget(testInput({ deploy: { mode: 'apply', maxModelLen: 4096 } })).deployment).toBe(
      'vllm-inference-app',
    );
  });
});

describe('Function: stepQueries', () => {
  const queries = stepQueries(calibrationTarget(testInput()), 60);

  it.each([
    { case: 'queue depth, summed over the Pods', key: 'queue', query: `sum(vllm:num_requests_waiting${SEL})` },
    {
      case: "running batch over the window's latest half, where a saturated batch has filled",
      key: 'runningLatestHalfMean',
      query: `sum(avg_over_time(vllm:num_requests_running${SEL}[30s]))`,
    },
    {
      case: 'p95 end-to-end latency of the requests that finished in the window',
      key: 'p95E2e',
      query: `(histogram_quantile(0.95, sum by (le) (increase(vllm:e2e_request_latency_seconds_bucket${SEL}[60s])))) > -Inf`,
    },
    {
      case: 'p95 inter-token latency under both of its names',
      key: 'p95InterToken',
      query:
        `(histogram_quantile(0.95, sum by (le) ((increase(vllm:inter_token_latency_seconds_bucket${SEL}[60s]) or ` +
        `increase(vllm:time_per_output_token_seconds_bucket${SEL}[60s]))))) > -Inf`,
    },
    {
      case: "the busiest Pod's mean KV-cache usage under both names",
      key: 'kvCacheMean',
      query:
        `max((avg_over_time(vllm:kv_cache_usage_perc${SEL}[60s]) or ` +
        `avg_over_time(vllm:gpu_cache_usage_perc${SEL}[60s])))`,
    },
    { case: 'completed requests', key: 'completed', query: `sum(increase(vllm:request_success_total${SEL}[60s]))` },
    {
      case: 'Pods with series in the window',
      key: 'pods',
      query: `count(max by (pod) (max_over_time(vllm:num_requests_running${SEL}[60s])))`,
    },
  ] as const)('asks AMP for $case', ({ key, query }) => {
    // Assess
    expect(queries[key]).toBe(query);
  });

  it('escapes the model name and adds the cluster matcher when the workspace is shared', () => {
    // Prepare
    const input = testInput();
    const target = calibrationTarget({
      ...input,
      target: { ...input.target, model: 'team "a"\\model', clusterLabel: 'cluster' },
    });

    // Act
    const { queue } = stepQueries(target, 60);

    // Assess
    expect(queue).toContain('model_name="team \\"a\\"\\\\model"');
    expect(queue).toContain('cluster="ai-eks-docs"');
  });
});

describe('Function: readinessQueries', () => {
  it('averages the last requests from the histogram sum and count, and lists the Pods with series', () => {
    // Act
    const q = readinessQueries(calibrationTarget(testInput()), 75);

    // Assess
    expect(q.recentMeanE2e).toBe(
      `((sum(increase(vllm:e2e_request_latency_seconds_sum${SEL}[75s]))) / ` +
        `(sum(increase(vllm:e2e_request_latency_seconds_count${SEL}[75s])))) > -Inf`,
    );
    expect(q.podsWithSeries).toBe(`count by (pod) (vllm:num_requests_running${SEL})`);
    expect(scrapeSamplesQuery(calibrationTarget(testInput()), 60)).toBe(
      `max(count_over_time(vllm:num_requests_running${SEL}[60s]))`,
    );
  });
});

describe('Function: windowDuration', () => {
  it.each([
    { case: 'whole seconds', seconds: 60, text: '60s' },
    { case: 'a fraction, rounded', seconds: 59.6, text: '60s' },
    { case: 'under a second, at least 1 s', seconds: 0.2, text: '1s' },
  ])('writes $case', ({ seconds, text }) => {
    // Assess
    expect(windowDuration(seconds)).toBe(text);
  });

  it('refuses a window that is not a number', () => {
    // Act / Assess
    expect(() => windowDuration(Number.NaN)).toThrow(PromqlInvalidArgumentError);
  });
});
