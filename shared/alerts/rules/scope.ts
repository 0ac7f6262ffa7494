import { assertMetricName, dcgmMatchers, type LabelMatcher, selector, vllmMatchers } from '../../metrics/index.js';
import type { Target } from '../../config/index.js';
import type { AlertScope } from '../types.js';

/** The scope of an exported generic rule file: every series (no matchers, no extra labels). */
export const GENERIC_SCOPE: AlertScope = Object.freeze({ vllm: [], dcgm: [], extraByLabels: [] });

/**
 * Where the rules look for one target: its vLLM and DCGM matchers (escaped by `promql.ts`), and its cluster label
 * kept on every result when the workspace is shared by several clusters.
 */
export function alertScopeForTarget(target: Target): AlertScope {
  return {
    vllm: vllmMatchers(target),
    dcgm: dcgmMatchers(target),
    extraByLabels: target.clusterLabel === undefined ? [] : [target.clusterLabel],
  };
}

/** The `by` labels of a rule's aggregation: its identifying labels, then the scope's extra labels, each once. */
export function byLabels(identifyingLabels: readonly string[], scope: AlertScope): string[] {
  return [...new Set([...identifyingLabels, ...scope.extraByLabels])];
}

/** `metric{matchers}`, or the bare `metric` when there are none (the generic rule file reads better without `{}`). */
export function scopedSelector(metric: string, matchers: readonly LabelMatcher[]): string {
  return matchers.length === 0 ? assertMetricName(metric) : selector(metric, matchers);
}
