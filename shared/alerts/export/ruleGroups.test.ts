import { describe, expect, it } from '@jest/globals';
import type { Target } from '../../config/index.js';
import { heldForQuery } from '../heldFor.js';
import { ALERT_RULES, DEFAULT_ALERT_SETTINGS, GENERIC_SCOPE, parseAlertSettings } from '../rules/index.js';
import { alertRuleGroups, alertingRule, RULE_GROUP_NAME } from './ruleGroups.js';

const target: Target = {
  name: 'prod-ministral',
  cluster: 'prod',
  namespace: 'llm',
  deployment: 'ministral',
  model: 'ministral',
};

describe('Function: alertRuleGroups', () => {
  it('exports one generic group of the seven rules with the native for and the same condition as the evaluator', () => {
    // Act
    const groups = alertRuleGroups();

    // Assess
    expect(groups).toHaveLength(1);
    expect(groups[0]?.name).toBe(RULE_GROUP_NAME);
    const rules = groups[0]?.rules ?? [];
    expect(rules.map((r) => [r.alert, r.for, r.labels.severity])).toEqual([
      ['VLLMHighQueueDepth', '2m', 'warning'],
      ['VLLMHighLatency', '2m', 'critical'],
      ['VLLMGPUMemoryCritical', '1m', 'critical'],
      ['VLLMKVCacheFull', '30s', 'critical'],
      ['VLLMPreemptionSpike', undefined, 'warning'],
      ['VLLMKVCacheHigh', '2m', 'warning'],
      ['VLLMMetricsAbsent', '5m', 'critical'],
    ]);
    ALERT_RULES.forEach((rule, index) => {
      const settings = DEFAULT_ALERT_SETTINGS.rules[rule.name];
      expect(rules[index]?.expr).toBe(
        `${heldForQuery(rule.valueQuery(GENERIC_SCOPE, settings), settings.threshold, 0, 1)} < +Inf`,
      );
    });
  });

  it('gives every alert its texts as templates, the runbook, and the value, threshold and unit', () => {
    // Act
    const rule = alertRuleGroups()[0]?.rules[3];

    // Assess
    expect(rule?.annotations).toEqual({
      summary:
        'KV cache {{ $value | humanizePercentage }} full on pod {{ $labels.namespace }}/{{ $labels.pod }} ' +
        '(model {{ $labels.model_name }})',
      description: expect.stringContaining('above 95% for at least 30s') as unknown as string,
      runbook: expect.stringMatching(/^1\. /) as unknown as string,
      value: '{{ $value }}',
      threshold: '0.95',
      unit: 'ratio',
    });
  });

  it('exports one group per target with its matchers, its settings, its links and labels', () => {
    // Prepare
    const settings = parseAlertSettings({
      dashboardUrl: 'https://grafana.example.com/d/vllm',
      runbookBaseUrl: 'https://wiki.example.com/vllm',
      rules: { VLLMHighLatency: { threshold: 2.5, for: '3m' }, VLLMPreemptionSpike: { enabled: false } },
    });

    // Act
    const groups = alertRuleGroups({ targets: [{ target, settings }] });

    // Assess
    expect(groups.map((g) => g.name)).toEqual(['vllm-eks-pilot-alerts-prod-ministral']);
    const rules = groups[0]?.rules ?? [];
    expect(rules.map((r) => r.alert)).not.toContain('VLLMPreemptionSpike');
    const latency = rules.find((r) => r.alert === 'VLLMHighLatency');
    expect(latency?.expr).toContain('model_name="ministral"');
    expect(latency?.expr.endsWith(' > 2.5 < +Inf')).toBe(true);
    expect(latency?.for).toBe('3m');
    expect(latency?.labels).toEqual({ severity: 'critical', target: 'prod-ministral', cluster: 'prod' });
    expect(latency?.annotations.runbook_url).toBe('https://wiki.example.com/vllm#vllmhighlatency');
    expect(latency?.annotations.dashboard_url).toBe('https://grafana.example.com/d/vllm');
    const absent = rules.find((r) => r.alert === 'VLLMMetricsAbsent');
    expect(absent?.expr).toMatch(
      /^\(absent\(vllm:num_requests_running\{namespace="llm", model_name="ministral", pod=~/,
    );
    expect(absent?.expr.endsWith(') > 0 < +Inf')).toBe(true);
    expect(absent?.labels).toEqual({ severity: 'critical', target: 'prod-ministral', cluster: 'prod' });
  });

  it('leaves out a target whose rules are all disabled', () => {
    // Prepare
    const rules = Object.fromEntries(ALERT_RULES.map((rule) => [rule.name, { enabled: false }]));

    // Act
    const groups = alertRuleGroups({ targets: [{ target, settings: parseAlertSettings({ rules }) }] });

    // Assess
    expect(groups).toEqual([]);
  });
});

describe('Function: alertingRule', () => {
  it('keeps "{{" in a dashboard URL literal instead of reading it as a template', () => {
    // Prepare
    const settings = parseAlertSettings({ dashboardUrl: 'https://grafana.example.com/d/x?var={{pod}}' });
    const rule = ALERT_RULES[0];
    if (!rule) throw new Error('no rule');

    // Act
    const exported = alertingRule(rule, GENERIC_SCOPE, settings);

    // Assess
    expect(exported.annotations.dashboard_url).toBe('https://grafana.example.com/d/x?var={{ "{{" }}pod}}');
  });
});
