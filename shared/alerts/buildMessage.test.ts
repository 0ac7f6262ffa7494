import { describe, expect, it } from '@jest/globals';
import { buildAlertMessage } from './buildMessage.js';
import type { NotifyDecision } from './decide.js';
import { alertMessageSchema } from './message.js';
import { AlertMessageInvalidError } from './pipelineErrors.js';
import { FIXTURE_T0, fixtureInstance, fixtureState } from './testing/fixtures.js';
import type { AlertState } from './alertState.js';

const instance = fixtureInstance();

function decision(state: AlertState, reason: NotifyDecision['reason']): NotifyDecision {
  return {
    action: 'notify',
    target: state.target,
    fingerprint: state.fingerprint,
    alertname: state.alertname,
    severity: state.severity,
    status: state.status,
    reason,
    text: 'test',
    state,
    expectedVersion: null,
    followsUp: false,
  };
}

describe('Function: buildAlertMessage', () => {
  it('builds a v1 firing message with the instance, the reason and no end', () => {
    // Act
    const message = buildAlertMessage(decision(fixtureState(instance, FIXTURE_T0), 'first'));

    // Assess
    expect(message).toEqual({
      version: 1,
      alertname: 'VLLMKVCacheFull',
      severity: 'critical',
      status: 'firing',
      reason: 'first',
      target: 'prod-ministral',
      labels: instance.labels,
      fingerprint: instance.fingerprint,
      value: 0.97,
      threshold: 0.95,
      unit: 'ratio',
      startsAt: '2025-06-01T12:00:00.000Z',
      endsAt: null,
      summary: instance.summary,
      description: instance.description,
      runbook: instance.runbook,
      runbookUrl: 'https://runbooks.example.com/vllm#vllmkvcachefull',
      dashboardUrl: 'https://grafana.example.com/d/vllm',
    });
    expect(alertMessageSchema.safeParse(message).success).toBe(true);
  });

  it('builds a resolved message with its end and null links when there are none', () => {
    // Prepare
    const state: AlertState = {
      ...fixtureState(instance, FIXTURE_T0),
      status: 'resolved',
      endsAtMs: FIXTURE_T0 + 300_000,
      runbookUrl: null,
      dashboardUrl: null,
    };

    // Act
    const message = buildAlertMessage(decision(state, 'resolved'));

    // Assess
    expect(message).toMatchObject({
      status: 'resolved',
      reason: 'resolved',
      endsAt: '2025-06-01T12:05:00.000Z',
      runbookUrl: null,
      dashboardUrl: null,
    });
  });

  it.each([
    {
      case: 'an infinite value',
      state: { ...fixtureState(instance, FIXTURE_T0), value: Number.POSITIVE_INFINITY },
      issue: /message\.value: /,
    },
    {
      case: 'a start out of the time range',
      state: { ...fixtureState(instance, FIXTURE_T0), startsAtMs: 9e15 },
      issue: /message\.startsAt: 9000000000000000 is not a time/,
    },
    {
      case: 'a resolved state without an end',
      state: { ...fixtureState(instance, FIXTURE_T0), status: 'resolved' as const },
      issue: /message\.endsAt: is null for status resolved/,
    },
  ])('refuses $case, naming the field', ({ state, issue }) => {
    // Act
    const act = () => buildAlertMessage(decision(state, 'first'));

    // Assess
    expect(act).toThrow(AlertMessageInvalidError);
    expect(act).toThrow(issue);
  });
});
