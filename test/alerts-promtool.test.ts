import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { goFormatFloat, humanize, humanizeDuration, humanizePercentage } from '../shared/alerts/index.js';
import { evaluateTarget, parseAlertSettings } from '../shared/alerts/rules/index.js';
import { toYaml } from '../shared/alerts/export/index.js';
import { HttpMetricsSource } from '../shared/metrics/index.js';
import type { Target } from '../shared/config/index.js';
import {
  ensurePrometheus,
  type PrometheusInstallation,
  type PrometheusInstance,
  startPrometheus,
} from '../sim/harness/index.js';
import { CLI_TEST_TIMEOUT_MS, runCli } from './helpers/cli.js';

// The exported rule files checked and unit-tested by promtool (Debian's prometheus package), and the evaluator's
// PromQL `for` (heldForQuery) run against the real Prometheus.

const execFileAsync = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const INFRA = join(ROOT, 'infra', 'prometheus');

let installation: PrometheusInstallation;
let promtool: string;
let scratch: string;

beforeAll(async () => {
  installation = await ensurePrometheus({ allowInstall: false });
  if (!installation.promtool) throw new Error(`promtool not found next to ${installation.bin} or on PATH`);
  promtool = installation.promtool;
  scratch = await mkdtemp(join(tmpdir(), 'alerts-promtool-'));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Runs promtool; resolves with its exit code and output (a failing check is a result, not an exception). */
async function runPromtool(args: string[], cwd: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(promtool, args, { cwd });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('Files: infra/prometheus (promtool)', () => {
  it('promtool check rules accepts the generic rules file', async () => {
    // Act
    const result = await runPromtool(['check', 'rules', 'vllm-alerts.rules.yaml'], INFRA);

    // Assess
    expect(result.output).toContain('SUCCESS: 7 rules found');
    expect(result.code).toBe(0);
  });

  it('promtool test rules passes: each alert fires after its for, not before, and resolves', async () => {
    // Act
    const result = await runPromtool(['test', 'rules', 'vllm-alerts.test.yaml'], INFRA);

    // Assess
    expect(result.output).toContain('SUCCESS');
    expect(result.code).toBe(0);
  });

  it('promtool test rules fails when a rule fires earlier than its tests say (the tests can fail)', async () => {
    // Prepare: the same tests against rules whose KV-cache `for` is 15s instead of 30s.
    const { readFile } = await import('node:fs/promises');
    const rules = await readFile(join(INFRA, 'vllm-alerts.rules.yaml'), 'utf8');
    await writeFile(join(scratch, 'vllm-alerts.rules.yaml'), rules.replace('for: 30s', 'for: 15s'));
    await writeFile(join(scratch, 'vllm-alerts.test.yaml'), await readFile(join(INFRA, 'vllm-alerts.test.yaml')));

    // Act
    const result = await runPromtool(['test', 'rules', 'vllm-alerts.test.yaml'], scratch);

    // Assess
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('alertname: VLLMKVCacheFull, time: 2m15s');
  });
});

describe('Command: vllm-pilot alerts rules', () => {
  it(
    'writes per-target AMP rules that promtool accepts',
    async () => {
      // Prepare
      const targetsFile = join(scratch, 'targets.yaml');
      await writeFile(
        targetsFile,
        toYaml([
          {
            name: 'prod-ministral',
            cluster: 'prod',
            namespace: 'llm',
            deployment: 'ministral',
            model: 'mistralai/Ministral-8B-Instruct-2410',
            clusterLabel: 'cluster',
            alerts: { rules: { VLLMHighLatency: { threshold: 2.5, for: '3m', window: '10m' } } },
          },
        ]),
      );
      const out = join(scratch, 'per-target.rules.yaml');

      // Act
      const cli = await runCli(['alerts', 'rules', '--format', 'amp', '--targets', targetsFile, '--out', out]);
      const check = await runPromtool(['check', 'rules', out], scratch);

      // Assess
      expect(cli.code).toBe(0);
      expect(check.output).toContain('SUCCESS: 7 rules found');
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'fails with one line naming the bad field',
    async () => {
      // Prepare
      const targetsFile = join(scratch, 'bad-targets.yaml');
      await writeFile(
        targetsFile,
        toYaml([
          { name: 'a', cluster: 'c', namespace: 'ns', deployment: 'd', model: 'm', alerts: { rules: { VLLMX: {} } } },
        ]),
      );

      // Act
      const cli = await runCli(['alerts', 'rules', '--format', 'amp', '--targets', targetsFile]);

      // Assess
      expect(cli.code).toBe(1);
      expect(cli.stdout).toBe('');
      expect(cli.stderr.trim().split('\n')).toEqual([
        expect.stringContaining('targets[0].alerts.rules: unknown key "VLLMX"') as unknown as string,
      ]);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("Functions: format.ts against Prometheus's template functions", () => {
  it('renders every value exactly as humanize, humanizePercentage, humanizeDuration and $value do', async () => {
    // Prepare: one always-firing rule per value; promtool compares the rendered annotations with ours.
    const values = [73, 0, 0.97, 0.9551141790396805, 9.75, 0.95, 90, 7205, 1234567, 12.125, 0.00001234, 123456, 5.1];
    const rules = values.map((value, index) => ({
      alert: `Value${index}`,
      expr: `vector(${value})`,
      annotations: {
        humanize: '{{ $value | humanize }}',
        percentage: '{{ $value | humanizePercentage }}',
        duration: '{{ $value | humanizeDuration }}',
        value: '{{ $value }}',
      },
    }));
    const tests = [
      {
        interval: '1m',
        input_series: [],
        alert_rule_test: values.map((value, index) => ({
          eval_time: '1m',
          alertname: `Value${index}`,
          exp_alerts: [
            {
              exp_labels: {},
              exp_annotations: {
                humanize: humanize(value),
                percentage: humanizePercentage(value),
                duration: humanizeDuration(value),
                value: goFormatFloat(value),
              },
            },
          ],
        })),
      },
    ];
    await writeFile(join(scratch, 'format.rules.yaml'), toYaml({ groups: [{ name: 'format', rules }] }));
    await writeFile(join(scratch, 'format.test.yaml'), toYaml({ rule_files: ['format.rules.yaml'], tests }));

    // Act
    const result = await runPromtool(['test', 'rules', 'format.test.yaml'], scratch);

    // Assess
    expect(result.output).toContain('SUCCESS');
    expect(result.code).toBe(0);
  });
});

/** A /metrics endpoint whose body the test changes. */
async function startExporter(): Promise<{ address: string; set(body: string): void; close(): Promise<void> }> {
  let body = '';
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    response.end(body);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    set: (next) => (body = next),
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

const kvCache = (name: string, value: number) =>
  `# TYPE ${name} gauge\n${name}{engine="0",model_name="ministral"} ${value}\n`;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Waits until the wall clock has passed `timeMs` plus two scrape intervals, so Prometheus holds the data. */
async function until(timeMs: number): Promise<void> {
  const wait = timeMs + 2_000 - Date.now();
  if (wait > 0) await sleep(wait);
}

describe('Function: evaluateTarget (heldForQuery) against the real Prometheus', () => {
  const FOR_SECONDS = 6;
  const KEEP_FIRING_SECONDS = 3;
  const target: Target = {
    name: 'twin',
    cluster: 'test',
    namespace: 'llm',
    deployment: 'ministral',
    model: 'ministral',
  };
  /** Only VLLMKVCacheFull, with a short `for`, kept firing `keepFiringFor` after its condition last held. */
  const onlyKvCacheFull = (keepFiringFor: string) =>
    parseAlertSettings({
      rules: {
        VLLMHighQueueDepth: { enabled: false },
        VLLMHighLatency: { enabled: false },
        VLLMGPUMemoryCritical: { enabled: false },
        VLLMPreemptionSpike: { enabled: false },
        VLLMKVCacheHigh: { enabled: false },
        VLLMMetricsAbsent: { enabled: false },
        VLLMKVCacheFull: { for: `${FOR_SECONDS}s`, keepFiringFor },
      },
    });
  const settings = onlyKvCacheFull('0s');
  const kept = onlyKvCacheFull(`${KEEP_FIRING_SECONDS}s`);
  const POD_STEADY = 'ministral-7d9c8b6f5d-aaaaa';
  const POD_BORN = 'ministral-7d9c8b6f5d-bbbbb';
  let prometheus: PrometheusInstance;
  let steady: Awaited<ReturnType<typeof startExporter>>;
  let born: Awaited<ReturnType<typeof startExporter>>;
  let source: HttpMetricsSource;
  /** When both Pods went above the threshold, and when they went back below. */
  let aboveMs: number;
  let belowMs: number;

  const firingPods = async (timeMs: number, withSettings = settings) => {
    const evaluation = await evaluateTarget(target, withSettings, { source }, timeMs);
    expect(evaluation.failures).toEqual([]);
    return evaluation.firing.map((alert) => alert.labels.pod).sort();
  };

  beforeAll(async () => {
    steady = await startExporter();
    born = await startExporter();
    // A 0.11-era Pod below the threshold (current name); the other Pod exposes nothing yet.
    steady.set(kvCache('vllm:kv_cache_usage_perc', 0.5));
    prometheus = await startPrometheus({
      bin: installation.bin,
      scrapeIntervalSeconds: 1,
      targetGroups: {
        vllm: [
          { targets: [steady.address], labels: { namespace: 'llm', pod: POD_STEADY } },
          { targets: [born.address], labels: { namespace: 'llm', pod: POD_BORN } },
        ],
      },
    });
    await prometheus.waitForTargets({ timeoutMs: 30_000 });
    source = new HttpMetricsSource({
      endpoint: prometheus.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDTWIN', secretAccessKey: 'twin-secret' },
    });
    // Some history below the threshold, then both Pods above it: the born Pod's first sample is already above
    // (a vLLM 0.9 Pod: legacy name).
    await sleep(3_000);
    aboveMs = Date.now();
    steady.set(kvCache('vllm:kv_cache_usage_perc', 0.97));
    born.set(kvCache('vllm:gpu_cache_usage_perc', 0.97));
    await until(aboveMs + (FOR_SECONDS + 6) * 1_000);
    belowMs = Date.now();
    steady.set(kvCache('vllm:kv_cache_usage_perc', 0.5));
    born.set(kvCache('vllm:gpu_cache_usage_perc', 0.5));
    await until(belowMs + (KEEP_FIRING_SECONDS + 2) * 1_000);
  }, 90_000);

  afterAll(async () => {
    await prometheus?.stop();
    await steady?.close();
    await born?.close();
  });

  it('does not fire a series that was below the threshold before its for has elapsed', async () => {
    // Act
    const pods = await firingPods(aboveMs + (FOR_SECONDS - 1) * 1_000);

    // Assess
    expect(pods).not.toContain(POD_STEADY);
  });

  it('does not fire a series born above the threshold before its for has elapsed', async () => {
    // Act: right after birth every sample of the new series is above the threshold.
    const early = await firingPods(aboveMs + 2_000);
    const beforeFor = await firingPods(aboveMs + (FOR_SECONDS - 1) * 1_000);

    // Assess
    expect(early).toEqual([]);
    expect(beforeFor).toEqual([]);
  });

  it('fires both once the condition has held for its for (one alert per Pod, either vLLM name)', async () => {
    // Act
    const pods = await firingPods(aboveMs + (FOR_SECONDS + 4) * 1_000);

    // Assess
    expect(pods).toEqual([POD_STEADY, POD_BORN]);
  });

  it('resolves as soon as the condition clears, without a keep-firing time', async () => {
    // Act
    const pods = await firingPods(belowMs + 2_000);

    // Assess
    expect(pods).toEqual([]);
  });

  it('keeps firing for its keep-firing time after the condition last held, then resolves', async () => {
    // Act: the last sample above the threshold is at most one 1 s scrape after belowMs.
    const soon = await firingPods(belowMs + 1_000, kept);
    const after = await firingPods(belowMs + (KEEP_FIRING_SECONDS + 2) * 1_000, kept);

    // Assess
    expect(soon).toEqual([POD_STEADY, POD_BORN]);
    expect(after).toEqual([]);
  });
});
