import { describe, expect, it } from '@jest/globals';
import { decide, type AlertDecision, type NotifyDecision } from './decide.js';
import { AlertEvaluationInvalidError } from './pipelineErrors.js';
import { FIXTURE_T0, fixtureEvaluation, fixtureInstance, fixtureRecord } from './testing/fixtures.js';
import type { AlertStateRecord, SentNotification } from './alertState.js';
import { ALERT_NAMES, type AlertInstance, type AlertName, type TargetEvaluation } from './types.js';

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

describe('Function: decide (inhibition)', () => {
  const POD_A = 'vllm-inference-app-7d9c8b6f5d-x2k4q';
  const POD_B = 'vllm-inference-app-7d9c8b6f5d-h8w2m';
  /** An instance of `alertname` on `pod` (the fixture's labels: namespace, pod, model, target, cluster). */
  const on = (alertname: AlertName, pod: string, value = 0.97): AlertInstance =>
    fixtureInstance(pod, {
      alertname,
      severity: alertname === 'VLLMKVCacheFull' ? 'critical' : 'warning',
      fingerprint: `${alertname}-${pod}`,
      value,
      summary: `${alertname} on ${pod}`,
    });
  const full = on('VLLMKVCacheFull', POD_A);
  const high = on('VLLMKVCacheHigh', POD_A, 0.85);
  const spike = on('VLLMPreemptionSpike', POD_A, 6);
  const notified = (instance: AlertInstance, overrides: Partial<AlertStateRecord> = {}) =>
    fixtureRecord(instance, STARTED, { lastNotification: sent(), ...overrides });

  it.each([
    {
      // The warning's `for` ends while the cache is full: Alertmanager never notifies it, nor its resolution later.
      case: "a warning's first notification while the critical fires on its Pod",
      records: [notified(full)],
      firing: [full, high],
      expected: { alertname: 'VLLMKVCacheHigh', action: 'none', reason: 'inhibited', status: 'firing' },
    },
    {
      case: "the preemption spike's first notification while the critical fires on its Pod",
      records: [notified(full)],
      firing: [full, spike],
      expected: { alertname: 'VLLMPreemptionSpike', action: 'none', reason: 'inhibited', status: 'firing' },
    },
    {
      // Inhibition is per Pod: the same warning on another Pod is told.
      case: "a warning on another Pod than the critical's",
      records: [notified(full)],
      firing: [full, on('VLLMKVCacheHigh', POD_B, 0.85)],
      expected: { alertname: 'VLLMKVCacheHigh', action: 'notify', reason: 'first', status: 'firing' },
    },
    {
      // Notified before the critical fired: no repeat while it fires (the repeat goes out once it stops, if due).
      case: "a warning's repeat while the critical fires on its Pod",
      records: [notified(full), notified(high)],
      firing: [full, high],
      nowMs: STARTED + 5_000 + REPEAT_SECONDS * 1000,
      expected: { alertname: 'VLLMKVCacheHigh', action: 'none', reason: 'inhibited', status: 'firing' },
    },
    {
      // Alertmanager mutes by labels, resolved or not: the resolution waits until the critical stops.
      case: "a notified spike's resolution while the critical still fires on its Pod",
      // (The decision reports the status of the notification it holds back; the record stays firing.)
      records: [notified(full), notified(spike)],
      firing: [full],
      expected: { alertname: 'VLLMPreemptionSpike', action: 'none', reason: 'inhibited', status: 'resolved' },
    },
    {
      // The critical and the warning clear in the same evaluation: the critical no longer fires, so both resolve.
      case: "a notified warning's resolution in the evaluation where the critical clears",
      records: [notified(full), notified(high)],
      firing: [],
      expected: { alertname: 'VLLMKVCacheHigh', action: 'notify', reason: 'resolved', status: 'resolved' },
    },
    {
      // The critical keeps inhibiting while it keeps firing (the warning is still due once the cache drains).
      case: "a warning's first notification once the critical has cleared",
      records: [resolvedSent],
      firing: [on('VLLMKVCacheHigh', 'vllm-inference-app-7d9c8b6f5d-x2k4q', 0.85)],
      expected: { alertname: 'VLLMKVCacheHigh', action: 'notify', reason: 'first', status: 'firing' },
    },
  ] as Array<{
    case: string;
    records: AlertStateRecord[];
    firing: AlertInstance[];
    nowMs?: number;
    expected: { alertname: AlertName; action: string; reason: string; status: string };
  }>)('decides for $case', ({ records, firing, nowMs, expected }) => {
    // Act
    const decisions = run(records, firing, nowMs ?? NOW);

    // Assess
    expect(decisions.find((d) => d.alertname === expected.alertname)).toMatchObject(expected);
  });

  it('says in the log line which alert inhibits and what waits', () => {
    // Act
    const decision = run([notified(full)], [full, high]).find((d) => d.alertname === 'VLLMKVCacheHigh');

    // Assess
    expect(decision?.text).toBe(
      `inhibited: VLLMKVCacheFull fires on the same Pod (VLLMKVCacheFull-${POD_A}); the firing notification ` +
        '(first) waits until it stops, the alert keeps its state',
    );
  });

  it.each([
    {
      // A failed query keeps the critical's state: it keeps inhibiting, as it would keep firing in Prometheus.
      case: 'inhibits while the critical rule fails to evaluate and its record says firing',
      overrides: { failures: [{ alertname: 'VLLMKVCacheFull' as const, error: new Error('HTTP 503') }] },
      reason: 'inhibited',
    },
    {
      // A disabled rule fires nothing (it is not in the exported rules either): nothing to inhibit with.
      case: 'does not inhibit with the record of a critical rule that was not evaluated (disabled)',
      overrides: { evaluatedRules: namesBut('VLLMKVCacheFull') },
      reason: 'first',
    },
  ])('$case', ({ overrides, reason }) => {
    // Act
    const decisions = run([notified(full)], [high], NOW, {
      evaluatedRules: namesBut('VLLMKVCacheFull'),
      ...overrides,
    });

    // Assess
    expect(decisions.find((d) => d.alertname === 'VLLMKVCacheHigh')?.reason).toBe(reason);
  });

  /**
   * Runs `decide` over evaluations 15 s apart, committing every notification as the pipeline does when SNS accepts
   * it; returns the notifications in order (`<alertname> <status> (<reason>)`).
   */
  function notifications(firingAt: (second: number) => AlertInstance[], seconds: number): string[] {
    const records = new Map<string, AlertStateRecord>();
    const out: string[] = [];
    for (let second = 0; second <= seconds; second += 15) {
      const nowMs = FIXTURE_T0 + second * 1000;
      const decisions = decide({
        records: [...records.values()],
        evaluation: fixtureEvaluation(firingAt(second), nowMs),
        repeatIntervalSeconds: REPEAT_SECONDS,
        nowMs,
      });
      for (const decision of decisions) {
        if (decision.action !== 'notify') continue;
        const previous = records.get(decision.fingerprint);
        records.set(decision.fingerprint, {
          ...decision.state,
          lastNotification: {
            status: decision.status,
            startsAtMs: decision.state.startsAtMs,
            atMs: nowMs,
            reason: decision.reason,
          },
          claim: null,
          version: (previous?.version ?? 0) + 2,
          expiresAt: null,
        });
        out.push(`${decision.alertname} ${decision.status} (${decision.reason})`);
      }
    }
    return out;
  }

  it('sends what Alertmanager sends for KV cache 85 % (warning), then 97 % (critical, warning inhibited), then 50 %', () => {
    // Prepare: what the evaluator finds: the warning from 2m (85 % since 0), the critical from 3m30s (97 % since
    // 3m), nothing from 5m (50 %).
    const firingAt = (second: number) => [
      ...(second >= 210 && second < 300 ? [on('VLLMKVCacheFull', POD_A, 0.97)] : []),
      ...(second >= 120 && second < 300 ? [on('VLLMKVCacheHigh', POD_A, second >= 180 ? 0.97 : 0.85)] : []),
    ];

    // Act
    const sentInOrder = notifications(firingAt, 600);

    // Assess: the warning was told before the critical fired, so its resolution is told too (Alertmanager's
    // notification log holds its firing notification); both resolve in one evaluation, critical first.
    expect(sentInOrder).toEqual([
      'VLLMKVCacheHigh firing (first)',
      'VLLMKVCacheFull firing (first)',
      'VLLMKVCacheFull resolved (resolved)',
      'VLLMKVCacheHigh resolved (resolved)',
    ]);
  });

  it('never tells a warning whose `for` ended while the critical fired (KV cache straight to 97 %, then 50 %)', () => {
    // Prepare: the critical from 30s, the warning from 2m (its `for`), both gone at 5m.
    const firingAt = (second: number) => [
      ...(second >= 30 && second < 300 ? [on('VLLMKVCacheFull', POD_A)] : []),
      ...(second >= 120 && second < 300 ? [on('VLLMKVCacheHigh', POD_A)] : []),
    ];

    // Act
    const sentInOrder = notifications(firingAt, 600);

    // Assess
    expect(sentInOrder).toEqual(['VLLMKVCacheFull firing (first)', 'VLLMKVCacheFull resolved (resolved)']);
  });

  it('tells a warning still firing once the critical has cleared (KV cache 97 %, then 85 %)', () => {
    // Prepare: the critical from 30s to 5m; the warning from 2m on (the cache stays above 80 %).
    const firingAt = (second: number) => [
      ...(second >= 30 && second < 300 ? [on('VLLMKVCacheFull', POD_A)] : []),
      ...(second >= 120 ? [on('VLLMKVCacheHigh', POD_A, second >= 300 ? 0.85 : 0.97)] : []),
    ];

    // Act
    const sentInOrder = notifications(firingAt, 600);

    // Assess
    expect(sentInOrder).toEqual([
      'VLLMKVCacheFull firing (first)',
      'VLLMKVCacheFull resolved (resolved)',
      'VLLMKVCacheHigh firing (first)',
    ]);
  });
});

/** Every alert name but `name`, as an evaluation's evaluatedRules. */
function namesBut(name: AlertName): AlertName[] {
  return ALERT_NAMES.filter((n) => n !== name);
}
