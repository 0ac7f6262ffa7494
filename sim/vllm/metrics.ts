import { VLLM } from '../../shared/metrics/index.js';
import type { VllmVersion } from '../profile/profile.js';
import type { EngineMetrics } from './engineMetrics.js';
import { formatHeader, formatSample, formatValue } from './exposition.js';
import { CACHE_CONFIG_INFO_HELP, type ExpositionState, familiesFor } from './metricCatalog.js';

/** Content type of the text exposition format 0.0.4 (prometheus_client's CONTENT_TYPE_LATEST). */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** One `http_requests_total` series (prometheus_fastapi_instrumentator: status grouped as `2xx`, `4xx`, ...). */
export interface HttpRequestCount {
  handler: string;
  method: string;
  status: string;
  count: number;
}

/** Everything one scrape of a replica's `/metrics` shows. */
export interface VllmMetricsInput {
  version: VllmVersion;
  /** `--served-model-name`: the `model_name` label. */
  modelName: string;
  metrics: EngineMetrics;
  running: number;
  waiting: number;
  kvCacheUsage: number;
  /** When the metrics were registered (epoch seconds): the value of every `_created` series. */
  createdSeconds: number;
  /** `vllm:cache_config_info` labels besides `engine` (CacheConfig fields as strings, Python-style). */
  cacheConfig: Readonly<Record<string, string>>;
  httpRequests: readonly HttpRequestCount[];
}

/** The `_created` family name prometheus_client derives: counters drop `_total`, histograms keep their name. */
function createdName(name: string, type: 'counter' | 'histogram'): string {
  return type === 'counter' ? `${name.replace(/_total$/, '')}_created` : `${name}_created`;
}

/** Renders a replica's `/metrics` body in the text format 0.0.4, like vLLM's API server. */
export function renderVllmMetrics(input: VllmMetricsInput): string {
  const base = { model_name: input.modelName, engine: '0' };
  const state: ExpositionState = {
    metrics: input.metrics,
    running: input.running,
    waiting: input.waiting,
    kvCacheUsage: input.kvCacheUsage,
    version: input.version,
  };
  const lines: string[] = [];
  for (const family of familiesFor(input.version)) {
    lines.push(...formatHeader(family.name, family.type, family.help));
    if (family.type === 'histogram') {
      const histogram = input.metrics.histograms[family.histogram];
      for (const bucket of histogram.cumulative()) {
        lines.push(formatSample(`${family.name}_bucket`, { ...base, le: formatValue(bucket.le) }, bucket.count));
      }
      lines.push(formatSample(`${family.name}_count`, base, histogram.count));
      lines.push(formatSample(`${family.name}_sum`, base, histogram.sum));
      const created = createdName(family.name, 'histogram');
      lines.push(...formatHeader(created, 'gauge', family.help));
      lines.push(formatSample(created, base, input.createdSeconds));
      continue;
    }
    const samples = family.samples(state);
    for (const sample of samples) lines.push(formatSample(family.name, { ...base, ...sample.labels }, sample.value));
    if (family.type === 'counter') {
      const created = createdName(family.name, 'counter');
      lines.push(...formatHeader(created, 'gauge', family.help));
      for (const sample of samples) {
        lines.push(formatSample(created, { ...base, ...sample.labels }, input.createdSeconds));
      }
    }
  }
  // Info-style gauge: CacheConfig fields as labels, value 1, `engine` but no `model_name`.
  lines.push(...formatHeader(VLLM.cacheConfigInfo, 'gauge', CACHE_CONFIG_INFO_HELP));
  lines.push(formatSample(VLLM.cacheConfigInfo, { ...input.cacheConfig, engine: '0' }, 1));
  if (input.httpRequests.length > 0) {
    lines.push(
      ...formatHeader('http_requests_total', 'counter', 'Total number of requests by method, status and handler.'),
    );
    for (const { handler, method, status, count } of input.httpRequests) {
      lines.push(formatSample('http_requests_total', { handler, method, status }, count));
    }
  }
  return `${lines.join('\n')}\n`;
}
