import type { Clock } from '../../shared/clock/index.js';
import type { Profile } from '../profile/profile.js';
import type { ReplicaTelemetry } from './telemetry.js';
import { EngineMetrics } from './engineMetrics.js';
import { VllmConfigInvalidError, VllmNotLoadedError, VllmRequestInvalidError } from './errors.js';

/**
 * A discrete-event model of vLLM's continuous batching (V1 scheduler, FCFS, chunked prefill on), on an injected
 * clock. The same engine runs in virtual time (tests, capacity measurement) and in real time (the replica server,
 * through `RealtimeEngineDriver`), so a busy host does not change the simulated capacity.
 *
 * One engine step, composed when it starts and fixed from then on:
 * 1. Every running sequence gets its share of the token budget (`maxNumBatchedTokens`), oldest first: one token
 *    if it is decoding, the rest of its prompt (up to the budget left) if its prefill was chunked. A decoding
 *    sequence whose KV cache needs a new block when none is free preempts the NEWEST running sequence (blocks
 *    freed, back to the FRONT of the queue, recomputed later), as vLLM's scheduler does.
 * 2. If nothing was preempted in this step (vLLM V1 skips admission after a preemption), waiting requests are
 *    admitted in FIFO order while `running < maxNumSeqs`, budget is left, and the head of the queue's KV blocks
 *    fit. A prompt larger than the budget left is prefilled in chunks over several steps (chunked prefill).
 *    Design choice: the blocks for the whole prompt (+ already generated tokens, after a preemption) are
 *    allocated at admission, not chunk by chunk; it only matters for prompts longer than the budget.
 * 3. Step time = (decodeStepMs.base + decodeStepMs.perSequence x sequences in the step
 *    + prefill tokens / prefillTokensPerSecond) x warmupSlowdown while fewer than `warmupRequests` requests have
 *    completed. At the end of the step each decoding sequence emits a token, and each sequence whose prefill
 *    completed emits its first (or, after a preemption, its next) token.
 *
 * A request generates exactly `max_tokens` tokens (finish reason `length`): a load-test twin needs deterministic
 * output lengths so that a capacity measured for a request shape is reproducible.
 *
 * KV blocks per sequence = ceil((prompt + generated tokens) / blockSize): at a decode step the sequence's newest
 * token is written into the cache.
 */

/** The numbers that drive one engine. */
export interface EngineConfig {
  maxNumSeqs: number;
  kvCacheBlocks: number;
  blockSize: number;
  maxNumBatchedTokens: number;
  prefillTokensPerSecond: number;
  decodeStepMs: { base: number; perSequence: number };
  maxModelLen: number;
  modelLoadSeconds: number;
  warmupRequests: number;
  warmupSlowdown: number;
}

/** Engine-level container-arg overrides (`--max-num-seqs`, `--max-model-len`) and a KV-cache size override. */
export interface EngineOverrides {
  maxNumSeqs?: number;
  maxModelLen?: number;
  kvCacheBlocks?: number;
}

/** Builds the engine config from a profile and overrides, checking what vLLM checks at startup. */
export function engineConfigFromProfile(profile: Profile, overrides: EngineOverrides = {}): EngineConfig {
  for (const field of ['maxNumSeqs', 'maxModelLen', 'kvCacheBlocks'] as const) {
    const value = overrides[field];
    if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
      throw new VllmConfigInvalidError(`overrides.${field}`, value, 'a positive integer');
    }
  }
  const config: EngineConfig = {
    ...profile.engine,
    decodeStepMs: { ...profile.engine.decodeStepMs },
    maxNumSeqs: overrides.maxNumSeqs ?? profile.engine.maxNumSeqs,
    maxModelLen: overrides.maxModelLen ?? profile.engine.maxModelLen,
    kvCacheBlocks: overrides.kvCacheBlocks ?? profile.engine.kvCacheBlocks,
    modelLoadSeconds: profile.startup.modelLoadSeconds,
    warmupRequests: profile.startup.warmupRequests,
    warmupSlowdown: profile.startup.warmupSlowdown,
  };
  // vLLM refuses to start when one max-length sequence cannot fit in the KV cache ("The model's max seq len (X)
  // is larger than the maximum number of tokens that can be stored in KV cache (Y)"); so does the twin, which also
  // guarantees that a preempted sequence can always be re-admitted.
  const kvTokens = config.kvCacheBlocks * config.blockSize;
  if (config.maxModelLen > kvTokens) {
    throw new VllmConfigInvalidError(
      'engine.maxModelLen',
      config.maxModelLen,
      `at most the tokens the KV cache can hold (kvCacheBlocks x blockSize = ${kvTokens})`,
    );
  }
  return config;
}

/** A completion request as the engine sees it (tokens only). */
export interface EngineRequest {
  /** Unique id; one is generated when omitted. */
  id?: string;
  promptTokens: number;
  maxTokens: number;
}

/** Why a request finished in the twin: it reached `max_tokens`, or the client went away. */
export type EngineFinishReason = 'length' | 'abort';

/** What happened to one request, with simulated timestamps (epoch ms, fractional). */
export interface RequestResult {
  id: string;
  promptTokens: number;
  maxTokens: number;
  generatedTokens: number;
  finishReason: EngineFinishReason;
  arrivalMs: number;
  /** First admission into the running batch; absent if aborted while waiting. */
  scheduledMs?: number;
  firstTokenMs?: number;
  finishedMs: number;
  preemptions: number;
}

/** Per-request events, in order; `token` is emitted once per generated token (`first` on the first one). */
export type RequestEvent =
  | { type: 'queued'; atMs: number }
  | { type: 'scheduled'; atMs: number }
  | { type: 'preempted'; atMs: number }
  | { type: 'token'; atMs: number; index: number; first: boolean; last: boolean }
  | { type: 'finished'; atMs: number; result: RequestResult };

/** Receives a request's events. Must not throw: it runs inside the engine's step processing. */
export type RequestListener = (event: RequestEvent) => void;

/** Faults the twin can inject into a running engine. */
export interface EngineFault {
  /** Multiplies every step's time (slow decoding, thermal throttling); 1 = healthy. */
  stepTimeMultiplier?: number;
  /** KV-cache blocks made unavailable (memory pressure); they count as used in the KV-cache usage gauge. */
  kvBlocksUnavailable?: number;
  /**
   * A preemption storm: on average this many running sequences per second of simulated time are preempted (the
   * newest first, as vLLM's scheduler picks its victims), besides those the KV cache forces; 0 = none.
   */
  preemptionsPerSecond?: number;
}

/** A point-in-time view of the engine. */
export interface EngineStats {
  running: number;
  waiting: number;
  kvCacheUsage: number;
  freeKvBlocks: number;
  submitted: number;
  completed: number;
  aborted: number;
  steps: number;
  preemptions: number;
  busySecondsTotal: number;
  /** Prompt tokens computed in completed steps, recompute after preemptions included (chunks count as done). */
  prefilledTokens: number;
}

interface Sequence {
  id: string;
  promptTokens: number;
  maxTokens: number;
  arrivalMs: number;
  listener: RequestListener | undefined;
  state: 'waiting' | 'running' | 'finished';
  generated: number;
  blocks: number;
  /** Tokens still to prefill: the prompt, or after a preemption the prompt + generated tokens. */
  prefillRemaining: number;
  promptCounted: boolean;
  scheduledMs: number | undefined;
  firstTokenMs: number | undefined;
  lastTokenMs: number | undefined;
  preemptions: number;
}

interface StepItem {
  seq: Sequence;
  kind: 'prefill' | 'decode';
  tokens: number;
}

interface Step {
  startMs: number;
  endMs: number;
  items: StepItem[];
}

/** A double-ended queue: FIFO admission from the front, preempted sequences return to the front. */
class SequenceQueue {
  #items: Sequence[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  peek(): Sequence | undefined {
    return this.#items[this.#head];
  }

  push(seq: Sequence): void {
    this.#items.push(seq);
  }

  unshift(seq: Sequence): void {
    if (this.#head > 0) {
      this.#head -= 1;
      this.#items[this.#head] = seq;
    } else {
      this.#items.unshift(seq);
    }
  }

  shift(): Sequence | undefined {
    const seq = this.#items[this.#head];
    if (seq === undefined) return undefined;
    this.#head += 1;
    // Compact now and then so a long-lived queue does not keep every request it ever held.
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return seq;
  }

  remove(seq: Sequence): boolean {
    const index = this.#items.indexOf(seq, this.#head);
    if (index === -1) return false;
    this.#items.splice(index, 1);
    return true;
  }
}

/** The vLLM engine model. Public read methods first catch up to `clock.now()`. */
export class VllmEngine {
  readonly config: EngineConfig;
  readonly metrics: EngineMetrics;
  readonly startedAtMs: number;
  readonly loadedAtMs: number;
  readonly #clock: Clock;
  readonly #waiting = new SequenceQueue();
  /** Running sequences in admission order: the newest is last, and is the one preempted first. */
  #running: Sequence[] = [];
  readonly #byId = new Map<string, Sequence>();
  #usedBlocks = 0;
  #current: Step | undefined;
  /** When the next step may start: the end of the last step, or the arrival that woke an idle engine. */
  #nextStartMs: number;
  /** Nothing could be scheduled although requests wait (a fault took the KV cache); cleared by any change. */
  #stalled = false;
  #advancedToMs: number;
  #busyMs = 0;
  #steps = 0;
  #prefilledTokens = 0;
  #submitted = 0;
  #completed = 0;
  #aborted = 0;
  #nextId = 0;
  #fault: Required<EngineFault> = { stepTimeMultiplier: 1, kvBlocksUnavailable: 0, preemptionsPerSecond: 0 };
  /** Preemptions owed by a preemption storm (rate x elapsed simulated time), and when they were last counted. */
  #preemptionCredit = 0;
  #preemptionCountedToMs = 0;
  #wakeListener: (() => void) | undefined;
  readonly #pendingEvents: Array<{ listener: RequestListener; event: RequestEvent }> = [];

  constructor(config: EngineConfig, clock: Clock) {
    this.config = config;
    this.#clock = clock;
    this.metrics = new EngineMetrics(config.maxModelLen);
    this.startedAtMs = clock.now();
    this.loadedAtMs = this.startedAtMs + config.modelLoadSeconds * 1000;
    this.#nextStartMs = this.loadedAtMs;
    this.#advancedToMs = this.startedAtMs;
  }

  /** True once the model is loaded (`startup.modelLoadSeconds` after the engine was created). */
  isLoaded(atMs: number = this.#clock.now()): boolean {
    return atMs >= this.loadedAtMs;
  }

  /**
   * Enqueues a request at `clock.now()` (after catching up, so only steps starting now or later can admit it).
   * Throws VllmNotLoadedError before the model is loaded and VllmRequestInvalidError for a request vLLM rejects.
   */
  submit(request: EngineRequest, listener?: RequestListener): { id: string; arrivalMs: number } {
    const nowMs = this.#clock.now();
    if (!this.isLoaded(nowMs)) throw new VllmNotLoadedError(nowMs, this.loadedAtMs);
    this.#validate(request);
    this.#catchUp(nowMs);
    const id = request.id ?? `req-${this.#nextId++}`;
    if (this.#byId.has(id)) {
      throw new VllmRequestInvalidError(`Request id ${id} is already in flight.`, { param: 'id' });
    }
    const seq: Sequence = {
      id,
      promptTokens: request.promptTokens,
      maxTokens: request.maxTokens,
      arrivalMs: nowMs,
      listener,
      state: 'waiting',
      generated: 0,
      blocks: 0,
      prefillRemaining: request.promptTokens,
      promptCounted: false,
      scheduledMs: undefined,
      firstTokenMs: undefined,
      lastTokenMs: undefined,
      preemptions: 0,
    };
    if (!this.#hasWork()) this.#nextStartMs = Math.max(this.#nextStartMs, nowMs);
    this.#waiting.push(seq);
    this.#byId.set(id, seq);
    this.#submitted += 1;
    this.#stalled = false;
    this.#emit(seq, { type: 'queued', atMs: nowMs });
    this.#flush();
    this.#wakeListener?.();
    return { id, arrivalMs: nowMs };
  }

  /** Cancels a request (client disconnect): it leaves the queue or the batch and finishes with reason `abort`. */
  abort(id: string): boolean {
    const nowMs = this.#clock.now();
    this.#catchUp(nowMs);
    const seq = this.#byId.get(id);
    if (seq === undefined || seq.state === 'finished') return false;
    if (seq.state === 'waiting') {
      this.#waiting.remove(seq);
    } else {
      this.#running = this.#running.filter((other) => other !== seq);
      this.#releaseBlocks(seq);
    }
    this.#finish(seq, 'abort', nowMs);
    this.#stalled = false;
    this.#flush();
    this.#wakeListener?.();
    return true;
  }

  /** Executes every step that ends at or before `tMs` (and starts the steps due before `tMs`). */
  advanceTo(tMs: number): void {
    this.#catchUp(tMs);
    this.#flush();
  }

  /**
   * When the engine next needs attention: the end of the step in flight, or the start of a step that is due
   * (not yet composed because requests may still arrive at that instant); undefined when idle.
   */
  nextEventMs(): number | undefined {
    if (this.#current !== undefined) return this.#current.endMs;
    if (this.#hasWork() && !this.#stalled) return this.#nextStartMs;
    return undefined;
  }

  /** Called after each submit/abort/fault so a real-time driver can reschedule its timer. */
  onWake(listener: (() => void) | undefined): void {
    this.#wakeListener = listener;
  }

  /** Injects (or, with `{}`, clears) faults; applies from the next step. */
  setFault(fault: EngineFault): void {
    const multiplier = fault.stepTimeMultiplier ?? 1;
    const unavailable = fault.kvBlocksUnavailable ?? 0;
    const preemptionRate = fault.preemptionsPerSecond ?? 0;
    if (!(Number.isFinite(preemptionRate) && preemptionRate >= 0)) {
      throw new VllmConfigInvalidError('fault.preemptionsPerSecond', preemptionRate, 'a finite number >= 0');
    }
    if (!(multiplier > 0)) {
      throw new VllmConfigInvalidError('fault.stepTimeMultiplier', multiplier, 'a number > 0');
    }
    if (!(Number.isInteger(unavailable) && unavailable >= 0 && unavailable <= this.config.kvCacheBlocks)) {
      throw new VllmConfigInvalidError(
        'fault.kvBlocksUnavailable',
        unavailable,
        `an integer from 0 to kvCacheBlocks (${this.config.kvCacheBlocks})`,
      );
    }
    const nowMs = this.#clock.now();
    this.#catchUp(nowMs);
    // A storm counts from the moment it is injected (or its rate changes), never backwards.
    this.#preemptionCredit = 0;
    this.#preemptionCountedToMs = nowMs;
    this.#fault = {
      stepTimeMultiplier: multiplier,
      kvBlocksUnavailable: unavailable,
      preemptionsPerSecond: preemptionRate,
    };
    this.#stalled = false;
    this.#flush();
    this.#wakeListener?.();
  }

  /** Current gauges and totals. */
  stats(): EngineStats {
    const nowMs = this.#clock.now();
    this.advanceTo(nowMs);
    return {
      running: this.#running.length,
      waiting: this.#waiting.length,
      kvCacheUsage: this.#kvCacheUsage(),
      freeKvBlocks: this.#freeBlocks(),
      submitted: this.#submitted,
      completed: this.#completed,
      aborted: this.#aborted,
      steps: this.#steps,
      preemptions: this.metrics.numPreemptions,
      busySecondsTotal: this.#busySecondsAt(nowMs),
      prefilledTokens: this.#prefilledTokens,
    };
  }

  /** What the GPU and container exporters read (sim/twin/types.ts). */
  telemetry(): ReplicaTelemetry {
    const stats = this.stats();
    return {
      loaded: this.isLoaded(),
      busySecondsTotal: stats.busySecondsTotal,
      promptTokensTotal: this.metrics.promptTokens,
      generationTokensTotal: this.metrics.generationTokens,
      running: stats.running,
      waiting: stats.waiting,
      kvCacheUsage: stats.kvCacheUsage,
      requestsReceivedTotal: this.#submitted,
    };
  }

  #validate(request: EngineRequest): void {
    const { promptTokens, maxTokens } = request;
    if (!(Number.isInteger(promptTokens) && promptTokens >= 1)) {
      throw new VllmRequestInvalidError(`The prompt must have at least 1 token, got ${promptTokens}.`, {
        param: 'prompt',
      });
    }
    if (!(Number.isInteger(maxTokens) && maxTokens >= 1)) {
      throw new VllmRequestInvalidError(`max_tokens must be at least 1, got ${maxTokens}.`, { param: 'max_tokens' });
    }
    const { maxModelLen } = this.config;
    // Messages as vLLM's OpenAI server words them (serving_engine.py `_validate_input`).
    if (promptTokens > maxModelLen) {
      throw new VllmRequestInvalidError(
        `This model's maximum context length is ${maxModelLen} tokens. However, your request has ` +
          `${promptTokens} input tokens. Please reduce the length of the input messages.`,
        { param: 'input_tokens' },
      );
    }
    if (promptTokens + maxTokens > maxModelLen) {
      throw new VllmRequestInvalidError(
        `'max_tokens' or 'max_completion_tokens' is too large: ${maxTokens}. This model's maximum context length ` +
          `is ${maxModelLen} tokens and your request has ${promptTokens} input tokens ` +
          `(${maxTokens} > ${maxModelLen} - ${promptTokens}).`,
        { param: 'max_tokens' },
      );
    }
  }

  #hasWork(): boolean {
    return this.#waiting.length > 0 || this.#running.length > 0;
  }

  #catchUp(tMs: number): void {
    if (tMs < this.#advancedToMs) return;
    this.#advancedToMs = tMs;
    for (;;) {
      const step = this.#current;
      if (step !== undefined) {
        if (step.endMs > tMs) return;
        this.#completeStep(step);
        this.#current = undefined;
        this.#nextStartMs = step.endMs;
        continue;
      }
      // Strictly before t: a step due exactly at t waits, so that requests arriving at t can still join it.
      if (!this.#hasWork() || this.#stalled || this.#nextStartMs >= tMs) return;
      const next = this.#startStep(this.#nextStartMs);
      if (next === undefined) {
        this.#stalled = true;
        return;
      }
      this.#current = next;
    }
  }

  #freeBlocks(): number {
    return this.config.kvCacheBlocks - this.#fault.kvBlocksUnavailable - this.#usedBlocks;
  }

  #kvCacheUsage(): number {
    // vLLM: 1 - free / total (the gauge is a 0-1 fraction despite `_perc`).
    return Math.min(1, (this.#usedBlocks + this.#fault.kvBlocksUnavailable) / this.config.kvCacheBlocks);
  }

  #blocksFor(tokens: number): number {
    return Math.ceil(tokens / this.config.blockSize);
  }

  #releaseBlocks(seq: Sequence): void {
    this.#usedBlocks -= seq.blocks;
    seq.blocks = 0;
  }

  #preempt(seq: Sequence, atMs: number): void {
    this.#running = this.#running.filter((other) => other !== seq);
    this.#releaseBlocks(seq);
    seq.state = 'waiting';
    // Recompute on re-admission: the prompt and every token generated so far are prefilled again.
    seq.prefillRemaining = seq.promptTokens + seq.generated;
    seq.preemptions += 1;
    this.#waiting.unshift(seq);
    this.metrics.numPreemptions += 1;
    this.#emit(seq, { type: 'preempted', atMs });
  }

  /**
   * A preemption storm (fault): rate x simulated time since the last step accrues; each whole unit preempts the
   * newest running sequence the normal way. With nothing running the owed units lapse (nothing to preempt).
   * Returns whether this step preempted anything.
   */
  #stormPreemptions(startMs: number): boolean {
    const rate = this.#fault.preemptionsPerSecond;
    if (rate <= 0) return false;
    this.#preemptionCredit += (rate * Math.max(0, startMs - this.#preemptionCountedToMs)) / 1000;
    this.#preemptionCountedToMs = Math.max(this.#preemptionCountedToMs, startMs);
    let preempted = false;
    while (this.#preemptionCredit >= 1) {
      const victim = this.#running[this.#running.length - 1];
      if (victim === undefined) {
        this.#preemptionCredit -= Math.floor(this.#preemptionCredit);
        break;
      }
      this.#preempt(victim, startMs);
      this.#preemptionCredit -= 1;
      preempted = true;
    }
    return preempted;
  }

  #startStep(startMs: number): Step | undefined {
    const { maxNumSeqs, maxNumBatchedTokens } = this.config;
    let budget = maxNumBatchedTokens;
    const items: StepItem[] = [];
    let preempted = this.#stormPreemptions(startMs);

    // 1. The running batch, oldest first.
    for (let index = 0; index < this.#running.length; index++) {
      const seq = this.#running[index];
      if (seq === undefined || budget <= 0) break;
      if (seq.prefillRemaining > 0) {
        const chunk = Math.min(seq.prefillRemaining, budget);
        budget -= chunk;
        items.push({ seq, kind: 'prefill', tokens: chunk });
        continue;
      }
      const needed = this.#blocksFor(seq.promptTokens + seq.generated) - seq.blocks;
      while (needed > this.#freeBlocks()) {
        const victim = this.#running[this.#running.length - 1];
        if (victim === undefined) break;
        this.#preempt(victim, startMs);
        preempted = true;
        if (victim === seq) break;
      }
      if (seq.state !== 'running') break; // it preempted itself: it was the newest, nothing follows it
      this.#usedBlocks += needed;
      seq.blocks += needed;
      budget -= 1;
      items.push({ seq, kind: 'decode', tokens: 1 });
    }

    // 2. Admission from the queue, FIFO, unless this step preempted (unless nothing else could run).
    if (!preempted || items.length === 0) {
      while (this.#running.length < maxNumSeqs && budget > 0) {
        const seq = this.#waiting.peek();
        if (seq === undefined) break;
        const needed = this.#blocksFor(seq.promptTokens + seq.generated);
        if (needed > this.#freeBlocks()) break;
        this.#waiting.shift();
        this.#usedBlocks += needed;
        seq.blocks = needed;
        seq.state = 'running';
        this.#running.push(seq);
        // vLLM queries the prefix cache with every token of the request at each admission.
        this.metrics.prefixCacheQueries += seq.promptTokens + seq.generated;
        if (seq.scheduledMs === undefined) {
          seq.scheduledMs = startMs;
          this.#emit(seq, { type: 'scheduled', atMs: startMs });
        }
        const chunk = Math.min(seq.prefillRemaining, budget);
        budget -= chunk;
        items.push({ seq, kind: 'prefill', tokens: chunk });
      }
    }

    if (items.length === 0) return undefined;
    const prefillTokens = items.reduce((sum, item) => sum + (item.kind === 'prefill' ? item.tokens : 0), 0);
    const { base, perSequence } = this.config.decodeStepMs;
    const warming = this.#completed < this.config.warmupRequests;
    const durationMs =
      (base + perSequence * items.length + (prefillTokens / this.config.prefillTokensPerSecond) * 1000) *
      (warming ? this.config.warmupSlowdown : 1) *
      this.#fault.stepTimeMultiplier;
    return { startMs, endMs: startMs + durationMs, items };
  }

  #completeStep(step: Step): void {
    const endMs = step.endMs;
    let iterationPromptTokens = 0;
    let iterationGenerationTokens = 0;
    for (const item of step.items) {
      const seq = item.seq;
      if (seq.state !== 'running') continue; // aborted during the step
      if (item.kind === 'prefill') {
        seq.prefillRemaining -= item.tokens;
        this.#prefilledTokens += item.tokens;
        if (seq.prefillRemaining > 0) continue;
        if (!seq.promptCounted) {
          // vLLM counts a request's prompt once, when its prefill completes (not again on recompute).
          seq.promptCounted = true;
          iterationPromptTokens += seq.promptTokens;
          this.metrics.promptTokens += seq.promptTokens;
          this.metrics.promptTokensBySource.local_compute += seq.promptTokens;
        }
      }
      this.#emitToken(seq, endMs);
      iterationGenerationTokens += 1;
      if (seq.generated >= seq.maxTokens) {
        this.#running = this.#running.filter((other) => other !== seq);
        this.#releaseBlocks(seq);
        this.#finish(seq, 'length', endMs);
      }
    }
    this.metrics.generationTokens += iterationGenerationTokens;
    this.metrics.histograms.iterationTokens.observe(iterationPromptTokens + iterationGenerationTokens);
    this.#busyMs += endMs - step.startMs;
    this.#steps += 1;
  }

  #emitToken(seq: Sequence, atMs: number): void {
    const index = seq.generated;
    seq.generated += 1;
    const first = index === 0;
    if (first) {
      seq.firstTokenMs = atMs;
      this.metrics.histograms.timeToFirstToken.observe((atMs - seq.arrivalMs) / 1000);
    } else if (seq.lastTokenMs !== undefined) {
      this.metrics.histograms.interTokenLatency.observe((atMs - seq.lastTokenMs) / 1000);
    }
    seq.lastTokenMs = atMs;
    this.#emit(seq, { type: 'token', atMs, index, first, last: seq.generated >= seq.maxTokens });
  }

  #finish(seq: Sequence, reason: EngineFinishReason, atMs: number): void {
    seq.state = 'finished';
    this.#byId.delete(seq.id);
    this.metrics.requestSuccess[reason] += 1;
    if (reason === 'length') {
      this.#completed += 1;
      this.#observeFinished(seq, atMs);
    } else {
      // Design choice: an aborted request only counts in request_success{finished_reason="abort"}; its partial
      // timings would distort the latency histograms the calibration reads.
      this.#aborted += 1;
    }
    const result: RequestResult = {
      id: seq.id,
      promptTokens: seq.promptTokens,
      maxTokens: seq.maxTokens,
      generatedTokens: seq.generated,
      finishReason: reason,
      arrivalMs: seq.arrivalMs,
      finishedMs: atMs,
      preemptions: seq.preemptions,
      ...(seq.scheduledMs !== undefined ? { scheduledMs: seq.scheduledMs } : {}),
      ...(seq.firstTokenMs !== undefined ? { firstTokenMs: seq.firstTokenMs } : {}),
    };
    this.#emit(seq, { type: 'finished', atMs, result });
  }

  /** The per-request histograms of vLLM's `FinishedRequestStats` (v1/metrics/stats.py). */
  #observeFinished(seq: Sequence, finishedMs: number): void {
    const h = this.metrics.histograms;
    const scheduledMs = seq.scheduledMs ?? seq.arrivalMs;
    const firstTokenMs = seq.firstTokenMs ?? finishedMs;
    const lastTokenMs = seq.lastTokenMs ?? finishedMs;
    const decodeS = (lastTokenMs - firstTokenMs) / 1000;
    h.e2eRequestLatency.observe((finishedMs - seq.arrivalMs) / 1000);
    h.requestQueueTime.observe((scheduledMs - seq.arrivalMs) / 1000);
    h.requestPrefillTime.observe((firstTokenMs - scheduledMs) / 1000);
    h.requestInferenceTime.observe((lastTokenMs - scheduledMs) / 1000);
    h.requestDecodeTime.observe(decodeS);
    // Mean time per output token = decode time / (generated - 1), recorded as 0 for one-token requests.
    h.requestTimePerOutputToken.observe(seq.generated > 1 ? decodeS / (seq.generated - 1) : 0);
    h.requestPromptTokens.observe(seq.promptTokens);
    h.requestGenerationTokens.observe(seq.generated);
    h.requestMaxNumGenerationTokens.observe(seq.maxTokens);
    h.requestParamsMaxTokens.observe(seq.maxTokens);
    h.requestParamsN.observe(1);
    h.requestPrefillKvComputedTokens.observe(seq.promptTokens);
  }

  #busySecondsAt(nowMs: number): number {
    const step = this.#current;
    // Include the elapsed part of the step in flight so GPU utilisation does not jump at step boundaries.
    const partialMs = step === undefined ? 0 : Math.max(0, Math.min(nowMs, step.endMs) - step.startMs);
    return (this.#busyMs + partialMs) / 1000;
  }

  #emit(seq: Sequence, event: RequestEvent): void {
    if (seq.listener !== undefined) this.#pendingEvents.push({ listener: seq.listener, event });
  }

  /** Delivers queued events once the engine's state is consistent again. */
  #flush(): void {
    while (this.#pendingEvents.length > 0) {
      const pending = this.#pendingEvents.splice(0, this.#pendingEvents.length);
      for (const { listener, event } of pending) listener(event);
    }
  }
}
