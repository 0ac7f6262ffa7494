import type { BuildHandlerArguments, BuildMiddleware, MetadataBearer, Pluggable } from '@smithy/types';
import type { Clock } from '../clock/index.js';
import { EndpointUnansweredError, NO_ANSWER_KINDS } from './errors.js';
import { findNoAnswer } from './noAnswer.js';

/** The part of an AWS SDK v3 client this needs: every client has `middlewareStack`. */
interface SdkClient {
  middlewareStack: { use(pluggable: Pluggable<object, MetadataBearer>): void };
}

const NAME = 'vllmEksPilotNameEndpointOnNoAnswer';

/**
 * Makes `client` throw `EndpointUnansweredError` naming the host it sent to, and the time it waited over all its
 * attempts, when a call gets no answer (timed out, refused, no route, no DNS name). The SDK's own error names
 * neither the host nor the total wait, and in a VPC without the service's endpoint that host is what to fix. Every
 * other error (an HTTP answer, an abort) passes through unchanged. Added at the build step, outside the SDK's retries.
 */
export function nameEndpointOnNoAnswer<C extends SdkClient>(client: C, clock: Clock): C {
  const middleware: BuildMiddleware<object, MetadataBearer> = (next) => async (args: BuildHandlerArguments<object>) => {
    const started = clock.now();
    try {
      return await next(args);
    } catch (error) {
      const noAnswer = findNoAnswer(error);
      const request = args.request as { hostname?: unknown; port?: unknown } | undefined;
      if (noAnswer === undefined || typeof request?.hostname !== 'string') throw error;
      const host = typeof request.port === 'number' ? `${request.hostname}:${request.port}` : request.hostname;
      // Refused or unresolved fail at once: the wait is only worth saying for a timeout.
      const waitedMs = noAnswer.kind === NO_ANSWER_KINDS.timeout ? clock.now() - started : undefined;
      throw new EndpointUnansweredError(host, noAnswer.kind, waitedMs, { cause: error });
    }
  };
  client.middlewareStack.use({
    applyToStack: (stack) => stack.add(middleware, { step: 'build', name: NAME, override: true }),
  });
  return client;
}
