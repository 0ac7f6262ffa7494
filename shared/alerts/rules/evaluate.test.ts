import { describe, expect, it } from '@jest/globals';
import {
  type InstantQueryOptions,
  type InstantSample,
  MetricsError,
  type MetricsSource,
  type RangeSeries,
} from '../../metrics/index.js';
import type { Target } from '../../config/index.js';
import { AlertQueryFailedError } from '../errors.js';
import { MAX_INSTANCES_PER_RULE, evaluateTarget } from './evaluate.js';
import { alertFingerprint } from '../fingerprint.js';
import { parseAlertSettings } from './settings.js';

const target: Target = {
  name: 'prod-ministral',
  cluster: 'prod',
  namespace: 'llm',
  deployment: 'ministral',
  model: 'ministral',
};
const TIME_MS = Date.UTC(2026, 4, 1, 12, 0, 0);
const POD = 'ministral-7d9c8b6f5d-x2k4q';

/**
 * An in-memory MetricsSource (the port, as a fake): answers a query by the metric it reads (each rule reads its own
 * series), records every query and its options.
 */
class FakeSource implements MetricsSource {
  readonly calls: Array<{ query: string; options: InstantQueryOptions | undefined }> = [];

  constructor(private readonly answers: Record<string, InstantSample[] | Error>) {}

  instant(query: string, options?: InstantQueryOptions): Promise<InstantSample[]> {
    this.calls.push({ query, options });
    const metric = Object.keys(this.answers).find((name) => query.includes(name));
    const answer = metric === undefined ? [] : this.answers[metric];
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer ?? []);
  }

  range(): Promise<RangeSeries[]> {
    return Promise.reject(new Error('the evaluator makes instant queries only'));
  }
}

const sample = (labels: Record<string, string>, value: number): InstantSample => ({
  labels,
  value,
  timestampMs: TIME_MS,
});

describe('Function: evaluateTarget', () => {
  it('asks one held-for query per enabled rule, at the given time', async () => {
    // Prepare
    const source = new FakeSource({});
    const settings = parseAlertSettings({ rules: { VLLMPreemptionSpike: { enabled: false } } });

    // Act
    const evaluation = await evaluateTarget(target, settings, { source }, TIME_MS);

    // Assess
    expect(evaluation.evaluatedRules).toEqual([
      'VLLMHighQueueDepth',
      'VLLMHighLatency',
      'VLLMGPUMemoryCritical',
      'VLLMKVCacheFull',
      'VLLMKVCacheHigh',
      'VLLMMetricsAbsent',
    ]);
    expect(source.calls).toHaveLength(6);
    expect(source.calls.every((call) => call.options?.timeMs === TIME_MS)).toBe(true);
    expect(evaluation.queries.map((q) => q.alertname)).toEqual(evaluation.evaluatedRules);
    const kv = evaluation.queries.find((q) => q.alertname === 'VLLMKVCacheFull')?.query ?? '';
    expect(kv).toContain('[30s:7s]');
    expect(kv).toContain('offset 30s');
    expect(kv).toContain('pod=~"ministral-[a-z0-9]+-[a-z0-9]+"');
    expect(evaluation.firing).toEqual([]);
    expect(evaluation.failures).toEqual([]);
  });

  it('turns each sample into an alert instance with its labels, texts and links', async () => {
    // Prepare
    const labels = { namespace: 'llm', pod: POD, model_name: 'ministral', instance: '10.0.0.7:8000' };
    const source = new FakeSource({ 'vllm:kv_cache_usage_perc': [sample(labels, 0.97)] });
    const settings = parseAlertSettings({
      dashboardUrl: 'https://grafana.example.com/d/vllm',
      runbookBaseUrl: 'https://wiki.example.com/vllm',
    });

    // Act
    const evaluation = await evaluateTarget(target, settings, { source }, TIME_MS);

    // Assess: 97 % is above both KV-cache thresholds (the inhibition is the decision stage's, not the evaluator's).
    expect(evaluation.firing.map((alert) => alert.alertname)).toEqual(['VLLMKVCacheFull', 'VLLMKVCacheHigh']);
    expect(evaluation.firing.filter((alert) => alert.alertname === 'VLLMKVCacheFull')).toEqual([
      {
        alertname: 'VLLMKVCacheFull',
        severity: 'critical',
        target: 'prod-ministral',
        labels: { namespace: 'llm', pod: POD, model_name: 'ministral', target: 'prod-ministral', cluster: 'prod' },
        fingerprint: alertFingerprint('prod-ministral', 'VLLMKVCacheFull', labels, ['namespace', 'pod', 'model_name']),
        value: 0.97,
        threshold: 0.95,
        unit: 'ratio',
        forSeconds: 30,
        summary: `KV cache 97% full on pod llm/${POD} (model ministral)`,
        description: expect.stringContaining('above 95% for at least 30s') as unknown as string,
        runbook: expect.stringMatching(/^1\. /) as unknown as string,
        dashboardUrl: 'https://grafana.example.com/d/vllm',
        runbookUrl: 'https://wiki.example.com/vllm#vllmkvcachefull',
      },
    ]);
  });

  it("labels a GPU without a Pod with the target's namespace", async () => {
    // Prepare
    const gpu = { UUID: 'GPU-1', gpu: '0', Hostname: 'node-a', modelName: 'NVIDIA L40S' };
    const source = new FakeSource({ DCGM_FI_DEV_FB_USED: [sample(gpu, 0.96)] });

    // Act
    const evaluation = await evaluateTarget(target, parseAlertSettings({}), { source }, TIME_MS);

    // Assess
    expect(evaluation.firing[0]?.labels).toEqual({
      ...gpu,
      namespace: 'llm',
      target: 'prod-ministral',
      cluster: 'prod',
    });
    expect(evaluation.firing[0]?.summary).toBe('GPU memory 96% used on GPU GPU-1 on node node-a');
  });

  it('reports a failed query and still evaluates the other rules', async () => {
    // Prepare
    const failure = new MetricsError('AMP answered HTTP 503', true);
    const source = new FakeSource({
      'vllm:num_requests_waiting': failure,
      'vllm:num_preemptions_total': [sample({ namespace: 'llm', pod: POD, model_name: 'ministral' }, 6)],
    });

    // Act
    const evaluation = await evaluateTarget(target, parseAlertSettings({}), { source }, TIME_MS);

    // Assess
    expect(evaluation.evaluatedRules).not.toContain('VLLMHighQueueDepth');
    expect(evaluation.evaluatedRules).toHaveLength(6);
    expect(evaluation.failures).toHaveLength(1);
    const error = evaluation.failures[0]?.error;
    expect(error).toBeInstanceOf(AlertQueryFailedError);
    expect(error?.message).toContain('VLLMHighQueueDepth for target prod-ministral: running the query failed');
    expect((error as AlertQueryFailedError).retryable).toBe(true);
    expect(error?.cause).toBe(failure);
    expect(evaluation.firing.map((alert) => alert.alertname)).toEqual(['VLLMPreemptionSpike']);
  });

  it('reports a target whose fields cannot become matchers as a failure of every rule', async () => {
    // Prepare
    const source = new FakeSource({});

    // Act
    const evaluation = await evaluateTarget({ ...target, model: '' }, parseAlertSettings({}), { source }, TIME_MS);

    // Assess
    expect(evaluation.evaluatedRules).toEqual([]);
    expect(evaluation.failures).toHaveLength(7);
    expect(evaluation.failures[0]?.error.message).toContain('building the query failed');
    expect(source.calls).toHaveLength(0);
  });

  it('gives one fingerprint per Pod, stable across evaluations', async () => {
    // Prepare
    const podA = { namespace: 'llm', pod: POD, model_name: 'ministral' };
    const podB = { ...podA, pod: 'ministral-7d9c8b6f5d-h8w2m' };
    const first = new FakeSource({ 'vllm:num_requests_waiting': [sample(podA, 73), sample(podB, 60)] });
    const second = new FakeSource({ 'vllm:num_requests_waiting': [sample(podA, 80)] });

    // Act
    const a = await evaluateTarget(target, parseAlertSettings({}), { source: first }, TIME_MS);
    const b = await evaluateTarget(target, parseAlertSettings({}), { source: second }, TIME_MS + 60_000);

    // Assess
    expect(new Set(a.firing.map((alert) => alert.fingerprint)).size).toBe(2);
    const podAFirst = a.firing.find((alert) => alert.labels.pod === POD)?.fingerprint;
    expect(b.firing[0]?.fingerprint).toBe(podAFirst);
  });

  it.each([
    {
      case: 'a KV-cache fraction of 3.2',
      metric: 'vllm:kv_cache_usage_perc',
      value: 3.2,
      cause: 'MetricsValueOutOfDomainError',
      failed: ['VLLMKVCacheFull', 'VLLMKVCacheHigh'],
    },
    {
      case: 'a queue of +Inf',
      metric: 'vllm:num_requests_waiting',
      value: Infinity,
      cause: 'MetricsNonFiniteValueError',
      failed: ['VLLMHighQueueDepth'],
    },
    {
      case: 'a negative queue',
      metric: 'vllm:num_requests_waiting',
      value: -5,
      cause: 'MetricsValueOutOfDomainError',
      failed: ['VLLMHighQueueDepth'],
    },
  ])(
    'never fires on $case: the rules reading it fail with a named cause, the others still fire',
    async ({ metric, value, cause, failed }) => {
      // Prepare
      const source = new FakeSource({
        [metric]: [sample({ namespace: 'llm', pod: POD }, value)],
        'vllm:e2e_request_latency_seconds': [sample({ namespace: 'llm' }, 9)],
      });

      // Act
      const evaluation = await evaluateTarget(target, parseAlertSettings({}), { source }, TIME_MS);

      // Assess
      expect(evaluation.firing.map((alert) => alert.alertname)).toEqual(['VLLMHighLatency']);
      expect(evaluation.failures.map((f) => f.alertname)).toEqual(failed);
      for (const failure of evaluation.failures) {
        expect(failure.error).toBeInstanceOf(AlertQueryFailedError);
        expect((failure.error.cause as Error).name).toBe(cause);
        expect(failure.error.message).not.toContain('\n');
      }
    },
  );

  it("fires the absent alert on absent()'s answer, labelled with the target's namespace and model", async () => {
    // Prepare: absent() answers the labels of the selector's equality matchers.
    const source = new FakeSource({
      'vllm:num_requests_running': [sample({ namespace: 'llm', model_name: 'ministral' }, 1)],
    });

    // Act
    const evaluation = await evaluateTarget(target, parseAlertSettings({}), { source }, TIME_MS);

    // Assess
    const query = evaluation.queries.find((q) => q.alertname === 'VLLMMetricsAbsent')?.query ?? '';
    expect(query).toContain('absent(vllm:num_requests_running{namespace="llm", model_name="ministral", pod=~');
    expect(query).toContain('[300s:15s]');
    expect(evaluation.firing).toHaveLength(1);
    expect(evaluation.firing[0]).toMatchObject({
      alertname: 'VLLMMetricsAbsent',
      severity: 'critical',
      labels: { namespace: 'llm', model_name: 'ministral', target: 'prod-ministral', cluster: 'prod' },
      fingerprint: alertFingerprint(
        'prod-ministral',
        'VLLMMetricsAbsent',
        { namespace: 'llm', model_name: 'ministral' },
        ['namespace', 'model_name'],
      ),
      value: 1,
      threshold: 0,
      forSeconds: 300,
      summary: 'No vLLM metrics for model ministral in namespace llm for at least 5m',
    });
  });

  it('fails a rule with more instances than the per-rule cap instead of firing them all', async () => {
    // Prepare
    const flood = Array.from({ length: 500_000 }, (_, i) => sample({ namespace: 'llm', pod: `${POD}-${i}` }, 40));
    const source = new FakeSource({ 'vllm:num_requests_waiting': flood });

    // Act
    const evaluation = await evaluateTarget(target, parseAlertSettings({}), { source }, TIME_MS);

    // Assess
    expect(evaluation.firing).toEqual([]);
    expect(evaluation.evaluatedRules).not.toContain('VLLMHighQueueDepth');
    const [failure] = evaluation.failures;
    expect(failure?.alertname).toBe('VLLMHighQueueDepth');
    expect(failure?.error.message).toContain(
      `the query returned 500000 series, more than the cap of ${MAX_INSTANCES_PER_RULE}`,
    );
  });
});
