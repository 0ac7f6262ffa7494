import { describe, expect, it } from '@jest/globals';
import { canonicalJson, podTemplateHash } from './podTemplateHash.js';

const template = {
  metadata: { labels: { app: 'vllm' } },
  spec: { containers: [{ name: 'vllm', image: 'vllm/vllm-openai:v0.11.0', args: ['--max-num-seqs', '32'] }] },
};

describe('Function: podTemplateHash', () => {
  it('is stable: the same template (keys in any order) gives the same hash', () => {
    // Prepare
    const reordered = { spec: template.spec, metadata: template.metadata };

    // Act
    const a = podTemplateHash(template);
    const b = podTemplateHash(reordered);

    // Assess
    expect(a).toBe(b);
  });

  it('reads like a Kubernetes pod-template-hash (SafeEncodeString of a decimal FNV-32a)', () => {
    // Act
    const hash = podTemplateHash(template);

    // Assess: decimal digits map onto these ten characters only.
    expect(hash).toMatch(/^[4-9bcdf]{1,10}$/);
  });

  it.each([
    {
      case: 'an arg changes',
      change: {
        ...template,
        spec: { containers: [{ ...template.spec.containers[0], args: ['--max-num-seqs', '16'] }] },
      },
    },
    { case: 'a label changes', change: { ...template, metadata: { labels: { app: 'other' } } } },
  ])('changes when $case', ({ change }) => {
    // Act
    const before = podTemplateHash(template);
    const after = podTemplateHash(change);

    // Assess
    expect(after).not.toBe(before);
  });

  it('changes with the collision count', () => {
    // Act / Assess
    expect(podTemplateHash(template, 1)).not.toBe(podTemplateHash(template));
  });
});

describe('Function: canonicalJson', () => {
  it('sorts keys at every level and drops undefined', () => {
    // Act
    const text = canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: undefined } });

    // Assess
    expect(text).toBe('{"a":{"d":[{"y":2,"z":1}]},"b":1}');
  });
});
