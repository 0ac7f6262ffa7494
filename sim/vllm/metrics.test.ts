import { describe, expect, it } from '@jest/globals';
import { VirtualClock } from '../../shared/clock/index.js';
import type { VllmVersion } from '../profile/profile.js';
import { type EngineConfig, VllmEngine } from './engine.js';
import { formatValue } from './exposition.js';
import { renderVllmMetrics } from './metrics.js';

/**
 * The families of the reference exposition of one vLLM replica (vllm-metrics-sample.txt, constructed from
 * vllm/v1/metrics/loggers.py @ f4518d5d), in order, without the KV-connector `external_prefix_cache_*` families
 * that a replica without a KV connector does not have.
 */
const REFERENCE_LATEST_TYPES = [
  'vllm:num_requests_running gauge',
  'vllm:num_requests_waiting gauge',
  'vllm:num_requests_waiting_by_reason gauge',
  'vllm:engine_sleep_state gauge',
  'vllm:kv_cache_usage_perc gauge',
  'vllm:prefix_cache_queries_total counter',
  'vllm:prefix_cache_queries_created gauge',
  'vllm:prefix_cache_hits_total counter',
  'vllm:prefix_cache_hits_created gauge',
  'vllm:mm_cache_queries_total counter',
  'vllm:mm_cache_queries_created gauge',
  'vllm:mm_cache_hits_total counter',
  'vllm:mm_cache_hits_created gauge',
  'vllm:num_preemptions_total counter',
  'vllm:num_preemptions_created gauge',
  'vllm:prompt_tokens_total counter',
  'vllm:prompt_tokens_created gauge',
  'vllm:prompt_tokens_by_source_total counter',
  'vllm:prompt_tokens_by_source_created gauge',
  'vllm:prompt_tokens_cached_total counter',
  'vllm:prompt_tokens_cached_created gauge',
  'vllm:generation_tokens_total counter',
  'vllm:generation_tokens_created gauge',
  'vllm:request_success_total counter',
  'vllm:request_success_created gauge',
  ...[
    'request_prompt_tokens',
    'request_generation_tokens',
    'iteration_tokens_total',
    'request_max_num_generation_tokens',
    'request_params_n',
    'request_params_max_tokens',
    'time_to_first_token_seconds',
    'inter_token_latency_seconds',
    'request_time_per_output_token_seconds',
    'e2e_request_latency_seconds',
    'request_queue_time_seconds',
    'request_inference_time_seconds',
    'request_prefill_time_seconds',
    'request_decode_time_seconds',
    'request_prefill_kv_computed_tokens',
  ].flatMap((name) => [`vllm:${name} histogram`, `vllm:${name}_created gauge`]),
  'vllm:cache_config_info gauge',
  'http_requests_total counter',
];

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A strict little parser of the text format: fails the test on any line it does not understand. */
function parse(text: string): { types: string[]; samples: Sample[] } {
  const types: string[] = [];
  const samples: Sample[] = [];
  expect(text.endsWith('\n')).toBe(true);
  for (const line of text.trimEnd().split('\n')) {
    if (line.startsWith('# HELP ')) continue;
    if (line.startsWith('# TYPE ')) {
      types.push(line.slice('# TYPE '.length));
      continue;
    }
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    expect(match).not.toBeNull();
    const [, name = '', labelText = '', valueText = ''] = match ?? [];
    const labels: Record<string, string> = {};
    for (const label of labelText.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[label[1] ?? ''] = label[2] ?? '';
    }
    const value = valueText === '+Inf' ? Number.POSITIVE_INFINITY : Number(valueText);
    expect(Number.isNaN(value)).toBe(false);
    samples.push({ name, labels, value });
  }
  return { types, samples };
}

const engineConfig: EngineConfig = {
  maxNumSeqs: 16,
  kvCacheBlocks: 256,
  blockSize: 16,
  maxNumBatchedTokens: 2048,
  prefillTokensPerSecond: 10_000,
  decodeStepMs: { base: 10, perSequence: 0.5 },
  maxModelLen: 4096,
  modelLoadSeconds: 0,
  warmupRequests: 0,
  warmupSlowdown: 1,
};

/** An engine that served some load, and a scrape of it. */
function scrape(engine: VllmEngine, version: VllmVersion, maxModelLenOverride?: number): string {
  const stats = engine.stats();
  return renderVllmMetrics({
    version,
    modelName: 'mistralai/Ministral-3-8B-Instruct-2512',
    metrics: engine.metrics,
    running: stats.running,
    waiting: stats.waiting,
    kvCacheUsage: stats.kvCacheUsage,
    createdSeconds: 1788733924.32,
    cacheConfig: {
      block_size: '16',
      gpu_memory_utilization: '0.9',
      num_gpu_blocks: String(maxModelLenOverride ?? 256),
    },
    httpRequests: [{ handler: '/v1/completions', method: 'POST', status: '2xx', count: 3 }],
  });
}

function loadedEngine(): { engine: VllmEngine; clock: VirtualClock } {
  const clock = new VirtualClock(0);
  const engine = new VllmEngine(engineConfig, clock);
  for (let i = 0; i < 40; i++) {
    clock.set(i * 50);
    engine.submit({ promptTokens: 35, maxTokens: 32 });
  }
  return { engine, clock };
}

describe('Function: renderVllmMetrics', () => {
  it('exposes the reference families, types and order for vllmVersion latest', () => {
    // Prepare
    const { engine } = loadedEngine();

    // Act
    const { types } = parse(scrape(engine, 'latest'));

    // Assess
    expect(types).toEqual(REFERENCE_LATEST_TYPES);
  });

  it.each([
    {
      case: 'latest: current names only',
      version: 'latest' as const,
      present: [
        'vllm:kv_cache_usage_perc',
        'vllm:inter_token_latency_seconds_count',
        'vllm:prefix_cache_queries_total',
        'vllm:prompt_tokens_by_source_total',
      ],
      absent: [
        'vllm:gpu_cache_usage_perc',
        'vllm:time_per_output_token_seconds_count',
        'vllm:gpu_prefix_cache_queries_total',
        'vllm:gpu_prefix_cache_hits_total',
      ],
      reasons: ['stop', 'length', 'abort', 'error', 'repetition'],
    },
    {
      case: '0.11: both name eras (hidden legacy names shown with --show-hidden-metrics-for-version=0.10)',
      version: '0.11' as const,
      present: [
        'vllm:kv_cache_usage_perc',
        'vllm:gpu_cache_usage_perc',
        'vllm:inter_token_latency_seconds_count',
        'vllm:time_per_output_token_seconds_count',
        'vllm:prefix_cache_queries_total',
        'vllm:gpu_prefix_cache_queries_total',
        'vllm:prefix_cache_hits_total',
        'vllm:gpu_prefix_cache_hits_total',
      ],
      absent: [],
      reasons: ['stop', 'length', 'abort', 'error', 'repetition'],
    },
    {
      case: '0.9: legacy names, none of the newer series',
      version: '0.9' as const,
      present: [
        'vllm:gpu_cache_usage_perc',
        'vllm:time_per_output_token_seconds_count',
        'vllm:gpu_prefix_cache_queries_total',
        'vllm:gpu_prefix_cache_hits_total',
        'vllm:e2e_request_latency_seconds_count',
      ],
      absent: [
        'vllm:kv_cache_usage_perc',
        'vllm:inter_token_latency_seconds_count',
        'vllm:prefix_cache_queries_total',
        'vllm:num_requests_waiting_by_reason',
        'vllm:prompt_tokens_by_source_total',
        'vllm:prompt_tokens_cached_total',
        'vllm:request_prefill_kv_computed_tokens_count',
      ],
      reasons: ['stop', 'length', 'abort'],
    },
  ])('names per version — $case', ({ version, present, absent, reasons }) => {
    // Prepare
    const { engine } = loadedEngine();

    // Act
    const { samples } = parse(scrape(engine, version));
    const names = new Set(samples.map((sample) => sample.name));

    // Assess
    for (const name of present) expect(names).toContain(name);
    for (const name of absent) expect(names).not.toContain(name);
    const success = samples.filter((sample) => sample.name === 'vllm:request_success_total');
    expect(success.map((sample) => sample.labels['finished_reason'])).toEqual(reasons);
  });

  it('gives legacy and current names the same values in 0.11', () => {
    // Prepare
    const { engine } = loadedEngine();

    // Act
    const { samples } = parse(scrape(engine, '0.11'));
    const value = (name: string): number | undefined => samples.find((sample) => sample.name === name)?.value;

    // Assess
    expect(value('vllm:kv_cache_usage_perc')).toBeGreaterThan(0);
    expect(value('vllm:gpu_cache_usage_perc')).toBe(value('vllm:kv_cache_usage_perc'));
    expect(value('vllm:gpu_prefix_cache_queries_total')).toBe(value('vllm:prefix_cache_queries_total'));
    expect(value('vllm:time_per_output_token_seconds_count')).toBe(value('vllm:inter_token_latency_seconds_count'));
  });

  it.each([
    {
      case: 'request latency',
      series: 'vllm:e2e_request_latency_seconds_bucket',
      le: '0.3 0.5 0.8 1.0 1.5 2.0 2.5 5.0 10.0 15.0 20.0 30.0 40.0 50.0 60.0 120.0 240.0 480.0 960.0 1920.0 7680.0 +Inf',
    },
    {
      case: 'time to first token',
      series: 'vllm:time_to_first_token_seconds_bucket',
      le: '0.001 0.005 0.01 0.02 0.04 0.06 0.08 0.1 0.25 0.5 0.75 1.0 2.5 5.0 7.5 10.0 20.0 40.0 80.0 160.0 640.0 2560.0 +Inf',
    },
    {
      case: 'inter-token latency',
      series: 'vllm:inter_token_latency_seconds_bucket',
      le: '0.01 0.025 0.05 0.075 0.1 0.15 0.2 0.3 0.4 0.5 0.75 1.0 2.5 5.0 7.5 10.0 20.0 40.0 80.0 +Inf',
    },
    {
      case: 'per-request time per output token (same as inter-token)',
      series: 'vllm:request_time_per_output_token_seconds_bucket',
      le: '0.01 0.025 0.05 0.075 0.1 0.15 0.2 0.3 0.4 0.5 0.75 1.0 2.5 5.0 7.5 10.0 20.0 40.0 80.0 +Inf',
    },
    {
      case: 'iteration tokens',
      series: 'vllm:iteration_tokens_total_bucket',
      le: '1.0 8.0 16.0 32.0 64.0 128.0 256.0 512.0 1024.0 2048.0 4096.0 8192.0 16384.0 +Inf',
    },
    { case: 'request n', series: 'vllm:request_params_n_bucket', le: '1.0 2.0 5.0 10.0 20.0 +Inf' },
    {
      case: 'request tokens, 1-2-5 capped at max_model_len 4096',
      series: 'vllm:request_prompt_tokens_bucket',
      le: '1.0 2.0 5.0 10.0 20.0 50.0 100.0 200.0 500.0 1000.0 2000.0 +Inf',
    },
  ])('uses the exact default buckets: $case', ({ series, le }) => {
    // Prepare
    const { engine } = loadedEngine();

    // Act
    const { samples } = parse(scrape(engine, 'latest'));

    // Assess
    const bounds = samples.filter((sample) => sample.name === series).map((sample) => sample.labels['le']);
    expect(bounds.join(' ')).toBe(le);
  });

  it('caps request-token buckets at a max_model_len of 32768 with 20000', () => {
    // Prepare
    const engine = new VllmEngine({ ...engineConfig, maxModelLen: 32768, kvCacheBlocks: 2048 }, new VirtualClock(0));

    // Act
    const { samples } = parse(scrape(engine, 'latest'));

    // Assess
    const bounds = samples
      .filter((sample) => sample.name === 'vllm:request_params_max_tokens_bucket')
      .map((sample) => sample.labels['le']);
    expect(bounds.slice(-3)).toEqual(['10000.0', '20000.0', '+Inf']);
  });

  it('renders lines like prometheus_client: sorted labels, float values, _created, info gauge without model_name', () => {
    // Prepare
    const { engine } = loadedEngine();

    // Act
    const text = scrape(engine, 'latest');

    // Assess
    const model = 'model_name="mistralai/Ministral-3-8B-Instruct-2512"';
    expect(text).toMatch(new RegExp(`\\nvllm:request_params_n_bucket\\{engine="0",le="1\\.0",${model}\\} \\d+\\.0\\n`));
    expect(text).toContain(`vllm:num_preemptions_total{engine="0",${model}} 0.0\n`);
    expect(text).toContain(`vllm:num_preemptions_created{engine="0",${model}} 1.78873392432e+09\n`);
    expect(text).toContain(`vllm:e2e_request_latency_seconds_created{engine="0",${model}} 1.78873392432e+09\n`);
    expect(text).toContain(`vllm:request_success_total{engine="0",finished_reason="repetition",${model}} 0.0\n`);
    expect(text).toContain(
      `vllm:prompt_tokens_by_source_created{engine="0",${model},source="local_compute"} 1.78873392432e+09\n`,
    );
    expect(text).toContain(
      '# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n# TYPE vllm:kv_cache_usage_perc gauge\n',
    );
    expect(text).toContain(
      'vllm:cache_config_info{block_size="16",engine="0",gpu_memory_utilization="0.9",num_gpu_blocks="256"} 1.0\n',
    );
    expect(text).toContain('http_requests_total{handler="/v1/completions",method="POST",status="2xx"} 3.0\n');
  });

  it('keeps counters monotonic and histograms cumulative across scrapes under load', () => {
    // Prepare
    const { engine, clock } = loadedEngine();
    const scrapes: Sample[][] = [];

    // Act: scrape every 250 ms while the 40 requests are served.
    for (let t = 0; t <= 5_000; t += 250) {
      clock.set(Math.max(clock.now(), t));
      scrapes.push(parse(scrape(engine, '0.11')).samples);
    }

    // Assess
    const key = (sample: Sample): string => `${sample.name}${JSON.stringify(sample.labels)}`;
    const monotonic = (sample: Sample): boolean =>
      /_total$|_count$|_sum$|_bucket$/.test(sample.name) && !sample.name.endsWith('_created');
    for (let i = 1; i < scrapes.length; i++) {
      const previous = new Map((scrapes[i - 1] ?? []).map((sample) => [key(sample), sample.value]));
      for (const sample of (scrapes[i] ?? []).filter(monotonic)) {
        expect(sample.value).toBeGreaterThanOrEqual(previous.get(key(sample)) ?? 0);
      }
    }
    const last = scrapes.at(-1) ?? [];
    for (const series of ['vllm:e2e_request_latency_seconds', 'vllm:iteration_tokens_total']) {
      const buckets = last.filter((sample) => sample.name === `${series}_bucket`).map((sample) => sample.value);
      for (let i = 1; i < buckets.length; i++) expect(buckets[i]).toBeGreaterThanOrEqual(buckets[i - 1] ?? 0);
      const count = last.find((sample) => sample.name === `${series}_count`)?.value;
      expect(buckets.at(-1)).toBe(count);
    }
    const value = (name: string, labels: Record<string, string> = {}): number | undefined =>
      last.find(
        (sample) =>
          sample.name === name && Object.entries(labels).every(([label, text]) => sample.labels[label] === text),
      )?.value;
    expect(value('vllm:e2e_request_latency_seconds_count')).toBe(40);
    expect(value('vllm:request_success_total', { finished_reason: 'length' })).toBe(40);
    expect(value('vllm:generation_tokens_total')).toBe(40 * 32);
    expect(value('vllm:prompt_tokens_total')).toBe(40 * 35);
    expect(value('vllm:num_requests_running')).toBe(0);
  });
});

describe('Function: formatValue', () => {
  it.each([
    { case: 'an integer', value: 38, text: '38.0' },
    { case: 'a fraction', value: 0.4375, text: '0.4375' },
    { case: 'a unix timestamp', value: 1788733924.32, text: '1.78873392432e+09' },
    { case: 'a seven-digit integer', value: 1233504, text: '1.233504e+06' },
    { case: 'a round million', value: 1_000_000, text: '1e+06' },
    { case: 'a small value', value: 0.00001, text: '1e-05' },
    { case: 'zero', value: 0, text: '0.0' },
    { case: 'infinity', value: Number.POSITIVE_INFINITY, text: '+Inf' },
  ])('renders $case as prometheus_client does', ({ value, text }) => {
    // Act
    const result = formatValue(value);

    // Assess
    expect(result).toBe(text);
  });
});
