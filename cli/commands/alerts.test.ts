import { describe, expect, it } from '@jest/globals';
import { Command } from 'commander';
import { parse as parseYaml } from 'yaml';
import { AlertExportInvalidError } from '../../shared/alerts/index.js';
import { parseAlertTargets } from '../../shared/alerts/rules/index.js';
import { registerAlertsCommand, renderAlertRules, renderAlertTable } from './alerts.js';

const targets = parseAlertTargets([
  {
    name: 'prod-ministral',
    cluster: 'prod',
    namespace: 'llm',
    deployment: 'ministral',
    model: 'ministral',
    alerts: { rules: { VLLMPreemptionSpike: { enabled: false } } },
  },
]);
const TOPIC = 'arn:aws:sns:us-east-1:123456789012:vllm-eks-pilot-alerts';

describe('Function: renderAlertRules', () => {
  it.each([
    {
      case: 'prometheus-rule',
      options: { format: 'prometheus-rule' as const },
      key: 'kind',
      expected: 'PrometheusRule',
    },
    { case: 'amp', options: { format: 'amp' as const }, key: 'groups', expected: undefined },
    {
      case: 'amp-alertmanager',
      options: { format: 'amp-alertmanager' as const, topicArn: TOPIC, region: 'us-east-1' },
      key: 'alertmanager_config',
      expected: undefined,
    },
    { case: 'promtool-test', options: { format: 'promtool-test' as const }, key: 'tests', expected: undefined },
  ])('writes YAML for $case', ({ options, key, expected }) => {
    // Act
    const document = parseYaml(renderAlertRules(options)) as Record<string, unknown>;

    // Assess
    expect(document).toHaveProperty(key);
    if (expected !== undefined) expect(document[key]).toBe(expected);
  });

  it('writes per-target groups from a targets file, without disabled rules', () => {
    // Act
    const file = parseYaml(renderAlertRules({ format: 'amp', targets })) as {
      groups: Array<{ name: string; rules: Array<{ alert: string }> }>;
    };

    // Assess
    expect(file.groups.map((g) => g.name)).toEqual(['vllm-eks-pilot-alerts-prod-ministral']);
    expect(file.groups[0]?.rules).toHaveLength(6);
  });

  it.each([
    {
      case: 'the alert manager definition without a topic',
      options: { format: 'amp-alertmanager' as const, region: 'us-east-1' },
      message: '--topic-arn/--region: both are required',
    },
    {
      case: 'a topic with the rule formats',
      options: { format: 'amp' as const, topicArn: TOPIC, region: 'us-east-1' },
      message: 'apply to --format amp-alertmanager, not amp',
    },
    {
      case: 'targets with the promtool tests',
      options: { format: 'promtool-test' as const, targets },
      message: '--targets: applies to --format prometheus-rule and amp',
    },
    {
      case: 'a rule groups namespace AMP refuses',
      options: { format: 'amp' as const, ampNamespace: 'my alerts' },
      message: 'not a valid AMP rule groups namespace name',
    },
  ])('refuses $case with one line', ({ options, message }) => {
    // Act / Assess
    expect(() => renderAlertRules(options)).toThrow(AlertExportInvalidError);
    expect(() => renderAlertRules(options)).toThrow(message);
  });
});

describe('Function: registerAlertsCommand', () => {
  it('adds `alerts rules`, `evaluate`, `silence`, `silences` and `unsilence` and returns the group', () => {
    // Prepare
    const program = new Command('vllm-pilot');

    // Act
    const alerts = registerAlertsCommand(program);

    // Assess
    expect(alerts.name()).toBe('alerts');
    expect(alerts.commands.map((c) => c.name())).toEqual(['rules', 'evaluate', 'silence', 'silences', 'unsilence']);
    expect(alerts.commands[0]?.helpInformation()).toContain('--format <format>');
  });
});

describe('Function: renderAlertTable', () => {
  it('is exported for the README', () => {
    // Act / Assess
    expect(renderAlertTable()).toContain('| VLLMKVCacheFull |');
  });
});
