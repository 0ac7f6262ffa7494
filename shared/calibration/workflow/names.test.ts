import { describe, expect, it } from '@jest/globals';
import { EXECUTION_TIMEOUT_SECONDS, executionNames } from './names.js';

describe('Function: executionNames', () => {
  it('gives the same names to the same execution, so a retry finds what the first attempt created', () => {
    // Act
    const first = executionNames('calib-prod-20260101T000000');
    const again = executionNames('calib-prod-20260101T000000');

    // Assess
    expect(again.warmupJob).toBe(first.warmupJob);
    expect(again.loadJob(3)).toBe(first.loadJob(3));
    expect(first.warmupJob).toMatch(/^calib-[0-9a-f]{8}-warmup$/);
    expect(first.loadJob(3)).toMatch(/^calib-[0-9a-f]{8}-s3$/);
    expect(first.configMap).toMatch(/^calib-[0-9a-f]{8}-k6$/);
  });

  it('gives different executions different names', () => {
    // Assess
    expect(executionNames('run-a').warmupJob).not.toBe(executionNames('run-b').warmupJob);
  });

  it.each([
    { case: 'a valid label value', name: 'calib-prod-1', label: 'calib-prod-1' },
    { case: 'longer than 63 characters', name: `calib-${'x'.repeat(70)}`, label: /^calib-[0-9a-f]{8}$/ },
    { case: 'ending with "-"', name: 'calib-', label: /^calib-[0-9a-f]{8}$/ },
  ])('labels an execution name that is $case', ({ name, label }) => {
    // Act
    const names = executionNames(name);

    // Assess
    if (typeof label === 'string') expect(names.label).toBe(label);
    else expect(names.label).toMatch(label);
  });
});

describe('Constant: EXECUTION_TIMEOUT_SECONDS', () => {
  it("equals the state machine's TimeoutSeconds, so a lease never expires while its execution may still run", async () => {
    // Prepare
    const { readFile } = await import('node:fs/promises');
    const definition = JSON.parse(
      await readFile(new URL('../../../statemachines/calibration.asl.json', import.meta.url), 'utf8'),
    ) as { TimeoutSeconds?: number };

    // Assess
    expect(EXECUTION_TIMEOUT_SECONDS).toBe(definition.TimeoutSeconds);
  });
});
