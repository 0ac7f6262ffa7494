import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../kube/index.js';
import { maxNumSeqsOf, parseVllmArgs } from './engineArgs.js';

function deployment(containers: unknown[]): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'vllm', namespace: 'default' },
    spec: { template: { spec: { containers } } },
  };
}

describe('Function: parseVllmArgs', () => {
  it('reads --flag value, --flag=value, switches and the positional words', () => {
    const flags = parseVllmArgs([
      'serve',
      'meta-llama/Llama-3.1-8B',
      '--max-num-seqs=64',
      '--enforce-eager',
      '--port',
      '8080',
    ]);

    expect(flags.get('--max-num-seqs')).toBe('64');
    expect(flags.get('--enforce-eager')).toBe('true');
    expect(flags.get('--port')).toBe('8080');
    expect(flags.get('_')).toBe('serve meta-llama/Llama-3.1-8B');
  });
});

describe('Function: maxNumSeqsOf', () => {
  it("reads --max-num-seqs from the vLLM container's args, not from a sidecar's", () => {
    const target = deployment([
      { name: 'proxy', image: 'envoy', args: ['--max-num-seqs', '9'] },
      { name: 'vllm', image: 'vllm/vllm-openai:v0.11.0', args: ['--model', 'm', '--max-num-seqs', '128'] },
    ]);

    expect(maxNumSeqsOf(target)).toBe(128);
  });

  it('reads it from the command when there are no args', () => {
    const target = deployment([{ name: 'vllm', command: ['vllm', 'serve', 'm', '--max-num-seqs=32'] }]);

    expect(maxNumSeqsOf(target)).toBe(32);
  });

  it.each([
    ['not set (vLLM default, which depends on its version and GPU)', ['--model', 'm']],
    ['not a positive integer', ['--max-num-seqs', 'lots']],
    ['zero', ['--max-num-seqs', '0']],
  ])('is null when %s', (_why, args) => {
    expect(maxNumSeqsOf(deployment([{ name: 'vllm', args }]))).toBeNull();
  });

  it('is null for a Deployment without containers', () => {
    expect(maxNumSeqsOf(deployment([]))).toBeNull();
  });
});
