/** A source of "now" in epoch milliseconds. Decision code takes a Clock instead of reading Date.now(). */
export interface Clock {
  now(): number;
}

/** The wall clock, for servers and Lambda handlers. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to, for deterministic unit tests and virtual-time simulation. */
export class VirtualClock implements Clock {
  #nowMs: number;

  constructor(startMs = 0) {
    this.#nowMs = startMs;
  }

  now(): number {
    return this.#nowMs;
  }

  /** Moves time forward by `ms` (never backwards). */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`VirtualClock.advance: ms must be >= 0, got ${ms}`);
    this.#nowMs += ms;
  }

  /** Sets time to `ms`, which must not be earlier than the current time. */
  set(ms: number): void {
    if (ms < this.#nowMs) throw new RangeError(`VirtualClock.set: ${ms} is before the current time ${this.#nowMs}`);
    this.#nowMs = ms;
  }
}
