import { describe, expect, it } from '@jest/globals';
import { BATCH_BOUNDS, batchWorstCaseDuration, isBatchInput, parseCalibrationBatchInput } from './batchInput.js';
import { CalibrationInputInvalidError } from './errors.js';

/** A valid single-target input for `deployment`, with a short plan. */
function entry(deployment: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    target: {
      cluster: 'ai-eks',
      region: 'us-east-2',
      namespace: 'default',
      deployment,
      model: 'mistralai/Ministral-8B',
      ampWorkspaceUrl: 'https://aps-workspaces.us-east-2.amazonaws.com/workspaces/ws-1/',
    },
    plan: { rates: [10, 20], holdSeconds: 30 },
    ...overrides,
  };
}

/** The issues of a refused input as `path: message` lines. */
function issuesOf(input: unknown): string[] {
  try {
    parseCalibrationBatchInput(input);
  } catch (error) {
    if (error instanceof CalibrationInputInvalidError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  throw new Error('the input was accepted');
}

describe('Function: parseCalibrationBatchInput', () => {
  it('accepts a list, defaults maxConcurrency to 2, and keeps each entry as given beside its parsed form', () => {
    // Act
    const batch = parseCalibrationBatchInput({ targets: [entry('vllm-a'), entry('vllm-b')] });

    // Assess
    expect(batch.maxConcurrency).toBe(BATCH_BOUNDS.defaultConcurrency);
    expect(batch.targets.map((t) => t.parsed.target.deployment)).toEqual(['vllm-a', 'vllm-b']);
    expect(batch.targets[0]?.parsed.plan.restSeconds).toBe(30);
    expect(batch.targets[0]?.given).toEqual(entry('vllm-a'));
  });

  it('refuses the same Deployment twice, naming both entries', () => {
    // Act
    const issues = issuesOf({ targets: [entry('vllm-a'), entry('vllm-b'), entry('vllm-a')] });

    // Assess
    expect(issues).toEqual([
      expect.stringMatching(/^targets\[2\]\.target: is the same Deployment as targets\[0\]\.target \(default\/vllm-a/),
    ]);
  });

  it('takes the same Deployment name in another namespace or cluster as another target', () => {
    // Prepare
    const other = entry('vllm-a');
    (other.target as Record<string, unknown>).namespace = 'team-b';

    // Act
    const batch = parseCalibrationBatchInput({ targets: [entry('vllm-a'), other] });

    // Assess
    expect(batch.targets).toHaveLength(2);
  });

  it.each([
    // [case, maxConcurrency, the message]
    ['zero', 0, /^maxConcurrency: must be >= 1/],
    ['above the bound', BATCH_BOUNDS.maxConcurrency + 1, /^maxConcurrency: must be <= 10 \(targets calibrated at once/],
    ['not an integer', 1.5, /^maxConcurrency: must be an integer/],
    ['a string', '2', /^maxConcurrency: must be an integer/],
  ])('refuses maxConcurrency %s, saying what is accepted', (_case, maxConcurrency, message) => {
    // Act
    const issues = issuesOf({ targets: [entry('vllm-a')], maxConcurrency });

    // Assess
    expect(issues).toEqual([expect.stringMatching(message)]);
  });

  it.each([
    // [case, input, the message]
    ['an empty list', { targets: [] }, /^targets: must list at least one target/],
    ['not a list', { targets: entry('vllm-a') }, /^targets: must be a list/],
    ['an unknown key', { targets: [entry('vllm-a')], maxConcurency: 2 }, /^maxConcurency: unknown key; accepted:/],
    [
      'too many targets',
      { targets: Array.from({ length: BATCH_BOUNDS.targets + 1 }, (_, i) => entry(`vllm-${i}`)) },
      /^targets: must list at most 20 targets/,
    ],
  ])('refuses %s', (_case, input, message) => {
    // Act
    const issues = issuesOf(input);

    // Assess
    expect(issues).toEqual([expect.stringMatching(message)]);
  });

  it("names a bad entry's field under its place in the list", () => {
    // Act
    const issues = issuesOf({ targets: [entry('vllm-a'), entry('vllm-b', { plan: { rates: [20, 10] } })] });

    // Assess
    expect(issues).toEqual([expect.stringMatching(/^targets\[1\]\.plan\.rates\[1\]: 10 is not greater/)]);
  });

  it('refuses an entry that carries the batch mark: the execution sets it itself', () => {
    // Act
    const issues = issuesOf({ targets: [entry('vllm-a', { batch: { executionArn: 'arn', index: 0 } })] });

    // Assess
    expect(issues).toEqual([expect.stringMatching(/^targets\[0\]\.batch: is set by the many-target execution/)]);
  });

  it('refuses a list that cannot end within the execution timeout at its concurrency, and accepts it wider', () => {
    // Prepare: the guide's default plan, about 8,520 s at worst per target.
    const targets = ['a', 'b', 'c', 'd', 'e'].map((name) => ({ ...entry(`vllm-${name}`), plan: {} }));

    // Act
    const issues = issuesOf({ targets, maxConcurrency: 2 });
    const wider = parseCalibrationBatchInput({ targets, maxConcurrency: 3 });

    // Assess
    expect(issues).toEqual([
      expect.stringMatching(/^targets: worst-case duration \d+ s .* exceeds the execution timeout/),
    ]);
    expect(wider.maxConcurrency).toBe(3);
  });
});

describe('Function: batchWorstCaseDuration', () => {
  it.each([
    // [case, durations, maxConcurrency, seconds]
    ['one at a time: the sum', [100, 200, 300], 1, 600],
    ['all at once: the longest', [100, 200, 300], 3, 300],
    ['more slots than runs: as all at once', [100, 200], 5, 200],
    ["two at once: Graham's bound sum/2 + max/2", [100, 100, 100], 2, 200],
  ])('%s', (_case, durations, maxConcurrency, seconds) => {
    // Act
    const bound = batchWorstCaseDuration(durations, maxConcurrency);

    // Assess
    expect(bound.seconds).toBe(seconds);
  });
});

describe('Function: isBatchInput', () => {
  it('tells the many-target form (targets) from a single-target input (target), as the state machine does', () => {
    // Assess
    expect(isBatchInput({ targets: [] })).toBe(true);
    expect(isBatchInput(entry('vllm-a'))).toBe(false);
    expect(isBatchInput(null)).toBe(false);
  });
});
