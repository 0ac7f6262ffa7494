import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../../shared/clock/index.js';
import { type NodeAgent, startNodeAgent } from '../dcgm/server.js';
import { ensurePrometheus } from './ensurePrometheus.js';
import { PrometheusStartError, PrometheusTargetsDownError } from './errors.js';
import type { PrometheusInstallation } from './locatePrometheus.js';
import { type PrometheusInstance, startPrometheus } from './startPrometheus.js';
import type { ReplicaIdentity, ReplicaTelemetry, TelemetrySource } from '../vllm/telemetry.js';

// The real Prometheus (Debian package, /usr/bin/prometheus) scraping the twin's node agent and a stand-in vLLM.

const identity: ReplicaIdentity = {
  pod: 'vllm-inference-app-7d9c8b6f5d-x2k4q',
  namespace: 'default',
  deployment: 'vllm-inference-app',
  container: 'vllm',
  node: 'ip-10-0-1-17.us-east-2.compute.internal',
  gpuIndex: 0,
  gpuUuid: 'GPU-1c7f2a9e-5b3d-4e8f-a0c2-7d9e6b4f3a21',
  pciBusId: '00000000:30:00.0',
};
const gpu = {
  model: 'NVIDIA L40S',
  memoryMiB: 46_068,
  gpuMemoryUtilization: 0.9,
  idlePowerWatts: 80,
  maxPowerWatts: 350,
};

/** An engine that is busy all the time: its busy seconds grow as fast as the wall clock. */
function saturatedEngine(): TelemetrySource {
  const startedMs = Date.now();
  return {
    telemetry(): ReplicaTelemetry {
      const seconds = (Date.now() - startedMs) / 1_000;
      return {
        loaded: true,
        busySecondsTotal: seconds,
        promptTokensTotal: Math.floor(seconds * 2_000),
        generationTokensTotal: Math.floor(seconds * 1_500),
        running: 32,
        waiting: 0,
        kvCacheUsage: 0.4,
        requestsReceivedTotal: Math.floor(seconds * 10),
      };
    },
  };
}

/** A stand-in for a vLLM replica's /metrics. */
async function startFakeVllm(): Promise<{ address: string; close: () => Promise<void> }> {
  const server: Server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    response.end(
      '# HELP vllm:num_requests_running Number of requests in model execution batches.\n' +
        '# TYPE vllm:num_requests_running gauge\n' +
        'vllm:num_requests_running{engine="0",model_name="ministral-8b"} 3.0\n',
    );
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

interface VectorSample {
  metric: Record<string, string>;
  value: [number, string];
}

async function query(url: string, promql: string): Promise<VectorSample[]> {
  const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await response.json()) as { status: string; data: { result: VectorSample[] } };
  if (body.status !== 'success') throw new Error(`query ${promql} failed: ${JSON.stringify(body)}`);
  return body.data.result;
}

/** Polls a query until `accept` holds (scrapes and rule evaluations land once a second), returning the last result. */
async function queryUntil(
  url: string,
  promql: string,
  accept: (result: VectorSample[]) => boolean,
  attempts = 120,
): Promise<VectorSample[]> {
  let result: VectorSample[] = [];
  for (let i = 0; i < attempts; i++) {
    result = await query(url, promql);
    if (accept(result)) return result;
    await new Promise((done) => setTimeout(done, 250));
  }
  return result;
}

/** The process has exited: no such PID, or a zombie waiting for an init that may never reap it (containers). */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

let installation: PrometheusInstallation;
let scratch: string;

beforeAll(async () => {
  installation = await ensurePrometheus({ allowInstall: false });
  scratch = await mkdtemp(join(tmpdir(), 'prometheus-test-'));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('Function: ensurePrometheus', () => {
  it('finds the installed Prometheus, its version and promtool', () => {
    // Assess
    expect(installation.bin).toMatch(/prometheus$/);
    expect(installation.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(installation.promtool).toMatch(/promtool$/);
  });
});

describe('Function: startPrometheus', () => {
  let agent: NodeAgent;
  let vllm: Awaited<ReturnType<typeof startFakeVllm>>;
  let prometheus: PrometheusInstance;

  beforeAll(async () => {
    agent = await startNodeAgent({ identity, gpu, telemetry: saturatedEngine(), clock: systemClock });
    vllm = await startFakeVllm();
    const ruleFile = join(scratch, 'rules.yml');
    await writeFile(
      ruleFile,
      'groups:\n  - name: twin-test\n    rules:\n      - record: twin:gpu_util:max\n        expr: max(DCGM_FI_DEV_GPU_UTIL)\n',
    );
    prometheus = await startPrometheus({
      bin: installation.bin,
      scrapeIntervalSeconds: 1,
      ruleFiles: [ruleFile],
      targetGroups: {
        vllm: [
          {
            targets: [vllm.address],
            labels: {
              namespace: identity.namespace,
              pod: identity.pod,
              service: 'vllm-inference-app',
              container: identity.container,
              endpoint: 'http',
            },
          },
        ],
        // The exporter's own Pod: with honor_labels the GPU's Pod labels must win over these.
        'dcgm-exporter': [
          {
            targets: [agent.address],
            labels: { namespace: 'gpu-operator', pod: 'nvidia-dcgm-exporter-7xk2p', service: 'nvidia-dcgm-exporter' },
          },
        ],
        'kubelet-cadvisor': [{ targets: [agent.address], labels: { service: 'kubelet', endpoint: 'https-metrics' } }],
      },
    });
    await prometheus.waitForTargets({ timeoutMs: 30_000 });
  }, 60_000);

  afterAll(async () => {
    await prometheus?.stop();
    await agent?.stop();
    await vllm?.close();
  });

  it('scrapes the DCGM exporter: up{job="dcgm-exporter"} is 1', async () => {
    // Act
    const result = await query(prometheus.url, 'up{job="dcgm-exporter"}');

    // Assess
    expect(result.map((sample) => sample.value[1])).toEqual(['1']);
  });

  it("keeps the Pod labels the exporter sets over the target's (honor_labels)", async () => {
    // Act
    const result = await query(prometheus.url, `DCGM_FI_DEV_FB_USED{pod="${identity.pod}"}`);

    // Assess
    expect(result).toHaveLength(1);
    expect(result[0]?.metric).toMatchObject({
      namespace: identity.namespace,
      container: identity.container,
      UUID: identity.gpuUuid,
      Hostname: identity.node,
      modelName: 'NVIDIA L40S',
    });
    expect(Math.abs(Number(result[0]?.value[1]) - 0.9 * 46_068)).toBeLessThanOrEqual(1);
  });

  it('reports a saturated engine as a fully used GPU', async () => {
    // Act
    const result = await queryUntil(prometheus.url, `DCGM_FI_DEV_GPU_UTIL{pod="${identity.pod}"}`, (r) =>
      r.some((sample) => Number(sample.value[1]) >= 95),
    );

    // Assess
    expect(Number(result[0]?.value[1])).toBeGreaterThanOrEqual(95);
  });

  it('labels vLLM series with the target labels a ServiceMonitor adds', async () => {
    // Act
    const result = await query(prometheus.url, 'vllm:num_requests_running');

    // Assess
    expect(result[0]?.metric).toMatchObject({
      job: 'vllm',
      namespace: identity.namespace,
      pod: identity.pod,
      service: 'vllm-inference-app',
      container: identity.container,
      endpoint: 'http',
      model_name: 'ministral-8b',
    });
  });

  it("exposes the vLLM container's CPU and memory through the cAdvisor job", async () => {
    // Act
    const cpu = await queryUntil(
      prometheus.url,
      `rate(container_cpu_usage_seconds_total{container="vllm",pod="${identity.pod}"}[10s])`,
      (r) => r.length === 1,
    );
    const memory = await query(
      prometheus.url,
      `container_memory_working_set_bytes{container!="",pod="${identity.pod}"}`,
    );

    // Assess
    expect(cpu[0]?.metric).toMatchObject({ job: 'kubelet-cadvisor', namespace: identity.namespace, cpu: 'total' });
    expect(Number(cpu[0]?.value[1])).toBeGreaterThan(0);
    expect(memory.map((sample) => sample.metric.container)).toEqual(['vllm']);
    expect(Number(memory[0]?.value[1])).toBeGreaterThan(2 * 1024 ** 3);
  });

  it('evaluates the rule files it was given', async () => {
    // Act
    const result = await queryUntil(prometheus.url, 'twin:gpu_util:max', (r) => r.length === 1);

    // Assess
    expect(result).toHaveLength(1);
  });

  it('names a target that is down, with its last scrape error, when targets do not come up', async () => {
    // Prepare: a loopback port that nothing listens on.
    const closed = await startFakeVllm();
    await closed.close();

    // Act
    await prometheus.setTargets({
      vllm: [{ targets: [vllm.address] }, { targets: [closed.address] }],
      'dcgm-exporter': [{ targets: [agent.address] }],
    });
    // Generous: the closed target never comes up, so this always waits the whole timeout, and the healthy
    // targets need a file-discovery refresh and a scrape within it even on a loaded machine.
    const error = await prometheus.waitForTargets({ timeoutMs: 15_000 }).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(PrometheusTargetsDownError);
    const down = (error as PrometheusTargetsDownError).targets.filter((target) => target.health !== 'up');
    expect(down.map((target) => [target.job, target.address])).toEqual([['vllm', closed.address]]);
    expect((error as Error).message).toContain(closed.address);
    expect((error as Error).message).toMatch(/refused|not discovered/);
  }, 45_000);

  it('stops: the process is gone, the data directory removed and the port closed', async () => {
    // Act
    await prometheus.stop();

    // Assess
    expect(isGone(prometheus.pid)).toBe(true);
    expect(await exists(prometheus.dataDir)).toBe(false);
    await expect(fetch(`${prometheus.url}/-/ready`)).rejects.toThrow();
  }, 30_000);
});

describe('Function: startPrometheus (failures)', () => {
  it('reports why Prometheus would not start, from its log', async () => {
    // Prepare
    const broken = join(scratch, 'broken.yml');
    await writeFile(broken, 'groups:\n  - name: broken\n    rules:\n      - record: twin:broken\n        expr: sum(\n');

    // Act
    const error = await startPrometheus({
      bin: installation.bin,
      scrapeIntervalSeconds: 1,
      targetGroups: {},
      ruleFiles: [broken],
    }).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(PrometheusStartError);
    expect((error as Error).message.split('\n')[0]).toContain('parse error');
    expect((error as PrometheusStartError).logTail).toContain('broken.yml');
  }, 30_000);

  it('does not outlive the process that started it when that process is killed', async () => {
    // Prepare: a separate Node process starts Prometheus, then dies without cleaning up.
    const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
    const module = join(repoRoot, 'sim/prometheus/startPrometheus.ts');
    const script = `
      const { startPrometheus } = await import(${JSON.stringify(module)});
      const p = await startPrometheus({ bin: ${JSON.stringify(installation.bin)}, scrapeIntervalSeconds: 1, targetGroups: {} });
      console.log(JSON.stringify({ pid: p.pid, dataDir: p.dataDir }));
      setInterval(() => {}, 1000);
    `;
    const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const started = await new Promise<{ pid: number; dataDir: string }>((done, fail) => {
      let output = '';
      parent.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const line = output.split('\n').find((l) => l.startsWith('{'));
        if (line) done(JSON.parse(line) as { pid: number; dataDir: string });
      });
      parent.once('exit', (code) => fail(new Error(`the parent exited early with code ${code}`)));
    });
    expect(isGone(started.pid)).toBe(false);

    // Act
    parent.kill('SIGKILL');
    for (let i = 0; i < 200 && !isGone(started.pid); i++) await new Promise((done) => setTimeout(done, 100));

    // Assess
    expect(isGone(started.pid)).toBe(true);
    await rm(started.dataDir, { recursive: true, force: true });
  }, 60_000);
});
