import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { VirtualClock } from '../../shared/clock/index.js';
import { DCGM } from '../../shared/metrics/index.js';
import { DcgmGpu } from '../dcgm/DcgmGpu.js';
import { type EngineConfig, type RequestResult, VllmEngine } from '../vllm/engine.js';
import { FAULT_KINDS, FaultController, type FaultReplica, type FaultRequest } from './faults.js';
import { TwinFaultInvalidError, TwinFaultPodNotFoundError } from './errors.js';
import type { ReplicaIdentity } from '../vllm/telemetry.js';

/** The demo profile's engine: 32 sequences, 256 KV blocks of 16 tokens, ~15 ms steps. */
const ENGINE: EngineConfig = {
  maxNumSeqs: 32,
  kvCacheBlocks: 256,
  blockSize: 16,
  maxNumBatchedTokens: 2048,
  prefillTokensPerSecond: 12_000,
  decodeStepMs: { base: 15, perSequence: 0.334 },
  maxModelLen: 4096,
  modelLoadSeconds: 0,
  warmupRequests: 0,
  warmupSlowdown: 1,
};

const GPU_SPEC = {
  model: 'NVIDIA L40S',
  memoryMiB: 46_068,
  gpuMemoryUtilization: 0.9,
  idlePowerWatts: 80,
  maxPowerWatts: 350,
};

/** Two (or more) replicas with real engines and GPUs on one virtual clock, as the twin's Workloads lists them. */
function world(podNames: readonly string[] = ['vllm-inference-app-b', 'vllm-inference-app-a']) {
  const clock = new VirtualClock(Date.parse('2026-03-02T10:00:00Z'));
  /** The Pods whose /metrics answers 503 now (what scrape-gap toggles on the replica's server). */
  const metricsDown = new Set<string>();
  const replicas: FaultReplica[] = podNames.map((pod, index) => {
    const identity: ReplicaIdentity = {
      pod,
      namespace: 'default',
      deployment: 'vllm-inference-app',
      container: 'vllm',
      node: `ip-10-0-16-${index}.us-east-2.compute.internal`,
      gpuIndex: 0,
      gpuUuid: `GPU-0000000${index}-5b3d-4e8f-a0c2-7d9e6b4f3a21`,
      pciBusId: `00000000:3${index}:00.0`,
    };
    const engine = new VllmEngine(ENGINE, clock);
    const gpu = new DcgmGpu({ device: identity, spec: GPU_SPEC, clock });
    gpu.attachPod(identity, engine);
    const setMetricsUnavailable = (down: boolean) => void (down ? metricsDown.add(pod) : metricsDown.delete(pod));
    return { pod, ready: true, vllm: { engine, identity, setMetricsUnavailable }, nodeAgent: { gpu } };
  });
  const lines: string[] = [];
  const faults = new FaultController({ workloads: { replicas: () => replicas }, clock, log: (l) => lines.push(l) });
  const byPod = (pod: string): FaultReplica => {
    const replica = replicas.find((r) => r.pod === pod);
    if (replica === undefined) throw new Error(`no replica ${pod}`);
    return replica;
  };
  /** Moves the clock to `endMs`, running every engine's steps on the way. */
  const runUntil = (endMs: number): void => {
    for (;;) {
      const next = Math.min(...replicas.map((r) => r.vllm.engine.nextEventMs() ?? Number.POSITIVE_INFINITY));
      if (!(next < endMs)) break;
      clock.set(Math.max(clock.now(), next) + 1e-3);
      for (const r of replicas) r.vllm.engine.advanceTo(clock.now());
    }
    clock.set(endMs);
    for (const r of replicas) r.vllm.engine.advanceTo(endMs);
  };
  return { clock, replicas, faults, byPod, runUntil, lines, metricsDown };
}

/** FB_USED / (FB_USED + FB_FREE) of a GPU now, as the guide's alert computes it. */
function framebufferFraction(gpu: DcgmGpu): number {
  const values = gpu.sample().values;
  const used = values.get(DCGM.fbUsed) ?? 0;
  return used / (used + (values.get(DCGM.fbFree) ?? 0));
}

/** One request's end-to-end latency (ms) on an otherwise idle engine. */
function latencyMs(engine: VllmEngine, run: (endMs: number) => void, clock: VirtualClock): number {
  let result: RequestResult | undefined;
  engine.submit({ promptTokens: 35, maxTokens: 32 }, (event) => {
    if (event.type === 'finished') result = event.result;
  });
  run(clock.now() + 30_000);
  if (result === undefined) throw new Error('request did not finish');
  return result.finishedMs - result.arrivalMs;
}

describe('Class: FaultController', () => {
  describe('Method: inject', () => {
    it('puts KV-cache pressure on the first Ready Pod by name: usage >= the fraction with no load, until cleared', () => {
      // Prepare
      const { faults, byPod, clock } = world();

      // Act
      const fault = faults.inject({ kind: 'kv-cache-pressure' });
      const usage = byPod('vllm-inference-app-a').vllm.engine.stats().kvCacheUsage;
      const other = byPod('vllm-inference-app-b').vllm.engine.stats().kvCacheUsage;
      faults.clear();

      // Assess
      expect(fault).toMatchObject({
        kind: 'kv-cache-pressure',
        pod: 'vllm-inference-app-a',
        onsetMs: clock.now(),
        params: { fraction: 0.97 },
      });
      expect(fault.description).toContain('249 of 256 blocks unavailable');
      expect(usage).toBeGreaterThanOrEqual(0.97);
      expect(other).toBe(0);
      expect(byPod('vllm-inference-app-a').vllm.engine.stats().kvCacheUsage).toBe(0);
    });

    it('puts framebuffer pressure on that Pod’s GPU only: used / (used + free) >= the fraction, natural again after clear', () => {
      // Prepare
      const { faults, byPod } = world();
      const gpuA = byPod('vllm-inference-app-a').nodeAgent.gpu;
      const gpuB = byPod('vllm-inference-app-b').nodeAgent.gpu;
      const natural = framebufferFraction(gpuA);

      // Act
      faults.inject({ kind: 'framebuffer-pressure', pod: 'vllm-inference-app-a', fraction: 0.98 });
      const pressured = framebufferFraction(gpuA);
      const untouched = framebufferFraction(gpuB);
      faults.clear('vllm-inference-app-a');

      // Assess
      expect(natural).toBeLessThan(0.95);
      expect(pressured).toBeGreaterThanOrEqual(0.98);
      expect(pressured).toBeLessThan(0.99);
      expect(untouched).toBeCloseTo(natural, 6);
      expect(framebufferFraction(gpuA)).toBeCloseTo(natural, 6);
    });

    it('slows decoding by the factor: a request takes six times as long, and as long as before after clear', () => {
      // Prepare
      const { faults, byPod, runUntil, clock } = world();
      const engine = byPod('vllm-inference-app-a').vllm.engine;
      const healthy = latencyMs(engine, runUntil, clock);

      // Act
      faults.inject({ kind: 'slow-decoding', pod: 'vllm-inference-app-a' });
      const slowed = latencyMs(engine, runUntil, clock);
      faults.clear();
      const recovered = latencyMs(engine, runUntil, clock);

      // Assess
      expect(slowed / healthy).toBeCloseTo(6, 3);
      expect(recovered).toBeCloseTo(healthy, 1);
    });

    it('starts a preemption storm at the rate, with load to preempt, and ends it (and its load) on clear', () => {
      // Prepare
      const { faults, byPod, runUntil, clock } = world();
      const engine = byPod('vllm-inference-app-a').vllm.engine;
      const start = clock.now();

      // Act
      faults.inject({ kind: 'preemption-storm', pod: 'vllm-inference-app-a', rate: 12 });
      runUntil(start + 20_000);
      const during = engine.stats();
      faults.clear();
      runUntil(start + 30_000);
      const after = engine.stats();

      // Assess: 12/s for 20 s.
      expect(during.preemptions).toBeGreaterThanOrEqual(216);
      expect(during.preemptions).toBeLessThanOrEqual(264);
      expect(during.running + during.waiting).toBe(8);
      expect(after).toMatchObject({ running: 0, waiting: 0, preemptions: during.preemptions });
      expect(engine.metrics.requestSuccess.abort).toBe(8);
    });

    it('floods the queue: max-num-seqs running and about `waiting` waiting, drained at once on clear', () => {
      // Prepare
      const { faults, byPod, runUntil, clock } = world();
      const engine = byPod('vllm-inference-app-b').vllm.engine;
      const start = clock.now();

      // Act
      const fault = faults.inject({ kind: 'queue-flood', pod: 'vllm-inference-app-b', waiting: 80 });
      runUntil(start + 10_000);
      const during = engine.stats();
      faults.clear();
      const after = engine.stats();

      // Assess
      expect(fault.description).toContain('112 requests kept in flight');
      expect(during.running).toBe(32);
      expect(during.waiting).toBe(80);
      // Requests were completing all along, and each was replaced.
      expect(during.completed).toBeGreaterThan(100);
      expect(after).toMatchObject({ running: 0, waiting: 0 });
    });

    it('combines kinds on one Pod and replaces a kind injected again', () => {
      // Prepare
      const { faults, byPod } = world();
      const engine = byPod('vllm-inference-app-a').vllm.engine;

      // Act
      faults.inject({ kind: 'kv-cache-pressure', fraction: 0.5 });
      faults.inject({ kind: 'slow-decoding', factor: 3 });
      faults.inject({ kind: 'kv-cache-pressure', fraction: 0.96 });
      const active = faults.active();
      faults.clear();

      // Assess
      expect(active.map((f) => [f.kind, f.params])).toEqual([
        ['slow-decoding', { factor: 3 }],
        ['kv-cache-pressure', { fraction: 0.96 }],
      ]);
      expect(faults.active()).toEqual([]);
      expect(engine.stats().kvCacheUsage).toBe(0);
    });

    it('refuses a Pod that is not running, listing the Pods there are', () => {
      // Prepare
      const { faults } = world();

      // Act
      const act = () => faults.inject({ kind: 'slow-decoding', pod: 'vllm-inference-app-zzz' });

      // Assess
      expect(act).toThrow(TwinFaultPodNotFoundError);
      expect(act).toThrow(
        'pod "vllm-inference-app-zzz" is not a running vLLM Pod (the Pods are vllm-inference-app-a, vllm-inference-app-b)',
      );
    });

    it('refuses to pick a Pod when none is Ready', () => {
      // Prepare
      const { faults, replicas } = world();
      for (const replica of replicas) replica.ready = false;

      // Act
      const act = () => faults.inject({ kind: 'kv-cache-pressure' });

      // Assess
      expect(act).toThrow(TwinFaultPodNotFoundError);
      expect(act).toThrow('no vLLM Pod is Ready');
    });

    it.each<{ case: string; request: unknown; field: string; problem: RegExp }>([
      {
        case: 'an unknown kind',
        request: { kind: 'ecc-errors' },
        field: 'kind',
        problem: /not one of kv-cache-pressure/,
      },
      { case: 'no kind', request: { fraction: 0.9 }, field: 'kind', problem: /not one of/ },
      {
        case: 'a parameter of another kind',
        request: { kind: 'kv-cache-pressure', factor: 2 },
        field: 'factor',
        problem: /not a parameter of kv-cache-pressure \(accepted: kind, pod, fraction\)/,
      },
      {
        case: 'a fraction above 1',
        request: { kind: 'framebuffer-pressure', fraction: 1.5 },
        field: 'fraction',
        problem: /> 0 and <= 1/,
      },
      {
        case: 'a factor that is text',
        request: { kind: 'slow-decoding', factor: 'six' },
        field: 'factor',
        problem: /must be a number/,
      },
      {
        case: 'a rate of 0',
        request: { kind: 'preemption-storm', rate: 0 },
        field: 'rate',
        problem: /> 0 and <= 1000/,
      },
      {
        case: 'a fractional waiting count',
        request: { kind: 'queue-flood', waiting: 2.5 },
        field: 'waiting',
        problem: /integer/,
      },
      { case: 'an empty pod name', request: { kind: 'queue-flood', pod: '' }, field: 'pod', problem: /Pod name/ },
      {
        case: 'a scrape gap of 0 seconds',
        request: { kind: 'scrape-gap', seconds: 0 },
        field: 'seconds',
        problem: /> 0 and <= 600 seconds/,
      },
      {
        case: 'a scrape gap longer than 600 seconds',
        request: { kind: 'scrape-gap', seconds: 601 },
        field: 'seconds',
        problem: /> 0 and <= 600 seconds/,
      },
      {
        case: 'a scrape gap with an unknown key',
        request: { kind: 'scrape-gap', secs: 10 },
        field: 'secs',
        problem: /not a parameter of scrape-gap \(accepted: kind, pod, seconds\)/,
      },
      {
        case: 'a pod crash with seconds',
        request: { kind: 'pod-crash', seconds: 5 },
        field: 'seconds',
        problem: /not a parameter of pod-crash \(accepted: kind, pod\)/,
      },
    ])('refuses $case, naming the field', ({ request, field, problem }) => {
      // Prepare
      const { faults } = world();

      // Act
      let error: unknown;
      try {
        faults.inject(request as FaultRequest);
      } catch (caught) {
        error = caught;
      }

      // Assess
      expect(error).toBeInstanceOf(TwinFaultInvalidError);
      expect(error).toMatchObject({ name: 'TwinFaultInvalidError', field });
      expect((error as Error).message).toMatch(problem);
      expect(faults.active()).toEqual([]);
    });
  });

  describe('Method: clear', () => {
    it('clears one Pod’s faults and leaves the other Pod’s', () => {
      // Prepare
      const { faults, byPod } = world();
      faults.inject({ kind: 'kv-cache-pressure', pod: 'vllm-inference-app-a' });
      faults.inject({ kind: 'kv-cache-pressure', pod: 'vllm-inference-app-b' });

      // Act
      const cleared = faults.clear('vllm-inference-app-b');

      // Assess
      expect(cleared.map((f) => f.pod)).toEqual(['vllm-inference-app-b']);
      expect(faults.active().map((f) => f.pod)).toEqual(['vllm-inference-app-a']);
      expect(byPod('vllm-inference-app-a').vllm.engine.stats().kvCacheUsage).toBeGreaterThanOrEqual(0.97);
      expect(byPod('vllm-inference-app-b').vllm.engine.stats().kvCacheUsage).toBe(0);
    });

    it('refuses a Pod that neither runs nor holds a fault', () => {
      // Prepare
      const { faults } = world();

      // Act
      const act = () => faults.clear('vllm-inference-app-typo');

      // Assess
      expect(act).toThrow(TwinFaultPodNotFoundError);
    });
  });

  describe('Method: stop', () => {
    it('clears every kind on every Pod', () => {
      // Prepare
      const { faults, byPod, lines } = world();
      // The Pod faults (amp-outage, pod-replace and pod-crash act on the world: their own tests below).
      const worldKinds: readonly string[] = ['amp-outage', 'pod-replace', 'pod-crash'];
      const kinds = FAULT_KINDS.filter((kind) => !worldKinds.includes(kind));
      for (const kind of kinds) faults.inject({ kind, pod: 'vllm-inference-app-b' });
      faults.inject({ kind: 'framebuffer-pressure', pod: 'vllm-inference-app-a' });

      // Act
      faults.stop();

      // Assess
      expect(faults.active()).toEqual([]);
      const b = byPod('vllm-inference-app-b');
      expect(b.vllm.engine.stats()).toMatchObject({ running: 0, waiting: 0, kvCacheUsage: 0 });
      expect(framebufferFraction(b.nodeAgent.gpu)).toBeLessThan(0.95);
      expect(framebufferFraction(byPod('vllm-inference-app-a').nodeAgent.gpu)).toBeLessThan(0.95);
      expect(lines.filter((line) => line.includes('cleared'))).toHaveLength(kinds.length + 1);
    });
  });
});

describe('Class: FaultController, the world faults', () => {
  /** A process's state letter from /proc (T: stopped, S: sleeping). */
  const stateOf = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];

  it('amp-outage freezes the given processes for its seconds (SIGSTOP), then thaws them (SIGCONT)', async () => {
    // Prepare: a stand-in process (the twin passes its Prometheus pids).
    const child = spawn('sleep', ['30']);
    const pid = child.pid as number;
    const deleted: string[] = [];
    const faults = new FaultController({
      workloads: { replicas: () => [] },
      world: { prometheusPids: () => [pid], deletePod: (pod) => deleted.push(pod), crashContainer: () => undefined },
    });
    try {
      // Act
      const fault = faults.inject({ kind: 'amp-outage', seconds: 0.4 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const during = stateOf(pid);
      const listed = faults.active().map((f) => f.kind);
      await new Promise((resolve) => setTimeout(resolve, 600));

      // Assess
      expect(fault.description).toContain(`pids ${pid}`);
      expect(during).toBe('T');
      expect(listed).toEqual(['amp-outage']);
      expect(stateOf(pid)).toBe('S');
      expect(faults.active()).toEqual([]);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('pod-replace deletes the Pod (a one-off: nothing stays in effect); without the world it is refused', () => {
    // Prepare
    const { faults: bare } = world();
    const deleted: string[] = [];
    const replicas = [{ pod: 'vllm-inference-app-a', ready: true }] as unknown as FaultReplica[];
    const faults = new FaultController({
      workloads: { replicas: () => replicas },
      world: { prometheusPids: () => [], deletePod: (pod) => deleted.push(pod), crashContainer: () => undefined },
    });

    // Act
    faults.inject({ kind: 'pod-replace' });

    // Assess
    expect(deleted).toEqual(['vllm-inference-app-a']);
    expect(faults.active()).toEqual([]);
    expect(() => bare.inject({ kind: 'pod-replace' })).toThrow(TwinFaultInvalidError);
  });

  it('pod-crash crashes the Pod’s container (a one-off), ending the faults on its engine; without the world it is refused', () => {
    // Prepare
    const { faults: bare, replicas, byPod } = world();
    const crashed: string[] = [];
    const faults = new FaultController({
      workloads: { replicas: () => replicas },
      world: { prometheusPids: () => [], deletePod: () => undefined, crashContainer: (pod) => crashed.push(pod) },
    });
    faults.inject({ kind: 'kv-cache-pressure', pod: 'vllm-inference-app-b' });
    faults.inject({ kind: 'slow-decoding', pod: 'vllm-inference-app-a' });

    // Act
    const fault = faults.inject({ kind: 'pod-crash', pod: 'vllm-inference-app-b' });

    // Assess
    expect(crashed).toEqual(['vllm-inference-app-b']);
    expect(fault).toMatchObject({ kind: 'pod-crash', pod: 'vllm-inference-app-b', params: {} });
    expect(fault.description).toContain('restartCount + 1');
    expect(faults.active().map((f) => [f.kind, f.pod])).toEqual([['slow-decoding', 'vllm-inference-app-a']]);
    expect(byPod('vllm-inference-app-b').vllm.engine.stats().kvCacheUsage).toBe(0);
    expect(() => bare.inject({ kind: 'pod-crash' })).toThrow(TwinFaultInvalidError);
  });
});

describe('Class: FaultController, scrape-gap', () => {
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('makes the Pod’s /metrics unavailable for its seconds, kept in effect meanwhile, then available again', async () => {
    // Prepare
    const { faults, metricsDown } = world();

    // Act
    const fault = faults.inject({ kind: 'scrape-gap', pod: 'vllm-inference-app-b', seconds: 0.3 });
    const during = [...metricsDown];
    const listed = faults.active().map((f) => [f.kind, f.pod, f.params]);
    await wait(500);

    // Assess
    expect(fault.description).toContain('/metrics of pod vllm-inference-app-b answers 503 for 0.3 s');
    expect(during).toEqual(['vllm-inference-app-b']);
    expect(listed).toEqual([['scrape-gap', 'vllm-inference-app-b', { seconds: 0.3 }]]);
    expect([...metricsDown]).toEqual([]);
    expect(faults.active()).toEqual([]);
  });

  it('ends at once on clear, and a timer left from an earlier injection does not end a newer one', async () => {
    // Prepare
    const { faults, metricsDown } = world();
    faults.inject({ kind: 'scrape-gap', seconds: 0.2 });

    // Act: injected again (replacing the first), then cleared before its own end.
    faults.inject({ kind: 'scrape-gap', seconds: 0.6 });
    await wait(350);
    const afterFirstTimer = [...metricsDown];
    const cleared = faults.clear('vllm-inference-app-a');

    // Assess
    expect(afterFirstTimer).toEqual(['vllm-inference-app-a']);
    expect(cleared.map((f) => [f.kind, f.params])).toEqual([['scrape-gap', { seconds: 0.6 }]]);
    expect([...metricsDown]).toEqual([]);
    expect(faults.active()).toEqual([]);
  });
});
