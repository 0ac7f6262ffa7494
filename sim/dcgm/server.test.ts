import { afterEach, describe, expect, it } from '@jest/globals';
import { VirtualClock } from '../../shared/clock/index.js';
import type { ReplicaIdentity, ReplicaTelemetry, TelemetrySource } from '../vllm/telemetry.js';
import { parseExposition } from './parseExposition.js';
import { type NodeAgent, startNodeAgent } from './server.js';

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

class FakeEngine implements TelemetrySource {
  state: ReplicaTelemetry = {
    loaded: true,
    busySecondsTotal: 0,
    promptTokensTotal: 0,
    generationTokensTotal: 0,
    running: 0,
    waiting: 0,
    kvCacheUsage: 0,
    requestsReceivedTotal: 0,
  };
  failWith: Error | undefined;

  telemetry(): ReplicaTelemetry {
    if (this.failWith) throw this.failWith;
    return { ...this.state };
  }
}

let agent: NodeAgent | undefined;
afterEach(async () => {
  await agent?.stop();
  agent = undefined;
});

async function start() {
  const clock = new VirtualClock(1_700_000_000_000);
  const engine = new FakeEngine();
  agent = await startNodeAgent({ identity, gpu, telemetry: engine, clock, sampleIntervalMs: 0 });
  return { clock, engine, agent };
}

describe('Function: startNodeAgent', () => {
  it('serves the DCGM exposition on /metrics and cAdvisor on /metrics/cadvisor from one loopback port', async () => {
    // Prepare
    const { agent } = await start();

    // Act
    const dcgm = await fetch(agent.dcgmMetricsUrl);
    const cadvisor = await fetch(agent.cadvisorMetricsUrl);
    const dcgmText = await dcgm.text();
    const cadvisorText = await cadvisor.text();

    // Assess
    expect(agent.address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(dcgm.status).toBe(200);
    expect(dcgm.headers.get('content-type')).toContain('text/plain; version=0.0.4');
    const fbUsed = parseExposition(dcgmText).samples.find((s) => s.name === 'DCGM_FI_DEV_FB_USED');
    expect(fbUsed?.labels).toContainEqual(['pod', identity.pod]);
    expect(cadvisor.status).toBe(200);
    expect(parseExposition(cadvisorText).samples.some((s) => s.name === 'container_cpu_usage_seconds_total')).toBe(
      true,
    );
  });

  it('drops the Pod labels and the Pod cAdvisor series once the Pod is detached', async () => {
    // Prepare
    const { agent } = await start();

    // Act
    agent.detachPod();
    const dcgm = parseExposition(await (await fetch(agent.dcgmMetricsUrl)).text());
    const cadvisorText = await (await fetch(agent.cadvisorMetricsUrl)).text();

    // Assess
    expect(dcgm.samples).toHaveLength(25);
    expect(dcgm.samples.every((s) => s.labels.every(([name]) => name !== 'pod'))).toBe(true);
    expect(cadvisorText).toBe('');
  });

  it('answers 404 naming the paths it serves, and 500 with the reason when telemetry fails', async () => {
    // Prepare
    const { agent, engine } = await start();

    // Act
    const missing = await fetch(`${agent.url}/nope`);
    engine.failWith = new Error('engine gone');
    const broken = await fetch(agent.dcgmMetricsUrl);

    // Assess
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('/metrics/cadvisor');
    expect(broken.status).toBe(500);
    expect(await broken.text()).toContain('engine gone');
  });

  it('releases its port on stop', async () => {
    // Prepare
    const { agent: started } = await start();
    await fetch(started.dcgmMetricsUrl); // leaves a keep-alive connection open

    // Act
    await started.stop();
    agent = undefined;

    // Assess
    await expect(fetch(started.dcgmMetricsUrl)).rejects.toThrow();
  });
});
