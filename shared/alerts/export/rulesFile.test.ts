import { describe, expect, it } from '@jest/globals';
import { parse as parseYaml } from 'yaml';
import { AlertExportInvalidError } from '../errors.js';
import { DEFAULT_ALERT_SETTINGS } from '../rules/index.js';
import { ampRuleGroupsNamespaceData, GENERATED_HEADER } from './rulesFile.js';

interface RulesFile {
  groups: Array<{ name: string; rules: Array<{ alert: string; expr: string; for?: string }> }>;
}

describe('Function: ampRuleGroupsNamespaceData', () => {
  it('is a Prometheus rules file with the seven alerts, marked as generated', () => {
    // Act
    const text = ampRuleGroupsNamespaceData();

    // Assess
    expect(text.startsWith(GENERATED_HEADER)).toBe(true);
    const file = parseYaml(text) as RulesFile;
    expect(file.groups).toHaveLength(1);
    expect(file.groups[0]?.rules.map((r) => r.alert)).toEqual([
      'VLLMHighQueueDepth',
      'VLLMHighLatency',
      'VLLMGPUMemoryCritical',
      'VLLMKVCacheFull',
      'VLLMPreemptionSpike',
      'VLLMKVCacheHigh',
      'VLLMMetricsAbsent',
    ]);
  });

  it('keeps each PromQL expression on one line', () => {
    // Act
    const text = ampRuleGroupsNamespaceData();

    // Assess
    const exprLines = text.split('\n').filter((line) => line.trimStart().startsWith('expr:'));
    expect(exprLines).toHaveLength(7);
    expect(exprLines.find((line) => line.includes('DCGM_FI_DEV_FB_FREE'))).toBeDefined();
  });

  it.each([
    { case: 'an empty namespace', namespace: '' },
    { case: 'a namespace starting with "-"', namespace: '-vllm' },
    { case: 'a namespace with a space', namespace: 'vllm alerts' },
    { case: 'a namespace of 129 characters', namespace: 'a'.repeat(129) },
  ])("refuses $case (AMP's name rules)", ({ namespace }) => {
    // Act / Assess
    expect(() => ampRuleGroupsNamespaceData({ namespace })).toThrow(AlertExportInvalidError);
  });

  it('refuses a namespace and group name over 721 UTF-8 bytes together', () => {
    // Prepare: a target built in code (a parsed targets file keeps names short).
    const target = { name: 'é'.repeat(400), cluster: 'c', namespace: 'ns', deployment: 'd', model: 'm' };

    // Act / Assess
    expect(() =>
      ampRuleGroupsNamespaceData({ namespace: 'vllm', targets: [{ target, settings: DEFAULT_ALERT_SETTINGS }] }),
    ).toThrow('AMP accepts at most 721');
  });
});
