/**
 * A controller's work queue, as client-go's: keys are deduplicated while waiting, processed one at a time (so a
 * reconcile never races itself), and a failed key is retried with a growing delay. Reconciles are idempotent, so a
 * key added many times is processed once with the latest state.
 */
export class WorkQueue {
  readonly #pending = new Set<string>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #failures = new Map<string, number>();
  #draining: Promise<void> | undefined;
  #stopped = false;

  constructor(
    private readonly handler: (key: string) => Promise<void> | void,
    private readonly onError: (key: string, error: unknown, retryInMs: number) => void,
    private readonly retry = { baseMs: 250, maxMs: 10_000 },
  ) {}

  /** Queues `key` (no-op when it is already waiting or the queue is stopped). */
  add(key: string): void {
    if (this.#stopped) return;
    this.#pending.add(key);
    this.#draining ??= this.#drain();
  }

  /** Queues `key` after `ms` milliseconds. */
  addAfter(key: string, ms: number): void {
    if (this.#stopped) return;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      this.add(key);
    }, ms);
    timer.unref();
    this.#timers.add(timer);
  }

  /** Stops taking keys and waits for the reconcile in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#pending.clear();
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    await this.#draining;
  }

  async #drain(): Promise<void> {
    // Let the events of one store write (delivered as microtasks) collapse into one reconcile.
    await Promise.resolve();
    while (!this.#stopped) {
      const next = this.#pending.values().next();
      if (next.done) break;
      const key = next.value;
      this.#pending.delete(key);
      try {
        await this.handler(key);
        this.#failures.delete(key);
      } catch (error) {
        const failures = (this.#failures.get(key) ?? 0) + 1;
        this.#failures.set(key, failures);
        const delay = Math.min(this.retry.baseMs * 2 ** (failures - 1), this.retry.maxMs);
        this.onError(key, error, delay);
        this.addAfter(key, delay);
      }
    }
    this.#draining = undefined;
  }
}
