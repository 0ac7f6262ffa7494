import { describe, expect, it } from '@jest/globals';
import { groupNotifications, type Groupable } from './group.js';

const item = (
  target: string,
  severity: Groupable['severity'],
  alertname: Groupable['alertname'],
  fingerprint: string,
  status: Groupable['status'] = 'firing',
): Groupable => ({
  target,
  severity,
  alertname,
  fingerprint,
  status,
});

describe('Function: groupNotifications', () => {
  it('groups per target and severity, targets by name and critical first', () => {
    // Prepare: arrival order mixed across targets and severities.
    const items = [
      item('staging', 'warning', 'VLLMHighQueueDepth', 'q1'),
      item('prod', 'warning', 'VLLMPreemptionSpike', 'p1'),
      item('prod', 'critical', 'VLLMKVCacheFull', 'k1'),
      item('prod', 'warning', 'VLLMHighQueueDepth', 'q2'),
      item('prod', 'critical', 'VLLMHighLatency', 'l1'),
    ];

    // Act
    const groups = groupNotifications(items);

    // Assess
    expect(groups.map((g) => [g.key, g.items.map((i) => i.fingerprint)])).toEqual([
      ['prod/critical', ['l1', 'k1']],
      ['prod/warning', ['q2', 'p1']],
      ['staging/warning', ['q1']],
    ]);
  });

  it('gives the same order whatever the arrival order, resolved before firing', () => {
    // Prepare
    const items = [
      item('prod', 'critical', 'VLLMKVCacheFull', 'b'),
      item('prod', 'critical', 'VLLMKVCacheFull', 'a', 'firing'),
      item('prod', 'critical', 'VLLMKVCacheFull', 'a', 'resolved'),
      item('prod', 'critical', 'VLLMGPUMemoryCritical', 'z'),
    ];

    // Act
    const forward = groupNotifications(items);
    const backward = groupNotifications([...items].reverse());

    // Assess
    const order = (groups: typeof forward) => groups.flatMap((g) => g.items.map((i) => `${i.fingerprint}:${i.status}`));
    expect(order(forward)).toEqual(['z:firing', 'a:resolved', 'a:firing', 'b:firing']);
    expect(order(backward)).toEqual(order(forward));
  });

  it('makes no group of nothing', () => {
    // Act
    const groups = groupNotifications([]);

    // Assess
    expect(groups).toEqual([]);
  });
});
