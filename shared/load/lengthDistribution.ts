import * as z from 'zod';

/**
 * A distribution of request lengths in tokens (a prompt's, or an answer's `max_tokens`): a number (every request the
 * same), or `{distribution: fixed | uniform | normal | histogram, ...}`. samplerSource.ts draws from them.
 */

export const LENGTH_DISTRIBUTIONS = ['fixed', 'uniform', 'normal', 'histogram'] as const;

/** The default seed of a request mix: a run without one is reproducible too. */
export const DEFAULT_MIX_SEED = 1;

export type LengthDistribution =
  | { distribution: 'fixed'; tokens: number }
  | { distribution: 'uniform'; min: number; max: number }
  | { distribution: 'normal'; mean: number; stddev: number; min: number; max: number }
  | { distribution: 'histogram'; buckets: Array<{ tokens: number; weight: number }> };

/** Prompt and output lengths, and the seed that makes their sequence reproducible. */
export interface RequestMix {
  seed: number;
  prompt: LengthDistribution;
  output: LengthDistribution;
}

const notNumber = (expected: string) => (issue: { input?: unknown }) =>
  typeof issue.input === 'number' ? `${issue.input} is not a finite number; ${expected}` : expected;

/**
 * The schema of one length distribution. `what` names it in errors ("prompt tokens"); `maxTokens` bounds every length
 * (no model has a context that long).
 */
export function lengthDistributionSchema(what: string, maxTokens: number) {
  const tokens = (field: string) =>
    z
      .number({ error: notNumber(`must be an integer number of tokens (${what}, ${field})`) })
      .int({ error: `must be an integer number of tokens (${what}, ${field})` })
      .min(1, { error: `must be >= 1 token (${what}, ${field})` })
      .max(maxTokens, { error: `must be <= ${maxTokens} tokens, past any model's context (${what}, ${field})` });
  const ordered = <T extends { min: number; max: number }>(d: T, ctx: z.RefinementCtx) => {
    if (d.max < d.min)
      ctx.addIssue({
        code: 'custom',
        path: ['max'],
        message: `${d.max} is below min (${d.min}); accepted: max >= min (${what})`,
      });
  };
  const object = z.discriminatedUnion(
    'distribution',
    [
      z.strictObject({ distribution: z.literal('fixed'), tokens: tokens('tokens') }),
      z
        .strictObject({ distribution: z.literal('uniform'), min: tokens('min'), max: tokens('max') })
        .superRefine(ordered),
      z
        .strictObject({
          distribution: z.literal('normal'),
          mean: z
            .number({ error: notNumber(`must be a number of tokens (${what}, mean)`) })
            .min(1, { error: `must be >= 1 token (${what}, mean)` }),
          stddev: z
            .number({ error: notNumber(`must be a number of tokens (${what}, stddev)`) })
            .gt(0, { error: `must be > 0 tokens (${what}, stddev; a fixed length is {distribution: fixed})` }),
          min: tokens('min'),
          max: tokens('max'),
        })
        .superRefine((d, ctx) => {
          ordered(d, ctx);
          if (d.max >= d.min && (d.mean < d.min || d.mean > d.max))
            ctx.addIssue({
              code: 'custom',
              path: ['mean'],
              message: `${d.mean} is outside [min, max] = [${d.min}, ${d.max}]; accepted: min <= mean <= max (${what})`,
            });
        }),
      z.strictObject({
        distribution: z.literal('histogram'),
        buckets: z
          .array(
            z.strictObject({
              tokens: tokens('bucket tokens'),
              weight: z
                .number({ error: notNumber(`must be a number (${what}, bucket weight)`) })
                .gt(0, { error: `must be > 0 (${what}, bucket weight; leave a length out instead)` }),
            }),
            { error: `must be a list of {tokens, weight} (${what})` },
          )
          .min(1, { error: `must hold at least one {tokens, weight} bucket (${what})` }),
      }),
    ],
    {
      error: (issue) =>
        issue.code === 'invalid_union'
          ? `is not a distribution; accepted: a number of tokens, or {distribution: ${LENGTH_DISTRIBUTIONS.join(' | ')}, ...} (${what})`
          : undefined,
    },
  );
  const fixed = tokens('tokens');
  return z.union([fixed, object], {
    // A number is a fixed length: its own error (too long, not whole) says more than "not a length".
    error: (issue) =>
      issue.code !== 'invalid_union'
        ? undefined
        : typeof issue.input === 'number'
          ? (fixed.safeParse(issue.input).error?.issues[0]?.message ?? 'is not a length')
          : `is not a length; accepted: a number of tokens or {distribution: ${LENGTH_DISTRIBUTIONS.join(' | ')}, ...} (${what})`,
  });
}

/** A schema's output: a number stands for the fixed distribution. */
export function toDistribution(value: number | LengthDistribution): LengthDistribution {
  return typeof value === 'number' ? { distribution: 'fixed', tokens: value } : value;
}

/** Whether every draw gives the same length. */
export function isFixed(d: LengthDistribution): d is Extract<LengthDistribution, { distribution: 'fixed' }> {
  return d.distribution === 'fixed';
}

/** The least and the most a draw can give. */
export function lengthRange(d: LengthDistribution): { min: number; max: number } {
  switch (d.distribution) {
    case 'fixed':
      return { min: d.tokens, max: d.tokens };
    case 'uniform':
    case 'normal':
      return { min: d.min, max: d.max };
    case 'histogram': {
      const tokens = d.buckets.map((b) => b.tokens);
      return { min: Math.min(...tokens), max: Math.max(...tokens) };
    }
  }
}

/**
 * The expected length of a draw. Normal: the mean of the normal clipped to [min, max] (not truncated: clipped draws
 * land on the bounds), E = μ(Φ(b) − Φ(a)) + σ(φ(a) − φ(b)) + min·Φ(a) + max·(1 − Φ(b)), a = (min − μ)/σ,
 * b = (max − μ)/σ; rounding to whole tokens moves it by far less than a token.
 */
export function lengthMean(d: LengthDistribution): number {
  switch (d.distribution) {
    case 'fixed':
      return d.tokens;
    case 'uniform':
      return (d.min + d.max) / 2;
    case 'normal': {
      const a = (d.min - d.mean) / d.stddev;
      const b = (d.max - d.mean) / d.stddev;
      return (
        d.mean * (normalCdf(b) - normalCdf(a)) +
        d.stddev * (normalPdf(a) - normalPdf(b)) +
        d.min * normalCdf(a) +
        d.max * (1 - normalCdf(b))
      );
    }
    case 'histogram': {
      const total = d.buckets.reduce((sum, b) => sum + b.weight, 0);
      return d.buckets.reduce((sum, b) => sum + (b.tokens * b.weight) / total, 0);
    }
  }
}

/** One line for a report or the CLI: `uniform 100-900 (mean 500)`, `35`. */
export function describeLength(d: LengthDistribution): string {
  const mean = ` (mean ${round1(lengthMean(d))})`;
  switch (d.distribution) {
    case 'fixed':
      return String(d.tokens);
    case 'uniform':
      return `uniform ${d.min}-${d.max}${mean}`;
    case 'normal':
      return `normal mean ${d.mean} stddev ${d.stddev} clipped to ${d.min}-${d.max}${mean}`;
    case 'histogram':
      return `histogram ${d.buckets.map((b) => `${b.tokens}×${b.weight}`).join(', ')}${mean}`;
  }
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}

function normalPdf(x: number): number {
  return Math.exp((-x * x) / 2) / Math.sqrt(2 * Math.PI);
}

/** Φ by Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7), enough for a mean in tokens. */
function normalCdf(x: number): number {
  const t = 1 / (1 + (0.3275911 * Math.abs(x)) / Math.SQRT2);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp((-x * x) / 2);
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/** The lengths of one request of a mix, as the sampler draws them. */
export interface SampledRequest {
  promptTokens: number;
  maxTokens: number;
}
