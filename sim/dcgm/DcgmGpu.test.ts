import { describe, expect, it } from '@jest/globals';
import { VirtualClock } from '../../shared/clock/index.js';
import type { ReplicaIdentity, ReplicaTelemetry, TelemetrySource } from '../vllm/telemetry.js';
import { DcgmGpu, type GpuSpec } from './DcgmGpu.js';
import { DcgmConfigError } from './errors.js';
import { type ExpositionSample, parseExposition } from './parseExposition.js';
import { renderDcgmMetrics } from './renderDcgmMetrics.js';

// The replica of the reference sample (dcgm-metrics-sample.txt): one L40S on a g6e node used by a vLLM Pod.
const identity: ReplicaIdentity = {
  pod: 'vllm-inference-app-7d9c8b6f5d-x2k4q',
  namespace: 'default',
  deployment: 'vllm-inference-app',
  container: 'vllm',
  node: 'ip-192-168-131-77.us-east-2.compute.internal',
  gpuIndex: 0,
  gpuUuid: 'GPU-1c7f2a9e-5b3d-4e8f-a0c2-7d9e6b4f3a21',
  pciBusId: '00000000:30:00.0',
};

const l40s: GpuSpec = {
  model: 'NVIDIA L40S',
  memoryMiB: 46_068,
  gpuMemoryUtilization: 0.9,
  idlePowerWatts: 80,
  maxPowerWatts: 350,
};

// default-counters.csv (dcgm-exporter 4.8.2), the enabled metric rows: name, type, and how the exporter prints it.
const DEFAULT_COUNTERS: Array<[name: string, type: string, format: 'int' | 'double']> = [
  ['DCGM_FI_DEV_SM_CLOCK', 'gauge', 'int'],
  ['DCGM_FI_DEV_MEM_CLOCK', 'gauge', 'int'],
  ['DCGM_FI_DEV_MEMORY_TEMP', 'gauge', 'int'],
  ['DCGM_FI_DEV_GPU_TEMP', 'gauge', 'int'],
  ['DCGM_FI_DEV_POWER_USAGE', 'gauge', 'double'],
  ['DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION', 'counter', 'int'],
  ['DCGM_FI_DEV_PCIE_REPLAY_COUNTER', 'counter', 'int'],
  ['DCGM_FI_DEV_GPU_UTIL', 'gauge', 'int'],
  ['DCGM_FI_DEV_MEM_COPY_UTIL', 'gauge', 'int'],
  ['DCGM_FI_DEV_ENC_UTIL', 'gauge', 'int'],
  ['DCGM_FI_DEV_DEC_UTIL', 'gauge', 'int'],
  ['DCGM_FI_DEV_XID_ERRORS', 'gauge', 'int'],
  ['DCGM_FI_DEV_FB_FREE', 'gauge', 'int'],
  ['DCGM_FI_DEV_FB_USED', 'gauge', 'int'],
  ['DCGM_FI_DEV_FB_RESERVED', 'gauge', 'int'],
  ['DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL', 'counter', 'int'],
  ['DCGM_FI_DEV_VGPU_LICENSE_STATUS', 'gauge', 'int'],
  ['DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS', 'counter', 'int'],
  ['DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS', 'counter', 'int'],
  ['DCGM_FI_DEV_ROW_REMAP_FAILURE', 'gauge', 'int'],
  ['DCGM_FI_PROF_GR_ENGINE_ACTIVE', 'gauge', 'double'],
  ['DCGM_FI_PROF_PIPE_TENSOR_ACTIVE', 'gauge', 'double'],
  ['DCGM_FI_PROF_DRAM_ACTIVE', 'gauge', 'double'],
  ['DCGM_FI_PROF_PCIE_TX_BYTES', 'gauge', 'int'],
  ['DCGM_FI_PROF_PCIE_RX_BYTES', 'gauge', 'int'],
];

// Lines of the reference sample whose values do not depend on load.
const REFERENCE_LINES = [
  'DCGM_FI_DEV_SM_CLOCK{gpu="0",UUID="GPU-1c7f2a9e-5b3d-4e8f-a0c2-7d9e6b4f3a21",pci_bus_id="00000000:30:00.0",device="nvidia0",modelName="NVIDIA L40S",Hostname="ip-192-168-131-77.us-east-2.compute.internal",DCGM_FI_DRIVER_VERSION="580.126.09",container="vllm",namespace="default",pod="vllm-inference-app-7d9c8b6f5d-x2k4q"} 2520',
  'DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-1c7f2a9e-5b3d-4e8f-a0c2-7d9e6b4f3a21",pci_bus_id="00000000:30:00.0",device="nvidia0",modelName="NVIDIA L40S",Hostname="ip-192-168-131-77.us-east-2.compute.internal",DCGM_FI_DRIVER_VERSION="580.126.09",container="vllm",err_code="0",err_msg="No Error",namespace="default",pod="vllm-inference-app-7d9c8b6f5d-x2k4q"} 0',
  'DCGM_FI_DEV_FB_RESERVED{gpu="0",UUID="GPU-1c7f2a9e-5b3d-4e8f-a0c2-7d9e6b4f3a21",pci_bus_id="00000000:30:00.0",device="nvidia0",modelName="NVIDIA L40S",Hostname="ip-192-168-131-77.us-east-2.compute.internal",DCGM_FI_DRIVER_VERSION="580.126.09",container="vllm",namespace="default",pod="vllm-inference-app-7d9c8b6f5d-x2k4q"} 912',
];

const IDENTITY_LABELS = ['gpu', 'UUID', 'pci_bus_id', 'device', 'modelName', 'Hostname', 'DCGM_FI_DRIVER_VERSION'];

/** An engine stand-in whose cumulative counters the test moves by hand. */
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

function setup(options: { loaded?: boolean; spec?: Partial<GpuSpec>; eccCounters?: boolean } = {}) {
  const clock = new VirtualClock(1_700_000_000_000);
  const engine = new FakeEngine();
  engine.state.loaded = options.loaded ?? true;
  const gpu = new DcgmGpu({
    device: identity,
    spec: { ...l40s, ...options.spec },
    clock,
    ...(options.eccCounters !== undefined ? { eccCounters: options.eccCounters } : {}),
  });
  gpu.attachPod(identity, engine);
  return { clock, engine, gpu };
}

/** Runs the engine for `seconds`, busy for `busyFraction` of each second, sampling once a second like DCGM. */
function run(
  { clock, engine, gpu }: ReturnType<typeof setup>,
  seconds: number,
  load: { busyFraction: number; generationTokensPerSecond?: number; running?: number },
): void {
  for (let i = 0; i < seconds; i++) {
    clock.advance(1_000);
    engine.state.busySecondsTotal += load.busyFraction;
    engine.state.generationTokensTotal += load.generationTokensPerSecond ?? 0;
    engine.state.running = load.running ?? 0;
    gpu.sample();
  }
}

function scrape(gpu: DcgmGpu): ExpositionSample[] {
  return parseExposition(renderDcgmMetrics([gpu.sample()])).samples;
}

function valueOf(gpu: DcgmGpu, name: string): number {
  const sample = scrape(gpu).find((s) => s.name === name);
  if (!sample) throw new Error(`${name} not exported`);
  return sample.value;
}

describe('Function: renderDcgmMetrics', () => {
  it('exports the 25 default-counters fields with the type and format of the counters file', () => {
    // Prepare
    const { gpu } = setup();

    // Act
    const parsed = parseExposition(renderDcgmMetrics([gpu.sample()]));

    // Assess
    expect([...parsed.families.keys()]).toEqual(DEFAULT_COUNTERS.map(([name]) => name));
    for (const [name, type, format] of DEFAULT_COUNTERS) {
      expect({ name, type: parsed.families.get(name)?.type }).toEqual({ name, type });
      const sample = parsed.samples.find((s) => s.name === name);
      expect({ name, value: sample?.valueText }).toEqual({
        name,
        value: expect.stringMatching(format === 'int' ? /^\d+$/ : /^\d+\.\d{6}$/),
      });
    }
  });

  it('prints the lines of the reference sample byte for byte', () => {
    // Prepare
    const { gpu } = setup();

    // Act
    const lines = renderDcgmMetrics([gpu.sample()]).split('\n');

    // Assess
    for (const line of REFERENCE_LINES) expect(lines).toContain(line);
  });

  it('puts the labels in the exporter order: identity, then attributes sorted by name', () => {
    // Prepare
    const { gpu } = setup();

    // Act
    const samples = scrape(gpu);

    // Assess
    for (const sample of samples) {
      const expected =
        sample.name === 'DCGM_FI_DEV_XID_ERRORS'
          ? [...IDENTITY_LABELS, 'container', 'err_code', 'err_msg', 'namespace', 'pod']
          : [...IDENTITY_LABELS, 'container', 'namespace', 'pod'];
      expect({ name: sample.name, labels: sample.labels.map(([name]) => name) }).toEqual({
        name: sample.name,
        labels: expected,
      });
    }
  });

  it('exports a GPU that no Pod uses without container, namespace and pod labels', () => {
    // Prepare
    const { gpu } = setup();

    // Act
    gpu.detachPod();
    const samples = scrape(gpu);

    // Assess
    expect(samples).toHaveLength(25);
    const names = new Set(samples.flatMap((s) => s.labels.map(([name]) => name)));
    expect(names.has('pod')).toBe(false);
    expect(names.has('namespace')).toBe(false);
    expect(names.has('container')).toBe(false);
    expect(valueOf(gpu, 'DCGM_FI_DEV_FB_USED')).toBe(0);
  });

  it('renders one series per GPU under a single HELP/TYPE header', () => {
    // Prepare
    const clock = new VirtualClock(0);
    const gpus = [0, 1].map(
      (index) =>
        new DcgmGpu({
          device: { ...identity, gpuIndex: index, gpuUuid: `GPU-${index}`, pciBusId: `00000000:3${index}:00.0` },
          spec: l40s,
          clock,
        }),
    );

    // Act
    const parsed = parseExposition(renderDcgmMetrics(gpus.map((gpu) => gpu.sample())));

    // Assess
    const util = parsed.samples.filter((s) => s.name === 'DCGM_FI_DEV_GPU_UTIL');
    expect(util.map((s) => s.labels.find(([name]) => name === 'device')?.[1])).toEqual(['nvidia0', 'nvidia1']);
    expect(parsed.families.size).toBe(25);
  });
});

describe('Class: DcgmGpu', () => {
  describe('Method: sample', () => {
    it('reports a small framebuffer before the model is loaded and util x memory once it is', () => {
      // Prepare
      const world = setup({ loaded: false });

      // Act
      const beforeUsed = valueOf(world.gpu, 'DCGM_FI_DEV_FB_USED');
      world.engine.state.loaded = true;
      run(world, 1, { busyFraction: 0 });
      const used = valueOf(world.gpu, 'DCGM_FI_DEV_FB_USED');
      const free = valueOf(world.gpu, 'DCGM_FI_DEV_FB_FREE');
      const reserved = valueOf(world.gpu, 'DCGM_FI_DEV_FB_RESERVED');

      // Assess
      expect(beforeUsed).toBeGreaterThan(100);
      expect(beforeUsed).toBeLessThan(1_024);
      expect(Math.abs(used - 0.9 * 46_068)).toBeLessThanOrEqual(1);
      expect(used + free + reserved).toBe(46_068);
    });

    it.each([
      { case: 'idle engine', busyFraction: 0, expected: 0 },
      { case: 'engine busy half of the time', busyFraction: 0.5, expected: 50 },
      { case: 'engine busy all the time', busyFraction: 1, expected: 100 },
      { case: 'busy time running ahead of wall time (clamped)', busyFraction: 1.3, expected: 100 },
    ])('follows the busy fraction in GPU_UTIL: $case', ({ busyFraction, expected }) => {
      // Prepare
      const world = setup();

      // Act
      run(world, 5, { busyFraction });

      // Assess
      expect(valueOf(world.gpu, 'DCGM_FI_DEV_GPU_UTIL')).toBe(expected);
      expect(valueOf(world.gpu, 'DCGM_FI_PROF_GR_ENGINE_ACTIVE')).toBeCloseTo(Math.min(1, busyFraction), 1);
    });

    it('reflects the last second of work, not the average since start', () => {
      // Prepare
      const world = setup();
      run(world, 10, { busyFraction: 1 });

      // Act
      run(world, 2, { busyFraction: 0 });

      // Assess
      expect(valueOf(world.gpu, 'DCGM_FI_DEV_GPU_UTIL')).toBe(0);
    });

    it.each([
      { case: 'idle', busyFraction: 0, expected: 80 },
      { case: 'half busy', busyFraction: 0.5, expected: 215 },
      { case: 'fully busy', busyFraction: 1, expected: 350 },
    ])('draws power between idle and max following utilisation: $case', ({ busyFraction, expected }) => {
      // Prepare
      const world = setup();

      // Act
      run(world, 3, { busyFraction });
      const power = valueOf(world.gpu, 'DCGM_FI_DEV_POWER_USAGE');

      // Assess
      expect(power).toBeCloseTo(expected, 3);
      expect(power).toBeGreaterThanOrEqual(80);
      expect(power).toBeLessThanOrEqual(350);
    });

    it('integrates power into a monotonic energy counter (mJ)', () => {
      // Prepare
      const world = setup();
      const readings: number[] = [valueOf(world.gpu, 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION')];

      // Act
      for (const busyFraction of [1, 0, 0.5, 1, 0]) {
        run(world, 2, { busyFraction });
        readings.push(valueOf(world.gpu, 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION'));
      }

      // Assess
      for (let i = 1; i < readings.length; i++) expect(readings[i]).toBeGreaterThan(readings[i - 1] ?? Infinity);
      // 10 s at 80 W idle plus 270 W x 5 busy seconds = 2150 J.
      expect((readings.at(-1) ?? 0) - (readings[0] ?? 0)).toBe(2_150_000);
    });

    it('heats up under load and settles, staying within a plausible range', () => {
      // Prepare
      const world = setup();
      const idleTemp = valueOf(world.gpu, 'DCGM_FI_DEV_GPU_TEMP');

      // Act
      run(world, 300, { busyFraction: 1, running: 32 });
      const hot = valueOf(world.gpu, 'DCGM_FI_DEV_GPU_TEMP');
      run(world, 60, { busyFraction: 1, running: 32 });
      const later = valueOf(world.gpu, 'DCGM_FI_DEV_GPU_TEMP');

      // Assess
      expect(idleTemp).toBeGreaterThanOrEqual(30);
      expect(idleTemp).toBeLessThan(45);
      expect(hot).toBeGreaterThan(idleTemp + 20);
      expect(hot).toBeLessThanOrEqual(80);
      expect(Math.abs(later - hot)).toBeLessThanOrEqual(1);
    });

    it('shows memory-bound decode under load: DRAM more active than the tensor pipe', () => {
      // Prepare
      const world = setup();

      // Act
      run(world, 3, { busyFraction: 0.95, running: 48, generationTokensPerSecond: 2_000 });

      // Assess
      const dram = valueOf(world.gpu, 'DCGM_FI_PROF_DRAM_ACTIVE');
      const tensor = valueOf(world.gpu, 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE');
      expect(dram).toBeGreaterThan(tensor);
      expect(dram).toBeLessThanOrEqual(1);
      expect(valueOf(world.gpu, 'DCGM_FI_DEV_MEM_COPY_UTIL')).toBeGreaterThan(0);
    });

    it('moves more bytes over PCIe as the token rate rises', () => {
      // Prepare
      const slow = setup();
      const fast = setup();

      // Act
      run(slow, 3, { busyFraction: 0.5, generationTokensPerSecond: 100 });
      run(fast, 3, { busyFraction: 0.9, generationTokensPerSecond: 3_000 });

      // Assess
      expect(valueOf(fast.gpu, 'DCGM_FI_PROF_PCIE_RX_BYTES')).toBeGreaterThan(
        valueOf(slow.gpu, 'DCGM_FI_PROF_PCIE_RX_BYTES'),
      );
      expect(valueOf(fast.gpu, 'DCGM_FI_PROF_PCIE_TX_BYTES')).toBeGreaterThan(
        valueOf(slow.gpu, 'DCGM_FI_PROF_PCIE_TX_BYTES'),
      );
    });

    it('keeps utilisation within 0-100 when the engine restarts and its counters reset', () => {
      // Prepare
      const world = setup();
      run(world, 3, { busyFraction: 1 });

      // Act
      world.engine.state.busySecondsTotal = 0;
      run(world, 1, { busyFraction: 0.5 });
      const afterReset = valueOf(world.gpu, 'DCGM_FI_DEV_GPU_UTIL');
      run(world, 2, { busyFraction: 0.5 });

      // Assess
      expect(afterReset).toBeGreaterThanOrEqual(0);
      expect(afterReset).toBeLessThanOrEqual(100);
      expect(valueOf(world.gpu, 'DCGM_FI_DEV_GPU_UTIL')).toBe(50);
    });
  });

  describe('Method: setFault', () => {
    it('pushes the framebuffer over the 95 % alert line (used / (used + free)) until cleared', () => {
      // Prepare
      const world = setup();

      // Act
      world.gpu.setFault({ framebufferUsedMiB: 45_000 });
      const used = valueOf(world.gpu, 'DCGM_FI_DEV_FB_USED');
      const free = valueOf(world.gpu, 'DCGM_FI_DEV_FB_FREE');
      world.gpu.clearFault();

      // Assess
      expect(used / (used + free)).toBeGreaterThan(0.95);
      expect(valueOf(world.gpu, 'DCGM_FI_DEV_FB_USED')).toBe(Math.round(0.9 * 46_068));
    });

    it('reports an XID with its code and message', () => {
      // Prepare
      const world = setup();

      // Act
      world.gpu.setFault({ xid: 79 });
      const xid = scrape(world.gpu).find((s) => s.name === 'DCGM_FI_DEV_XID_ERRORS');

      // Assess
      expect(xid?.value).toBe(79);
      expect(xid?.labels).toEqual(
        expect.arrayContaining([
          ['err_code', '79'],
          ['err_msg', 'GPU has fallen off the bus'],
        ]),
      );
    });

    it.each([
      { case: 'ECC counters enabled', eccCounters: true, expected: 3 },
      { case: 'default counters file (no ECC fields)', eccCounters: false, expected: undefined },
    ])('counts injected ECC errors only when the ECC fields are exported: $case', ({ eccCounters, expected }) => {
      // Prepare
      const world = setup({ eccCounters });

      // Act
      world.gpu.setFault({ eccSbe: 2 });
      world.gpu.setFault({ eccSbe: 1 });
      const sbe = scrape(world.gpu).find((s) => s.name === 'DCGM_FI_DEV_ECC_SBE_VOL_TOTAL');

      // Assess
      expect(sbe?.value).toBe(expected);
    });

    it.each([
      { case: 'negative framebuffer', fault: { framebufferUsedMiB: -1 }, field: 'fault.framebufferUsedMiB' },
      { case: 'framebuffer beyond the card', fault: { framebufferUsedMiB: 50_000 }, field: 'fault.framebufferUsedMiB' },
      { case: 'fractional XID', fault: { xid: 1.5 }, field: 'fault.xid' },
      { case: 'negative ECC count', fault: { eccDbe: -2 }, field: 'fault.eccDbe' },
    ])('rejects a bad fault naming the field: $case', ({ fault, field }) => {
      // Prepare
      const world = setup();

      // Act
      const act = () => world.gpu.setFault(fault);

      // Assess
      expect(act).toThrow(DcgmConfigError);
      expect(act).toThrow(field);
    });
  });

  describe('Method: constructor', () => {
    it.each([
      { case: 'zero memory', spec: { memoryMiB: 0 }, field: 'gpu.memoryMiB' },
      { case: 'utilisation above 1', spec: { gpuMemoryUtilization: 1.2 }, field: 'gpu.gpuMemoryUtilization' },
      { case: 'max power below idle', spec: { maxPowerWatts: 50 }, field: 'gpu.maxPowerWatts' },
    ])('rejects a bad GPU spec naming the field: $case', ({ spec, field }) => {
      // Act
      const act = () => setup({ spec });

      // Assess
      expect(act).toThrow(DcgmConfigError);
      expect(act).toThrow(field);
    });
  });
});
