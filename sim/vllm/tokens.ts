/**
 * Deterministic token counting for the twin, which has no tokenizer. The estimate imitates a BPE tokenizer of the
 * Mistral/Llama kind closely enough for load shapes:
 * - 1 token for the beginning-of-sequence marker the tokenizer adds;
 * - 1 token per word of up to 10 letters, one more per further 10 letters ("containerization" = 2);
 * - 1 token per digit (these tokenizers split numbers into digits);
 * - 1 token per 2 adjacent punctuation marks (`",` is one token, `.` is one).
 * The guide's load-test prompt ("Starting with the word \"revolution\", write a brief technical explanation about
 * cloud computing concepts. Cover containerization, orchestration, and scalability in about 80 words.") comes out
 * at 35 tokens, the guide's warm-up prompt at 12.
 */
export function estimatePromptTokens(text: string): number {
  let tokens = 1;
  for (const match of text.matchAll(/(\p{L}+)|(\p{N})|([^\s\p{L}\p{N}]+)/gu)) {
    const [, word, digit, punctuation] = match;
    if (word !== undefined) tokens += Math.ceil([...word].length / 10);
    else if (digit !== undefined) tokens += 1;
    else if (punctuation !== undefined) tokens += Math.ceil([...punctuation].length / 2);
  }
  return tokens;
}

/** Words the twin "generates", cycled; each is one token. */
const GENERATED_WORDS = [
  ' Cloud',
  ' computing',
  ' delivers',
  ' compute',
  ',',
  ' storage',
  ' and',
  ' networking',
  ' on',
  ' demand',
  '.',
  ' Containers',
  ' package',
  ' applications',
  ' so',
  ' that',
  ' orchestration',
  ' can',
  ' schedule',
  ' and',
  ' scale',
  ' them',
  '.',
] as const;

/** The text of the `index`-th generated token (0-based), deterministic so responses are reproducible. */
export function generatedTokenText(index: number): string {
  return GENERATED_WORDS[index % GENERATED_WORDS.length] ?? '';
}
