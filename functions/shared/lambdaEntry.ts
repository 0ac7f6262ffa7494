import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';

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

/**
 * Combines middy's signal with one that fires `marginMs` before the Lambda deadline, so a function stops starting
 * work while there is still time to log and return what it did.
 */
export function withDeadline(signal: AbortSignal, context: Context, marginMs: number): AbortSignal {
  if (typeof context.getRemainingTimeInMillis !== 'function') return signal;
  const remaining = context.getRemainingTimeInMillis() - marginMs;
  return AbortSignal.any([signal, AbortSignal.timeout(Math.max(0, remaining))]);
}
