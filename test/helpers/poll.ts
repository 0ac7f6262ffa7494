import { sleep } from './twin.js';

export interface PollOptions {
  /** A guard against hanging, not a speed requirement. Default 60 s. */
  timeoutMs?: number;
  /** Default 250 ms. */
  intervalMs?: number;
}

/**
 * Calls `probe` until it returns a value other than `undefined` and resolves with it; rejects naming `what` (and
 * the last error the probe threw, if any) once `timeoutMs` has passed.
 */
export async function pollFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  options: PollOptions = {},
): Promise<T> {
  const { timeoutMs = 60_000, intervalMs = 250 } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const detail = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`${what}: not seen within ${timeoutMs} ms${detail}`);
    }
    await sleep(intervalMs);
  }
}
