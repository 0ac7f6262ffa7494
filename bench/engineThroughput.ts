import { performance } from 'node:perf_hooks';
import { VirtualClock } from '../shared/clock/index.js';
import { quantile } from '../shared/util/index.js';
import { engineConfigFromProfile, type Profile, type RequestShape, VllmEngine } from '../sim/harness/index.js';
import { BenchError } from './errors.js';

/** One engine run: a profile offered evenly spaced arrivals at `rps` for `durationS` simulated seconds. */
export interface EngineBenchCase {
  name: string;
  profile: Profile;
  shape: RequestShape;
  rps: number;
  durationS: number;
}

/** What one run of a case cost. */
export interface EngineRunCost {
  wallS: number;
  cpuS: number;
}

export interface EngineBenchResult {
  name: string;
  profile: string;
  rps: number;
  shape: RequestShape;
  /** Requests submitted and finished (the run drains the queue after the last arrival). */
  requests: number;
  completed: number;
  steps: number;
  preemptions: number;
  /** Simulated seconds from the model being loaded until the last request finished. */
  simulatedS: number;
  /** Median over the runs (the first run pays for JIT compilation, so a single run would mislead). */
  wallS: number;
  /** User + system CPU time of this process (process.cpuUsage), in seconds: median over the runs. */
  cpuS: number;
  runs: EngineRunCost[];
  requestsPerCpuS: number;
  simulatedSecondsPerWallS: number;
  /** V8 heap in use right after the last run (no forced GC, so it includes garbage). */
  heapUsedMiB: number;
}

const MIB = 1024 * 1024;

/**
 * Runs the engine model on a virtual clock as fast as the CPU allows, the way `twin capacity` and the calibration
 * analysis use it, `repeats` times, and reports the median CPU and wall time of a run.
 */
export function benchEngine(benchCase: EngineBenchCase, repeats = 5): EngineBenchResult {
  const results = Array.from({ length: repeats }, () => runOnce(benchCase));
  const last = results[results.length - 1];
  if (last === undefined) throw new BenchError(`benchEngine: repeats must be an integer >= 1, got ${repeats}`);
  const runs = results.map((r) => ({ wallS: r.wallS, cpuS: r.cpuS }));
  const wallS = quantile(
    runs.map((r) => r.wallS),
    0.5,
  );
  const cpuS = quantile(
    runs.map((r) => r.cpuS),
    0.5,
  );
  return {
    ...last,
    wallS,
    cpuS,
    runs,
    requestsPerCpuS: cpuS > 0 ? last.completed / cpuS : Number.POSITIVE_INFINITY,
    simulatedSecondsPerWallS: wallS > 0 ? last.simulatedS / wallS : Number.POSITIVE_INFINITY,
  };
}

function runOnce(benchCase: EngineBenchCase): Omit<EngineBenchResult, 'runs'> {
  const { profile, shape, rps, durationS } = benchCase;
  const clock = new VirtualClock(0);
  const engine = new VllmEngine(engineConfigFromProfile(profile), clock);
  clock.set(engine.loadedAtMs);
  const t0 = engine.loadedAtMs;
  let completed = 0;
  let lastFinishMs = t0;
  const onEvent = (event: { type: string; atMs: number }): void => {
    if (event.type !== 'finished') return;
    completed += 1;
    lastFinishMs = Math.max(lastFinishMs, event.atMs);
  };

  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  const total = Math.round(rps * durationS);
  for (let i = 0; i < total; i++) {
    clock.set(t0 + (i * 1000) / rps);
    engine.submit({ promptTokens: shape.promptTokens, maxTokens: shape.maxTokens }, onEvent);
  }
  // Drain: step from event to event until the engine is idle (as sim/vllm/capacity.ts does).
  for (let next = engine.nextEventMs(); next !== undefined; next = engine.nextEventMs()) {
    clock.set(Math.max(clock.now(), next) + 1e-6);
    engine.advanceTo(clock.now());
  }
  const wallS = (performance.now() - wallBefore) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  const stats = engine.stats();
  const simulatedS = (lastFinishMs - t0) / 1000;

  return {
    name: benchCase.name,
    profile: profile.name,
    rps,
    shape: { ...shape },
    requests: total,
    completed,
    steps: stats.steps,
    preemptions: stats.preemptions,
    simulatedS,
    wallS,
    cpuS,
    requestsPerCpuS: cpuS > 0 ? completed / cpuS : Number.POSITIVE_INFINITY,
    simulatedSecondsPerWallS: wallS > 0 ? simulatedS / wallS : Number.POSITIVE_INFINITY,
    heapUsedMiB: process.memoryUsage().heapUsed / MIB,
  };
}
