import { describe, expect, it } from '@jest/globals';
import { parse as parseYaml } from 'yaml';
import { ALERT_NAMES } from '../types.js';
import { notifiedAlertsQuery, promtoolTestFile } from './promtoolTests.js';

interface TestFile {
  rule_files: string[];
  tests: Array<{
    input_series: Array<{ series: string; values: string }>;
    alert_rule_test: Array<{ eval_time: string; alertname: string; exp_alerts: unknown[] }>;
    promql_expr_test?: Array<{ expr: string; eval_time: string; exp_samples: Array<{ labels: string }> }>;
  }>;
}

describe('Function: promtoolTestFile', () => {
  const file = parseYaml(promtoolTestFile()) as TestFile;

  it('tests the generic rules file next to it', () => {
    // Assess
    expect(file.rule_files).toEqual(['vllm-alerts.rules.yaml']);
  });

  it.each(ALERT_NAMES.map((name) => ({ name })))(
    '$name: not firing first, then firing, and resolved at the end',
    ({ name }) => {
      // Act
      const checks = file.tests.flatMap((t) => t.alert_rule_test).filter((check) => check.alertname === name);

      // Assess
      const firing = checks.map((check) => check.exp_alerts.length > 0);
      expect(firing[0]).toBe(false);
      expect(firing).toContain(true);
      expect(firing.at(-1)).toBe(false);
    },
  );

  it.each(['VLLMKVCacheHigh', 'VLLMMetricsAbsent'])(
    "%s: the evaluator's held-for query is checked at the same times as the native `for`",
    (name) => {
      // Act
      const test = file.tests.find((t) => t.alert_rule_test.every((check) => check.alertname === name));

      // Assess
      const exprTests = test?.promql_expr_test ?? [];
      expect(exprTests.map((e) => e.eval_time)).toEqual(test?.alert_rule_test.map((c) => c.eval_time));
      expect(exprTests.every((e) => e.expr.includes('count_over_time'))).toBe(true);
      expect(exprTests.map((e) => e.exp_samples.length)).toEqual(test?.alert_rule_test.map((c) => c.exp_alerts.length));
    },
  );

  it("shows the inhibition: a firing warning of a Pod whose KV cache is full is not notified, another Pod's is", () => {
    // Act
    const test = file.tests.find((t) => t.promql_expr_test?.some((e) => e.expr === notifiedAlertsQuery()));
    const at = (time: string) => ({
      firing: (test?.alert_rule_test ?? [])
        .filter((c) => c.eval_time === time)
        .flatMap((c) => c.exp_alerts.map(() => c.alertname)),
      notified: (test?.promql_expr_test ?? [])
        .filter((e) => e.eval_time === time)
        .flatMap((e) => e.exp_samples.map((sample) => /alertname="(\w+)"/.exec(sample.labels)?.[1])),
    });

    // Assess: at 6m the critical, both warnings and the spike fire; the critical and the other Pod's warning are told.
    expect(at('6m').firing.sort()).toEqual([
      'VLLMKVCacheFull',
      'VLLMKVCacheHigh',
      'VLLMKVCacheHigh',
      'VLLMPreemptionSpike',
    ]);
    expect(at('6m').notified.sort()).toEqual(['VLLMKVCacheFull', 'VLLMKVCacheHigh']);
    expect(at('3m').notified).toEqual(['VLLMKVCacheHigh', 'VLLMKVCacheHigh']);
  });

  it('writes the inhibit rules as PromQL over ALERTS', () => {
    // Act
    const query = notifiedAlertsQuery();

    // Assess
    expect(query).toBe(
      'ALERTS{alertstate="firing"} unless (ALERTS{alertstate="firing", alertname=~"VLLMKVCacheHigh|VLLMPreemptionSpike"} ' +
        'and on (target, namespace, pod) ALERTS{alertstate="firing", alertname="VLLMKVCacheFull"})',
    );
  });

  it('feeds the KV-cache test with both vLLM names', () => {
    // Act
    const series = file.tests.flatMap((t) => t.input_series.map((s) => s.series));

    // Assess
    expect(series.some((s) => s.startsWith('vllm:gpu_cache_usage_perc{'))).toBe(true);
    expect(series.some((s) => s.startsWith('vllm:kv_cache_usage_perc{'))).toBe(true);
    expect(series.some((s) => s.startsWith('DCGM_FI_DEV_FB_FREE{'))).toBe(true);
  });
});
