import * as z from 'zod';
import { type Clock, systemClock } from '../../shared/clock/index.js';
import { DCGM } from '../../shared/metrics/index.js';
import type { DcgmGpu } from '../dcgm/DcgmGpu.js';
import type { EngineFault, VllmEngine } from '../vllm/engine.js';
import { TwinFaultInvalidError, TwinFaultPodNotFoundError } from './errors.js';
import type { ReplicaIdentity } from '../vllm/telemetry.js';

/**
 * Faults the twin injects into one vLLM Pod, so that the five alerts of the monitoring guide (section 6) can be
 * seen firing and resolving against the real Prometheus:
 *
 * | kind                 | what it does to the Pod                                     | alert it trips         |
 * |----------------------|-------------------------------------------------------------|------------------------|
 * | kv-cache-pressure    | KV-cache blocks made unavailable (usage gauge >= fraction)  | VLLMKVCacheFull        |
 * | framebuffer-pressure | DCGM FB_USED / (FB_USED + FB_FREE) = fraction on its GPU    | VLLMGPUMemoryCritical  |
 * | slow-decoding        | every engine step `factor` times slower                     | VLLMHighLatency        |
 * | preemption-storm     | `rate` preemptions/s, with a small load so there is a victim | VLLMPreemptionSpike   |
 * | queue-flood          | max-num-seqs + `waiting` requests kept in flight            | VLLMHighQueueDepth     |
 *
 * and, for the calibration's evidence checks (a step is evidence, or it is repeated):
 *
 * | kind        | what it does                                                                    | in effect |
 * |-------------|---------------------------------------------------------------------------------|-----------|
 * | amp-outage  | every Prometheus process frozen for `seconds`: missed scrapes, hanging queries  | `seconds` |
 * | scrape-gap  | the Pod's /metrics answers 503 for `seconds`: up = 0, a gap; requests served    | `seconds` |
 * | pod-replace | the Pod deleted: its ReplicaSet starts a cold replacement (new name and uid)    | one-off   |
 * | pod-crash   | its vLLM container crashes and restarts cold: restartCount + 1, not Ready       | one-off   |
 *
 * Fault load (preemption storm, queue flood) is submitted straight to the Pod's engine, closed-loop: each request
 * is re-submitted as it finishes, so the pressure holds for as long as the fault does; clearing aborts what is in
 * flight, so the queue drains at once.
 */
export const FAULT_KINDS = [
  'kv-cache-pressure',
  'framebuffer-pressure',
  'slow-decoding',
  'preemption-storm',
  'queue-flood',
  'amp-outage',
  'scrape-gap',
  'pod-replace',
  'pod-crash',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** The request shape of fault load: the guide's ~35-token prompt and the demo's short output. */
export const FAULT_LOAD_SHAPE = { promptTokens: 35, maxTokens: 32 } as const;
/** Requests a preemption storm keeps in flight, so that the engine always has a running sequence to preempt. */
export const PREEMPTION_STORM_CONCURRENCY = 8;

const fraction = z
  .number({ error: 'must be a number' })
  .gt(0, { error: 'must be > 0 and <= 1 (0.97 = 97 %)' })
  .lte(1, { error: 'must be > 0 and <= 1 (0.97 = 97 %)' });
const pod = z.string({ error: 'must be a Pod name' }).min(1, { error: 'must be a Pod name' }).optional();
const seconds = z
  .number({ error: 'must be a number of seconds' })
  .gt(0, { error: 'must be > 0 and <= 600 seconds' })
  .lte(600, { error: 'must be > 0 and <= 600 seconds' })
  .default(30);

/** Each kind's parameters with their defaults; unknown keys are refused. */
const FAULT_SCHEMAS = {
  'kv-cache-pressure': z.strictObject({ kind: z.literal('kv-cache-pressure'), pod, fraction: fraction.default(0.97) }),
  'framebuffer-pressure': z.strictObject({
    kind: z.literal('framebuffer-pressure'),
    pod,
    fraction: fraction.default(0.97),
  }),
  'slow-decoding': z.strictObject({
    kind: z.literal('slow-decoding'),
    pod,
    factor: z
      .number({ error: 'must be a number' })
      .gt(1, { error: 'must be > 1 and <= 1000 (6 = every step six times slower)' })
      .lte(1000, { error: 'must be > 1 and <= 1000 (6 = every step six times slower)' })
      .default(6),
  }),
  'preemption-storm': z.strictObject({
    kind: z.literal('preemption-storm'),
    pod,
    rate: z
      .number({ error: 'must be a number' })
      .gt(0, { error: 'must be > 0 and <= 1000 preemptions per second' })
      .lte(1000, { error: 'must be > 0 and <= 1000 preemptions per second' })
      .default(12),
  }),
  'queue-flood': z.strictObject({
    kind: z.literal('queue-flood'),
    pod,
    waiting: z
      .number({ error: 'must be a number' })
      .int({ error: 'must be an integer from 1 to 10000' })
      .min(1, { error: 'must be an integer from 1 to 10000' })
      .max(10_000, { error: 'must be an integer from 1 to 10000' })
      .default(80),
  }),
  'amp-outage': z.strictObject({ kind: z.literal('amp-outage'), seconds }),
  'scrape-gap': z.strictObject({ kind: z.literal('scrape-gap'), pod, seconds }),
  'pod-replace': z.strictObject({ kind: z.literal('pod-replace'), pod }),
  'pod-crash': z.strictObject({ kind: z.literal('pod-crash'), pod }),
} as const;

type FaultSchemas = typeof FAULT_SCHEMAS;
/** What `inject` takes: the kind, optionally the Pod, and the kind's parameters (defaults apply). */
export type FaultRequest = { [K in FaultKind]: z.input<FaultSchemas[K]> }[FaultKind];
type ParsedFault = { [K in FaultKind]: z.output<FaultSchemas[K]> }[FaultKind];

/** The parameters each kind accepts, for help texts and error messages. */
export const FAULT_PARAMETERS: Readonly<Record<FaultKind, readonly string[]>> = {
  'kv-cache-pressure': ['fraction'],
  'framebuffer-pressure': ['fraction'],
  'slow-decoding': ['factor'],
  'preemption-storm': ['rate'],
  'queue-flood': ['waiting'],
  'amp-outage': ['seconds'],
  'scrape-gap': ['seconds'],
  'pod-replace': [],
  'pod-crash': [],
};

/** One fault in effect. */
export interface ActiveFault {
  kind: FaultKind;
  pod: string;
  /** When it was injected (epoch ms, the controller's clock). */
  onsetMs: number;
  /** The kind's parameters, defaults applied. */
  params: Record<string, number>;
  /** What it does, in words, with the numbers that result ("KV cache: 248 of 256 blocks unavailable ..."). */
  description: string;
}

/** What a fault needs of a replica: its Pod, readiness, engine, /metrics, GPU (a RunningReplica has all of it). */
export interface FaultReplica {
  pod: string;
  ready: boolean;
  vllm: {
    engine: VllmEngine;
    identity: Pick<ReplicaIdentity, 'gpuUuid'>;
    /** While true, the replica's /metrics answers 503 (scrape-gap). */
    setMetricsUnavailable(unavailable: boolean): void;
  };
  nodeAgent: { gpu: DcgmGpu };
}

/** The parts of the world beyond the Pods' engines that the world faults act on (the twin passes them). */
export interface FaultWorld {
  /** The pids of the twin's Prometheus processes (the one, or AMP's agent and query Prometheus). */
  prometheusPids(): number[];
  /** Deletes a vLLM Pod as `kubectl delete pod` does: its ReplicaSet creates a cold replacement. */
  deletePod(pod: string): void;
  /** Crashes a vLLM Pod's container; the kubelet restarts it in the same Pod, cold (restartCount + 1). */
  crashContainer(pod: string): void;
}

export interface FaultControllerOptions {
  /** The running replicas (the twin's Workloads). */
  workloads: { replicas(): readonly FaultReplica[] };
  /** Needed by amp-outage, pod-replace and pod-crash (TwinFaultInvalidError without it). */
  world?: FaultWorld;
  clock?: Clock;
  /** One line per injected or cleared fault. */
  log?: (line: string) => void;
}

/** Checks a fault request; throws TwinFaultInvalidError naming the field. */
export function parseFaultRequest(request: unknown): ParsedFault {
  if (typeof request !== 'object' || request === null || Array.isArray(request))
    throw new TwinFaultInvalidError('(request)', 'must be an object with a kind');
  const kind = (request as { kind?: unknown }).kind;
  if (typeof kind !== 'string' || !(FAULT_KINDS as readonly string[]).includes(kind))
    throw new TwinFaultInvalidError('kind', `${JSON.stringify(kind)} is not one of ${FAULT_KINDS.join(', ')}`);
  const schema = FAULT_SCHEMAS[kind as FaultKind];
  const parsed = schema.safeParse(request);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue?.code === 'unrecognized_keys') {
    const accepted = ['kind', 'pod', ...FAULT_PARAMETERS[kind as FaultKind]].join(', ');
    throw new TwinFaultInvalidError(
      issue.keys[0] ?? '(request)',
      `is not a parameter of ${kind} (accepted: ${accepted})`,
      { cause: parsed.error },
    );
  }
  throw new TwinFaultInvalidError(issue?.path.join('.') || '(request)', issue?.message ?? 'invalid', {
    cause: parsed.error,
  });
}

/** Requests kept in flight on one engine: each one re-submitted as it finishes, until stopped. */
class ClosedLoopLoad {
  readonly #engine: VllmEngine;
  readonly #idPrefix: string;
  readonly #log: (line: string) => void;
  readonly #inFlight = new Set<string>();
  #next = 0;
  #stopped = false;

  constructor(engine: VllmEngine, idPrefix: string, concurrency: number, log: (line: string) => void) {
    this.#engine = engine;
    this.#idPrefix = idPrefix;
    this.#log = log;
    for (let i = 0; i < concurrency; i++) this.#submitOne();
  }

  /** Stops re-submitting and aborts what is in flight, so the queue drains at once. */
  stop(): void {
    this.#stopped = true;
    for (const id of [...this.#inFlight]) this.#engine.abort(id);
    this.#inFlight.clear();
  }

  #submitOne(): void {
    if (this.#stopped) return;
    const id = `${this.#idPrefix}-${this.#next++}`;
    try {
      // Re-submitted from the engine's event listener: the engine delivers events once its state is consistent.
      this.#engine.submit({ id, ...FAULT_LOAD_SHAPE }, (event) => {
        if (event.type !== 'finished') return;
        this.#inFlight.delete(id);
        if (event.result.finishReason === 'length') this.#submitOne();
      });
      this.#inFlight.add(id);
    } catch (error) {
      // A listener must not throw; a refused request (a replica that stopped) just ends this loop slot.
      this.#log(`fault load ${id} refused: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

interface FaultEntry {
  fault: ActiveFault;
  replica: FaultReplica;
  load: ClosedLoopLoad | undefined;
  /** Ends a fault that lasts `seconds` (scrape-gap). */
  timer: NodeJS.Timeout | undefined;
}

/**
 * Injects and clears faults on the twin's running vLLM Pods. Several kinds may act on one Pod at once; injecting a
 * kind again on the same Pod replaces it.
 */
export class FaultController {
  readonly #workloads: FaultControllerOptions['workloads'];
  readonly #clock: Clock;
  readonly #log: (line: string) => void;
  /** Pod → kind → entry, in injection order. */
  readonly #byPod = new Map<string, Map<FaultKind, FaultEntry>>();
  readonly #world: FaultWorld | undefined;
  /** The AMP outage in effect: the frozen processes and the timer that thaws them. */
  #outage: { fault: ActiveFault; pids: number[]; timer: NodeJS.Timeout } | undefined;
  #loadSequence = 0;

  constructor(options: FaultControllerOptions) {
    this.#workloads = options.workloads;
    this.#world = options.world;
    this.#clock = options.clock ?? systemClock;
    this.#log = options.log ?? (() => undefined);
  }

  /**
   * Starts a fault on `request.pod` (default: the first Ready replica by name). Throws TwinFaultInvalidError for a
   * bad kind or parameter and TwinFaultPodNotFoundError for a Pod that is not running.
   */
  inject(request: FaultRequest): ActiveFault {
    const parsed = parseFaultRequest(request);
    if (parsed.kind === 'amp-outage') return this.#freezeAmp(parsed.seconds);
    const replica = this.#replicaFor(parsed.pod);
    if (parsed.kind === 'pod-replace') return this.#replacePod(replica.pod);
    if (parsed.kind === 'pod-crash') return this.#crashPod(replica.pod);
    const existing = this.#byPod.get(replica.pod)?.get(parsed.kind);
    if (existing !== undefined) this.#remove(existing);

    const engine = replica.vllm.engine;
    const onsetMs = this.#clock.now();
    let description: string;
    let load: ClosedLoopLoad | undefined;
    const loadPrefix = () => `twin-fault-${parsed.kind}-${++this.#loadSequence}`;
    switch (parsed.kind) {
      case 'kv-cache-pressure': {
        const total = engine.config.kvCacheBlocks;
        const blocks = kvBlocksFor(parsed.fraction, total);
        description = `KV cache: ${blocks} of ${total} blocks unavailable (usage >= ${percent(parsed.fraction)}) on pod ${replica.pod}`;
        break;
      }
      case 'framebuffer-pressure': {
        const { usedMiB, usableMiB } = framebufferFor(parsed.fraction, replica.nodeAgent.gpu);
        replica.nodeAgent.gpu.setFault({ framebufferUsedMiB: usedMiB });
        description =
          `GPU ${replica.vllm.identity.gpuUuid} (pod ${replica.pod}): framebuffer ${usedMiB} of ${usableMiB} MiB used ` +
          `(FB_USED / (FB_USED + FB_FREE) = ${percent(usedMiB / usableMiB)})`;
        break;
      }
      case 'slow-decoding':
        description = `every engine step ${parsed.factor}x slower on pod ${replica.pod}`;
        break;
      case 'preemption-storm':
        description =
          `${parsed.rate} preemptions/s on pod ${replica.pod}, with ${PREEMPTION_STORM_CONCURRENCY} requests kept ` +
          'in flight so there is always a sequence to preempt';
        break;
      case 'queue-flood': {
        const inFlight = engine.config.maxNumSeqs + parsed.waiting;
        description =
          `${inFlight} requests kept in flight on pod ${replica.pod}: ${engine.config.maxNumSeqs} running ` +
          `(--max-num-seqs) and about ${parsed.waiting} waiting`;
        break;
      }
      case 'scrape-gap':
        replica.vllm.setMetricsUnavailable(true);
        description =
          `/metrics of pod ${replica.pod} answers 503 for ${parsed.seconds} s: its scrapes fail (up = 0) and its ` +
          'series have a gap; requests are served as before';
        break;
    }
    const { kind, pod: _pod, ...params } = parsed;
    const fault: ActiveFault = { kind, pod: replica.pod, onsetMs, params, description };
    const entries = this.#byPod.get(replica.pod) ?? new Map<FaultKind, FaultEntry>();
    this.#byPod.set(replica.pod, entries);
    const entry: FaultEntry = { fault, replica, load: undefined, timer: undefined };
    entries.set(kind, entry);
    if (parsed.kind === 'scrape-gap') {
      entry.timer = setTimeout(() => {
        if (this.#byPod.get(fault.pod)?.get(kind) === entry) this.#remove(entry);
      }, parsed.seconds * 1000);
      entry.timer.unref();
    }
    this.#applyEngineFaults(replica, entries);
    // The load starts once the engine fault is in place, so a storm has its victims from the first step.
    if (parsed.kind === 'preemption-storm')
      load = new ClosedLoopLoad(engine, loadPrefix(), PREEMPTION_STORM_CONCURRENCY, this.#log);
    if (parsed.kind === 'queue-flood')
      load = new ClosedLoopLoad(engine, loadPrefix(), engine.config.maxNumSeqs + parsed.waiting, this.#log);
    entry.load = load;
    this.#log(`fault ${kind} injected: ${description}`);
    return structuredClone(fault);
  }

  /**
   * Clears every fault, or only those of `pod`, and stops their load; returns what was cleared. A `pod` that is
   * neither running nor holding a fault throws TwinFaultPodNotFoundError.
   */
  clear(pod?: string): ActiveFault[] {
    if (pod !== undefined && !this.#byPod.has(pod) && !this.#workloads.replicas().some((r) => r.pod === pod))
      throw new TwinFaultPodNotFoundError(pod, this.#podNames());
    const cleared: ActiveFault[] = [];
    if (pod === undefined && this.#outage !== undefined) cleared.push(this.#thawAmp());
    for (const [name, entries] of [...this.#byPod]) {
      if (pod !== undefined && name !== pod) continue;
      for (const entry of [...entries.values()]) {
        this.#remove(entry);
        cleared.push(structuredClone(entry.fault));
      }
    }
    return cleared;
  }

  /** The faults in effect, by Pod name then injection order. */
  active(): ActiveFault[] {
    return [
      ...(this.#outage === undefined ? [] : [structuredClone(this.#outage.fault)]),
      ...[...this.#byPod.keys()]
        .sort()
        .flatMap((name) => [...(this.#byPod.get(name)?.values() ?? [])].map((entry) => structuredClone(entry.fault))),
    ];
  }

  /**
   * amp-outage: every Prometheus process of the twin frozen (SIGSTOP) for `seconds`, then thawed (SIGCONT): scrapes
   * are missed (a gap in AMP's series) and queries hang meanwhile, as when AMP or its agent is unavailable.
   */
  #freezeAmp(seconds: number): ActiveFault {
    const world = this.#requireWorld('amp-outage');
    if (this.#outage !== undefined) this.#thawAmp();
    const pids = world.prometheusPids().filter((pid) => pid > 0);
    for (const pid of pids) process.kill(pid, 'SIGSTOP');
    const fault: ActiveFault = {
      kind: 'amp-outage',
      pod: '(prometheus)',
      onsetMs: this.#clock.now(),
      params: { seconds },
      description: `Prometheus frozen for ${seconds} s (pids ${pids.join(', ')}): no scrapes, queries hang`,
    };
    const timer = setTimeout(() => this.#thawAmp(), seconds * 1000);
    timer.unref();
    this.#outage = { fault, pids, timer };
    this.#log(`fault amp-outage injected: ${fault.description}`);
    return structuredClone(fault);
  }

  #thawAmp(): ActiveFault {
    const outage = this.#outage;
    if (outage === undefined) throw new Error('no AMP outage to clear');
    clearTimeout(outage.timer);
    this.#outage = undefined;
    for (const pid of outage.pids) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // The process is gone (the twin stopped it): nothing to thaw.
      }
    }
    this.#log('fault amp-outage cleared: Prometheus thawed');
    return structuredClone(outage.fault);
  }

  /** pod-replace: a one-off, not kept in effect: the Pod deleted; its ReplicaSet starts a cold replacement. */
  #replacePod(pod: string): ActiveFault {
    this.#requireWorld('pod-replace').deletePod(pod);
    const description = `pod ${pod} deleted: its ReplicaSet creates a replacement, which loads the model cold`;
    this.#log(`fault pod-replace injected: ${description}`);
    return { kind: 'pod-replace', pod, onsetMs: this.#clock.now(), params: {}, description };
  }

  /**
   * pod-crash: a one-off, not kept in effect: the Pod's vLLM container crashes; the kubelet restarts it in the same
   * Pod (restartCount + 1), which loads the model cold. The Pod's faults end with the engine they acted on.
   */
  #crashPod(pod: string): ActiveFault {
    const world = this.#requireWorld('pod-crash');
    for (const entry of [...(this.#byPod.get(pod)?.values() ?? [])]) this.#remove(entry);
    world.crashContainer(pod);
    const description =
      `the vLLM container of pod ${pod} crashed (exit code 1); the kubelet restarts it in the same Pod ` +
      '(restartCount + 1), not Ready until the model is loaded cold and warmed up';
    this.#log(`fault pod-crash injected: ${description}`);
    return { kind: 'pod-crash', pod, onsetMs: this.#clock.now(), params: {}, description };
  }

  #requireWorld(kind: FaultKind): FaultWorld {
    if (this.#world === undefined)
      throw new TwinFaultInvalidError('kind', `${kind} needs the twin's Prometheus and API server (not given here)`);
    return this.#world;
  }

  /** Clears every fault (the twin is stopping). */
  stop(): void {
    this.clear();
  }

  #remove(entry: FaultEntry): void {
    const { fault, replica } = entry;
    const entries = this.#byPod.get(fault.pod);
    entries?.delete(fault.kind);
    if (entries?.size === 0) this.#byPod.delete(fault.pod);
    entry.load?.stop();
    clearTimeout(entry.timer);
    if (fault.kind === 'framebuffer-pressure') replica.nodeAgent.gpu.setFault({ framebufferUsedMiB: null });
    if (fault.kind === 'scrape-gap') replica.vllm.setMetricsUnavailable(false);
    this.#applyEngineFaults(replica, entries ?? new Map());
    this.#log(`fault ${fault.kind} cleared on pod ${fault.pod}`);
  }

  /** The engine faults of every kind in effect on the Pod, combined (the engine takes them as one setting). */
  #applyEngineFaults(replica: FaultReplica, entries: ReadonlyMap<FaultKind, FaultEntry>): void {
    const engine = replica.vllm.engine;
    const fault: EngineFault = {};
    const kv = entries.get('kv-cache-pressure')?.fault.params.fraction;
    if (kv !== undefined) fault.kvBlocksUnavailable = kvBlocksFor(kv, engine.config.kvCacheBlocks);
    const factor = entries.get('slow-decoding')?.fault.params.factor;
    if (factor !== undefined) fault.stepTimeMultiplier = factor;
    const rate = entries.get('preemption-storm')?.fault.params.rate;
    if (rate !== undefined) fault.preemptionsPerSecond = rate;
    engine.setFault(fault);
  }

  #replicaFor(pod: string | undefined): FaultReplica {
    const replicas = [...this.#workloads.replicas()].sort((a, b) => a.pod.localeCompare(b.pod));
    const replica = pod === undefined ? replicas.find((r) => r.ready) : replicas.find((r) => r.pod === pod && r.ready);
    if (replica === undefined) throw new TwinFaultPodNotFoundError(pod, this.#podNames());
    return replica;
  }

  #podNames(): string[] {
    return this.#workloads
      .replicas()
      .map((r) => (r.ready ? r.pod : `${r.pod} (not Ready)`))
      .sort();
  }
}

/** Blocks to take away so that usage = unavailable / total is at least `fraction` with no load. */
function kvBlocksFor(fraction: number, totalBlocks: number): number {
  return Math.min(totalBlocks, Math.ceil(fraction * totalBlocks));
}

/**
 * FB_USED so that FB_USED / (FB_USED + FB_FREE) >= fraction. DCGM has no total field; the guide's alert divides by
 * used + free, which the GPU's current reading gives (the card minus FB_RESERVED).
 */
function framebufferFor(fraction: number, gpu: DcgmGpu): { usedMiB: number; usableMiB: number } {
  const reading = gpu.sample();
  const usableMiB = (reading.values.get(DCGM.fbUsed) ?? 0) + (reading.values.get(DCGM.fbFree) ?? 0);
  return { usedMiB: Math.min(usableMiB, Math.ceil(fraction * usableMiB)), usableMiB };
}

function percent(value: number): string {
  return `${Math.round(value * 1000) / 10} %`;
}
