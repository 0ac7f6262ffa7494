import * as z from 'zod';
import { VllmRequestInvalidError } from './errors.js';
import { estimatePromptTokens } from './tokens.js';

/**
 * The subset of vLLM's OpenAI-compatible completions API the twin serves: request parsing with vLLM's defaults
 * and error wording, and the response / stream-chunk shapes (vllm/entrypoints/openai/protocol.py).
 */

/** `max_tokens` when the request does not set it (vLLM's CompletionRequest default, as OpenAI's). */
export const DEFAULT_MAX_TOKENS = 16;

// Lenient like vLLM: unknown fields are ignored (vLLM only logs a warning for them).
const completionRequestSchema = z.object({
  model: z.string().nullish(),
  prompt: z.union([
    z.string(),
    z.array(z.number().int().nonnegative()),
    z.array(z.string()),
    z.array(z.array(z.number().int().nonnegative())),
  ]),
  max_tokens: z.number().int().nullish(),
  temperature: z.number().nonnegative().nullish(),
  n: z.number().int().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z
    .object({ include_usage: z.boolean().nullish(), continuous_usage_stats: z.boolean().nullish() })
    .nullish(),
});

/** A completion request reduced to what the twin needs. */
export interface ParsedCompletionRequest {
  /** The `model` field, when given (checked against the served model name by the caller). */
  model: string | undefined;
  promptTokens: number;
  maxTokens: number;
  stream: boolean;
  includeUsage: boolean;
}

function promptTokenCount(prompt: z.infer<typeof completionRequestSchema>['prompt']): number {
  if (typeof prompt === 'string') return estimatePromptTokens(prompt);
  // One prompt given as a list: token ids, or a single string / token-id list wrapped in a batch of one.
  if (prompt.length === 1) {
    const [only] = prompt;
    if (typeof only === 'string') return estimatePromptTokens(only);
    if (Array.isArray(only)) return only.length;
  }
  if (prompt.every((item) => typeof item === 'number')) return prompt.length;
  throw new VllmRequestInvalidError(
    'The vLLM twin serves one prompt per request: give prompt as a string or a list of token ids, not a batch.',
    { param: 'prompt' },
  );
}

/** Parses a `/v1/completions` body; throws VllmRequestInvalidError (400) with the field in the message. */
export function parseCompletionRequest(body: unknown, maxModelLen: number): ParsedCompletionRequest {
  const result = completionRequestSchema.safeParse(body);
  if (!result.success) {
    const issue = result.error.issues[0];
    const field = issue?.path.join('.') || 'body';
    throw new VllmRequestInvalidError(`${field}: ${issue?.message ?? 'invalid request'}`, { param: field });
  }
  const request = result.data;
  if (request.n !== undefined && request.n !== null && request.n !== 1) {
    throw new VllmRequestInvalidError(`The vLLM twin supports n=1 only, got n=${request.n}.`, { param: 'n' });
  }
  if (request.stream_options && request.stream !== true) {
    // vLLM's CompletionRequest validator.
    throw new VllmRequestInvalidError('Stream options can only be defined when `stream=True`.', {
      param: 'stream_options',
    });
  }
  const promptTokens = promptTokenCount(request.prompt);
  // An explicit null asks for "as many as fit", as vLLM does (max_model_len - prompt tokens).
  const maxTokens =
    request.max_tokens === null ? Math.max(1, maxModelLen - promptTokens) : (request.max_tokens ?? DEFAULT_MAX_TOKENS);
  return {
    model: request.model ?? undefined,
    promptTokens,
    maxTokens,
    stream: request.stream === true,
    includeUsage: request.stream_options?.include_usage === true,
  };
}

/** OpenAI-style error body, as current vLLM returns it. */
export function errorBody(message: string, type: string, status: number, param: string | null = null): object {
  return { error: { message, type, param, code: status } };
}

export interface CompletionIdentity {
  id: string;
  created: number;
  model: string;
}

export interface Usage {
  prompt_tokens: number;
  total_tokens: number;
  completion_tokens: number;
}

export function usage(promptTokens: number, completionTokens: number): Usage {
  return {
    prompt_tokens: promptTokens,
    total_tokens: promptTokens + completionTokens,
    completion_tokens: completionTokens,
  };
}

/** The non-streaming completion object. */
export function completionResponse(
  identity: CompletionIdentity,
  text: string,
  finishReason: string,
  tokens: Usage,
): object {
  return {
    id: identity.id,
    object: 'text_completion',
    created: identity.created,
    model: identity.model,
    choices: [
      { index: 0, text, logprobs: null, finish_reason: finishReason, stop_reason: null, prompt_logprobs: null },
    ],
    usage: { ...tokens, prompt_tokens_details: null },
  };
}

/** One SSE chunk carrying one token (finish_reason set on the last). */
export function completionChunk(identity: CompletionIdentity, text: string, finishReason: string | null): object {
  return {
    id: identity.id,
    object: 'text_completion',
    created: identity.created,
    model: identity.model,
    choices: [{ index: 0, text, logprobs: null, finish_reason: finishReason, stop_reason: null }],
  };
}

/** The final usage chunk sent when `stream_options.include_usage` is true. */
export function usageChunk(identity: CompletionIdentity, tokens: Usage): object {
  return {
    id: identity.id,
    object: 'text_completion',
    created: identity.created,
    model: identity.model,
    choices: [],
    usage: tokens,
  };
}
