import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { LambdaDeadlineError } from './errors.js';

/**
 * A Lambda entry point built on first use, not at import, so that importing a handler module (tests, the CLI) needs
 * no environment; the configuration is then parsed once per container. A configuration the function refuses is
 * logged (the named error lists every bad variable) and thrown on every invocation until it is fixed.
 */
export function lazyLambdaEntry<E, R>(
  serviceName: string,
  build: (
    env: Readonly<Record<string, string | undefined>>,
    logger: Logger,
  ) => (event: E, context: Context) => Promise<R>,
): (event: E, context: Context) => Promise<R> {
  let built: ((event: E, context: Context) => Promise<R>) | undefined;
  return async (event, context) => {
    if (built === undefined) {
      const logger = new Logger({ serviceName });
      try {
        built = build(process.env, logger);
      } catch (error) {
        logger.error('configuration rejected', error as Error);
        throw error;
      }
    }
    return built(event, context);
  };
}

/** One invocation's deadline guard: `signal` aborts `marginMs` before Lambda's deadline (or with middy's signal). */
export interface Deadline {
  readonly signal: AbortSignal;
  /** Stops the timer; call it when the invocation ends (a pending timer would keep a local process alive). */
  clear(): void;
}

/**
 * Combines middy's signal with one that fires `marginMs` before the Lambda deadline, so a function stops starting
 * work while there is still time to log and return what it did. The timer is a plain `setTimeout` held by this
 * closure, not `AbortSignal.timeout`: `AbortSignal.any` keeps its sources only weakly, and on Node 20 an otherwise
 * unreferenced timeout signal is garbage-collected and never fires (issue 15, test: lambdaEntry.test.ts).
 */
export function withDeadline(signal: AbortSignal, context: Context, marginMs: number): Deadline {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const forward = (): void => {
    clearTimeout(timer);
    controller.abort(signal.reason);
  };
  if (typeof context.getRemainingTimeInMillis === 'function') {
    const budgetMs = Math.max(0, context.getRemainingTimeInMillis() - marginMs);
    timer = setTimeout(() => {
      signal.removeEventListener('abort', forward);
      controller.abort(new LambdaDeadlineError(budgetMs, marginMs));
    }, budgetMs);
  }
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', forward);
    },
  };
}
