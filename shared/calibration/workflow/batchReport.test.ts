import { describe, expect, it } from '@jest/globals';
import { buildBatchReport, childFailure, renderBatchSummary, type BatchItemResult } from './batchReport.js';

const EXECUTION = {
  id: 'arn:aws:states:us-east-2:1:execution:m:calib-x',
  name: 'calib-x',
  startTime: '2026-12-03T20:00:00Z',
};

function item(index: number, deployment: string, rest: Partial<BatchItemResult>): BatchItemResult {
  return {
    index,
    name: `calib-x-t${index + 1}`,
    target: `default/${deployment} in ai-eks (us-east-2)`,
    input: { target: { cluster: 'ai-eks', region: 'us-east-2', namespace: 'default', deployment } },
    ...rest,
  };
}

const derived = <T>(value: T) => ({ value, reason: 'r', formula: 'f' });
const SUCCEEDED = item(0, 'vllm-a', {
  outcome: {
    executionArn: 'arn:aws:states:us-east-2:1:execution:m:calib-x-t1',
    analysis: {
      saturation: { found: true, rateRps: 40, stepIndex: 1, reasons: [] },
      capacityRps: derived(31.5),
      thresholds: {
        queueDepthPerPod: derived(8),
        queueActivation: derived(2),
        p95LatencySeconds: derived(1.2),
        scaleIn: derived({ queueDepth: 0 as const, p95BelowSeconds: 0.7, forSeconds: 300 }),
      },
    },
    change: { applied: true, next: {} as never, scaledObject: { namespace: 'default', name: 'vllm-a' } },
    report: { reportLocation: 's3://b/a/report.json', chartLocation: 's3://b/a/chart.svg' },
  },
});
/** What Step Functions gives a Catch when a startExecution.sync child failed: its DescribeExecution as the Cause. */
const FAILED = item(1, 'vllm-b', {
  failure: {
    Error: 'States.TaskFailed',
    Cause: JSON.stringify({
      ExecutionArn: 'arn:aws:states:us-east-2:1:execution:m:calib-x-t2',
      Status: 'FAILED',
      Error: 'CalibrationJobFailedError',
      Cause: JSON.stringify({ errorType: 'CalibrationJobFailedError', errorMessage: 'k6 Job calib-1-s0 failed\nmore' }),
    }),
  },
});

describe('Function: buildBatchReport', () => {
  it('lists each target in list order with its outcome, capacity, thresholds, applied flag and own report', () => {
    // Act: the failed target finished first.
    const report = buildBatchReport(EXECUTION, 2, [FAILED, SUCCEEDED]);

    // Assess
    expect(report.status).toBe('partial');
    expect(report.targets).toEqual([
      {
        index: 0,
        target: { cluster: 'ai-eks', region: 'us-east-2', namespace: 'default', deployment: 'vllm-a' },
        execution: 'calib-x-t1',
        outcome: 'succeeded',
        capacityRps: 31.5,
        thresholds: { queueDepthPerPod: 8, queueActivation: 2, p95LatencySeconds: 1.2 },
        applied: true,
        failure: null,
        report: { reportLocation: 's3://b/a/report.json', chartLocation: 's3://b/a/chart.svg' },
      },
      expect.objectContaining({
        index: 1,
        outcome: 'failed',
        capacityRps: null,
        applied: null,
        failure: { error: 'CalibrationJobFailedError', cause: 'k6 Job calib-1-s0 failed\nmore' },
        report: null,
      }),
    ]);
  });

  it.each([
    // [case, results, status]
    ['every target succeeded', [SUCCEEDED], 'succeeded'],
    ['none did', [FAILED], 'failed'],
  ])('says the batch %s', (_case, results, status) => {
    // Assess
    expect(buildBatchReport(EXECUTION, 2, results).status).toBe(status);
  });
});

describe('Function: childFailure', () => {
  it.each([
    // [case, Catch output, error and cause]
    [
      'a stopped child: its status',
      { Error: 'States.TaskFailed', Cause: JSON.stringify({ Status: 'ABORTED' }) },
      { error: 'ExecutionAborted', cause: JSON.stringify({ Status: 'ABORTED' }) },
    ],
    [
      'a child that could not start: as it came',
      { Error: 'StepFunctions.ExecutionLimitExceededException', Cause: 'too many executions' },
      { error: 'StepFunctions.ExecutionLimitExceededException', cause: 'too many executions' },
    ],
  ])('%s', (_case, failure, expected) => {
    // Assess
    expect(childFailure(failure)).toEqual(expected);
  });
});

describe('Function: renderBatchSummary', () => {
  it('gives one line per target (the failure with its named error) and where the combined report is', () => {
    // Act
    const text = renderBatchSummary(buildBatchReport(EXECUTION, 2, [SUCCEEDED, FAILED]), 's3://b/batch-report.json');

    // Assess
    expect(text.split('\n')).toEqual([
      'Calibration of 2 target(s), execution calib-x, at most 2 at once: 1 succeeded, 1 failed',
      '  1. default/vllm-a (ai-eks): succeeded, capacity 31.5 req/s, queue 8/Pod (activation 2), p95 guardrail 1.2 s, applied; report s3://b/a/report.json',
      '  2. default/vllm-b (ai-eks): FAILED CalibrationJobFailedError: k6 Job calib-1-s0 failed (execution calib-x-t2)',
      'Combined report: s3://b/batch-report.json',
    ]);
  });
});
