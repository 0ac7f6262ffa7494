import { describe, expect, it } from '@jest/globals';
import { alertFingerprint } from './fingerprint.js';

const IDENTIFYING = ['namespace', 'pod', 'model_name'];
const labels = { namespace: 'llm', pod: 'ministral-7d9c8b6f5d-x2k4q', model_name: 'ministral' };

describe('Function: alertFingerprint', () => {
  it('is 32 lower-case hex characters and the same for the same instance', () => {
    // Act
    const first = alertFingerprint('prod', 'VLLMKVCacheFull', labels, IDENTIFYING);
    const second = alertFingerprint('prod', 'VLLMKVCacheFull', { ...labels }, IDENTIFYING);

    // Assess
    expect(first).toMatch(/^[0-9a-f]{32}$/);
    expect(second).toBe(first);
  });

  it('ignores label order and labels that do not identify the instance', () => {
    // Prepare
    const reordered = {
      model_name: labels.model_name,
      pod: labels.pod,
      namespace: labels.namespace,
      instance: 'x:8000',
    };

    // Act
    const fingerprint = alertFingerprint('prod', 'VLLMKVCacheFull', reordered, IDENTIFYING);

    // Assess
    expect(fingerprint).toBe(alertFingerprint('prod', 'VLLMKVCacheFull', labels, IDENTIFYING));
  });

  it.each([
    { case: 'another target', target: 'staging', alert: 'VLLMKVCacheFull', pod: labels.pod },
    { case: 'another alert', target: 'prod', alert: 'VLLMHighQueueDepth', pod: labels.pod },
    { case: 'another Pod', target: 'prod', alert: 'VLLMKVCacheFull', pod: 'ministral-7d9c8b6f5d-h8w2m' },
  ])('differs for $case', ({ target, alert, pod }) => {
    // Act
    const fingerprint = alertFingerprint(target, alert, { ...labels, pod }, IDENTIFYING);

    // Assess
    expect(fingerprint).not.toBe(alertFingerprint('prod', 'VLLMKVCacheFull', labels, IDENTIFYING));
  });

  it('cannot be forged by moving text between parts', () => {
    // Act
    const a = alertFingerprint('prod', 'A', { pod: 'x' }, ['pod']);
    const b = alertFingerprint('prodA', '', { pod: 'x' }, ['pod']);

    // Assess
    expect(a).not.toBe(b);
  });
});
