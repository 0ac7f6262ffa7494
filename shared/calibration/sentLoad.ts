import { describeLength, lengthMean } from '../load/index.js';
import { fmt } from './format.js';
import { requestMixOf, type CalibrationInput } from './input.js';
import type { SentLoad, StepMeasurement } from './types.js';

/**
 * What k6 sent, for the report: the request mix as asked (each length's distribution and expected value, the seed,
 * streaming) and as achieved: the mean prompt and completion tokens vLLM's usage reported to k6, over every step whose
 * k6 summary has them, each step weighted by its answered requests.
 */
export function sentLoad(steps: readonly StepMeasurement[], input: Pick<CalibrationInput, 'request'>): SentLoad {
  const mix = requestMixOf(input.request);
  let requests = 0;
  let promptSum = 0;
  let completionSum = 0;
  let counted = 0;
  for (const step of steps) {
    const k6 = step.k6;
    if (k6 === null) continue;
    const answered = k6.httpReqs - k6.httpReqFailed;
    requests += answered;
    if (answered <= 0 || k6.promptTokensAvg == null || k6.completionTokensAvg == null) continue;
    counted += answered;
    promptSum += k6.promptTokensAvg * answered;
    completionSum += k6.completionTokensAvg * answered;
  }
  return {
    promptTokens: { distribution: describeLength(mix.prompt), expected: lengthMean(mix.prompt) },
    maxTokens: { distribution: describeLength(mix.output), expected: lengthMean(mix.output) },
    seed: mix.seed,
    stream: input.request.stream,
    requests,
    achieved:
      counted === 0 ? null : { promptTokensMean: promptSum / counted, completionTokensMean: completionSum / counted },
  };
}

/** The report lines of what was sent. */
export function sentLoadLines(sent: SentLoad): string[] {
  const lines = [
    `  request mix: prompt ${sent.promptTokens.distribution} tokens, max_tokens ${sent.maxTokens.distribution}, ` +
      `seed ${sent.seed}${sent.stream ? ', streamed' : ''}`,
  ];
  lines.push(
    sent.achieved === null
      ? `  sent (k6): ${sent.requests} answered requests; k6 reported no token counts`
      : `  sent (k6): ${sent.requests} answered requests, mean prompt ${fmt(sent.achieved.promptTokensMean, 1)} tokens ` +
          `(expected ${fmt(sent.promptTokens.expected, 1)}), mean output ${fmt(sent.achieved.completionTokensMean, 1)} ` +
          `tokens (expected ${fmt(sent.maxTokens.expected, 1)})`,
  );
  return lines;
}
