import { describe, expect, it } from '@jest/globals';
import { parse as parseYaml } from 'yaml';
import { ALERT_NAMES } from '../types.js';
import { promtoolTestFile } from './promtoolTests.js';

interface TestFile {
  rule_files: string[];
  tests: Array<{
    input_series: Array<{ series: string; values: string }>;
    alert_rule_test: Array<{ eval_time: string; alertname: string; exp_alerts: unknown[] }>;
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

  it('feeds the KV-cache test with both vLLM names', () => {
    // Act
    const series = file.tests.flatMap((t) => t.input_series.map((s) => s.series));

    // Assess
    expect(series.some((s) => s.startsWith('vllm:gpu_cache_usage_perc{'))).toBe(true);
    expect(series.some((s) => s.startsWith('vllm:kv_cache_usage_perc{'))).toBe(true);
    expect(series.some((s) => s.startsWith('DCGM_FI_DEV_FB_FREE{'))).toBe(true);
  });
});
