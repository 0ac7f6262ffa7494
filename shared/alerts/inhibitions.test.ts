import { describe, expect, it } from '@jest/globals';
import { ALERT_INHIBITIONS, equalOn, type FiringAlert, inhibitorOf } from './inhibitions.js';
import type { AlertName } from './types.js';

const POD = { target: 'prod', namespace: 'llm', pod: 'vllm-7d9c8b6f5d-x2k4q', model_name: 'm' };
const firing = (alertname: AlertName, labels: Record<string, string>): FiringAlert => ({
  alertname,
  labels,
  fingerprint: `${alertname}-${labels.pod ?? 'none'}`,
});

describe('Constant: ALERT_INHIBITIONS', () => {
  it('lets a full KV cache mute the 80 % warning and the preemption spike of the same Pod of the same target', () => {
    // Assess
    expect(ALERT_INHIBITIONS).toEqual([
      expect.objectContaining({
        source: 'VLLMKVCacheFull',
        targets: ['VLLMKVCacheHigh', 'VLLMPreemptionSpike'],
        equal: ['target', 'namespace', 'pod'],
      }),
    ]);
  });
});

describe('Function: inhibitorOf', () => {
  it.each([
    // Each case: the alert asking, what fires, and which alert (if any) mutes it.
    { case: 'the warning of a Pod whose cache is full', alert: 'VLLMKVCacheHigh', labels: POD, by: 'VLLMKVCacheFull' },
    { case: 'the preemption spike of that Pod', alert: 'VLLMPreemptionSpike', labels: POD, by: 'VLLMKVCacheFull' },
    { case: 'the warning of another Pod', alert: 'VLLMKVCacheHigh', labels: { ...POD, pod: 'other' }, by: undefined },
    {
      case: 'a same-named Pod of another target (a shared workspace)',
      alert: 'VLLMKVCacheHigh',
      labels: { ...POD, target: 'staging' },
      by: undefined,
    },
    { case: 'an alert the table does not mute', alert: 'VLLMHighQueueDepth', labels: POD, by: undefined },
  ] as Array<{ case: string; alert: AlertName; labels: Record<string, string>; by: AlertName | undefined }>)(
    '$case: muted by $by',
    ({ alert, labels, by }) => {
      // Act
      const found = inhibitorOf(alert, labels, [firing('VLLMKVCacheFull', POD), firing('VLLMHighLatency', POD)]);

      // Assess
      expect(found?.source.alertname).toBe(by);
    },
  );

  it('is not muted by a warning, only by the source', () => {
    // Act / Assess
    expect(inhibitorOf('VLLMPreemptionSpike', POD, [firing('VLLMKVCacheHigh', POD)])).toBeUndefined();
  });
});

describe('Function: equalOn', () => {
  it.each([
    { case: 'equal values', a: { pod: 'x' }, b: { pod: 'x' }, equal: true },
    { case: 'different values', a: { pod: 'x' }, b: { pod: 'y' }, equal: false },
    // Alertmanager compares a missing label as the empty string: the generic rules carry no `target`.
    { case: 'a label missing on both sides', a: {}, b: {}, equal: true },
    { case: 'a label missing on one side', a: { pod: 'x' }, b: {}, equal: false },
  ] as Array<{ case: string; a: Record<string, string>; b: Record<string, string>; equal: boolean }>)(
    '$case → $equal',
    ({ a, b, equal }) => {
      // Act / Assess
      expect(equalOn(['pod'], a, b)).toBe(equal);
    },
  );
});
