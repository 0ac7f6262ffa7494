import type http from 'node:http';
import type { Clock } from '../../../shared/clock/index.js';
import type { SampledRequest } from '../../../shared/load/index.js';
import { sendCompletion } from '../../load/completion.js';
import { buildPrompt } from '../../load/constantArrival.js';

export interface CompletionShape {
  model: string;
  promptTokens: number;
  maxTokens: number;
  /** Lengths by iteration number (the script's request-mix sampler); without it, promptTokens and maxTokens. */
  sample?: (index: number) => SampledRequest;
  /** Stream the answer (the script's streaming mode). */
  stream?: boolean;
}

export interface CompletionOutcome {
  /** HTTP status, or 0 when no response came (connection refused, timeout, stopped). */
  status: number;
  /** Why it failed without a response (error code or the abort reason), or how its stream broke. */
  error?: string;
  ttftMs?: number;
  itlMs?: number;
  promptTokens?: number;
  completionTokens?: number;
}

/**
 * One iteration of the k6 script: `POST <base>/v1/completions` with the guide's prompt (a random word defeats prefix
 * caching), the iteration's lengths and temperature 0.7, waiting for the whole answer as `http.post` does, or reading
 * its stream as the script's xk6-sse branch does.
 */
export async function postCompletion(
  baseUrl: string,
  shape: CompletionShape,
  iteration: number,
  agent: http.Agent,
  signal: AbortSignal,
  clock: Clock,
): Promise<CompletionOutcome> {
  const lengths = shape.sample?.(iteration) ?? { promptTokens: shape.promptTokens, maxTokens: shape.maxTokens };
  try {
    const result = await sendCompletion(
      baseUrl,
      {
        model: shape.model,
        prompt: buildPrompt(lengths.promptTokens),
        maxTokens: lengths.maxTokens,
        stream: shape.stream === true,
      },
      agent,
      signal,
      clock,
    );
    return {
      status: result.status,
      ...(result.streamError === undefined ? {} : { error: result.streamError }),
      ...(result.ttftMs === undefined ? {} : { ttftMs: result.ttftMs }),
      ...(result.itlMs === undefined ? {} : { itlMs: result.itlMs }),
      ...(result.usage === undefined
        ? {}
        : { promptTokens: result.usage.promptTokens, completionTokens: result.usage.completionTokens }),
    };
  } catch (error) {
    return { status: 0, error: errorName(error as Error, signal) };
  }
}

function errorName(error: Error, signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (signal.aborted && typeof reason === 'string') return reason;
  return (error as NodeJS.ErrnoException).code ?? error.name;
}
