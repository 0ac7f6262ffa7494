import { describe, expect, it } from '@jest/globals';
import { WorkQueue } from './workQueue.js';

describe('Class: WorkQueue', () => {
  describe('Method: add', () => {
    it('processes a key added many times in a row once, and keys one at a time', async () => {
      // Prepare
      const seen: string[] = [];
      let running = 0;
      let maxRunning = 0;
      const queue = new WorkQueue(
        async (key) => {
          running += 1;
          maxRunning = Math.max(maxRunning, running);
          seen.push(key);
          await new Promise((resolve) => setTimeout(resolve, 5));
          running -= 1;
        },
        () => undefined,
      );

      // Act
      for (let i = 0; i < 5; i++) queue.add('default/a');
      queue.add('default/b');
      await new Promise((resolve) => setTimeout(resolve, 50));
      await queue.stop();

      // Assess
      expect(seen).toEqual(['default/a', 'default/b']);
      expect(maxRunning).toBe(1);
    });

    it('retries a failing key with a growing delay and reports each failure', async () => {
      // Prepare
      let attempts = 0;
      const delays: number[] = [];
      const queue = new WorkQueue(
        () => {
          attempts += 1;
          if (attempts < 3) throw new Error('conflict');
        },
        (_key, _error, retryInMs) => delays.push(retryInMs),
        { baseMs: 10, maxMs: 1_000 },
      );

      // Act
      queue.add('default/a');
      await new Promise((resolve) => setTimeout(resolve, 200));
      await queue.stop();

      // Assess
      expect(attempts).toBe(3);
      expect(delays).toEqual([10, 20]);
    });
  });
});
