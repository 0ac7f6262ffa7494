import { aggregate, overVllmNames } from '../../metrics/index.js';
import type { AlertScope } from '../types.js';
import { byLabels, scopedSelector } from './scope.js';

/** The labels of one KV-cache instance: the Pod and its model. */
export const KV_CACHE_IDENTIFYING_LABELS = ['namespace', 'pod', 'model_name'] as const;

/**
 * KV-cache usage per Pod, a 0-1 fraction: the fullest engine of the Pod. vLLM renamed the series (0.9
 * `gpu_cache_usage_perc`, 0.11 both, later `kv_cache_usage_perc`); both are 0-1 fractions despite `_perc`, and
 * `overVllmNames` reads whichever a Pod exposes, once. VLLMKVCacheFull and VLLMKVCacheHigh read this same value, so
 * the warning and the critical alert of one Pod carry the same labels (the inhibition matches on them).
 */
export function kvCacheUsagePerPod(scope: AlertScope): string {
  const usage = overVllmNames({ renamed: 'kvCacheUsage' }, (name) => scopedSelector(name, scope.vllm));
  return aggregate('max', byLabels(KV_CACHE_IDENTIFYING_LABELS, scope), usage);
}
