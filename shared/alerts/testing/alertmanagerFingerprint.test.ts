import { describe, expect, it } from '@jest/globals';
import { alertmanagerFingerprint } from './alertmanagerFingerprint.js';

const KV_CACHE_FULL = {
  alertname: 'VLLMKVCacheFull',
  severity: 'critical',
  target: 'prod-ministral',
  cluster: 'prod',
  namespace: 'inference',
  pod: 'vllm-inference-app-7d9c8b6f5d-x2k4q',
  model_name: 'mistralai/Ministral-8B-Instruct-2410',
};

describe('Function: alertmanagerFingerprint', () => {
  // Expected values: the `fingerprint` Debian's Alertmanager 0.25 answered in GET /api/v2/alerts for these labels
  // POSTed to /api/v2/alerts.
  it.each<{ case: string; labels: Record<string, string>; expected: string }>([
    { case: "a per-target rule's alert", labels: KV_CACHE_FULL, expected: '46f003a52e5e7203' },
    { case: 'one label', labels: { alertname: 'A' }, expected: 'd2c6efc389df0927' },
    {
      case: 'upper-case names (sorted before lower case, as bytes) and a multi-byte value',
      labels: {
        alertname: 'VLLMGPUMemoryCritical',
        severity: 'critical',
        target: 't',
        cluster: 'c',
        UUID: 'GPU-1',
        gpu: '0',
        Hostname: 'ip-1.ec2.internal',
        modelName: 'NVIDIA L40S',
        Z_upper: 'ünïcødé ✓ 😀',
      },
      expected: '36ee66308d69c16f',
    },
    { case: 'no label (the FNV-1a 64 offset basis)', labels: {}, expected: 'cbf29ce484222325' },
  ])('is Alertmanager’s for $case', ({ labels, expected }) => {
    // Act / Assess
    expect(alertmanagerFingerprint(labels)).toBe(expected);
  });

  it('does not depend on the order the labels are given in', () => {
    // Prepare
    const reversed = Object.fromEntries(Object.entries(KV_CACHE_FULL).reverse());

    // Act / Assess
    expect(alertmanagerFingerprint(reversed)).toBe(alertmanagerFingerprint(KV_CACHE_FULL));
  });

  it('keeps names and values apart (the 0xff separator)', () => {
    // Act / Assess
    expect(alertmanagerFingerprint({ a: 'bc' })).not.toBe(alertmanagerFingerprint({ ab: 'c' }));
  });
});
