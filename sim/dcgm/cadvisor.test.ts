import { describe, expect, it } from '@jest/globals';
import { VirtualClock } from '../../shared/clock/index.js';
import type { ReplicaTelemetry, TelemetrySource } from '../vllm/telemetry.js';
import { CadvisorPod, renderCadvisorMetrics } from './cadvisor.js';
import { type ExpositionSample, parseExposition } from './parseExposition.js';

const pod = { namespace: 'default', pod: 'vllm-inference-app-7d9c8b6f5d-x2k4q', container: 'vllm' };
const GiB = 1024 ** 3;

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

  telemetry(): ReplicaTelemetry {
    return { ...this.state };
  }
}

function setup(loaded = true) {
  const clock = new VirtualClock(1_700_000_000_000);
  const engine = new FakeEngine();
  engine.state.loaded = loaded;
  const cadvisor = new CadvisorPod({ identity: pod, telemetry: engine, clock, image: 'vllm/vllm-openai:v0.11.0' });
  return { clock, engine, cadvisor };
}

function scrape(cadvisor: CadvisorPod): ExpositionSample[] {
  return parseExposition(renderCadvisorMetrics([cadvisor.sample()])).samples;
}

function vllmSeries(samples: ExpositionSample[], name: string): ExpositionSample {
  const found = samples.find((s) => s.name === name && s.labels.some(([k, v]) => k === 'container' && v === 'vllm'));
  if (!found) throw new Error(`no ${name} for the vllm container`);
  return found;
}

describe('Function: renderCadvisorMetrics', () => {
  it('uses the kubelet\'s label names and order, with cpu="total" only on the CPU series', () => {
    // Prepare
    const { cadvisor } = setup();

    // Act
    const parsed = parseExposition(renderCadvisorMetrics([cadvisor.sample()]));

    // Assess
    expect(parsed.families.get('container_cpu_usage_seconds_total')?.type).toBe('counter');
    expect(parsed.families.get('container_memory_working_set_bytes')?.type).toBe('gauge');
    for (const sample of parsed.samples) {
      const names = sample.labels.map(([name]) => name);
      expect(names).toEqual(
        sample.name === 'container_cpu_usage_seconds_total'
          ? ['container', 'cpu', 'id', 'image', 'name', 'namespace', 'pod']
          : ['container', 'id', 'image', 'name', 'namespace', 'pod'],
      );
      expect(sample.timestampMs).toBe(1_700_000_000_000);
    }
    expect(vllmSeries(parsed.samples, 'container_cpu_usage_seconds_total').labels).toContainEqual(['cpu', 'total']);
  });

  it('reports the Pod cgroup, the pause container and the vLLM container, like a real node', () => {
    // Prepare
    const { cadvisor } = setup();

    // Act
    const cpu = scrape(cadvisor).filter((s) => s.name === 'container_cpu_usage_seconds_total');

    // Assess
    const byContainer = cpu.map((s) => Object.fromEntries(s.labels));
    expect(byContainer.map((l) => [l.container, l.image === '' ? 'no image' : 'image'])).toEqual([
      ['', 'no image'],
      ['', 'image'],
      ['vllm', 'image'],
    ]);
    expect(new Set(byContainer.map((l) => l.pod))).toEqual(new Set([pod.pod]));
    expect(byContainer[2]?.id).toMatch(/^\/kubepods\.slice\/.*\/cri-containerd-[0-9a-f]{64}\.scope$/);
    expect(byContainer[2]?.image).toBe('vllm/vllm-openai:v0.11.0');
  });

  it('renders nothing for a node without Pods', () => {
    // Act
    const text = renderCadvisorMetrics([]);

    // Assess
    expect(text).toBe('');
  });
});

describe('Class: CadvisorPod', () => {
  describe('Method: sample', () => {
    it('grows the CPU counter with time, faster under load than idle', () => {
      // Prepare
      const idle = setup();
      const busy = setup();

      // Act
      for (let i = 0; i < 10; i++) {
        idle.clock.advance(1_000);
        busy.clock.advance(1_000);
        busy.engine.state.busySecondsTotal += 0.9;
        busy.engine.state.requestsReceivedTotal += 20;
        busy.engine.state.generationTokensTotal += 2_000;
      }
      const idleCpu = vllmSeries(scrape(idle.cadvisor), 'container_cpu_usage_seconds_total').value;
      const busyCpu = vllmSeries(scrape(busy.cadvisor), 'container_cpu_usage_seconds_total').value;

      // Assess
      expect(idleCpu).toBeGreaterThan(0);
      expect(busyCpu).toBeGreaterThan(idleCpu * 3);
      // The counter never goes down, even after the engine restarts and its own counters reset.
      busy.engine.state.busySecondsTotal = 0;
      busy.clock.advance(1_000);
      expect(vllmSeries(scrape(busy.cadvisor), 'container_cpu_usage_seconds_total').value).toBeGreaterThan(busyCpu);
    });

    it('keeps a working set of several GiB once loaded, rising with running requests', () => {
      // Prepare
      const world = setup(false);
      const loading = vllmSeries(scrape(world.cadvisor), 'container_memory_working_set_bytes').value;

      // Act
      world.engine.state.loaded = true;
      const idle = vllmSeries(scrape(world.cadvisor), 'container_memory_working_set_bytes').value;
      world.engine.state.running = 64;
      const loaded = vllmSeries(scrape(world.cadvisor), 'container_memory_working_set_bytes').value;

      // Assess
      expect(loading).toBeLessThan(idle);
      expect(idle).toBeGreaterThan(2 * GiB);
      expect(idle).toBeLessThan(8 * GiB);
      expect(loaded).toBeGreaterThan(idle);
      expect(loaded - idle).toBeLessThan(GiB);
    });

    it('sums the containers into the Pod cgroup', () => {
      // Prepare
      const world = setup();
      world.clock.advance(5_000);

      // Act
      const samples = scrape(world.cadvisor).filter((s) => s.name === 'container_memory_working_set_bytes');

      // Assess
      const [podCgroup, pause, vllm] = samples.map((s) => s.value);
      expect(podCgroup).toBe((pause ?? 0) + (vllm ?? 0));
    });
  });
});
