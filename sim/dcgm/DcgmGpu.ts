import type { Clock } from '../../shared/clock/index.js';
import { DCGM } from '../../shared/metrics/index.js';
import type { Profile } from '../profile/profile.js';
import type { ReplicaIdentity, TelemetrySource } from '../vllm/telemetry.js';
import { DcgmConfigError } from './errors.js';
import type { LabelPair } from './exposition.js';
import type { DcgmFieldName } from './fields.js';

/** The profile's GPU section: model name, framebuffer size, vLLM's memory fraction and the power range. */
export type GpuSpec = Profile['gpu'];

/** Where the GPU sits, as DCGM identifies it (taken from the replica's identity: one GPU per node). */
export type GpuDevice = Pick<ReplicaIdentity, 'gpuIndex' | 'gpuUuid' | 'pciBusId' | 'node'>;

/** The Pod using the GPU: dcgm-exporter's Kubernetes mode adds these as `container`, `namespace`, `pod` labels. */
export type PodRef = Pick<ReplicaIdentity, 'namespace' | 'pod' | 'container'>;

/** Injected GPU faults. Counters (`eccSbe`, `eccDbe`) are added once; the others hold until cleared. */
export interface DcgmFault {
  /** Forces FB_USED to this many MiB (e.g. to trip the framebuffer alert); `null` removes the override. */
  framebufferUsedMiB?: number | null;
  /** The last XID error code (0 = none), shown with its message in `err_code` / `err_msg`. */
  xid?: number;
  /** Single-bit / double-bit volatile ECC errors to add (visible only with `eccCounters: true`). */
  eccSbe?: number;
  eccDbe?: number;
}

export interface DcgmGpuOptions {
  device: GpuDevice;
  spec: GpuSpec;
  clock: Clock;
  /** The `DCGM_FI_DRIVER_VERSION` label (default: the driver of the reference sample). */
  driverVersion?: string;
  /** Also export the volatile ECC counters, as when an operator adds them to the counters file. */
  eccCounters?: boolean;
}

/** What one DCGM sample of the GPU says: the labels and one value per exported field. */
export interface GpuReading {
  timestampMs: number;
  /** Labels in dcgm-exporter's order: gpu, UUID, pci_bus_id, device, modelName, Hostname, DCGM_FI_DRIVER_VERSION. */
  identity: readonly LabelPair[];
  /** The Pod using the GPU, absent when no Pod does (the exporter then omits container/namespace/pod). */
  pod?: PodRef;
  values: ReadonlyMap<DcgmFieldName, number>;
  xid: { code: number; message: string };
}

/** The constants of the GPU model; each is a plausible L40S-like figure, sources in the comments. */
export const GPU_MODEL = {
  /** DCGM samples utilisation over roughly the last second (NVML's sample period is 1/6 s to 1 s). */
  utilizationWindowMs: 1_000,
  /** FB used by the CUDA context before vLLM has loaded weights and pre-allocated its KV cache. */
  cudaContextMiB: 480,
  /** FB_RESERVED as a share of the card: 912 MiB of 46068 MiB on the L40S of the reference sample. */
  reservedFraction: 912 / 46_068,
  /** GPU temperature settles at ambient + rise x (power / max power), with a first-order lag. */
  ambientC: 25,
  fullLoadRiseC: 47,
  thermalTimeConstantSeconds: 30,
  /** Running sequences at which the batch factor (running / (running + k)) is one half. */
  halfBatchSequences: 16,
  /** PCIe traffic: a small idle floor plus bytes per prompt / generated token (illustrative). */
  pcieIdleRxBytesPerSecond: 180_000,
  pcieIdleTxBytesPerSecond: 90_000,
  pcieRxBytesPerPromptToken: 6_000,
  pcieRxBytesPerGenerationToken: 9_000,
  pcieTxBytesPerPromptToken: 500,
  pcieTxBytesPerGenerationToken: 4_000,
} as const;

/** The driver in the reference sample (`DCGM_FI_DRIVER_VERSION="580.126.09"`). */
export const DEFAULT_DRIVER_VERSION = '580.126.09';

/** Fixed application clocks (MHz) per model name; an unknown model gets the L40S figures. */
const CLOCKS_MHZ: Record<string, { sm: number; mem: number }> = {
  'NVIDIA L40S': { sm: 2_520, mem: 9_001 },
  'NVIDIA L4': { sm: 2_040, mem: 6_251 },
  'NVIDIA A10G': { sm: 1_710, mem: 6_251 },
  'NVIDIA A100-SXM4-80GB': { sm: 1_410, mem: 1_593 },
  'NVIDIA H100 80GB HBM3': { sm: 1_980, mem: 2_619 },
};
const DEFAULT_CLOCKS_MHZ = { sm: 2_520, mem: 9_001 } as const;

/** HBM parts report a memory temperature; GDDR parts such as the L40S report 0 (as in the reference sample). */
const HBM_MODEL = /A100|H100|H200|H800|A800|B200|GH200|GB200/i;
const HBM_ABOVE_GPU_C = 4;

/** Messages of common XID codes (NVIDIA's XID catalog); others are reported as unknown. */
const XID_MESSAGES: Record<number, string> = {
  0: 'No Error',
  13: 'Graphics Engine Exception',
  31: 'GPU memory page fault',
  43: 'GPU stopped processing',
  48: 'Double Bit ECC Error',
  63: 'ECC page retirement or row remapping recording event',
  64: 'ECC page retirement or row remapper recording failure',
  74: 'NVLINK Error',
  79: 'GPU has fallen off the bus',
  92: 'High single-bit ECC error rate',
  94: 'Contained ECC error',
  95: 'Uncontained ECC error',
};

interface CounterSample {
  tMs: number;
  busySeconds: number;
  promptTokens: number;
  generationTokens: number;
}

interface Rates {
  /** Busy fraction 0-1 over the window. */
  busy: number;
  promptTokensPerSecond: number;
  generationTokensPerSecond: number;
}

const ZERO_RATES: Rates = { busy: 0, promptTokensPerSecond: 0, generationTokensPerSecond: 0 };

/**
 * One simulated GPU as dcgm-exporter sees it. Each `sample()` reads the clock and the attached replica's
 * telemetry and advances the GPU's state (utilisation window, energy, temperature); the exporter renders readings.
 */
export class DcgmGpu {
  readonly #device: GpuDevice;
  readonly #spec: GpuSpec;
  readonly #clock: Clock;
  readonly #driverVersion: string;
  readonly #eccCounters: boolean;
  readonly #reservedMiB: number;

  #pod: PodRef | undefined;
  #telemetry: TelemetrySource | undefined;
  #history: CounterSample[] = [];
  #rates: Rates = ZERO_RATES;
  #lastSampleMs: number | undefined;
  #energyMillijoules = 0;
  #temperatureC: number;
  #framebufferOverrideMiB: number | undefined;
  #xid = 0;
  #eccSbe = 0;
  #eccDbe = 0;

  constructor(options: DcgmGpuOptions) {
    validateSpec(options.spec);
    validateDevice(options.device);
    this.#device = options.device;
    this.#spec = options.spec;
    this.#clock = options.clock;
    this.#driverVersion = options.driverVersion ?? DEFAULT_DRIVER_VERSION;
    this.#eccCounters = options.eccCounters ?? false;
    this.#reservedMiB = Math.round(options.spec.memoryMiB * GPU_MODEL.reservedFraction);
    this.#temperatureC = this.#steadyTemperatureC(options.spec.idlePowerWatts);
  }

  /** The Pod using the GPU now, if any. */
  get pod(): PodRef | undefined {
    return this.#pod;
  }

  /** A Pod starts using the GPU; its engine's telemetry drives the GPU from now on. */
  attachPod(pod: PodRef, telemetry: TelemetrySource): void {
    this.sample();
    this.#pod = { namespace: pod.namespace, pod: pod.pod, container: pod.container };
    this.#telemetry = telemetry;
    // A new engine's counters start from its own zero: measure rates from its first read on.
    this.#history = [];
    this.#rates = ZERO_RATES;
  }

  /** The Pod is gone: the GPU idles, its memory is freed and the series lose their Pod labels. */
  detachPod(): void {
    this.sample();
    this.#pod = undefined;
    this.#telemetry = undefined;
    this.#history = [];
    this.#rates = ZERO_RATES;
  }

  /** Injects faults (see DcgmFault); ECC errors add to the counters, which never go down. */
  setFault(fault: DcgmFault): void {
    const usableMiB = this.#spec.memoryMiB - this.#reservedMiB;
    if (fault.framebufferUsedMiB !== undefined && fault.framebufferUsedMiB !== null) {
      if (!Number.isFinite(fault.framebufferUsedMiB) || fault.framebufferUsedMiB < 0)
        throw new DcgmConfigError('fault.framebufferUsedMiB', fault.framebufferUsedMiB, 'must be a number >= 0');
      if (fault.framebufferUsedMiB > usableMiB)
        throw new DcgmConfigError(
          'fault.framebufferUsedMiB',
          fault.framebufferUsedMiB,
          `must be at most ${usableMiB} (memoryMiB ${this.#spec.memoryMiB} minus ${this.#reservedMiB} reserved)`,
        );
    }
    for (const key of ['xid', 'eccSbe', 'eccDbe'] as const) {
      const value = fault[key];
      if (value !== undefined && !(Number.isInteger(value) && value >= 0))
        throw new DcgmConfigError(`fault.${key}`, value, 'must be an integer >= 0');
    }
    if (fault.framebufferUsedMiB === null) this.#framebufferOverrideMiB = undefined;
    else if (fault.framebufferUsedMiB !== undefined) this.#framebufferOverrideMiB = fault.framebufferUsedMiB;
    if (fault.xid !== undefined) this.#xid = fault.xid;
    this.#eccSbe += fault.eccSbe ?? 0;
    this.#eccDbe += fault.eccDbe ?? 0;
  }

  /** Removes the framebuffer override and the XID; ECC counters keep their totals, as real counters do. */
  clearFault(): void {
    this.#framebufferOverrideMiB = undefined;
    this.#xid = 0;
  }

  /** Takes one DCGM sample at the clock's current time. */
  sample(): GpuReading {
    const nowMs = this.#clock.now();
    const telemetry = this.#telemetry?.telemetry();
    const counters: CounterSample | undefined = telemetry && {
      tMs: nowMs,
      busySeconds: telemetry.busySecondsTotal,
      promptTokens: telemetry.promptTokensTotal,
      generationTokens: telemetry.generationTokensTotal,
    };
    this.#advance(nowMs, counters);

    const attached = this.#pod !== undefined && telemetry !== undefined;
    const loaded = attached && telemetry.loaded;
    const running = attached ? Math.max(0, telemetry.running) : 0;
    const rates = attached ? this.#rates : ZERO_RATES;
    const busy = rates.busy;
    const power = this.#powerWatts(busy);

    // Framebuffer: vLLM pre-allocates weights + KV cache up to gpu_memory_utilization x total once loaded, so FB_USED
    // is flat under load. The alert's "total" is FB_USED + FB_FREE, which leaves FB_RESERVED out.
    const usableMiB = this.#spec.memoryMiB - this.#reservedMiB;
    const naturalUsedMiB = !attached
      ? 0
      : loaded
        ? Math.round(this.#spec.gpuMemoryUtilization * this.#spec.memoryMiB)
        : GPU_MODEL.cudaContextMiB;
    const usedMiB = Math.min(usableMiB, this.#framebufferOverrideMiB ?? naturalUsedMiB);

    // vLLM decode is memory bound: DRAM stays busy whatever the batch; the tensor pipe does more as the batch grows.
    const batchFactor = running / (running + GPU_MODEL.halfBatchSequences);
    const dramActive = busy * (0.62 + 0.12 * batchFactor);
    const tensorActive = busy * (0.1 + 0.35 * batchFactor);

    const clocks = CLOCKS_MHZ[this.#spec.model] ?? DEFAULT_CLOCKS_MHZ;
    const gpuTemp = this.#temperatureC;
    const values = new Map<DcgmFieldName, number>([
      [DCGM.smClock, clocks.sm],
      [DCGM.memClock, clocks.mem],
      [DCGM.memoryTemp, HBM_MODEL.test(this.#spec.model) ? gpuTemp + HBM_ABOVE_GPU_C : 0],
      [DCGM.gpuTemp, gpuTemp],
      [DCGM.powerUsage, power],
      [DCGM.totalEnergyConsumption, this.#energyMillijoules],
      [DCGM.pcieReplayCounter, 0],
      [DCGM.gpuUtil, clamp(Math.round(100 * busy), 0, 100)],
      [DCGM.memCopyUtil, clamp(Math.round(100 * dramActive * 0.82), 0, 100)],
      [DCGM.encUtil, 0],
      [DCGM.decUtil, 0],
      [DCGM.xidErrors, this.#xid],
      [DCGM.fbFree, usableMiB - usedMiB],
      [DCGM.fbUsed, usedMiB],
      [DCGM.fbReserved, this.#reservedMiB],
      [DCGM.nvlinkBandwidthTotal, 0],
      [DCGM.vgpuLicenseStatus, 0],
      [DCGM.uncorrectableRemappedRows, 0],
      [DCGM.correctableRemappedRows, 0],
      [DCGM.rowRemapFailure, 0],
      [DCGM.grEngineActive, busy * 0.985],
      [DCGM.pipeTensorActive, tensorActive],
      [DCGM.dramActive, dramActive],
      [
        DCGM.pcieTxBytes,
        GPU_MODEL.pcieIdleTxBytesPerSecond +
          GPU_MODEL.pcieTxBytesPerPromptToken * rates.promptTokensPerSecond +
          GPU_MODEL.pcieTxBytesPerGenerationToken * rates.generationTokensPerSecond,
      ],
      [
        DCGM.pcieRxBytes,
        GPU_MODEL.pcieIdleRxBytesPerSecond +
          GPU_MODEL.pcieRxBytesPerPromptToken * rates.promptTokensPerSecond +
          GPU_MODEL.pcieRxBytesPerGenerationToken * rates.generationTokensPerSecond,
      ],
    ]);
    if (this.#eccCounters) {
      values.set(DCGM.eccSbeVolTotal, this.#eccSbe);
      values.set(DCGM.eccDbeVolTotal, this.#eccDbe);
    }

    return {
      timestampMs: nowMs,
      identity: [
        ['gpu', String(this.#device.gpuIndex)],
        ['UUID', this.#device.gpuUuid],
        ['pci_bus_id', this.#device.pciBusId],
        ['device', `nvidia${this.#device.gpuIndex}`],
        ['modelName', this.#spec.model],
        ['Hostname', this.#device.node],
        ['DCGM_FI_DRIVER_VERSION', this.#driverVersion],
      ],
      ...(this.#pod ? { pod: this.#pod } : {}),
      values,
      xid: { code: this.#xid, message: XID_MESSAGES[this.#xid] ?? 'Unknown Error' },
    };
  }

  /** Moves energy, temperature and the utilisation window from the previous sample to `nowMs`. */
  #advance(nowMs: number, counters: CounterSample | undefined): void {
    const previousMs = this.#lastSampleMs ?? nowMs;
    const dtSeconds = Math.max(0, (nowMs - previousMs) / 1_000);
    this.#lastSampleMs = Math.max(previousMs, nowMs);

    const last = this.#history.at(-1);
    const counterReset =
      counters !== undefined &&
      last !== undefined &&
      (counters.busySeconds < last.busySeconds ||
        counters.promptTokens < last.promptTokens ||
        counters.generationTokens < last.generationTokens);
    if (counterReset) this.#history = [];

    // Energy (mJ): the integral of power = idle + (max - idle) x busy over the interval is
    // idle x dt + (max - idle) x (busy seconds in the interval), exact whatever the sampling rate.
    const busySecondsInInterval =
      counters !== undefined && last !== undefined && !counterReset
        ? clamp(counters.busySeconds - last.busySeconds, 0, dtSeconds)
        : 0;
    const { idlePowerWatts: idle, maxPowerWatts: max } = this.#spec;
    this.#energyMillijoules += 1_000 * (idle * dtSeconds + (max - idle) * busySecondsInInterval);

    if (counters === undefined) {
      this.#rates = ZERO_RATES;
    } else {
      if (this.#history.at(-1)?.tMs === nowMs) this.#history[this.#history.length - 1] = counters;
      else this.#history.push(counters);
      this.#rates = this.#windowRates(nowMs) ?? this.#rates;
    }

    // First-order thermal lag toward the steady temperature of the current power draw.
    const target = this.#steadyTemperatureC(this.#powerWatts(this.#rates.busy));
    const blend = 1 - Math.exp(-dtSeconds / GPU_MODEL.thermalTimeConstantSeconds);
    this.#temperatureC += (target - this.#temperatureC) * blend;
  }

  /** Rates over the last window: from the newest sample at least one window old (else the oldest) to now. */
  #windowRates(nowMs: number): Rates | undefined {
    const cutoffMs = nowMs - GPU_MODEL.utilizationWindowMs;
    let refIndex = 0;
    for (let i = this.#history.length - 1; i >= 0; i--) {
      if ((this.#history[i]?.tMs ?? Infinity) <= cutoffMs) {
        refIndex = i;
        break;
      }
    }
    this.#history.splice(0, refIndex);
    const ref = this.#history[0];
    const current = this.#history.at(-1);
    if (!ref || !current || current.tMs <= ref.tMs) return undefined;
    const seconds = (current.tMs - ref.tMs) / 1_000;
    return {
      busy: clamp((current.busySeconds - ref.busySeconds) / seconds, 0, 1),
      promptTokensPerSecond: Math.max(0, (current.promptTokens - ref.promptTokens) / seconds),
      generationTokensPerSecond: Math.max(0, (current.generationTokens - ref.generationTokens) / seconds),
    };
  }

  /** Power follows utilisation linearly between the profile's idle and max draw. */
  #powerWatts(busy: number): number {
    const { idlePowerWatts: idle, maxPowerWatts: max } = this.#spec;
    return idle + (max - idle) * clamp(busy, 0, 1);
  }

  #steadyTemperatureC(powerWatts: number): number {
    return GPU_MODEL.ambientC + GPU_MODEL.fullLoadRiseC * (powerWatts / this.#spec.maxPowerWatts);
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

function validateSpec(spec: GpuSpec): void {
  if (typeof spec.model !== 'string' || spec.model.length === 0)
    throw new DcgmConfigError('gpu.model', spec.model, 'must be a non-empty model name such as "NVIDIA L40S"');
  if (!Number.isInteger(spec.memoryMiB) || spec.memoryMiB <= 0)
    throw new DcgmConfigError('gpu.memoryMiB', spec.memoryMiB, 'must be a positive integer (MiB)');
  if (!(spec.gpuMemoryUtilization > 0 && spec.gpuMemoryUtilization <= 1))
    throw new DcgmConfigError('gpu.gpuMemoryUtilization', spec.gpuMemoryUtilization, 'must be in (0, 1]');
  if (!(spec.idlePowerWatts > 0))
    throw new DcgmConfigError('gpu.idlePowerWatts', spec.idlePowerWatts, 'must be a positive number of watts');
  if (!(spec.maxPowerWatts >= spec.idlePowerWatts))
    throw new DcgmConfigError(
      'gpu.maxPowerWatts',
      spec.maxPowerWatts,
      `must be at least idlePowerWatts (${spec.idlePowerWatts})`,
    );
}

function validateDevice(device: GpuDevice): void {
  if (!Number.isInteger(device.gpuIndex) || device.gpuIndex < 0)
    throw new DcgmConfigError('identity.gpuIndex', device.gpuIndex, 'must be an integer >= 0');
  for (const key of ['gpuUuid', 'pciBusId', 'node'] as const) {
    if (typeof device[key] !== 'string' || device[key].length === 0)
      throw new DcgmConfigError(`identity.${key}`, device[key], 'must be a non-empty string');
  }
}
