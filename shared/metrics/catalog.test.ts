import { describe, expect, it } from '@jest/globals';
import { CATALOG, catalogEntry } from './catalog.js';
import { VLLM_RENAMED } from './names.js';
import type { Target } from '../config/index.js';
import { MetricsUnknownCatalogEntryError, PromqlInvalidArgumentError } from './errors.js';

const target: Target = {
  name: 'prod',
  cluster: 'ai-eks-docs',
  namespace: 'default',
  deployment: 'vllm-inference-app',
  model: 'evil"}model\\x',
  clusterLabel: 'cluster',
};

/** Removes string literals (honouring escapes), leaving only PromQL syntax to inspect. */
function withoutStrings(query: string): string {
  return query.replace(/"(?:[^"\\]|\\.)*"/g, '""');
}

/** True when (), {} and [] nest correctly outside string literals. */
function balanced(query: string): boolean {
  const pairs: Record<string, string> = { ')': '(', '}': '{', ']': '[' };
  const stack: string[] = [];
  for (const char of withoutStrings(query)) {
    if ('({['.includes(char)) stack.push(char);
    const opener = pairs[char];
    if (opener !== undefined && stack.pop() !== opener) return false;
  }
  return stack.length === 0;
}

describe('Constant: CATALOG', () => {
  it('covers all three tiers of the guide', () => {
    // Act
    const tiers = new Set(CATALOG.map((entry) => entry.tier));

    // Assess
    expect([...tiers].sort()).toEqual([1, 2, 3]);
  });

  it('has unique snake_case ids', () => {
    // Prepare
    const ids = CATALOG.map((entry) => entry.id);

    // Assess
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
  });

  it('has unique PascalCase CloudWatch metric names', () => {
    // Prepare
    const names = CATALOG.map((entry) => entry.metricName);

    // Assess
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[A-Z][A-Za-z0-9]*$/);
  });

  it.each(CATALOG.map((entry) => ({ id: entry.id, entry })))('builds valid-looking PromQL for $id', ({ entry }) => {
    // Act
    const query = entry.build(target, { rateWindow: '2m' });

    // Assess
    expect(balanced(query)).toBe(true);
    expect(query).not.toMatch(/undefined|NaN|\[object/);
    // Every selector is scoped to the target: its namespace, its Pods and its cluster.
    const selectors = withoutStrings(query).match(/\{[^}]*\}/g) ?? [];
    expect(selectors.length).toBeGreaterThan(0);
    expect(query.split('namespace="default"').length - 1).toBe(selectors.length);
    expect(query.split('pod=~"vllm-inference-app-[a-z0-9]+-[a-z0-9]+"').length - 1).toBe(selectors.length);
    expect(query.split('cluster="ai-eks-docs"').length - 1).toBe(selectors.length);
    if (query.includes('vllm:')) expect(query).toContain(String.raw`model_name="evil\"}model\\x"`);
    if (query.includes('rate(')) expect(query).toContain('[2m]');
  });

  it.each([
    { id: 'inter_token_latency_p95', names: [VLLM_RENAMED.interTokenLatency] },
    { id: 'kv_cache_usage_pod', names: [VLLM_RENAMED.kvCacheUsage] },
    { id: 'prefix_cache_hit_rate', names: [VLLM_RENAMED.prefixCacheHits, VLLM_RENAMED.prefixCacheQueries] },
  ])('asks for both the current and the legacy name in $id', ({ id, names }) => {
    // Act
    const query = catalogEntry(id).build(target, { rateWindow: '2m' });

    // Assess
    for (const { current, legacy } of names) {
      expect(query).toContain(`${current}`);
      expect(query).toContain(`${legacy}`);
      expect(query.indexOf(current)).toBeLessThan(query.indexOf(legacy));
    }
    expect(query).toContain(' or ');
  });

  it('drops NaN in every entry that needs traffic, so idle reads as empty', () => {
    // Prepare
    const entries = CATALOG.filter((entry) => entry.needsTraffic === true);

    // Assess
    expect(entries.map((entry) => entry.id)).toEqual(
      expect.arrayContaining(['e2e_latency_p95', 'ttft_p95', 'error_rate', 'prefix_cache_hit_rate']),
    );
    for (const entry of entries) expect(entry.build(target, { rateWindow: '2m' })).toMatch(/> -Inf$/);
  });

  it('marks the ECC field, off in the default DCGM counters, as optional', () => {
    // Act
    const optional = CATALOG.filter((entry) => entry.optional === true).map((entry) => entry.id);

    // Assess
    expect(optional).toEqual(['gpu_ecc_sbe_volatile']);
  });

  it('rejects a rate window that is not a PromQL duration', () => {
    // Act & Assess
    expect(() => catalogEntry('preemptions_rate').build(target, { rateWindow: '2 minutes' })).toThrow(
      PromqlInvalidArgumentError,
    );
  });
});

describe('Function: catalogEntry', () => {
  it('names the known ids when an id is unknown', () => {
    // Act & Assess
    expect(() => catalogEntry('queue_depht')).toThrow(MetricsUnknownCatalogEntryError);
    expect(() => catalogEntry('queue_depht')).toThrow(/queue_depth,/);
  });
});
