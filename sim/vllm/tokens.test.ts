import { describe, expect, it } from '@jest/globals';
import { estimatePromptTokens, generatedTokenText } from './tokens.js';

describe('Function: estimatePromptTokens', () => {
  it.each([
    {
      case: "the guide's load-test prompt (about 35 tokens)",
      text: 'Starting with the word "kubernetes", write a brief technical explanation about cloud computing concepts. Cover containerization, orchestration, and scalability in about 80 words.',
      min: 33,
      max: 37,
    },
    {
      case: "the guide's warm-up prompt",
      text: 'Write a brief technical explanation about cloud computing concepts.',
      min: 10,
      max: 14,
    },
    { case: 'an empty prompt (only the start-of-sequence token)', text: '', min: 1, max: 1 },
  ])('estimates $case', ({ text, min, max }) => {
    // Act
    const tokens = estimatePromptTokens(text);

    // Assess
    expect(tokens).toBeGreaterThanOrEqual(min);
    expect(tokens).toBeLessThanOrEqual(max);
  });

  it('grows with the prompt and gives the same count for the same text', () => {
    // Prepare
    const sentence = 'Explain how the scheduler admits waiting requests. ';

    // Act
    const once = estimatePromptTokens(sentence);
    const tenTimes = estimatePromptTokens(sentence.repeat(10));

    // Assess
    expect(estimatePromptTokens(sentence)).toBe(once);
    expect(tenTimes).toBe(10 * (once - 1) + 1);
  });
});

describe('Function: generatedTokenText', () => {
  it('produces readable text, the same for the same index', () => {
    // Act
    const text = Array.from({ length: 12 }, (_, index) => generatedTokenText(index)).join('');

    // Assess
    expect(text).toBe(' Cloud computing delivers compute, storage and networking on demand. Containers');
    expect(generatedTokenText(100)).toBe(generatedTokenText(100));
  });
});
