import { describe, expect, it } from '@jest/globals';
import type { Target } from '../../config/index.js';
import { DEFAULT_ALERT_SETTINGS } from './settings.js';
import { ALERT_NAMES, type AlertName } from '../types.js';
import { absentLabels } from './metricsAbsent.js';
import { ALERT_RULES, hasTunableThreshold, ruleByName, runbookUrl, usesRateWindow } from './registry.js';
import { alertScopeForTarget, GENERIC_SCOPE } from './scope.js';
import { eq, type LabelMatcher, matchRegex } from '../../metrics/index.js';

const target: Target = {
  name: 'prod-ministral',
  cluster: 'prod',
  namespace: 'llm',
  deployment: 'ministral',
  model: 'mistralai/Ministral-8B-Instruct-2410',
};
const settingsOf = (name: (typeof ALERT_NAMES)[number]) => DEFAULT_ALERT_SETTINGS.rules[name];

describe('Constant: ALERT_RULES', () => {
  it("lists the guide's five alerts in the guide's order, then its 80 % warning and the absent alert", () => {
    // Act
    const names = ALERT_RULES.map((rule) => rule.name);

    // Assess
    expect(names).toEqual([...ALERT_NAMES]);
  });

  it.each([
    { name: 'VLLMHighQueueDepth', severity: 'warning', threshold: 50, forSeconds: 120, windowSeconds: 0 },
    { name: 'VLLMHighLatency', severity: 'critical', threshold: 5, forSeconds: 120, windowSeconds: 300 },
    { name: 'VLLMGPUMemoryCritical', severity: 'critical', threshold: 0.95, forSeconds: 60, windowSeconds: 0 },
    { name: 'VLLMKVCacheFull', severity: 'critical', threshold: 0.95, forSeconds: 30, windowSeconds: 0 },
    { name: 'VLLMPreemptionSpike', severity: 'warning', threshold: 5, forSeconds: 0, windowSeconds: 300 },
    // The guide's early warning; it gives no `for` (2 min: the rule's comment says why).
    { name: 'VLLMKVCacheHigh', severity: 'warning', threshold: 0.8, forSeconds: 120, windowSeconds: 0 },
    // Not the guide's: absent() answers 1, so the threshold is 0 and fixed; it keeps no firing time (the rule says why).
    {
      name: 'VLLMMetricsAbsent',
      severity: 'critical',
      threshold: 0,
      forSeconds: 300,
      windowSeconds: 0,
      keepFiringForSeconds: 0,
    },
  ] as const)("$name: the guide's severity, threshold and for", ({ name, severity, ...defaults }) => {
    // Act
    const rule = ruleByName(name);

    // Assess
    expect(rule.severity).toBe(severity);
    expect(rule.defaults).toEqual(defaults);
    expect(usesRateWindow(rule)).toBe(defaults.windowSeconds > 0);
    expect(hasTunableThreshold(rule)).toBe(name !== 'VLLMMetricsAbsent');
  });
});

describe('Method: valueQuery', () => {
  it.each([
    {
      name: 'VLLMHighQueueDepth',
      expected: 'max by (namespace, pod, model_name) (vllm:num_requests_waiting)',
    },
    {
      name: 'VLLMHighLatency',
      expected:
        '(histogram_quantile(0.95, sum by (le, namespace, model_name) ' +
        '(rate(vllm:e2e_request_latency_seconds_bucket[5m])))) > -Inf',
    },
    {
      name: 'VLLMGPUMemoryCritical',
      expected:
        '(max by (UUID, gpu, Hostname, hostname, modelName, namespace, pod) (DCGM_FI_DEV_FB_USED)) / ' +
        '((max by (UUID, gpu, Hostname, hostname, modelName, namespace, pod) (DCGM_FI_DEV_FB_USED)) + ' +
        '(max by (UUID, gpu, Hostname, hostname, modelName, namespace, pod) (DCGM_FI_DEV_FB_FREE)))',
    },
    {
      name: 'VLLMKVCacheFull',
      expected: 'max by (namespace, pod, model_name) ((vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc))',
    },
    {
      name: 'VLLMPreemptionSpike',
      expected: 'sum by (namespace, pod, model_name) (rate(vllm:num_preemptions_total[5m]))',
    },
    {
      name: 'VLLMKVCacheHigh',
      expected: 'max by (namespace, pod, model_name) ((vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc))',
    },
    {
      // No vLLM series at all: absent() answers {} 1; while any exists, the other branch answers {} 0.
      name: 'VLLMMetricsAbsent',
      expected: 'absent(vllm:num_requests_running) or 0 * (max(vllm:num_requests_running))',
    },
  ] as const)('$name: the generic query reads every series', ({ name, expected }) => {
    // Act
    const query = ruleByName(name).valueQuery(GENERIC_SCOPE, settingsOf(name));

    // Assess
    expect(query).toBe(expected);
  });

  it("narrows vLLM rules to the target's Pods and keeps its cluster label", () => {
    // Prepare
    const scope = alertScopeForTarget({ ...target, clusterLabel: 'cluster' });

    // Act
    const query = ruleByName('VLLMKVCacheFull').valueQuery(scope, settingsOf('VLLMKVCacheFull'));

    // Assess
    const matchers =
      '{namespace="llm", model_name="mistralai/Ministral-8B-Instruct-2410", pod=~"ministral-[a-z0-9]+-[a-z0-9]+", cluster="prod"}';
    expect(query).toBe(
      `max by (namespace, pod, model_name, cluster) ((vllm:kv_cache_usage_perc${matchers} or vllm:gpu_cache_usage_perc${matchers}))`,
    );
  });

  it("asks whether the target's own vLLM series are absent, keeping absent()'s labels in both branches", () => {
    // Prepare
    const scope = alertScopeForTarget({ ...target, clusterLabel: 'cluster' });

    // Act
    const query = ruleByName('VLLMMetricsAbsent').valueQuery(scope, settingsOf('VLLMMetricsAbsent'));

    // Assess: absent() keeps namespace, model_name and cluster (the Pod regex is dropped); so does the other branch.
    const series =
      'vllm:num_requests_running{namespace="llm", model_name="mistralai/Ministral-8B-Instruct-2410", ' +
      'pod=~"ministral-[a-z0-9]+-[a-z0-9]+", cluster="prod"}';
    expect(query).toBe(`absent(${series}) or 0 * (max by (namespace, model_name, cluster) (${series}))`);
  });

  it.each(['VLLMMetricsAbsent', 'VLLMKVCacheHigh'] as const)(
    '%s escapes a model name so it cannot change the query',
    (name) => {
      // Prepare
      const scope = alertScopeForTarget({ ...target, model: 'evil"} or vector(1) #\n' });

      // Act
      const query = ruleByName(name).valueQuery(scope, settingsOf(name));

      // Assess
      expect(query).toContain('model_name="evil\\"} or vector(1) #\\n"');
      expect(query).not.toContain('vector(1) #"}');
    },
  );

  it('narrows the GPU rule with the DCGM labels of the Pods', () => {
    // Act
    const query = ruleByName('VLLMGPUMemoryCritical').valueQuery(
      alertScopeForTarget(target),
      settingsOf('VLLMGPUMemoryCritical'),
    );

    // Assess
    expect(query).toContain('DCGM_FI_DEV_FB_FREE{namespace="llm", pod=~"ministral-[a-z0-9]+-[a-z0-9]+"}');
    expect(query).not.toContain('model_name');
  });

  it('escapes a model name so it cannot change the query', () => {
    // Prepare
    const scope = alertScopeForTarget({ ...target, model: 'evil"} or vector(1) #' });

    // Act
    const query = ruleByName('VLLMHighQueueDepth').valueQuery(scope, settingsOf('VLLMHighQueueDepth'));

    // Assess
    expect(query).toContain('model_name="evil\\"} or vector(1) #"');
  });

  it.each([
    { name: 'VLLMHighLatency', window: '10m' },
    { name: 'VLLMPreemptionSpike', window: '10m' },
  ] as const)("$name uses the target's rate window", ({ name, window }) => {
    // Act
    const query = ruleByName(name).valueQuery(GENERIC_SCOPE, { ...settingsOf(name), windowSeconds: 600 });

    // Assess
    expect(query).toContain(`[${window}]`);
  });
});

describe('Method: summary / description', () => {
  const podLabels = { namespace: 'llm', pod: 'ministral-7d9c8b6f5d-x2k4q', model_name: 'ministral' };

  it.each<{ name: AlertName; labels: Record<string, string>; value: number; summary: string; description: string }>([
    {
      name: 'VLLMHighQueueDepth',
      labels: podLabels,
      value: 73,
      summary: 'Queue depth 73 on pod llm/ministral-7d9c8b6f5d-x2k4q (model ministral)',
      description: 'above the threshold of 50 for at least 2m',
    },
    {
      name: 'VLLMHighLatency',
      labels: { namespace: 'llm', model_name: 'ministral' },
      value: 9.75,
      summary: 'p95 latency 9.75s for model ministral in llm (SLO 5s)',
      description: 'over the last 5m is 9.75s, above the SLO of 5s for at least 2m',
    },
    {
      name: 'VLLMGPUMemoryCritical',
      labels: {
        UUID: 'GPU-1',
        gpu: '0',
        modelName: 'NVIDIA L40S',
        Hostname: 'node-a',
        namespace: 'llm',
        pod: 'ministral-7d9c8b6f5d-x2k4q',
      },
      value: 0.9712,
      summary: 'GPU memory 97.12% used on GPU GPU-1 on node node-a (pod llm/ministral-7d9c8b6f5d-x2k4q)',
      description:
        'is 97.12% on GPU 0 (GPU-1, NVIDIA L40S) on node node-a (pod llm/ministral-7d9c8b6f5d-x2k4q), above 95%',
    },
    {
      name: 'VLLMGPUMemoryCritical',
      labels: { UUID: 'GPU-2', gpu: '1', hostname: 'node-b' },
      value: 0.97,
      summary: 'GPU memory 97% used on GPU GPU-2 on node node-b',
      description: 'is 97% on GPU 1 (GPU-2) on node node-b, above 95% for at least 1m',
    },
    {
      name: 'VLLMKVCacheFull',
      labels: podLabels,
      value: 0.97,
      summary: 'KV cache 97% full on pod llm/ministral-7d9c8b6f5d-x2k4q (model ministral)',
      description: 'is 97% full, above 95% for at least 30s',
    },
    {
      name: 'VLLMPreemptionSpike',
      labels: podLabels,
      value: 6,
      summary: 'Preemptions at 6/s on pod llm/ministral-7d9c8b6f5d-x2k4q (model ministral)',
      description: 'preempts requests at 6/s over the last 5m, above 5/s. Requests',
    },
    {
      name: 'VLLMKVCacheHigh',
      labels: podLabels,
      value: 0.85,
      summary: 'KV cache 85% used on pod llm/ministral-7d9c8b6f5d-x2k4q (model ministral)',
      description: "is 85% used, above 80% for at least 2m: the guide's early warning",
    },
    {
      name: 'VLLMMetricsAbsent',
      labels: { namespace: 'llm', model_name: 'ministral' },
      value: 1,
      summary: 'No vLLM metrics for model ministral in namespace llm for at least 5m',
      description: 'for model ministral in namespace llm for at least 5m. Every other vLLM alert',
    },
    {
      // The generic rule: no vLLM series anywhere, so no labels.
      name: 'VLLMMetricsAbsent',
      labels: {},
      value: 1,
      summary: 'No vLLM metrics for at least 5m',
      description: 'No `vllm:num_requests_running` series (every vLLM version exposes it) for at least 5m.',
    },
  ])('$name says what and where: "$summary"', ({ name, labels, value, summary, description }) => {
    // Prepare
    const rule = ruleByName(name);
    const context = { labels, value, settings: settingsOf(name) };

    // Act
    const texts = { summary: rule.summary(context), description: rule.description(context) };

    // Assess
    expect(texts.summary).toBe(summary);
    expect(texts.description).toContain(description);
  });

  it('writes the same texts as Prometheus templates for the exported rules', () => {
    // Act
    const templates = ruleByName('VLLMGPUMemoryCritical').annotationTemplates(settingsOf('VLLMGPUMemoryCritical'));

    // Assess
    expect(templates.summary).toBe(
      'GPU memory {{ $value | humanizePercentage }} used on GPU {{ $labels.UUID }}' +
        '{{ with $labels.Hostname }} on node {{ . }}{{ end }}{{ with $labels.hostname }} on node {{ . }}{{ end }}' +
        '{{ with $labels.pod }} (pod {{ $labels.namespace }}/{{ . }}){{ end }}',
    );
  });

  it('gives every rule a runbook of numbered steps', () => {
    // Act
    const runbooks = ALERT_RULES.map((rule) => rule.runbook.split('\n'));

    // Assess
    for (const steps of runbooks) {
      expect(steps.length).toBeGreaterThanOrEqual(3);
      steps.forEach((step, index) => expect(step.startsWith(`${index + 1}. `)).toBe(true));
    }
  });
});

describe('Function: absentLabels', () => {
  it.each([
    {
      case: "a target's matchers: the Pod regex is left out",
      matchers: [eq('namespace', 'llm'), eq('model_name', 'm'), matchRegex('pod', 'd-.+')],
      labels: ['namespace', 'model_name'],
    },
    { case: 'no matchers (the generic rule)', matchers: [], labels: [] },
    {
      case: 'a label matched twice',
      matchers: [eq('namespace', 'a'), eq('namespace', 'b'), eq('model_name', 'm')],
      labels: ['model_name'],
    },
    {
      case: 'an equality and a negation of one label',
      matchers: [eq('namespace', 'a'), { name: 'namespace', op: '!=', value: 'b' } satisfies LabelMatcher],
      labels: [],
    },
    { case: 'an empty value', matchers: [eq('namespace', ''), eq('model_name', 'm')], labels: ['model_name'] },
  ])("keeps the labels Prometheus's absent() keeps: $case", ({ matchers, labels }) => {
    // Act / Assess
    expect(absentLabels(matchers)).toEqual(labels);
  });
});

describe('Function: runbookUrl', () => {
  it('appends the alert name in lower case as the fragment', () => {
    // Act
    const url = runbookUrl('https://wiki.example.com/vllm', 'VLLMKVCacheFull');

    // Assess
    expect(url).toBe('https://wiki.example.com/vllm#vllmkvcachefull');
  });

  it('is undefined without a base URL', () => {
    // Act / Assess
    expect(runbookUrl(undefined, 'VLLMKVCacheFull')).toBeUndefined();
  });
});
