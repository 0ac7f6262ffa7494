import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { isPodReady } from './podStatus.js';
import {
  dcgmExporterDaemonSet,
  podsOf,
  startTestWorld,
  type TestWorld,
  vllmDeployment,
  vllmService,
  vllmServiceMonitor,
  waitFor,
} from './testWorld.js';
import { ensurePrometheus } from '../../prometheus/ensurePrometheus.js';
import { type PrometheusInstance, startPrometheus } from '../../prometheus/startPrometheus.js';

// The workload controllers feeding the REAL Prometheus (Debian package): what it scrapes follows the cluster's
// objects, as with the Prometheus Operator on EKS. Prometheus picks up new file_sd targets ~5 s after they change.
jest.setTimeout(180_000);

const APP = 'vllm-inference-app';
const SVC = 'vllm-inference-svc';

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

let prometheus: PrometheusInstance;
let world: TestWorld;

async function query(expr: string): Promise<Sample[]> {
  const response = await fetch(`${prometheus.url}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await response.json()) as { status: string; data?: { result?: Sample[] }; error?: string };
  if (body.status !== 'success') throw new Error(`query ${expr} failed: ${body.error ?? response.status}`);
  return body.data?.result ?? [];
}

async function activeTargets(job: string): Promise<Array<{ health: string; labels: Record<string, string> }>> {
  const response = await fetch(`${prometheus.url}/api/v1/targets?state=active`);
  const body = (await response.json()) as {
    data: { activeTargets: Array<{ scrapePool: string; health: string; labels: Record<string, string> }> };
  };
  return body.data.activeTargets.filter((t) => t.scrapePool === job);
}

function vllmPodNames(): string[] {
  return podsOf(world.store, APP)
    .filter(isPodReady)
    .map((p) => p.metadata.name)
    .sort();
}

beforeAll(async () => {
  const installation = await ensurePrometheus({ allowInstall: false });
  prometheus = await startPrometheus({ bin: installation.bin, scrapeIntervalSeconds: 1, targetGroups: {} });
  world = await startTestWorld({ prometheus });
  world.store.create(vllmDeployment(APP, 2));
  world.store.create(vllmService(SVC, APP));
  await waitFor('2 Ready vLLM Pods', () => vllmPodNames().length === 2);
  // Discovery works (the kubelet's cAdvisor endpoint of both GPU nodes is scraped) before anything is judged absent.
  await waitFor(
    'both cAdvisor targets up',
    async () => (await query('up{job="kubelet-cadvisor"} == 1')).length === 2,
    60_000,
  );
});

afterAll(async () => {
  await world?.stop();
  await prometheus?.stop();
});

describe('Workload controllers with the real Prometheus', () => {
  it('scrapes vLLM only once a ServiceMonitor selects its Service', async () => {
    // Prepare: nothing selects the Service yet.
    expect(await activeTargets('vllm')).toEqual([]);
    expect(await query('vllm:num_requests_running')).toEqual([]);

    // Act
    world.store.create(vllmServiceMonitor(APP, APP));
    const up = await waitFor(
      'both vLLM targets up',
      async () => {
        const samples = await query('up{job="vllm"} == 1');
        return samples.length === 2 ? samples : undefined;
      },
      60_000,
    );

    // Assess: one target per Ready Pod, labelled as the Prometheus Operator labels them.
    expect(up.map((s) => s.metric['pod']).sort()).toEqual(vllmPodNames());
    for (const sample of up)
      expect(sample.metric).toMatchObject({ namespace: 'default', service: SVC, container: 'vllm', endpoint: 'http' });
    const running = await waitFor('vLLM series', async () => {
      const samples = await query(`vllm:num_requests_running{namespace="default",service="${SVC}"}`);
      return samples.length === 2 ? samples : undefined;
    });
    expect(running.map((s) => s.metric['pod']).sort()).toEqual(vllmPodNames());
  });

  it('exports GPU series only with the dcgm-exporter DaemonSet, labelled with the vLLM Pod using the GPU', async () => {
    // Prepare: cAdvisor series exist (the node agents run), DCGM series do not.
    expect((await query('container_memory_working_set_bytes{container="vllm"}')).length).toBeGreaterThan(0);
    expect(await query('DCGM_FI_DEV_GPU_UTIL')).toEqual([]);
    expect(await activeTargets('dcgm-exporter')).toEqual([]);

    // Act
    world.store.create(dcgmExporterDaemonSet());
    const util = await waitFor(
      'DCGM series of both GPUs',
      async () => {
        const samples = await query('DCGM_FI_DEV_GPU_UTIL');
        return samples.length === 2 ? samples : undefined;
      },
      60_000,
    );

    // Assess
    expect(util.map((s) => s.metric['pod']).sort()).toEqual(vllmPodNames());
    expect((await query('up{job="dcgm-exporter"} == 1')).length).toBe(2);
  });

  it('has every target up', async () => {
    // Act
    const all = await query('up');

    // Assess: 2 vLLM + 2 dcgm-exporter + 2 cAdvisor.
    expect(all).toHaveLength(6);
    expect(all.filter((s) => s.value[1] !== '1')).toEqual([]);
  });
});
