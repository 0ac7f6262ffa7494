import { describe, expect, it } from '@jest/globals';
import type { InstantSample, MetricsSource } from '../../metrics/index.js';
import type { Target } from '../../config/index.js';
import { type CalibratedAlertThresholds, withCalibratedThresholds } from './calibrated.js';
import { evaluateTarget } from './evaluate.js';
import { DEFAULT_ALERT_SETTINGS, parseAlertSettings } from './settings.js';

const CALIBRATED: CalibratedAlertThresholds = {
  execution: 'calib-20261203-1200',
  finishedAt: '2026-12-03T12:20:00.000Z',
  thresholds: {
    VLLMHighQueueDepth: {
      value: 24,
      reason: 'a queue of Q holds about Q / C s of work at the capacity C = 24.6 req/s',
      formula: 'max(13, floor(24.6 × 1)) = 24',
    },
    VLLMHighLatency: { value: 3.2, reason: 'the p95 guardrail', formula: '2 × 1.6 s = 3.2 s' },
  },
};

describe('Function: withCalibratedThresholds', () => {
  it("replaces the guide's defaults with the derived thresholds, naming the calibration", () => {
    // Act
    const { settings, outcomes } = withCalibratedThresholds(DEFAULT_ALERT_SETTINGS, CALIBRATED);

    // Assess
    expect(settings.rules.VLLMHighQueueDepth).toMatchObject({
      threshold: 24,
      forSeconds: 120,
      thresholdFrom: { execution: 'calib-20261203-1200', formula: 'max(13, floor(24.6 × 1)) = 24' },
    });
    expect(settings.rules.VLLMHighLatency.threshold).toBe(3.2);
    expect(outcomes.map((o) => [o.alertname, o.used])).toEqual([
      ['VLLMHighQueueDepth', true],
      ['VLLMHighLatency', true],
    ]);
    // The defaults themselves are untouched.
    expect(DEFAULT_ALERT_SETTINGS.rules.VLLMHighQueueDepth.threshold).toBe(50);
  });

  it("keeps a threshold the target's settings pin, and says so", () => {
    // Prepare
    const pinned = parseAlertSettings({ rules: { VLLMHighLatency: { threshold: 2 } } });

    // Act
    const { settings, outcomes } = withCalibratedThresholds(pinned, CALIBRATED);

    // Assess
    expect(settings.rules.VLLMHighLatency).toMatchObject({ threshold: 2, thresholdPinned: true });
    expect(settings.rules.VLLMHighLatency.thresholdFrom).toBeUndefined();
    expect(settings.rules.VLLMHighQueueDepth.threshold).toBe(24);
    expect(outcomes).toContainEqual({
      alertname: 'VLLMHighLatency',
      used: false,
      why: "the target's settings pin it at 2",
    });
  });

  it.each([
    { case: 'a ratio above 1', alert: 'VLLMKVCacheFull' as const, value: 1.5, why: '1.5 is not a threshold for ratio' },
    {
      case: 'a negative count',
      alert: 'VLLMHighQueueDepth' as const,
      value: -3,
      why: '-3 is not a threshold for requests',
    },
    { case: 'NaN', alert: 'VLLMHighLatency' as const, value: Number.NaN, why: 'NaN is not a threshold for seconds' },
    { case: 'a fixed threshold', alert: 'VLLMMetricsAbsent' as const, value: 1, why: 'its threshold cannot be set' },
  ])('leaves the rule as it was for $case', ({ alert, value, why }) => {
    // Act
    const { settings, outcomes } = withCalibratedThresholds(DEFAULT_ALERT_SETTINGS, {
      ...CALIBRATED,
      thresholds: { [alert]: { value, reason: 'r', formula: 'f' } },
    });

    // Assess
    expect(settings.rules[alert]).toEqual(DEFAULT_ALERT_SETTINGS.rules[alert]);
    expect(outcomes).toEqual([{ alertname: alert, used: false, why }]);
  });
});

describe('Function: evaluateTarget with calibrated thresholds', () => {
  it('fires the queue alert at the derived threshold and says in the description where it comes from', async () => {
    // Prepare: 30 waiting (the fake answers any query: the comparison itself is PromQL's, tested against Prometheus).
    const target: Target = { name: 't', cluster: 'c', namespace: 'llm', deployment: 'd', model: 'm' };
    const labels = { namespace: 'llm', pod: 'd-1', model_name: 'm' };
    const queries: string[] = [];
    const source: MetricsSource = {
      instant: (query: string): Promise<InstantSample[]> => {
        queries.push(query);
        return Promise.resolve(
          query.includes('vllm:num_requests_waiting') ? [{ labels, value: 30, timestampMs: 0 }] : [],
        );
      },
      range: () => Promise.resolve([]),
    };
    const { settings } = withCalibratedThresholds(DEFAULT_ALERT_SETTINGS, CALIBRATED);

    // Act
    const calibrated = await evaluateTarget(target, settings, { source }, Date.now());

    // Assess
    const queue = calibrated.firing.find((a) => a.alertname === 'VLLMHighQueueDepth');
    expect(queue?.threshold).toBe(24);
    expect(queue?.description).toMatch(
      / The threshold \(24\) comes from calibration calib-20261203-1200 \(2026-12-03T12:20:00\.000Z\): a queue of Q holds .*; max\(13, floor\(24\.6 × 1\)\) = 24\.$/,
    );
    // The query compares with the derived threshold, not the guide's 50.
    const asked = queries.find((q) => q.includes('vllm:num_requests_waiting')) ?? '';
    expect(asked).toContain('> 24');
    expect(asked).not.toContain('> 50');
  });
});
