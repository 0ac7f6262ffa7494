import { describe, expect, it } from '@jest/globals';
import { WorkloadContainerArgsError } from './errors.js';
import { vllmOverridesFromContainer } from './vllmArgs.js';

describe('Function: vllmOverridesFromContainer', () => {
  it.each([
    {
      case: 'the product Deployment args',
      container: {
        name: 'vllm',
        args: [
          '--model',
          's3://b/m/',
          '--served-model-name',
          'm',
          '--max-model-len',
          '4096',
          '--gpu-memory-utilization',
          '0.85',
          '--max-num-seqs',
          '16',
          '--port',
          '8000',
        ],
      },
      expected: { servedModelName: 'm', maxModelLen: 4096, gpuMemoryUtilization: 0.85, maxNumSeqs: 16 },
    },
    // Without --served-model-name vLLM names the model after --model.
    {
      case: '--model as the served name',
      container: { name: 'vllm', args: ['--model', 's3://b/m/'] },
      expected: { servedModelName: 's3://b/m/' },
    },
    { case: '--flag=value form', container: { name: 'vllm', args: ['--max-num-seqs=8'] }, expected: { maxNumSeqs: 8 } },
    {
      case: 'vllm serve <model> in the command',
      container: { name: 'vllm', command: ['vllm', 'serve', 'org/model'], args: ['--max-model-len', '2048'] },
      expected: { servedModelName: 'org/model', maxModelLen: 2048 },
    },
    { case: 'no args: the profile decides', container: { name: 'vllm' }, expected: {} },
  ])('$case', ({ container, expected }) => {
    // Act
    const overrides = vllmOverridesFromContainer('pod-a', container);

    // Assess
    expect(overrides).toEqual(expected);
  });

  it.each([
    { case: 'a non-integer --max-num-seqs', args: ['--max-num-seqs', 'many'], flag: '--max-num-seqs' },
    { case: 'a zero --max-model-len', args: ['--max-model-len', '0'], flag: '--max-model-len' },
    {
      case: 'a --gpu-memory-utilization above 1',
      args: ['--gpu-memory-utilization', '1.5'],
      flag: '--gpu-memory-utilization',
    },
    { case: 'a flag without a value', args: ['--max-num-seqs'], flag: '--max-num-seqs' },
  ])('rejects $case, naming the flag', ({ args, flag }) => {
    // Act
    const act = () => vllmOverridesFromContainer('pod-a', { name: 'vllm', args });

    // Assess
    expect(act).toThrow(WorkloadContainerArgsError);
    expect(act).toThrow(flag);
  });
});
