import { describe, expect, it } from '@jest/globals';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { AlertExportInvalidError } from '../errors.js';
import { DEFAULT_ALERT_SETTINGS } from '../rules/index.js';
import { prometheusRuleManifest } from './prometheusRule.js';

describe('Function: prometheusRuleManifest', () => {
  it('is a valid PrometheusRule that kube-prometheus-stack selects', () => {
    // Act
    const manifest = prometheusRuleManifest();

    // Assess
    expect(() => new PrometheusRule(manifest as never).validate()).not.toThrow();
    expect(manifest.metadata).toEqual({
      name: 'vllm-eks-pilot-alerts',
      namespace: 'monitoring',
      labels: { release: 'kube-prometheus-stack' },
    });
    const spec = manifest.spec as { groups: Array<{ rules: Array<{ alert: string }> }> };
    expect(spec.groups[0]?.rules.map((r) => r.alert)).toHaveLength(7);
  });

  it('takes its own name, namespace and labels (replacing the default release label)', () => {
    // Act
    const manifest = prometheusRuleManifest({
      name: 'vllm-alerts',
      namespace: 'observability',
      labels: { release: 'prom', team: 'ml' },
    });

    // Assess
    expect(manifest.metadata).toEqual({
      name: 'vllm-alerts',
      namespace: 'observability',
      labels: { release: 'prom', team: 'ml' },
    });
  });

  it('holds one group per target', () => {
    // Prepare
    const target = { name: 'a', cluster: 'c', namespace: 'ns', deployment: 'd', model: 'm' };

    // Act
    const manifest = prometheusRuleManifest({ targets: [{ target, settings: DEFAULT_ALERT_SETTINGS }] });

    // Assess
    expect((manifest.spec as { groups: Array<{ name: string }> }).groups.map((g) => g.name)).toEqual([
      'vllm-eks-pilot-alerts-a',
    ]);
  });

  it.each([
    { case: 'an upper-case name', options: { name: 'VLLM' }, field: 'name' },
    { case: 'a namespace with a dot', options: { namespace: 'a.b' }, field: 'namespace' },
  ])('refuses $case', ({ options, field }) => {
    // Act / Assess
    expect(() => prometheusRuleManifest(options)).toThrow(AlertExportInvalidError);
    expect(() => prometheusRuleManifest(options)).toThrow(`${field}: `);
  });
});
