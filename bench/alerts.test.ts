import { describe, expect, it } from '@jest/globals';
import { ALERT_NAMES, type AlertName } from '../shared/alerts/index.js';
import { parseAlertSettings } from '../shared/alerts/rules/index.js';
import {
  benchAlertSettings,
  findNotification,
  openFingerprints,
  parseQueryStats,
  toBenchNotification,
  type BenchNotification,
  type NotificationQuery,
} from './alerts.js';
import { BenchError } from './errors.js';

/** A notification as the bench's subscriber records it. */
function notification(overrides: Partial<BenchNotification>): BenchNotification {
  return {
    messageId: 'm-1',
    receivedAtMs: 1_000,
    alertname: 'VLLMKVCacheFull',
    severity: 'critical',
    status: 'firing',
    reason: 'first',
    fingerprint: 'fp-a',
    labels: { pod: 'vllm-a', namespace: 'default', target: 'twin-demo', cluster: 'ai-eks-docs' },
    ...overrides,
  };
}

/** A v1 alert message body as the product publishes it (shared/alerts/message.ts). */
const V1_MESSAGE = {
  version: 1,
  alertname: 'VLLMHighQueueDepth',
  severity: 'warning',
  status: 'firing',
  reason: 'first',
  target: 'twin-demo',
  labels: { pod: 'vllm-b', namespace: 'default', model_name: 'm', target: 'twin-demo', cluster: 'ai-eks-docs' },
  fingerprint: 'fp-q',
  value: 81,
  threshold: 50,
  unit: 'requests',
  startsAt: '2026-01-01T00:02:00.000Z',
  endsAt: null,
  summary: 'Queue depth 81 on pod default/vllm-b (model m)',
  description: '81 requests are waiting',
  runbook: '1. Scale out.',
  runbookUrl: null,
  dashboardUrl: null,
};

describe('Function: benchAlertSettings', () => {
  it("guide: every rule runs with the guide's for and window and its keep-firing time (90 s, the absent rule 0), and the settings parse as a target's alerts", () => {
    // Act
    const { input, timings } = benchAlertSettings('guide');
    const parsed = parseAlertSettings(input);

    // Assess
    expect(timings).toEqual({
      VLLMHighQueueDepth: { forSeconds: 120, windowSeconds: 0, keepFiringForSeconds: 90 },
      VLLMHighLatency: { forSeconds: 120, windowSeconds: 300, keepFiringForSeconds: 90 },
      VLLMGPUMemoryCritical: { forSeconds: 60, windowSeconds: 0, keepFiringForSeconds: 90 },
      VLLMKVCacheFull: { forSeconds: 30, windowSeconds: 0, keepFiringForSeconds: 90 },
      VLLMPreemptionSpike: { forSeconds: 0, windowSeconds: 300, keepFiringForSeconds: 90 },
      VLLMKVCacheHigh: { forSeconds: 120, windowSeconds: 0, keepFiringForSeconds: 90 },
      VLLMMetricsAbsent: { forSeconds: 300, windowSeconds: 0, keepFiringForSeconds: 0 },
    });
    for (const name of ALERT_NAMES) expect(parsed.rules[name]).toMatchObject({ enabled: true, ...timings[name] });
  });

  it.each<{ name: AlertName; forSeconds: number; windowSeconds: number; threshold: number; keep: number }>([
    { name: 'VLLMHighQueueDepth', forSeconds: 12, windowSeconds: 0, threshold: 50, keep: 9 },
    { name: 'VLLMHighLatency', forSeconds: 12, windowSeconds: 30, threshold: 5, keep: 9 },
    { name: 'VLLMGPUMemoryCritical', forSeconds: 6, windowSeconds: 0, threshold: 0.95, keep: 9 },
    { name: 'VLLMKVCacheFull', forSeconds: 3, windowSeconds: 0, threshold: 0.95, keep: 9 },
    { name: 'VLLMPreemptionSpike', forSeconds: 0, windowSeconds: 30, threshold: 5, keep: 9 },
    { name: 'VLLMKVCacheHigh', forSeconds: 12, windowSeconds: 0, threshold: 0.8, keep: 9 },
    { name: 'VLLMMetricsAbsent', forSeconds: 30, windowSeconds: 0, threshold: 0, keep: 0 },
  ])(
    'quick: $name runs with for $forSeconds s, window $windowSeconds s and kept firing $keep s, threshold unchanged',
    (row) => {
      // Act
      const { input, timings } = benchAlertSettings('quick');
      const parsed = parseAlertSettings(input);

      // Assess
      expect(timings[row.name]).toEqual({
        forSeconds: row.forSeconds,
        windowSeconds: row.windowSeconds,
        keepFiringForSeconds: row.keep,
      });
      expect(parsed.rules[row.name]).toEqual({
        enabled: true,
        threshold: row.threshold,
        forSeconds: row.forSeconds,
        windowSeconds: row.windowSeconds,
        keepFiringForSeconds: row.keep,
      });
    },
  );
});

describe('Function: findNotification', () => {
  const messages = [
    notification({ messageId: 'early', receivedAtMs: 500 }),
    notification({ messageId: 'other-pod', receivedAtMs: 1_500, labels: { pod: 'vllm-b' } }),
    notification({ messageId: 'late', receivedAtMs: 3_000 }),
    notification({ messageId: 'first', receivedAtMs: 2_000 }),
    notification({ messageId: 'resolved', receivedAtMs: 4_000, status: 'resolved', reason: 'resolved' }),
    notification({ messageId: 'gpu', receivedAtMs: 2_500, alertname: 'VLLMGPUMemoryCritical' }),
  ];

  it.each<{ case: string; query: NotificationQuery; expected: string | undefined }>([
    {
      case: 'the earliest firing message of the pod after the onset',
      query: { alertname: 'VLLMKVCacheFull', status: 'firing', labels: { pod: 'vllm-a' }, afterMs: 1_000 },
      expected: 'first',
    },
    {
      case: 'the resolved message, not the firing ones',
      query: { alertname: 'VLLMKVCacheFull', status: 'resolved', labels: { pod: 'vllm-a' }, afterMs: 1_000 },
      expected: 'resolved',
    },
    {
      case: 'another Pod’s instance when its label is asked for',
      query: { alertname: 'VLLMKVCacheFull', status: 'firing', labels: { pod: 'vllm-b' }, afterMs: 0 },
      expected: 'other-pod',
    },
    {
      case: 'another alert by name',
      query: { alertname: 'VLLMGPUMemoryCritical', status: 'firing', labels: {}, afterMs: 0 },
      expected: 'gpu',
    },
    {
      case: 'nothing when no message came after the onset',
      query: { alertname: 'VLLMKVCacheFull', status: 'firing', labels: { pod: 'vllm-a' }, afterMs: 3_001 },
      expected: undefined,
    },
  ])('finds $case', ({ query, expected }) => {
    // Act
    const found = findNotification(messages, query);

    // Assess
    expect(found?.messageId).toBe(expected);
  });
});

describe('Function: openFingerprints', () => {
  it('lists the alerts whose latest message is firing, not those resolved since', () => {
    // Prepare
    const messages = [
      notification({ fingerprint: 'fp-closed', receivedAtMs: 1_000 }),
      notification({ fingerprint: 'fp-open', receivedAtMs: 1_500 }),
      notification({ fingerprint: 'fp-closed', receivedAtMs: 2_000, status: 'resolved', reason: 'resolved' }),
      notification({ fingerprint: 'fp-again', receivedAtMs: 2_500, status: 'resolved', reason: 'resolved' }),
      notification({ fingerprint: 'fp-again', receivedAtMs: 3_000, status: 'firing' }),
    ];

    // Act
    const open = openFingerprints(messages);

    // Assess
    expect(open).toEqual(['fp-again', 'fp-open']);
  });
});

describe('Function: toBenchNotification', () => {
  it('reads a v1 alert message: name, status, reason, fingerprint, labels and the time SNS received it', () => {
    // Act
    const parsed = toBenchNotification({ messageId: 'id-1', message: JSON.stringify(V1_MESSAGE), receivedAtMs: 42 });

    // Assess
    expect(parsed).toEqual({
      messageId: 'id-1',
      receivedAtMs: 42,
      alertname: 'VLLMHighQueueDepth',
      severity: 'warning',
      status: 'firing',
      reason: 'first',
      fingerprint: 'fp-q',
      labels: V1_MESSAGE.labels,
    });
  });

  it.each([
    { case: 'text that is not JSON', message: 'queue is high' },
    { case: 'another message version', message: JSON.stringify({ ...V1_MESSAGE, version: 2 }) },
    { case: 'a calibration notification', message: JSON.stringify({ kind: 'calibration', status: 'done' }) },
  ])('returns undefined for $case', ({ message }) => {
    // Act
    const parsed = toBenchNotification({ messageId: 'id-2', message, receivedAtMs: 1 });

    // Assess
    expect(parsed).toBeUndefined();
  });
});

describe('Function: parseQueryStats', () => {
  it('reads the samples Prometheus reports with stats=all', () => {
    // Prepare: the shape of Prometheus 2.42's answer to `POST /api/v1/query` with `stats=all`.
    const answer = {
      status: 'success',
      data: {
        resultType: 'vector',
        result: [],
        stats: {
          timings: { evalTotalTime: 0.0004, execTotalTime: 0.0005 },
          samples: { totalQueryableSamplesPerStep: [[1767225600, 1280]], totalQueryableSamples: 1280, peakSamples: 64 },
        },
      },
    };

    // Act
    const stats = parseQueryStats(answer);

    // Assess
    expect(stats).toEqual({ totalQueryableSamples: 1280, peakSamples: 64 });
  });

  it('says the samples are not reported when the server answers without stats', () => {
    // Act
    const stats = parseQueryStats({ status: 'success', data: { resultType: 'vector', result: [] } });

    // Assess
    expect(stats).toEqual({ totalQueryableSamples: undefined, peakSamples: undefined });
  });

  it("throws BenchError with Prometheus's error for a failed query", () => {
    // Prepare
    const answer = { status: 'error', errorType: 'bad_data', error: 'parse error: unexpected end of input' };

    // Act
    const act = () => parseQueryStats(answer);

    // Assess
    expect(act).toThrow(BenchError);
    expect(act).toThrow('parse error: unexpected end of input');
  });
});
