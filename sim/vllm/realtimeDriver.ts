import type { Clock } from '../../shared/clock/index.js';
import type { VllmEngine } from './engine.js';

/**
 * Runs an engine in real time: a timer fires at the end of the step in flight and the engine catches up to the
 * wall clock on every tick. Steps carry their own simulated timestamps, so a late timer (a busy host) delays when
 * tokens are delivered, not how many steps fit in a second: the simulated capacity stays the same.
 */
export class RealtimeEngineDriver {
  readonly #engine: VllmEngine;
  readonly #clock: Clock;
  #timer: NodeJS.Timeout | undefined;
  #timerAtMs = Number.POSITIVE_INFINITY;
  #stopped = false;

  constructor(engine: VllmEngine, clock: Clock) {
    this.#engine = engine;
    this.#clock = clock;
    engine.onWake(() => this.#schedule());
    this.#schedule();
  }

  /** Stops the timer; the engine is left as it is. */
  stop(): void {
    this.#stopped = true;
    this.#engine.onWake(undefined);
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    this.#timer = undefined;
    this.#timerAtMs = Number.POSITIVE_INFINITY;
    if (this.#stopped) return;
    this.#engine.advanceTo(this.#clock.now());
    this.#schedule();
  }

  #schedule(): void {
    if (this.#stopped) return;
    const next = this.#engine.nextEventMs();
    if (next === undefined) return;
    const nowMs = this.#clock.now();
    // At least 1 ms: a step due exactly now is composed only once time has passed it (late arrivals may join).
    const delayMs = Math.max(1, Math.ceil(next - nowMs));
    const atMs = nowMs + delayMs;
    if (this.#timer !== undefined && this.#timerAtMs <= atMs) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timerAtMs = atMs;
    this.#timer = setTimeout(() => this.#tick(), delayMs);
    // The HTTP server keeps the process alive while it serves; the timer alone should not.
    this.#timer.unref();
  }
}
