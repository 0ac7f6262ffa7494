import { describe, expect, it } from '@jest/globals';
import { MemoryPodLogStore } from './logs.js';

describe('Class: MemoryPodLogStore', () => {
  describe('Method: read', () => {
    it('returns the lines in write order, each ending with a newline', () => {
      // Prepare
      const logs = new MemoryPodLogStore();
      logs.append('default', 'k6-abc', 'running');
      logs.append('default', 'k6-abc', '{"requests": 600}\n');

      // Act
      const text = logs.read('default', 'k6-abc');

      // Assess
      expect(text).toBe('running\n{"requests": 600}\n');
    });

    it('returns undefined for a Pod nothing was written for', () => {
      // Prepare
      const logs = new MemoryPodLogStore();
      logs.append('default', 'other', 'x');

      // Act
      const text = logs.read('default', 'k6-abc');

      // Assess
      expect(text).toBeUndefined();
    });

    it.each([
      { case: 'the last two lines', tailLines: 2, expected: 'b\nc\n' },
      { case: 'no line for 0', tailLines: 0, expected: '' },
      { case: 'everything when N exceeds the log', tailLines: 10, expected: 'a\nb\nc\n' },
    ])('with tailLines keeps $case', ({ tailLines, expected }) => {
      // Prepare
      const logs = new MemoryPodLogStore();
      logs.append('default', 'p', 'a\nb\nc');

      // Act
      const text = logs.read('default', 'p', { tailLines });

      // Assess
      expect(text).toBe(expected);
    });

    it("with a container keeps that container's lines and the Pod-wide ones", () => {
      // Prepare
      const logs = new MemoryPodLogStore();
      logs.append('default', 'p', 'pod-wide');
      logs.append('default', 'p', 'from vllm', 'vllm');
      logs.append('default', 'p', 'from sidecar', 'sidecar');

      // Act
      const vllm = logs.read('default', 'p', { container: 'vllm' });
      const all = logs.read('default', 'p');

      // Assess
      expect(vllm).toBe('pod-wide\nfrom vllm\n');
      expect(all).toBe('pod-wide\nfrom vllm\nfrom sidecar\n');
    });

    it('keeps only the newest lines of a Pod when the bound is reached', () => {
      // Prepare
      const logs = new MemoryPodLogStore({ maxLinesPerPod: 3 });
      for (let i = 1; i <= 10; i++) logs.append('default', 'p', `line ${i}`);

      // Act
      const text = logs.read('default', 'p');

      // Assess
      expect(text).toBe('line 8\nline 9\nline 10\n');
    });

    it('separates namespaces', () => {
      // Prepare
      const logs = new MemoryPodLogStore();
      logs.append('a', 'p', 'in a');
      logs.append('b', 'p', 'in b');

      // Act
      const text = logs.read('b', 'p');

      // Assess
      expect(text).toBe('in b\n');
    });
  });

  describe('Method: constructor', () => {
    it('refuses a bound below one line, naming the option', () => {
      // Act
      const act = () => new MemoryPodLogStore({ maxLinesPerPod: 0 });

      // Assess
      expect(act).toThrow('maxLinesPerPod must be an integer >= 1');
    });
  });
});
