import { describe, expect, it } from '@jest/globals';
import { buildK6Summary, k6Duration, k6Elapsed } from './k6Output.js';
import type { K6Plan } from './k6Plan.js';

const plan: K6Plan = {
  executor: 'constant-arrival-rate',
  script: '/scripts/load.js',
  targetUrl: 'http://svc.default.svc:8000',
  model: 'm',
  promptTokens: 35,
  maxTokens: 100,
  requestTimeoutSeconds: 240,
  restAddress: 'localhost:6565',
  rate: 10,
  durationSeconds: 60,
  preAllocatedVUs: 50,
  maxVUs: 500,
};

describe('Function: k6Duration', () => {
  it.each([
    { case: 'seconds', seconds: 3, text: '3s' },
    { case: 'a minute', seconds: 60, text: '1m0s' },
    { case: 'a minute and a half', seconds: 90, text: '1m30s' },
    { case: 'the 30 min maxDuration', seconds: 1_800, text: '30m0s' },
    { case: 'an hour', seconds: 3_600, text: '1h0m0s' },
  ])('prints $case like Go: $text', ({ seconds, text }) => {
    // Act / Assess
    expect(k6Duration(seconds)).toBe(text);
  });
});

describe('Function: k6Elapsed', () => {
  it('prints progress time like k6: minutes and zero-padded seconds', () => {
    // Act / Assess
    expect(k6Elapsed(65_432)).toBe('1m05.4s');
  });
});

describe('Function: buildK6Summary', () => {
  it('computes the iterations rate over the whole test, as k6 does', () => {
    // Act
    const summary = buildK6Summary(plan, {
      durationSeconds: 62.5,
      iterations: 600,
      droppedIterations: 0,
      httpReqs: 600,
      httpReqFailed: 0,
      durationsMs: [100, 200, 300],
    });

    // Assess
    expect(summary).toMatchObject({
      executor: 'constant-arrival-rate',
      rate: 10,
      iterations: 600,
      iterationsRate: 9.6,
    });
    expect(summary.httpReqDurationMs).toEqual({ avg: 200, min: 100, med: 200, max: 300, p90: 280, p95: 290, p99: 298 });
  });

  it('reports 0 for a trend without samples (every request failed), as k6 does', () => {
    // Act
    const summary = buildK6Summary(plan, {
      durationSeconds: 1,
      iterations: 3,
      droppedIterations: 0,
      httpReqs: 3,
      httpReqFailed: 3,
      durationsMs: [],
    });

    // Assess
    expect(Object.values(summary.httpReqDurationMs)).toEqual([0, 0, 0, 0, 0, 0, 0]);
  });
});
