import { readFileSync } from 'node:fs';
import * as z from 'zod';

/**
 * The hand-transcribed vLLM reference (test/fixtures/vllm-reference-metrics.json): the independent oracle of what a
 * real vLLM replica exposes on `/metrics`. Read from the fixture, never from the twin's code.
 */
const bucketFamily = z.enum([
  'request_latency',
  'time_to_first_token',
  'inter_token_latency',
  'iteration_tokens',
  'request_params_n',
  'request_tokens',
]);

const referenceSchema = z.strictObject({
  source: z.string(),
  scope: z.string(),
  baseLabels: z.array(z.string()),
  bucketFamilies: z.record(z.string(), z.array(z.number().positive())),
  bucketCounts: z.record(z.string(), z.number().int().positive()),
  requestTokens: z.strictObject({
    rule: z.string(),
    examples: z.array(z.strictObject({ maxModelLen: z.number().int().positive(), le: z.array(z.number()) })),
  }),
  metrics: z.array(
    z.strictObject({
      name: z.string().startsWith('vllm:'),
      type: z.enum(['gauge', 'counter', 'histogram']),
      buckets: bucketFamily.optional(),
      labelValues: z.record(z.string(), z.array(z.string())).optional(),
      baseLabels: z.array(z.string()).optional(),
      withoutLabels: z.array(z.string()).optional(),
    }),
  ),
  absentWithoutFeature: z.array(z.strictObject({ name: z.string(), feature: z.string() })),
  renamed: z.array(z.strictObject({ legacy: z.string(), current: z.string() })),
});

export type VllmReference = z.infer<typeof referenceSchema>;
export type ReferenceMetric = VllmReference['metrics'][number];

/** Loads and checks the fixture (a typo in it fails here, naming the field). */
export function loadVllmReference(): VllmReference {
  const file = new URL('../fixtures/vllm-reference-metrics.json', import.meta.url);
  return referenceSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
}

/**
 * The `request_tokens` bucket family: the 1-2-5 series 1, 2, 5, 10, 20, 50, ... up to max_model_len (the
 * reference's rule, checked against its examples in twin.test.ts).
 */
export function requestTokenBuckets(maxModelLen: number): number[] {
  const buckets: number[] = [];
  for (let decade = 1; decade <= maxModelLen; decade *= 10) {
    for (const mantissa of [1, 2, 5]) if (mantissa * decade <= maxModelLen) buckets.push(mantissa * decade);
  }
  return buckets;
}

/** The reference upper bounds of a histogram, `+Inf` excluded, for a replica with `maxModelLen`. */
export function referenceBuckets(reference: VllmReference, metric: ReferenceMetric, maxModelLen: number): number[] {
  if (metric.buckets === undefined) throw new Error(`${metric.name} is not a histogram in the reference`);
  if (metric.buckets === 'request_tokens') return requestTokenBuckets(maxModelLen);
  const buckets = reference.bucketFamilies[metric.buckets];
  if (buckets === undefined) throw new Error(`the reference has no bucket family ${metric.buckets}`);
  return buckets;
}
