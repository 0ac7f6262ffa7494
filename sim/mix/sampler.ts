import { runInNewContext } from 'node:vm';
import {
  SAMPLE_REQUEST_FUNCTION,
  SAMPLER_SOURCE,
  type RequestMix,
  type SampledRequest,
} from '../../shared/load/index.js';

type SampleRequest = (mix: RequestMix, index: number) => SampledRequest;

/**
 * The k6 script's own sampler (SAMPLER_SOURCE of shared/load), evaluated once in a context of its own: the twin's k6 emulation and
 * `vllm-pilot twin capacity` draw with the very text the real k6 runs, not a TypeScript copy of it.
 */
const sampleRequest = runInNewContext(`${SAMPLER_SOURCE}\n${SAMPLE_REQUEST_FUNCTION};`, {
  Math,
  String,
  JSON,
  Error,
}) as SampleRequest;

/** Request `index` of a mix (0-based, in the order k6 starts iterations): the same for the same seed, everywhere. */
export function sampleRequestAt(mix: RequestMix, index: number): SampledRequest {
  const { promptTokens, maxTokens } = sampleRequest(mix, index);
  return { promptTokens, maxTokens };
}
