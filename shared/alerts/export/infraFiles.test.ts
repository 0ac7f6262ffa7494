import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { promtoolTestFile } from './promtoolTests.js';
import { ampRuleGroupsNamespaceData } from './rulesFile.js';

// The committed files under infra/prometheus/ are generated from the registry: they must never drift from it.
const INFRA = new URL('../../../infra/prometheus/', import.meta.url);
const REGENERATE =
  'regenerate with: node bin/vllm-pilot.js alerts rules --format amp --out infra/prometheus/vllm-alerts.rules.yaml ' +
  '&& node bin/vllm-pilot.js alerts rules --format promtool-test --out infra/prometheus/vllm-alerts.test.yaml';

describe('Files: infra/prometheus', () => {
  it.each([
    { file: 'vllm-alerts.rules.yaml', generate: () => ampRuleGroupsNamespaceData() },
    { file: 'vllm-alerts.test.yaml', generate: () => promtoolTestFile() },
  ])('$file is what the registry generates', ({ file, generate }) => {
    // Act
    const committed = readFileSync(new URL(file, INFRA), 'utf8');

    // Assess
    if (committed !== generate()) throw new Error(`infra/prometheus/${file} is out of date; ${REGENERATE}`);
    expect(committed).toBe(generate());
  });
});
