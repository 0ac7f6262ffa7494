import * as z from 'zod';
import {
  DEFAULT_MIX_SEED,
  lengthDistributionSchema,
  lengthMean,
  lengthRange,
  toDistribution,
  type RequestMix,
} from './lengthDistribution.js';

/** A seed: any safe integer (the sampler hashes its decimal text). */
export const mixSeedSchema = z
  .number({ error: 'must be an integer (the seed of the request lengths)' })
  .int({ error: 'must be an integer (the seed of the request lengths)' })
  .refine(Number.isSafeInteger, { error: 'must be a safe integer (the seed of the request lengths)' });

/**
 * A request mix as the k6 Job carries it (K6_ENV.requestMix, JSON): the twin's k6 emulation reads it with this schema,
 * the script with JSON.parse.
 */
export function requestMixSchema(maxTokens: number) {
  return z.strictObject({
    seed: mixSeedSchema.default(DEFAULT_MIX_SEED),
    prompt: lengthDistributionSchema('prompt tokens', maxTokens).transform(toDistribution),
    output: lengthDistributionSchema('max_tokens', maxTokens).transform(toDistribution),
  });
}

/** The longest request a mix can send (prompt + output), for the max-model-len checks. */
export function longestRequest(mix: Pick<RequestMix, 'prompt' | 'output'>): number {
  return lengthRange(mix.prompt).max + lengthRange(mix.output).max;
}

/** The expected prompt and output lengths of a draw. */
export function meanLengths(mix: Pick<RequestMix, 'prompt' | 'output'>): { promptTokens: number; maxTokens: number } {
  return { promptTokens: lengthMean(mix.prompt), maxTokens: lengthMean(mix.output) };
}
