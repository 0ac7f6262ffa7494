/**
 * The request mix of a load test: prompt and output length distributions, the seed, and the sampler's source text
 * the k6 script embeds (the twin evaluates the same text: sim/mix/sampler.ts).
 */
export {
  DEFAULT_MIX_SEED,
  describeLength,
  isFixed,
  LENGTH_DISTRIBUTIONS,
  lengthDistributionSchema,
  lengthMean,
  lengthRange,
  toDistribution,
  type LengthDistribution,
  type RequestMix,
  type SampledRequest,
} from './lengthDistribution.js';
export { SAMPLE_REQUEST_FUNCTION, SAMPLER_SOURCE } from './samplerSource.js';
export { longestRequest, meanLengths, mixSeedSchema, requestMixSchema } from './requestMix.js';
