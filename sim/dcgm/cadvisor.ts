import { createHash } from 'node:crypto';
import type { Clock } from '../../shared/clock/index.js';
import { CADVISOR } from '../../shared/metrics/index.js';
import type { ReplicaIdentity, TelemetrySource } from '../vllm/telemetry.js';
import { DcgmConfigError } from './errors.js';
import { formatGoFloat, type LabelPair, renderLabels } from './exposition.js';

/**
 * The kubelet's `/metrics/cadvisor` series for one replica Pod. Like the real endpoint it reports three cgroups per
 * Pod: the Pod's own cgroup (`container=""`, `image=""`, `name=""`), the pause (sandbox) container (`container=""`
 * with an image) and the vLLM container, so a query that forgets `container!=""` counts the Pod twice, as it would
 * on EKS. Labels, in order: `container`, `cpu` (CPU series only, `"total"`), `id`, `image`, `name`, `namespace`,
 * `pod`; each sample carries the kubelet's timestamp in ms.
 */

/** The constants of the container model (illustrative figures for a vLLM server container). */
export const CADVISOR_MODEL = {
  /** CPU cores the container burns while the model loads (safetensors load, torch.compile, CUDA graph capture). */
  loadingCores: 1.6,
  /** Idle CPU once loaded (API server event loop, engine-core heartbeat). */
  idleCores: 0.12,
  /** CPU seconds per GPU-busy second: vLLM's engine core schedules and prepares inputs for every step on the CPU. */
  cpuSecondsPerBusySecond: 0.9,
  /** CPU per HTTP request (parsing, tokenisation, response) and per token (detokenisation, streaming). */
  cpuSecondsPerRequest: 0.004,
  cpuSecondsPerToken: 0.00003,
  /** Working set while loading, once loaded, and per running / waiting request. */
  loadingWorkingSetBytes: 1.4 * 1024 ** 3,
  loadedWorkingSetBytes: 3.6 * 1024 ** 3,
  workingSetBytesPerRunning: 6 * 1024 ** 2,
  workingSetBytesPerWaiting: 512 * 1024,
  /** The pause container: next to nothing. */
  pauseCores: 0.00002,
  pauseWorkingSetBytes: 320 * 1024,
  pageBytes: 4096,
} as const;

/** The vLLM image reported when none is given. */
export const DEFAULT_VLLM_IMAGE = 'docker.io/vllm/vllm-openai:latest';
/** The EKS pause image that backs every Pod sandbox. */
export const PAUSE_IMAGE = '602401143452.dkr.ecr.us-east-2.amazonaws.com/eks/pause:3.10';

export interface CadvisorPodOptions {
  identity: Pick<ReplicaIdentity, 'namespace' | 'pod' | 'container'>;
  telemetry: TelemetrySource;
  clock: Clock;
  /** The vLLM container's image (the `image` label). */
  image?: string;
}

/** One cgroup's values at a sample time. */
export interface CadvisorContainerSample {
  /** `container`, `id`, `image`, `name`, `namespace`, `pod` (the `cpu` label is added on the CPU series). */
  labels: {
    container: string;
    id: string;
    image: string;
    name: string;
    namespace: string;
    pod: string;
  };
  cpuUsageSecondsTotal: number;
  workingSetBytes: number;
}

export interface CadvisorReading {
  timestampMs: number;
  containers: CadvisorContainerSample[];
}

interface Counters {
  busySeconds: number;
  requests: number;
  tokens: number;
}

/** One Pod's cgroups as cAdvisor sees them; `sample()` integrates CPU time up to the clock's current time. */
export class CadvisorPod {
  readonly #pod: CadvisorPodOptions['identity'];
  readonly #telemetry: TelemetrySource;
  readonly #clock: Clock;
  readonly #image: string;
  readonly #podSliceId: string;
  readonly #containerId: string;
  readonly #pauseId: string;

  #lastMs: number;
  #last: Counters;
  #vllmCpuSeconds = 0;
  #pauseCpuSeconds = 0;

  constructor(options: CadvisorPodOptions) {
    for (const key of ['namespace', 'pod', 'container'] as const) {
      const value = options.identity[key];
      if (typeof value !== 'string' || value.length === 0)
        throw new DcgmConfigError(`identity.${key}`, value, 'must be a non-empty string');
    }
    this.#pod = options.identity;
    this.#telemetry = options.telemetry;
    this.#clock = options.clock;
    this.#image = options.image ?? DEFAULT_VLLM_IMAGE;
    // Stable ids derived from the Pod's name, shaped like a systemd-driver kubelet's (EKS AL2023 nodes).
    const uid = uuidFrom(`${this.#pod.namespace}/${this.#pod.pod}`);
    this.#podSliceId = `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${uid.replaceAll('-', '_')}.slice`;
    this.#containerId = sha256Hex(`${uid}/${this.#pod.container}`);
    this.#pauseId = sha256Hex(`${uid}/POD`);
    this.#lastMs = this.#clock.now();
    this.#last = this.#readCounters();
  }

  /** Samples the Pod's cgroups at the clock's current time. */
  sample(): CadvisorReading {
    const nowMs = this.#clock.now();
    const telemetry = this.#telemetry.telemetry();
    const counters = toCounters(telemetry);
    const dtSeconds = Math.max(0, (nowMs - this.#lastMs) / 1_000);
    // A counter that went down means the engine restarted: count nothing for the interval rather than a negative.
    const delta = (now: number, before: number): number => Math.max(0, now - before);
    const busySeconds = Math.min(dtSeconds, delta(counters.busySeconds, this.#last.busySeconds));
    const baseCores = telemetry.loaded ? CADVISOR_MODEL.idleCores : CADVISOR_MODEL.loadingCores;
    this.#vllmCpuSeconds +=
      baseCores * dtSeconds +
      CADVISOR_MODEL.cpuSecondsPerBusySecond * busySeconds +
      CADVISOR_MODEL.cpuSecondsPerRequest * delta(counters.requests, this.#last.requests) +
      CADVISOR_MODEL.cpuSecondsPerToken * delta(counters.tokens, this.#last.tokens);
    this.#pauseCpuSeconds += CADVISOR_MODEL.pauseCores * dtSeconds;
    this.#lastMs = Math.max(this.#lastMs, nowMs);
    this.#last = counters;

    const vllmBytes = toPages(
      telemetry.loaded
        ? CADVISOR_MODEL.loadedWorkingSetBytes +
            CADVISOR_MODEL.workingSetBytesPerRunning * Math.max(0, telemetry.running) +
            CADVISOR_MODEL.workingSetBytesPerWaiting * Math.max(0, telemetry.waiting)
        : CADVISOR_MODEL.loadingWorkingSetBytes,
    );
    const pauseBytes = toPages(CADVISOR_MODEL.pauseWorkingSetBytes);
    const { namespace, pod, container } = this.#pod;
    const podCgroup: CadvisorContainerSample = {
      labels: { container: '', id: this.#podSliceId, image: '', name: '', namespace, pod },
      cpuUsageSecondsTotal: this.#vllmCpuSeconds + this.#pauseCpuSeconds,
      workingSetBytes: vllmBytes + pauseBytes,
    };
    const pause: CadvisorContainerSample = {
      labels: {
        container: '',
        id: `${this.#podSliceId}/cri-containerd-${this.#pauseId}.scope`,
        image: PAUSE_IMAGE,
        name: this.#pauseId,
        namespace,
        pod,
      },
      cpuUsageSecondsTotal: this.#pauseCpuSeconds,
      workingSetBytes: pauseBytes,
    };
    const vllm: CadvisorContainerSample = {
      labels: {
        container,
        id: `${this.#podSliceId}/cri-containerd-${this.#containerId}.scope`,
        image: this.#image,
        name: this.#containerId,
        namespace,
        pod,
      },
      cpuUsageSecondsTotal: this.#vllmCpuSeconds,
      workingSetBytes: vllmBytes,
    };
    return { timestampMs: nowMs, containers: [podCgroup, pause, vllm] };
  }

  #readCounters(): Counters {
    return toCounters(this.#telemetry.telemetry());
  }
}

export interface RenderCadvisorOptions {
  /** Append the sample timestamp in ms to each line, as the kubelet does (default true). */
  timestamps?: boolean;
}

/** Renders the `/metrics/cadvisor` body (the two series this product reads) for the Pods of one node. */
export function renderCadvisorMetrics(
  readings: readonly CadvisorReading[],
  options: RenderCadvisorOptions = {},
): string {
  const timestamps = options.timestamps ?? true;
  if (readings.every((reading) => reading.containers.length === 0)) return '';
  const rows = readings.flatMap((reading) =>
    reading.containers.map((sample) => ({ sample, timestampMs: reading.timestampMs })),
  );
  // client_golang sorts a family's series by label values; `container` comes first, so the Pod cgroup leads.
  rows.sort((a, b) => compareLabels(labelPairs(a.sample, false), labelPairs(b.sample, false)));
  const suffix = (timestampMs: number): string => (timestamps ? ` ${Math.round(timestampMs)}` : '');
  const lines = [
    `# HELP ${CADVISOR.containerCpuUsageSeconds} Cumulative cpu time consumed in seconds.`,
    `# TYPE ${CADVISOR.containerCpuUsageSeconds} counter`,
    ...rows.map(
      ({ sample, timestampMs }) =>
        `${CADVISOR.containerCpuUsageSeconds}${renderLabels(labelPairs(sample, true))} ` +
        `${formatGoFloat(roundTo(sample.cpuUsageSecondsTotal, 9))}${suffix(timestampMs)}`,
    ),
    `# HELP ${CADVISOR.containerMemoryWorkingSetBytes} Current working set in bytes.`,
    `# TYPE ${CADVISOR.containerMemoryWorkingSetBytes} gauge`,
    ...rows.map(
      ({ sample, timestampMs }) =>
        `${CADVISOR.containerMemoryWorkingSetBytes}${renderLabels(labelPairs(sample, false))} ` +
        `${formatGoFloat(sample.workingSetBytes)}${suffix(timestampMs)}`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}

function labelPairs(sample: CadvisorContainerSample, withCpu: boolean): LabelPair[] {
  const { container, id, image, name, namespace, pod } = sample.labels;
  return [
    ['container', container],
    ...(withCpu ? [['cpu', 'total'] as const] : []),
    ['id', id],
    ['image', image],
    ['name', name],
    ['namespace', namespace],
    ['pod', pod],
  ];
}

function compareLabels(a: readonly LabelPair[], b: readonly LabelPair[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const left = a[i]?.[1] ?? '';
    const right = b[i]?.[1] ?? '';
    if (left !== right) return left < right ? -1 : 1;
  }
  return a.length - b.length;
}

function toCounters(telemetry: ReturnType<TelemetrySource['telemetry']>): Counters {
  return {
    busySeconds: telemetry.busySecondsTotal,
    requests: telemetry.requestsReceivedTotal,
    tokens: telemetry.promptTokensTotal + telemetry.generationTokensTotal,
  };
}

/** cAdvisor reads CPU time in nanoseconds: keep nine decimals so the printed value looks like the kubelet's. */
function roundTo(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

function toPages(bytes: number): number {
  return Math.round(bytes / CADVISOR_MODEL.pageBytes) * CADVISOR_MODEL.pageBytes;
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A deterministic UUID-shaped id (version nibble 4) from a name, so a Pod keeps its ids across renders. */
function uuidFrom(text: string): string {
  const hex = sha256Hex(text);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
