import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Context } from 'aws-lambda';
import { LambdaDeadlineError } from './errors.js';
import { withDeadline } from './lambdaEntry.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

const contextWith = (remainingMs: number) => ({ getRemainingTimeInMillis: () => remainingMs }) as unknown as Context;

// A child process, because the proof needs `--expose-gc` and a heap with nothing else holding the signal: it creates
// the deadline, drops every reference but the listener, collects garbage several times and reports when the abort
// fired (or that it never did).
const GC_SCRIPT = `
import { withDeadline } from './functions/shared/lambdaEntry.ts';
const started = Date.now();
const fired = new Promise((resolve) => {
  const { signal } = withDeadline(new AbortController().signal, { getRemainingTimeInMillis: () => 400 }, 100);
  signal.addEventListener('abort', () => resolve({ afterMs: Date.now() - started, name: signal.reason?.name }));
});
for (let i = 0; i < 5; i++) {
  await new Promise((resolve) => setTimeout(resolve, 20));
  globalThis.gc();
}
const never = new Promise((resolve) => setTimeout(() => resolve(null), 3000));
console.log(JSON.stringify(await Promise.race([fired, never])));
`;

describe('Function: withDeadline', () => {
  it('fires on time after forced garbage collections (the signal is held only by its listener)', async () => {
    // Act
    const { stdout } = await run(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', '--input-type=module', '--eval', GC_SCRIPT],
      { cwd: root, env: { ...process.env, NODE_OPTIONS: '' }, timeout: 20_000 },
    );

    // Assess: 400 ms left, 100 ms margin: the abort fires at about 300 ms, named.
    const result = JSON.parse(stdout.trim().split('\n').pop() ?? 'null') as { afterMs: number; name: string } | null;
    expect(result).not.toBeNull();
    expect(result?.name).toBe('LambdaDeadlineError');
    expect(result?.afterMs).toBeGreaterThanOrEqual(290);
    expect(result?.afterMs).toBeLessThan(1_500);
  }, 30_000);

  it("aborts with middy's reason when middy's signal fires first, and stops its timer", () => {
    // Prepare
    const middy = new AbortController();
    const deadline = withDeadline(middy.signal, contextWith(60_000), 3_000);

    // Act
    middy.abort(new Error('middy timed out early'));

    // Assess
    expect(deadline.signal.aborted).toBe(true);
    expect((deadline.signal.reason as Error).message).toBe('middy timed out early');
    deadline.clear();
  });

  it('is already aborted, named, when no time is left', async () => {
    const deadline = withDeadline(new AbortController().signal, contextWith(1_000), 3_000);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(deadline.signal.reason).toBeInstanceOf(LambdaDeadlineError);
    deadline.clear();
  });

  it('never fires once cleared (the invocation ended in time)', async () => {
    const deadline = withDeadline(new AbortController().signal, contextWith(50), 0);
    deadline.clear();
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(deadline.signal.aborted).toBe(false);
  });
});
