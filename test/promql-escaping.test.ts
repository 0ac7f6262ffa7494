/**
 * The catalog's PromQL run through the real PromQL engine (`promtool test rules`): hostile label values match
 * literally and cannot change a query's meaning, renamed vLLM series are read in every naming era, and every
 * catalog formula gives the expected value on a known workspace.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CATALOG, catalogEntry } from '../shared/metrics/index.js';
import type { Target } from '../shared/config/index.js';

const PROMTOOL = process.env.PROMTOOL ?? '/usr/bin/promtool';
const WINDOW = { rateWindow: '2m' } as const;
/** Series are sampled every minute from 0; queries run at 10m, so a 2m window holds three samples. */
const EVAL_TIME = '10m';

interface ExpectedSample {
  labels: string;
  value: number;
}

interface ExprTest {
  expr: string;
  eval_time: string;
  exp_samples: ExpectedSample[];
}

interface Scenario {
  series: Array<{ series: string; values: string }>;
  tests: Array<{ expr: string; expected: ExpectedSample[] }>;
}

let dir: string;
let fileCount = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'promql-escaping-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Writes a promtool unit-test file (JSON is valid YAML) and runs it; promtool exits 0 only if every sample matches. */
async function promtool(scenario: Scenario): Promise<{ code: number; output: string }> {
  const file = join(dir, `test-${++fileCount}.json`);
  const exprTests: ExprTest[] = scenario.tests.map((t) => ({
    expr: t.expr,
    eval_time: EVAL_TIME,
    exp_samples: t.expected,
  }));
  const body = {
    rule_files: [],
    evaluation_interval: '1m',
    tests: [{ interval: '1m', input_series: scenario.series, promql_expr_test: exprTests }],
  };
  await writeFile(file, JSON.stringify(body, null, 2));
  return new Promise((resolve) => {
    execFile(PROMTOOL, ['test', 'rules', file], (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

/** Passes when promtool reports success; on failure the assertion shows promtool's own diff. */
async function expectPromtoolSuccess(scenario: Scenario): Promise<void> {
  const result = await promtool(scenario);
  expect(result).toEqual({ code: 0, output: expect.stringContaining('SUCCESS') as unknown as string });
}

/**
 * Prometheus's bucketQuantile (promql/quantile.go, classic histograms): linear interpolation inside the bucket
 * that holds rank q * count. Used to compute expected values with the engine's exact arithmetic.
 */
function bucketQuantile(q: number, buckets: Array<[upperBound: number, cumulativeRate: number]>): number {
  const total = buckets[buckets.length - 1]?.[1] ?? 0;
  let rank = q * total;
  const b = buckets.findIndex(([, count]) => count >= rank);
  const [bucketEnd, cumulative] = buckets[b] ?? [0, 0];
  let bucketStart = 0;
  let count = cumulative;
  if (b > 0) {
    const [previousEnd, previousCount] = buckets[b - 1] ?? [0, 0];
    bucketStart = previousEnd;
    count -= previousCount;
    rank -= previousCount;
  }
  return bucketStart + (bucketEnd - bucketStart) * (rank / count);
}

/** A label set written as a PromQL series descriptor body; values are given already escaped, by hand. */
function labels(pairs: Record<string, string>): string {
  return Object.entries(pairs)
    .map(([name, value]) => `${name}="${value}"`)
    .join(', ');
}

const POD = 'vllm-app-7d9c8b6f5d-x2k4q';
const POD_B = 'vllm-app-7d9c8b6f5d-m8n2p';
const UUID = 'GPU-1c7f2a9e-5b3d-4e8f-a0c2-7d9e6b4f3a21';

/** The hostile model name of the brief, evil"}model\x; the same text hand-escaped for series descriptors. */
const EVIL = 'evil"}model\\x';
const EVIL_LITERAL = String.raw`evil\"}model\\x`;

const evilTarget: Target = {
  name: 'evil',
  cluster: 'ai-eks-docs',
  namespace: 'prod',
  deployment: 'vllm-app',
  model: EVIL,
};

describe('Integration: PromQL escaping through the real engine', () => {
  // Four models whose names are prefixes or escapes of each other, served by the same Pod, plus a canary
  // Deployment whose Pods share the name prefix.
  const queueSeries = [
    { model: 'evil', value: '1' },
    { model: String.raw`evil\"}model`, value: '2' },
    { model: EVIL_LITERAL, value: '3' },
    { model: String.raw`evil\nmodel`, value: '4' },
  ].map(({ model, value }) => ({
    series: `vllm:num_requests_waiting{${labels({ namespace: 'prod', pod: POD, model_name: model, engine: '0' })}}`,
    values: `${value}x15`,
  }));
  const canary = {
    series: `vllm:num_requests_waiting{${labels({ namespace: 'prod', pod: 'vllm-app-canary-5c4d-abcde', model_name: EVIL_LITERAL })}}`,
    values: '100x15',
  };

  it.each([
    { case: 'the hostile name evil"}model\\x', model: EVIL, value: 3 },
    { case: 'its prefix "evil"', model: 'evil', value: 1 },
    { case: 'the half-escaped evil"}model', model: 'evil"}model', value: 2 },
    { case: 'a name with a newline', model: 'evil\nmodel', value: 4 },
  ])('reads exactly the series of $case', async ({ model, value }) => {
    // Prepare
    const target = { ...evilTarget, model };
    const query = catalogEntry('queue_depth').build(target, WINDOW);

    // Act & Assess
    await expectPromtoolSuccess({
      series: [...queueSeries, canary],
      tests: [{ expr: query, expected: [{ labels: '{}', value }] }],
    });
  });

  it('keeps the per-Pod breakdown for the hostile name', async () => {
    // Prepare
    const query = catalogEntry('queue_depth_pod').build(evilTarget, WINDOW);

    // Act & Assess
    await expectPromtoolSuccess({
      series: [...queueSeries, canary],
      tests: [{ expr: query, expected: [{ labels: `{pod="${POD}"}`, value: 3 }] }],
    });
  });

  it('matches a Deployment name with regex metacharacters literally', async () => {
    // Prepare: Deployment names may contain dots (DNS subdomain names); an unescaped dot would match any character.
    const target = { ...evilTarget, model: 'm', deployment: 'my.model' };
    const series = [
      { pod: 'my.model-7d9c8b6f5d-x2k4q', value: '7' },
      { pod: 'myxmodel-7d9c8b6f5d-x2k4q', value: '50' },
      { pod: 'my.model.v2-7d9c8b6f5d-x2k4q', value: '60' },
    ].map(({ pod, value }) => ({
      series: `vllm:num_requests_running{${labels({ namespace: 'prod', pod, model_name: 'm' })}}`,
      values: `${value}x15`,
    }));

    // Act & Assess
    await expectPromtoolSuccess({
      series,
      tests: [{ expr: catalogEntry('requests_running').build(target, WINDOW), expected: [{ labels: '{}', value: 7 }] }],
    });
  });

  it('filters by the cluster label when the target names one', async () => {
    // Prepare
    const target = { ...evilTarget, model: 'm', clusterLabel: 'cluster' };
    const series = ['ai-eks-docs', 'other'].map((cluster, i) => ({
      series: `vllm:num_requests_waiting{${labels({ cluster, namespace: 'prod', pod: POD, model_name: 'm' })}}`,
      values: `${i + 5}x15`,
    }));

    // Act & Assess
    await expectPromtoolSuccess({
      series,
      tests: [{ expr: catalogEntry('queue_depth').build(target, WINDOW), expected: [{ labels: '{}', value: 5 }] }],
    });
  });
});

describe('Integration: renamed vLLM series in every naming era', () => {
  const base = { namespace: 'prod', model_name: EVIL_LITERAL, engine: '0' };
  const kv = (name: string, pod: string, value: string) => ({
    series: `${name}{${labels({ ...base, pod })}}`,
    values: `${value}x15`,
  });

  it.each([
    {
      case: '0.9 (legacy name only)',
      series: [kv('vllm:gpu_cache_usage_perc', POD, '0.25')],
      expected: [{ labels: `{pod="${POD}"}`, value: 25 }],
    },
    {
      case: 'latest (current name only)',
      series: [kv('vllm:kv_cache_usage_perc', POD, '0.5')],
      expected: [{ labels: `{pod="${POD}"}`, value: 50 }],
    },
    {
      case: '0.11 (both names: the current one wins)',
      series: [kv('vllm:kv_cache_usage_perc', POD, '0.375'), kv('vllm:gpu_cache_usage_perc', POD, '0.75')],
      expected: [{ labels: `{pod="${POD}"}`, value: 37.5 }],
    },
    {
      case: 'a fleet mid-upgrade (one Pod per era)',
      series: [kv('vllm:kv_cache_usage_perc', POD, '0.5'), kv('vllm:gpu_cache_usage_perc', POD_B, '0.25')],
      expected: [
        { labels: `{pod="${POD}"}`, value: 50 },
        { labels: `{pod="${POD_B}"}`, value: 25 },
      ],
    },
  ])('reads KV-cache usage as percent on $case', async ({ series, expected }) => {
    // Act & Assess
    await expectPromtoolSuccess({
      series,
      tests: [{ expr: catalogEntry('kv_cache_usage_pod').build(evilTarget, WINDOW), expected }],
    });
  });

  /** An ITL histogram with all observations (1/s) in the bucket ending at `le`. */
  const itl = (name: string, le: string) =>
    ['0.05', '0.1', '0.15', '+Inf'].map((bound) => ({
      series: `${name}_bucket{${labels({ ...base, pod: POD, le: bound })}}`,
      values: bound === '+Inf' || Number(bound) >= Number(le) ? '0+60x15' : '0+0x15',
    }));

  it.each([
    {
      case: 'latest (current name only)',
      series: itl('vllm:inter_token_latency_seconds', '0.1'),
      expected: bucketQuantile(0.95, [
        [0.05, 0],
        [0.1, 1],
        [0.15, 1],
        [Infinity, 1],
      ]),
    },
    {
      case: '0.9 (legacy name only)',
      series: itl('vllm:time_per_output_token_seconds', '0.15'),
      expected: bucketQuantile(0.95, [
        [0.05, 0],
        [0.1, 0],
        [0.15, 1],
        [Infinity, 1],
      ]),
    },
    {
      case: '0.11 (both names: counted once, from the current one)',
      series: [...itl('vllm:inter_token_latency_seconds', '0.1'), ...itl('vllm:time_per_output_token_seconds', '0.15')],
      expected: bucketQuantile(0.95, [
        [0.05, 0],
        [0.1, 1],
        [0.15, 1],
        [Infinity, 1],
      ]),
    },
  ])('reads inter-token latency p95 on $case', async ({ series, expected }) => {
    // Act & Assess
    await expectPromtoolSuccess({
      series,
      tests: [
        {
          expr: catalogEntry('inter_token_latency_p95').build(evilTarget, WINDOW),
          expected: [{ labels: '{}', value: expected }],
        },
      ],
    });
  });
});

describe('Integration: every catalog formula on a known workspace', () => {
  const vllm = { namespace: 'prod', pod: POD, model_name: EVIL_LITERAL, engine: '0' };
  const gpu = {
    gpu: '0',
    UUID,
    pci_bus_id: '00000000:30:00.0',
    device: 'nvidia0',
    modelName: 'NVIDIA L40S',
    Hostname: 'ip-192-168-131-77.us-east-2.compute.internal',
    DCGM_FI_DRIVER_VERSION: '580.126.09',
    container: 'vllm',
    namespace: 'prod',
    pod: POD,
  };
  const cadvisor = (container: string) => ({ namespace: 'prod', pod: POD, container });
  const s = (name: string, set: Record<string, string>, values: string) => ({
    series: `${name}{${labels(set)}}`,
    values,
  });
  /** A classic histogram whose buckets grow by `perMinute[i]` observations a minute. */
  const histogram = (name: string, bounds: string[], perMinute: number[], busy: boolean) =>
    bounds.map((le, i) => s(`${name}_bucket`, { ...vllm, le }, busy ? `0+${perMinute[i] ?? 0}x15` : '0x15'));

  /** Rates are exact: each counter grows by a multiple of 60 a minute, or by 15 or 45 (dyadic per second). */
  function workspace(busy: boolean) {
    const grow = (perMinute: number) => (busy ? `0+${perMinute}x15` : '0x15');
    return [
      ...histogram('vllm:e2e_request_latency_seconds', ['1', '2.5', '5', '+Inf'], [0, 60, 120, 120], busy),
      ...histogram('vllm:time_to_first_token_seconds', ['0.25', '0.5', '+Inf'], [0, 60, 60], busy),
      ...histogram('vllm:inter_token_latency_seconds', ['0.025', '0.05', '+Inf'], [0, 60, 60], busy),
      s('vllm:num_requests_waiting', vllm, busy ? '3x15' : '0x15'),
      s('vllm:num_requests_running', vllm, busy ? '8x15' : '0x15'),
      s('vllm:request_success_total', { ...vllm, finished_reason: 'stop' }, grow(45)),
      s('vllm:request_success_total', { ...vllm, finished_reason: 'length' }, grow(0)),
      s('vllm:request_success_total', { ...vllm, finished_reason: 'abort' }, grow(15)),
      s('vllm:request_success_total', { ...vllm, finished_reason: 'error' }, grow(0)),
      s('vllm:kv_cache_usage_perc', vllm, busy ? '0.5x15' : '0x15'),
      s('vllm:num_preemptions_total', vllm, grow(30)),
      s('vllm:prompt_tokens_total', vllm, grow(6000)),
      s('vllm:generation_tokens_total', vllm, grow(3000)),
      s('vllm:iteration_tokens_total_sum', vllm, grow(9600)),
      s('vllm:iteration_tokens_total_count', vllm, grow(60)),
      s('vllm:prefix_cache_hits_total', vllm, grow(1500)),
      s('vllm:prefix_cache_queries_total', vllm, grow(6000)),
      s('DCGM_FI_DEV_GPU_UTIL', gpu, busy ? '42x15' : '0x15'),
      s('DCGM_FI_DEV_MEM_COPY_UTIL', gpu, busy ? '17x15' : '0x15'),
      s('DCGM_FI_DEV_FB_USED', gpu, '45000x15'),
      s('DCGM_FI_DEV_FB_FREE', gpu, '3000x15'),
      s('DCGM_FI_DEV_POWER_USAGE', gpu, busy ? '287.5x15' : '80x15'),
      // A GPU of another workload on the same node, and one allocated to no Pod: neither is the target's.
      s('DCGM_FI_DEV_GPU_UTIL', { ...gpu, UUID: 'GPU-other', namespace: 'batch', pod: 'trainer-0' }, '99x15'),
      s('DCGM_FI_DEV_GPU_UTIL', { gpu: '1', UUID: 'GPU-idle', modelName: 'NVIDIA L40S' }, '0x15'),
      // cAdvisor: the vLLM container, the pause container and the Pod-level cgroup (the last two excluded).
      s('container_cpu_usage_seconds_total', cadvisor('vllm'), grow(90)),
      s('container_cpu_usage_seconds_total', cadvisor('POD'), grow(60)),
      s('container_cpu_usage_seconds_total', cadvisor(''), grow(150)),
      s('container_memory_working_set_bytes', cadvisor('vllm'), '8589934592x15'),
      s('container_memory_working_set_bytes', cadvisor('POD'), '1048576x15'),
      s('container_memory_working_set_bytes', cadvisor(''), '8590983168x15'),
      // The same series for another model in the same namespace: must not leak in.
      s('vllm:num_requests_waiting', { ...vllm, model_name: 'evil' }, '1000x15'),
      s('vllm:num_preemptions_total', { ...vllm, model_name: 'evil' }, '0+6000x15'),
    ];
  }

  const target = '{}';
  const perPod = `{pod="${POD}"}`;
  const perGpu = `{UUID="${UUID}", pod="${POD}"}`;
  const e2e: Array<[number, number]> = [
    [1, 0],
    [2.5, 1],
    [5, 2],
    [Infinity, 2],
  ];

  /** Expected samples per catalog id on the busy workspace (values computed in the engine's operation order). */
  const busyExpectations: Record<string, ExpectedSample[]> = {
    e2e_latency_p50: [{ labels: target, value: bucketQuantile(0.5, e2e) }],
    e2e_latency_p95: [{ labels: target, value: bucketQuantile(0.95, e2e) }],
    e2e_latency_p99: [{ labels: target, value: bucketQuantile(0.99, e2e) }],
    ttft_p95: [
      {
        labels: target,
        value: bucketQuantile(0.95, [
          [0.25, 0],
          [0.5, 1],
          [Infinity, 1],
        ]),
      },
    ],
    inter_token_latency_p95: [
      {
        labels: target,
        value: bucketQuantile(0.95, [
          [0.025, 0],
          [0.05, 1],
          [Infinity, 1],
        ]),
      },
    ],
    queue_depth: [{ labels: target, value: 3 }],
    queue_depth_pod: [{ labels: perPod, value: 3 }],
    requests_running: [{ labels: target, value: 8 }],
    requests_completed_rate: [{ labels: target, value: 1 }],
    error_rate: [{ labels: target, value: 100 * (0.25 / 1) }],
    kv_cache_usage_pod: [{ labels: perPod, value: 50 }],
    preemptions_rate: [{ labels: target, value: 0.5 }],
    prompt_tokens_rate: [{ labels: target, value: 100 }],
    generation_tokens_rate: [{ labels: target, value: 50 }],
    iteration_tokens_mean: [{ labels: target, value: 160 }],
    prefix_cache_hit_rate: [{ labels: target, value: 100 * (25 / 100) }],
    gpu_utilization: [{ labels: perGpu, value: 42 }],
    gpu_memory_copy_utilization: [{ labels: perGpu, value: 17 }],
    gpu_fb_used: [{ labels: perGpu, value: 45000 }],
    gpu_fb_free: [{ labels: perGpu, value: 3000 }],
    gpu_fb_used_percent: [{ labels: perGpu, value: 100 * (45000 / (45000 + 3000)) }],
    gpu_power: [{ labels: perGpu, value: 287.5 }],
    gpu_ecc_sbe_volatile: [],
    container_cpu_cores: [{ labels: perPod, value: 1.5 }],
    container_memory_working_set: [{ labels: perPod, value: 8589934592 }],
  };

  it('has an expectation for every catalog entry', () => {
    // Assess
    expect(Object.keys(busyExpectations).sort()).toEqual(CATALOG.map((e) => e.id).sort());
  });

  it('reads the expected value of every entry while the target serves traffic', async () => {
    // Act & Assess
    await expectPromtoolSuccess({
      series: workspace(true),
      tests: CATALOG.map((entry) => ({
        expr: entry.build(evilTarget, WINDOW),
        expected: busyExpectations[entry.id] ?? [],
      })),
    });
  });

  it('answers "no series" (not NaN) for every entry that needs traffic while the target is idle', async () => {
    // Prepare
    const idle = CATALOG.filter((entry) => entry.needsTraffic === true);

    // Act & Assess
    expect(idle.length).toBeGreaterThan(0);
    await expectPromtoolSuccess({
      series: workspace(false),
      tests: idle.map((entry) => ({ expr: entry.build(evilTarget, WINDOW), expected: [] })),
    });
  });

  it('answers zero, not "no series", for rates and gauges while the target is idle', async () => {
    // Prepare
    const ids = ['queue_depth', 'requests_running', 'requests_completed_rate', 'preemptions_rate'];

    // Act & Assess
    await expectPromtoolSuccess({
      series: workspace(false),
      tests: ids.map((id) => ({
        expr: catalogEntry(id).build(evilTarget, WINDOW),
        expected: [{ labels: target, value: 0 }],
      })),
    });
  });
});
