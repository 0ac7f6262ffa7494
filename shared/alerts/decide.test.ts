import { describe, expect, it } from '@jest/globals';
import { decide, type AlertDecision, type NotifyDecision } from './decide.js';
import { AlertEvaluationInvalidError } from './pipelineErrors.js';
import { FIXTURE_T0, fixtureEvaluation, fixtureInstance, fixtureRecord } from './testing/fixtures.js';
import type { AlertStateRecord, SentNotification } from './alertState.js';
import type { AlertInstance, TargetEvaluation } from './types.js';

const MINUTE = 60_000;
const REPEAT_SECONDS = 4 * 60 * 60;
const NOW = FIXTURE_T0 + 10 * MINUTE;
const STARTED = FIXTURE_T0;

const instance = fixtureInstance();
const hotter = fixtureInstance(undefined, { value: 0.99, summary: 'KV cache 99 % full' });

const sent = (overrides: Partial<SentNotification> = {}): SentNotification => ({
  status: 'firing',
  startsAtMs: STARTED,
  atMs: STARTED + 5_000,
  reason: 'first',
  ...overrides,
});
const firingNotified = fixtureRecord(instance, STARTED, { lastNotification: sent() });
const resolvedUnsent = fixtureRecord(instance, STARTED, {
  status: 'resolved',
  endsAtMs: NOW - MINUTE,
  lastNotification: sent(),
  version: 5,
});
const resolvedSent = fixtureRecord(instance, STARTED, {
  status: 'resolved',
  endsAtMs: NOW - 2 * MINUTE,
  lastNotification: sent({ status: 'resolved', atMs: NOW - 2 * MINUTE, reason: 'resolved' }),
  version: 6,
  expiresAt: 1_750_000_000,
});

/** The parts of a decision a row checks. */
function shape(decision: AlertDecision) {
  return {
    action: decision.action,
    reason: decision.reason,
    status: decision.status,
    ...(decision.action === 'notify'
      ? { expectedVersion: decision.expectedVersion, followsUp: decision.followsUp }
      : {}),
  };
}

function run(
  records: AlertStateRecord[],
  firing: AlertInstance[],
  nowMs = NOW,
  overrides: Partial<TargetEvaluation> = {},
): AlertDecision[] {
  return decide({
    records,
    evaluation: fixtureEvaluation(firing, nowMs, overrides),
    repeatIntervalSeconds: REPEAT_SECONDS,
    nowMs,
  });
}

describe('Function: decide', () => {
  it.each([
    {
      // A new instance: the first notification, creating the record.
      case: 'a new instance',
      records: [],
      firing: [instance],
      nowMs: NOW,
      expected: [{ action: 'notify', reason: 'first', status: 'firing', expectedVersion: null, followsUp: false }],
      text: /^first notification: firing since 2025-06-01T12:10:00.000Z$/,
    },
    {
      // Notified 10 min ago, repeat after 4 h: nothing to send; the log says when the repeat is due.
      case: 'an instance still firing inside the repeat interval',
      records: [firingNotified],
      firing: [hotter],
      nowMs: NOW,
      expected: [{ action: 'none', reason: 'still-firing', status: 'firing' }],
      text: /^no notification: still firing since 2025-06-01T12:00:00.000Z; notified 595 s ago, repeat in 13805 s$/,
    },
    {
      // Exactly the repeat interval after the last notification.
      case: 'an instance still firing when the repeat interval has elapsed',
      records: [firingNotified],
      firing: [hotter],
      nowMs: STARTED + 5_000 + REPEAT_SECONDS * 1000,
      expected: [{ action: 'notify', reason: 'repeat', status: 'firing', expectedVersion: 2, followsUp: false }],
      text: /^repeat: still firing since 2025-06-01T12:00:00.000Z; last notified 14400 s ago \(repeat interval 14400 s\)$/,
    },
    {
      // The claim was released after a failed publish: the state says firing, no notification went out.
      case: 'a firing instance whose notification never went out',
      records: [fixtureRecord(instance, STARTED)],
      firing: [hotter],
      nowMs: NOW,
      expected: [{ action: 'notify', reason: 'retry', status: 'firing', expectedVersion: 2, followsUp: false }],
      text: /^retry: the firing notification \(firing since 2025-06-01T12:00:00.000Z\) has not gone out yet$/,
    },
    {
      // The last notification was the previous incident's resolution; this incident's firing failed to go out.
      case: 'a new incident whose firing notification failed',
      records: [
        fixtureRecord(instance, NOW - MINUTE, {
          lastNotification: sent({ status: 'resolved', atMs: NOW - 3 * MINUTE, reason: 'resolved' }),
        }),
      ],
      firing: [instance],
      nowMs: NOW,
      expected: [{ action: 'notify', reason: 'retry', status: 'firing', expectedVersion: 2, followsUp: false }],
      text: /^retry: the firing notification/,
    },
    {
      // Gone from the result of a rule that evaluated: resolved.
      case: 'a notified instance gone from an evaluated rule',
      records: [firingNotified],
      firing: [],
      nowMs: NOW,
      expected: [{ action: 'notify', reason: 'resolved', status: 'resolved', expectedVersion: 2, followsUp: false }],
      text: /^resolved at 2025-06-01T12:10:00.000Z \(fired since 2025-06-01T12:00:00.000Z\)$/,
    },
    {
      // Its firing notification failed and the condition cleared before the retry: the incident is still told.
      case: 'an instance that resolved before its firing notification went out',
      records: [fixtureRecord(instance, STARTED)],
      firing: [],
      nowMs: NOW,
      expected: [{ action: 'notify', reason: 'resolved', status: 'resolved', expectedVersion: 2, followsUp: false }],
      text: /its firing notification never went out\)$/,
    },
    {
      // The resolved notification failed last run: retried, never lost.
      case: 'a resolved instance whose resolved notification failed',
      records: [resolvedUnsent],
      firing: [],
      nowMs: NOW,
      expected: [{ action: 'notify', reason: 'retry', status: 'resolved', expectedVersion: 5, followsUp: false }],
      text: /^retry: the resolved notification \(resolved at 2025-06-01T12:09:00.000Z\) has not gone out yet$/,
    },
    {
      // Resolved and told: history until the TTL; no decision at all.
      case: 'a resolved instance whose resolution went out',
      records: [resolvedSent],
      firing: [],
      nowMs: NOW,
      expected: [],
      text: undefined,
    },
    {
      // It fires again after its resolution went out: a new incident, first notification.
      case: 'a resolved and notified instance that fires again',
      records: [resolvedSent],
      firing: [instance],
      nowMs: NOW,
      expected: [{ action: 'notify', reason: 'first', status: 'firing', expectedVersion: 6, followsUp: false }],
      text: /^first notification: firing again since 2025-06-01T12:10:00.000Z \(the previous incident resolved at 2025-06-01T12:08:00.000Z\)$/,
    },
    {
      // It fires again before its resolution went out: the resolution first, then the new incident.
      case: 'an instance that fires again before its resolved notification went out',
      records: [resolvedUnsent],
      firing: [instance],
      nowMs: NOW,
      expected: [
        { action: 'notify', reason: 'retry', status: 'resolved', expectedVersion: 5, followsUp: false },
        { action: 'notify', reason: 'first', status: 'firing', expectedVersion: null, followsUp: true },
      ],
      text: /^retry: the resolved notification .* it goes before the new incident$/,
    },
    {
      // Another evaluator holds a live claim: leave the record to it.
      case: 'an instance claimed by another evaluator',
      records: [fixtureRecord(instance, STARTED, { claim: { id: 'evaluator-b/1', untilMs: NOW + 1 } })],
      firing: [instance],
      nowMs: NOW,
      expected: [{ action: 'none', reason: 'claimed', status: 'firing' }],
      text: /^skipped: another evaluator holds the claim \(evaluator-b\/1\) until 2025-06-01T12:10:00.001Z$/,
    },
    {
      // A claim that expired (its evaluator crashed) blocks nothing.
      case: 'an instance with an expired claim',
      records: [fixtureRecord(instance, STARTED, { claim: { id: 'crashed/1', untilMs: NOW } })],
      firing: [instance],
      nowMs: NOW,
      expected: [{ action: 'notify', reason: 'retry', status: 'firing', expectedVersion: 2, followsUp: false }],
      text: /^retry: /,
    },
  ])('decides for $case', ({ records, firing, nowMs, expected, text }) => {
    // Act
    const decisions = run(records, firing, nowMs);

    // Assess
    expect(decisions.map(shape)).toEqual(expected);
    if (text !== undefined) expect(decisions[0]?.text).toMatch(text);
  });

  it.each([
    { case: 'a firing record', record: firingNotified },
    { case: 'a resolved record whose notification failed', record: resolvedUnsent },
  ])('keeps $case of a rule that failed to evaluate, without a notification', ({ record }) => {
    // Prepare: the rule's query failed this cycle.
    const failure = { alertname: 'VLLMKVCacheFull' as const, error: new Error('HTTP 503 from AMP') };

    // Act
    const decisions = run([record], [], NOW, {
      evaluatedRules: ['VLLMHighQueueDepth', 'VLLMHighLatency', 'VLLMGPUMemoryCritical', 'VLLMPreemptionSpike'],
      failures: [failure],
    });

    // Assess
    expect(decisions.map(shape)).toEqual([{ action: 'none', reason: 'rule-failed', status: record.status }]);
    expect(decisions[0]?.text).toBe(
      'skipped: rule failed to evaluate (Error: HTTP 503 from AMP); the alert keeps its state',
    );
  });

  it('keeps the alerts of a rule that was not evaluated (disabled), without a notification', () => {
    // Act
    const decisions = run([firingNotified], [], NOW, { evaluatedRules: ['VLLMHighQueueDepth'] });

    // Assess
    expect(decisions.map(shape)).toEqual([{ action: 'none', reason: 'rule-not-evaluated', status: 'firing' }]);
  });

  it('carries the latest value and texts into a repeat, keeping the incident start', () => {
    // Act
    const [decision] = run([firingNotified], [hotter], STARTED + REPEAT_SECONDS * 1000 + 5_000);

    // Assess
    expect((decision as NotifyDecision).state).toMatchObject({
      value: 0.99,
      summary: 'KV cache 99 % full',
      startsAtMs: STARTED,
      endsAtMs: null,
    });
  });

  it('resolves with the last stored value and texts, ending at the evaluation time', () => {
    // Prepare: the evaluation ran 20 s before "now".
    const evaluationMs = NOW - 20_000;

    // Act
    const [decision] = decide({
      records: [firingNotified],
      evaluation: fixtureEvaluation([], evaluationMs),
      repeatIntervalSeconds: REPEAT_SECONDS,
      nowMs: NOW,
    });

    // Assess
    expect((decision as NotifyDecision).state).toMatchObject({
      status: 'resolved',
      value: 0.97,
      summary: instance.summary,
      startsAtMs: STARTED,
      endsAtMs: evaluationMs,
    });
  });

  it("orders decisions by the guide's alert order, then fingerprint", () => {
    // Prepare
    const queue = fixtureInstance('pod-a', {
      alertname: 'VLLMHighQueueDepth',
      severity: 'warning',
      fingerprint: 'queue-pod-a',
    });
    const kvB = fixtureInstance('pod-b', { fingerprint: 'kv-pod-b' });
    const kvA = fixtureInstance('pod-a', { fingerprint: 'kv-pod-a' });

    // Act
    const decisions = run([], [kvB, queue, kvA]);

    // Assess
    expect(decisions.map((d) => d.fingerprint)).toEqual(['queue-pod-a', 'kv-pod-a', 'kv-pod-b']);
  });

  it.each([
    {
      case: 'two instances with one fingerprint',
      records: [],
      firing: [instance, hotter],
      problem: /two VLLMKVCacheFull instances share fingerprint kv-vllm-inference-app-7d9c8b6f5d-x2k4q/,
    },
    {
      case: "another target's instance",
      records: [],
      firing: [fixtureInstance(undefined, { target: 'staging' })],
      problem: /instance kv-vllm-inference-app-7d9c8b6f5d-x2k4q names target staging/,
    },
    {
      case: "another target's record",
      records: [{ ...firingNotified, target: 'staging' }],
      firing: [],
      problem: /record kv-vllm-inference-app-7d9c8b6f5d-x2k4q belongs to target staging/,
    },
  ])('refuses $case', ({ records, firing, problem }) => {
    // Act
    const act = () => run(records, firing);

    // Assess
    expect(act).toThrow(AlertEvaluationInvalidError);
    expect(act).toThrow(problem);
  });
});
