import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import {
  type ConstantArrivalOptions,
  type LatencyResult,
  type LoadSummary,
  measureCapacity,
  measureLatency,
  runConstantArrivalLoad,
  type Twin,
  twinMetricsSource,
  twinTarget,
} from '../sim/harness/index.js';
import {
  CATALOG,
  type CatalogReading,
  type CatalogResult,
  type MetricsSource,
  readCatalog,
} from '../shared/metrics/index.js';
import type { Target } from '../shared/config/index.js';
import { loadVllmReference } from './helpers/reference.js';
import { DEMO_SHAPE, sleep, startDemoTwin, warmUp } from './helpers/twin.js';

// The twin + the real Prometheus + the catalog's PromQL give back the values a known load must produce: rates from
// the offered load and the request shape, latency from the engine model, GPU values from the profile.

jest.setTimeout(120_000);

/** Short enough to sit inside a 20 s load, long enough for 15 scrapes at the demo's 1 s interval. */
const RATE_WINDOW = '15s';
const BELOW_CAPACITY = { rps: 10, durationS: 20, readAtS: 18 };
const ABOVE_CAPACITY = { factor: 1.5, durationS: 18, earlyReadAtS: 9, lateReadAtS: 17 };
/** Throughput tolerance: Prometheus extrapolates rate() to the window edges and arrivals are discrete. */
const RATE_TOLERANCE = 0.15;

let twin: Twin;
let source: MetricsSource;
let target: Target;
/** One replica's capacity for the demo shape, from the engine model in virtual time. */
let capacityRps: number;
/** The engine model's latency at each replica's share of the below-capacity load. */
let modelLatency: LatencyResult;

beforeAll(async () => {
  twin = await startDemoTwin();
  source = twinMetricsSource(twin.state);
  target = twinTarget(twin.state);
  capacityRps = measureCapacity(twin.profile, DEMO_SHAPE).capacityRps;
  modelLatency = measureLatency(
    twin.profile,
    DEMO_SHAPE,
    BELOW_CAPACITY.rps / twin.profile.replicas,
    BELOW_CAPACITY.durationS,
  );
  await warmUp(twin);
});

afterAll(async () => {
  await twin?.stop();
});

/** Starts a constant-arrival load over every replica (round-robin) and returns it with its start time. */
function startLoad(options: Pick<ConstantArrivalOptions, 'rps' | 'durationS' | 'maxVUs' | 'gracefulStopMs'>) {
  const startedAtMs = Date.now();
  const done = runConstantArrivalLoad({
    urls: twin.state.replicas.map((replica) => replica.url),
    model: twin.state.model,
    ...DEMO_SHAPE,
    ...options,
  });
  return { startedAtMs, done };
}

async function readAt(atMs: number): Promise<CatalogResult> {
  await sleep(Math.max(0, atMs - Date.now()));
  return readCatalog(source, target, { timeMs: Date.now(), rateWindow: RATE_WINDOW });
}

function readingsOf(result: CatalogResult, queryId: string): CatalogReading[] {
  return result.readings.filter((reading) => reading.queryId === queryId);
}

/** The single target-level value of `queryId` (fails the test when there is not exactly one). */
function valueOf(result: CatalogResult, queryId: string): number {
  const readings = readingsOf(result, queryId);
  expect({ queryId, readings: readings.length }).toEqual({ queryId, readings: 1 });
  return readings[0]?.value ?? Number.NaN;
}

/**
 * The range histogram_quantile can answer for a true quantile within [low, high]: it interpolates linearly inside
 * the bucket the quantile falls in, so the answer may be anywhere from the lower edge of the bucket holding `low` to
 * the upper edge of the bucket holding `high`.
 */
function bucketBand(bounds: readonly number[], low: number, high: number): { min: number; max: number } {
  return {
    min: [0, ...bounds].filter((bound) => bound < low).at(-1) ?? 0,
    max: bounds.find((bound) => bound >= high) ?? Number.POSITIVE_INFINITY,
  };
}

function expectWithin(what: string, actual: number, expected: number, relative: number): void {
  const band = { min: expected * (1 - relative), max: expected * (1 + relative) };
  expect({ what, actual, inBand: actual >= band.min && actual <= band.max, band }).toEqual({
    what,
    actual,
    inBand: true,
    band,
  });
}

describe('Function: readCatalog (twin, real Prometheus, known load)', () => {
  describe(`at ${BELOW_CAPACITY.rps} requests/s (below capacity)`, () => {
    let result: CatalogResult;
    let summary: LoadSummary;

    beforeAll(async () => {
      const load = startLoad({ rps: BELOW_CAPACITY.rps, durationS: BELOW_CAPACITY.durationS });
      result = await readAt(load.startedAtMs + BELOW_CAPACITY.readAtS * 1000);
      summary = await load.done;
    });

    it('read while every request of the load was answered (the precondition of the checks below)', () => {
      // Assess
      // Failures by cause, so a failure says why.
      expect(summary.failures).toEqual({});
      expect(summary.failed).toBe(0);
      expect(summary.completed).toBe(BELOW_CAPACITY.rps * BELOW_CAPACITY.durationS);
    });

    it('reads every entry; only the optional ECC counter (off in dcgm-exporter by default) is skipped', () => {
      // Assess
      expect(result.failures.map((failure) => `${failure.queryId}: ${failure.error.message}`)).toEqual([]);
      expect(result.skipped.map((skip) => skip.queryId)).toEqual(['gpu_ecc_sbe_volatile']);
    });

    it.each([
      { case: 'completed requests/s = offered rate', queryId: 'requests_completed_rate', perRequest: 1 },
      { case: 'generation tokens/s = rate x max_tokens', queryId: 'generation_tokens_rate', perRequest: 32 },
      { case: 'prompt tokens/s = rate x prompt tokens', queryId: 'prompt_tokens_rate', perRequest: 35 },
    ])('$case (± 15 %)', ({ queryId, perRequest }) => {
      // Assess
      expectWithin(queryId, valueOf(result, queryId), BELOW_CAPACITY.rps * perRequest, RATE_TOLERANCE);
    });

    it('sees no queue: at most one request per replica waits for the next engine step', () => {
      // Assess: an arrival between two steps waits up to one step (~20 ms) before it joins the batch.
      expect(valueOf(result, 'queue_depth')).toBeLessThanOrEqual(twin.profile.replicas);
    });

    it("reports an e2e p95 within the histogram buckets around the engine model's p95 (± 20 %)", () => {
      // Prepare: the model's p95 for each replica's share of the load, widened to the buckets that hold it.
      const bounds = loadVllmReference().bucketFamilies.request_latency ?? [];
      const band = bucketBand(bounds, modelLatency.p95E2eS * 0.8, modelLatency.p95E2eS * 1.2);

      // Act
      const p95 = valueOf(result, 'e2e_latency_p95');

      // Assess
      expect({ p95, modelP95: modelLatency.p95E2eS, inBand: p95 >= band.min && p95 <= band.max, band }).toMatchObject({
        inBand: true,
      });
    });

    it('reports KV-cache usage per Pod between 0 and 100 %', () => {
      // Act
      const readings = readingsOf(result, 'kv_cache_usage_pod');

      // Assess
      expect(readings.map((reading) => reading.dimensions.pod).sort()).toEqual(
        twin.state.replicas.map((replica) => replica.name).sort(),
      );
      for (const reading of readings) {
        expect(reading.unit).toBe('Percent');
        expect(reading.value).toBeGreaterThan(0);
        expect(reading.value).toBeLessThan(100);
      }
    });

    it.each([
      { case: 'GPU utilization', queryId: 'gpu_utilization' },
      { case: 'framebuffer used', queryId: 'gpu_fb_used' },
      { case: 'framebuffer used percent', queryId: 'gpu_fb_used_percent' },
      { case: 'power', queryId: 'gpu_power' },
    ])('reads $case once per GPU, keyed by the UUID and Pod in the state file', ({ queryId }) => {
      // Act
      const readings = readingsOf(result, queryId);

      // Assess
      expect(
        readings.map((reading) => reading.dimensions).sort((a, b) => (a.gpu ?? '').localeCompare(b.gpu ?? '')),
      ).toEqual(
        twin.state.replicas
          .map((replica) => ({ gpu: replica.gpuUuid, pod: replica.name }))
          .sort((a, b) => a.gpu.localeCompare(b.gpu)),
      );
    });

    it('reports the framebuffer vLLM pre-allocates: --gpu-memory-utilization of the card (used MiB ± 1 %, used % ± 2)', () => {
      // Prepare
      const { gpuMemoryUtilization, memoryMiB } = twin.profile.gpu;

      for (const replica of twin.state.replicas) {
        const onGpu = (reading: CatalogReading) => reading.dimensions.gpu === replica.gpuUuid;

        // Act
        const usedMiB = readingsOf(result, 'gpu_fb_used').find(onGpu)?.value ?? Number.NaN;
        const usedPercent = readingsOf(result, 'gpu_fb_used_percent').find(onGpu)?.value ?? Number.NaN;

        // Assess
        expectWithin(`${replica.gpuUuid} FB used MiB`, usedMiB, gpuMemoryUtilization * memoryMiB, 0.01);
        expect({ usedPercent, near: Math.abs(usedPercent - gpuMemoryUtilization * 100) <= 2 }).toMatchObject({
          near: true,
        });
      }
    });

    it("reports each GPU's power between the profile's idle and max watts", () => {
      // Prepare
      const { idlePowerWatts, maxPowerWatts } = twin.profile.gpu;

      // Act
      const readings = readingsOf(result, 'gpu_power');

      // Assess
      expect(readings).toHaveLength(twin.profile.replicas);
      for (const { value } of readings) {
        expect(value).toBeGreaterThanOrEqual(idlePowerWatts);
        expect(value).toBeLessThanOrEqual(maxPowerWatts);
      }
    });
  });

  describe(`at ${ABOVE_CAPACITY.factor} x capacity (saturated)`, () => {
    let offeredRps: number;
    let early: CatalogResult;
    let late: CatalogResult;

    beforeAll(async () => {
      offeredRps = ABOVE_CAPACITY.factor * capacityRps * twin.profile.replicas;
      // Enough VUs that the queue is never capped by the load generator; requests still queued at the end are
      // abandoned half a second after the last arrival (vLLM aborts them), which the readings below never see.
      const load = startLoad({
        rps: offeredRps,
        durationS: ABOVE_CAPACITY.durationS,
        maxVUs: 2_000,
        gracefulStopMs: 500,
      });
      early = await readAt(load.startedAtMs + ABOVE_CAPACITY.earlyReadAtS * 1000);
      late = await readAt(load.startedAtMs + ABOVE_CAPACITY.lateReadAtS * 1000);
      await load.done;
    });

    it('sees the queue depth rise while the load lasts', () => {
      // Act
      const earlyDepth = valueOf(early, 'queue_depth');
      const lateDepth = valueOf(late, 'queue_depth');

      // Assess
      expect(earlyDepth).toBeGreaterThan(twin.profile.replicas);
      expect(lateDepth).toBeGreaterThan(earlyDepth);
    });

    it('sees completed requests/s stay at capacity (measureCapacity x replicas, ± 15 %)', () => {
      // Assess
      expect(offeredRps).toBeGreaterThan(capacityRps * twin.profile.replicas);
      expectWithin(
        'requests_completed_rate',
        valueOf(late, 'requests_completed_rate'),
        capacityRps * twin.profile.replicas,
        RATE_TOLERANCE,
      );
    });

    it('sees the e2e p95 climb above its below-capacity value', () => {
      // Prepare
      const bounds = loadVllmReference().bucketFamilies.request_latency ?? [];
      const belowCapacityBand = bucketBand(bounds, modelLatency.p95E2eS * 0.8, modelLatency.p95E2eS * 1.2);

      // Assess
      expect(valueOf(late, 'e2e_latency_p95')).toBeGreaterThan(belowCapacityBand.max);
    });
  });

  describe('for a model the twin does not serve', () => {
    it('returns failures and skipped entries instead of throwing, and no vLLM reading', async () => {
      // Prepare
      const ghost: Target = { ...target, name: 'ghost', model: 'no-such-model' };
      const vllmEntries = CATALOG.filter((entry) => entry.tier !== 3).map((entry) => entry.id);

      // Act
      const result = await readCatalog(source, ghost, { timeMs: Date.now(), rateWindow: RATE_WINDOW });

      // Assess
      expect(result.readings.filter((reading) => reading.tier !== 3)).toEqual([]);
      const accounted = [...result.failures.map((f) => f.queryId), ...result.skipped.map((s) => s.queryId)];
      expect(vllmEntries.filter((id) => !accounted.includes(id))).toEqual([]);
      // A gauge with no series is a fault (the target is misconfigured); a quantile with no traffic is not.
      expect(result.failures.find((f) => f.queryId === 'queue_depth')?.error.name).toBe('MetricsEmptyResultError');
      expect(result.skipped.find((s) => s.queryId === 'e2e_latency_p95')?.reason).toMatch(/needs requests/);
    });
  });
});
