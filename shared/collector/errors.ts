/**
 * Errors of the collector module. Every class extends `CollectorError` and sets `name` (Step Functions and Lambda
 * error metrics match on it).
 */
import type { CollectResult } from './types.js';

/** Base class of every error raised by `shared/collector`. */
export class CollectorError extends Error {
  /** True when running the collection again later may succeed. */
  readonly retryable: boolean;

  constructor(message: string, retryable: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CollectorError';
    this.retryable = retryable;
  }
}

/** No target published anything: the whole run failed. Carries the per-target result with every reason. */
export class CollectorAllTargetsFailedError extends CollectorError {
  readonly result: CollectResult;

  constructor(result: CollectResult) {
    const reasons = result.targets.map((t) => `${t.target}: ${t.reason ?? 'failed'}`).join('; ');
    super(`every target failed (${result.targets.length}): ${reasons}`, true);
    this.name = 'CollectorAllTargetsFailedError';
    this.result = result;
  }
}
