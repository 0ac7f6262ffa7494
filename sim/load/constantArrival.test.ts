import { describe, expect, it } from '@jest/globals';
import { estimatePromptTokens } from '../vllm/tokens.js';
import { buildPrompt } from './constantArrival.js';

describe('Function: buildPrompt', () => {
  it.each([
    { name: "the guide's shape", tokens: 35 },
    { name: 'a short prompt', tokens: 12 },
    { name: 'a long prompt', tokens: 300 },
    { name: 'a prefill-heavy prompt', tokens: 1500 },
  ])('$name comes out at the requested token count', ({ tokens }) => {
    expect(estimatePromptTokens(buildPrompt(tokens))).toBe(tokens);
  });

  it("reads each prompt's text a bounded number of times, so 1,500-token prompts stay cheap for the twin's k6", () => {
    // Prepare: counting the whole prompt again after each padding word read ~1,100 prompts' worth of text for one
    // 1,500-token prompt (~110 ms of CPU; at 10 req/s more than a second holds, on the event loop the replicas share).
    let charactersCounted = 0;
    const counting = (text: string) => {
      charactersCounted += text.length;
      return estimatePromptTokens(text);
    };

    // Act
    const prompt = buildPrompt(1500, Math.random, counting);

    // Assess: the guide's sentence is counted while it is trimmed, then the padding is added without counting again.
    expect(estimatePromptTokens(prompt)).toBe(1500);
    expect(charactersCounted).toBeLessThan(prompt.length);
  });

  it('differs between requests, so prefix caching cannot help', () => {
    expect(buildPrompt(35)).not.toBe(buildPrompt(35));
  });
});
