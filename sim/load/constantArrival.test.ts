import { describe, expect, it } from '@jest/globals';
import { estimatePromptTokens } from '../vllm/tokens.js';
import { buildPrompt } from './constantArrival.js';

describe('Function: buildPrompt', () => {
  it.each([
    { name: "the guide's shape", tokens: 35 },
    { name: 'a short prompt', tokens: 12 },
    { name: 'a long prompt', tokens: 300 },
  ])('$name comes out at the requested token count', ({ tokens }) => {
    expect(estimatePromptTokens(buildPrompt(tokens))).toBe(tokens);
  });

  it('differs between requests, so prefix caching cannot help', () => {
    expect(buildPrompt(35)).not.toBe(buildPrompt(35));
  });
});
