import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { AlertSettingsInput } from '../shared/alerts/rules/index.js';
import { CHECK_IDS } from '../shared/preflight/index.js';
import {
  type RecordedMessage,
  subscribeSlackNotifier,
  type Twin,
  TWIN_RESOURCES,
  twinAlertEvaluator,
  twinMetricsSource,
  twinPreflight,
  twinTarget,
} from '../sim/harness/index.js';
import { startScheduler, type Scheduler, watchAlerts } from './helpers/alerts.js';
import { pollFor } from './helpers/poll.js';
import { sleep, startDemoTwin } from './helpers/twin.js';

// Watching the watcher (issue 16), on the twin, in two parts.
//
// The absent alert: the target's vLLM series vanish from AMP (the twin's scrape-gap fault: each Pod's /metrics
// answers 503, so Prometheus marks its series stale) and every other rule answers nothing; VLLMMetricsAbsent, run by
// the REAL alert-evaluator Lambda, fires through SNS into Slack. Its `for` is shortened to 5 s (5 min in production)
// so that the test takes seconds.
//
// The heartbeat: the REAL alert-evaluator Lambda on the twin's cadence (a cycle a second) records its heartbeat in
// the twin's DynamoDB and CloudWatch; the stack's heartbeat alarm (the same definition, a 10 s period) is evaluated
// by the twin's CloudWatch. Stopping the evaluator turns the alarm to ALARM, publishes CloudWatch's alarm message to
// the operations topic, and fails preflight check 5 with the reason.

jest.setTimeout(180_000);

let twin: Twin;
let scheduler: Scheduler | undefined;
const operations: RecordedMessage[] = [];
let unsubscribe: (() => void) | undefined;

/** The heartbeat alarm's state and reason, as the twin's CloudWatch holds them. */
function heartbeatAlarm(): { state: string; reason: string } | undefined {
  const alarm = twin.cloudwatch.alarms().find((a) => a.alarmName === TWIN_RESOURCES.heartbeatAlarm);
  return alarm === undefined ? undefined : { state: alarm.state, reason: alarm.stateReason };
}

beforeAll(async () => {
  twin = await startDemoTwin();
  const topicArn = twin.state.aws.operationsTopicArn ?? '';
  unsubscribe = twin.sns.subscribe(topicArn, (message) => void operations.push(message));
}, 120_000);

afterAll(async () => {
  await scheduler?.stop();
  unsubscribe?.();
  await twin?.stop();
});

/** The absent alert's `for` shortened from 5 min; every other rule as in production (none of them can fire here). */
const ABSENT_ALERTS = { rules: { VLLMMetricsAbsent: { for: '5s', keepFiringFor: '3s' } } } satisfies AlertSettingsInput;
const ABSENT_FOR_MS = 5_000;
const ABSENT_KEEP_MS = 3_000;

describe("Alerts: VLLMMetricsAbsent when the target's vLLM series are gone from AMP", () => {
  it('stays silent while one Pod of two is scraped, fires once after its `for` when none is, reaches Slack, resolves once the scrapes are back', async () => {
    // Prepare
    const unsubscribeSlack = subscribeSlackNotifier(twin.sns, twin.state);
    const source = twinMetricsSource(twin.state);
    const [first, second] = twin.state.replicas.map((r) => r.name).sort();
    if (first === undefined || second === undefined) throw new Error('the demo twin should run two replicas');
    const seriesOf = async (pod: string) => (await source.instant(`vllm:num_requests_running{pod="${pod}"}`)).length;
    const absentAlerts = () => watch.published().filter((p) => p.message.alertname === 'VLLMMetricsAbsent');
    const watch = watchAlerts(twin);
    // The twin's Prometheus holds nothing from before it started, where absent() is 1: the evaluator, which asks the
    // history for the `for` and the keep-firing time, starts once both have passed over the Pods' series.
    await pollFor(
      'both Pods scraped',
      async () => ((await seriesOf(first)) * (await seriesOf(second)) > 0 ? true : undefined),
      {
        timeoutMs: 30_000,
      },
    );
    await sleep(ABSENT_FOR_MS + ABSENT_KEEP_MS + 2_000);
    scheduler = startScheduler(twinAlertEvaluator(twin.state, { alerts: ABSENT_ALERTS }));

    try {
      // Act 1: one Pod's scrapes fail; its series go stale, the other Pod's remain.
      twin.faults.inject({ kind: 'scrape-gap', pod: first, seconds: 120 });
      await pollFor(`${first}'s series gone`, async () => ((await seriesOf(first)) === 0 ? true : undefined), {
        timeoutMs: 30_000,
      });
      await sleep(ABSENT_FOR_MS + 3_000);
      const whileOneScraped = { alerts: absentAlerts().length, other: await seriesOf(second) };

      // Act 2: the other Pod's scrapes fail too: no vLLM series of the target is left.
      const gone = twin.faults.inject({ kind: 'scrape-gap', pod: second, seconds: 120 });
      const firing = await pollFor('the VLLMMetricsAbsent firing message', () => absentAlerts()[0], {
        timeoutMs: 60_000,
      });
      twin.faults.clear();
      const resolved = await pollFor(
        'the VLLMMetricsAbsent resolved message',
        () => absentAlerts().find((p) => p.message.status === 'resolved'),
        { timeoutMs: 60_000 },
      );
      await scheduler.waitForRuns(3);
      await twin.sns.flush();
      const slack = await pollFor('the Slack messages', () => {
        const deliveries = watch.slack(firing.message.fingerprint);
        return deliveries.length >= 2 ? deliveries : undefined;
      });

      // Assess: silent while one Pod still reports (the rule is per target, not per Pod).
      expect(whileOneScraped).toEqual({ alerts: 0, other: 1 });
      // Then once, critical, about the target (its namespace and model: absent() keeps the equality matchers' labels).
      expect(firing.message).toMatchObject({ alertname: 'VLLMMetricsAbsent', severity: 'critical', reason: 'first' });
      expect(firing.message.labels).toMatchObject({
        namespace: twin.state.namespace,
        model_name: twin.state.model,
        target: twinTarget(twin.state).name,
      });
      expect(firing.message.summary).toContain(`No vLLM metrics for model ${twin.state.model}`);
      expect(firing.recorded.receivedAtMs - gone.onsetMs).toBeGreaterThanOrEqual(ABSENT_FOR_MS);
      expect(absentAlerts().map((p) => `${p.message.status}/${p.message.reason}`)).toEqual([
        'firing/first',
        'resolved/resolved',
      ]);
      expect(resolved.message.startsAt).toBe(firing.message.startsAt);
      expect(slack.map((d) => d.header)).toEqual([
        expect.stringContaining('FIRING: VLLMMetricsAbsent'),
        expect.stringContaining('RESOLVED: VLLMMetricsAbsent'),
      ]);
      // Nothing else fired: every other rule answered nothing while the series were gone.
      expect(watch.published().filter((p) => p.message.alertname !== 'VLLMMetricsAbsent')).toEqual([]);
      expect(scheduler.runs().filter((r) => r.error !== undefined)).toEqual([]);
    } finally {
      twin.faults.clear();
      await scheduler.stop();
      scheduler = undefined;
      unsubscribeSlack();
    }
  });
});

describe('Alerts: the evaluator heartbeat, its alarm and preflight check 5 on the twin', () => {
  it('keeps the heartbeat alarm OK and check 5 passing while the evaluator runs', async () => {
    // Prepare
    scheduler = startScheduler(twinAlertEvaluator(twin.state));

    // Act: heartbeats until the alarm says OK.
    const ok = await pollFor(
      'the heartbeat alarm OK',
      async () => {
        await twin.cloudwatch.evaluateAlarms();
        return heartbeatAlarm()?.state === 'OK' ? heartbeatAlarm() : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 2_000 },
    );
    const { reports } = await twinPreflight(twin.state)();

    // Assess
    // One ok minute-period is enough to leave ALARM (3 breaching datapoints of 3 are needed to stay).
    expect(ok?.reason).toMatch(
      /^Threshold Crossed: \d out of the last \d datapoints \[.*\] were not less than the threshold \(1\.0\)/,
    );
    const check5 = reports[0]?.results.find((r) => r.id === CHECK_IDS.alertRules);
    expect(check5).toMatchObject({ status: 'pass' });
    expect(check5?.reason).toMatch(/^the alert evaluator runs the \d+ rules every 1 s: its last cycle at /);
    expect(scheduler.runs().filter((r) => r.error !== undefined)).toEqual([]);
  });

  it('turns the alarm to ALARM with the reason once the evaluator stops, publishing it, and fails check 5', async () => {
    // Act
    await scheduler?.stop();
    scheduler = undefined;
    const stoppedAtMs = Date.now();
    const alarmed = await pollFor(
      'the heartbeat alarm in ALARM',
      async () => {
        await twin.cloudwatch.evaluateAlarms();
        return heartbeatAlarm()?.state === 'ALARM' ? heartbeatAlarm() : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 2_000 },
    );
    await twin.sns.flush();
    const { reports } = await twinPreflight(twin.state)();

    // Assess: the alarm, as CloudWatch words it, after its three 10 s periods without an ok cycle.
    expect(alarmed?.reason).toBe(
      'Threshold Crossed: no datapoints were received for 3 periods and 3 missing datapoints were treated as [Breaching].',
    );
    // Three whole 10 s periods after the last heartbeat's period.
    expect(Date.now() - stoppedAtMs).toBeGreaterThanOrEqual(30_000);
    // The last ALARM message (the twin's alarm may also have fired once at start, before any evaluator ran).
    const alarmMessage = operations
      .map((m) => ({ subject: m.subject, body: JSON.parse(m.message) as Record<string, unknown> }))
      .filter((m) => m.body.NewStateValue === 'ALARM')
      .at(-1);
    expect(alarmMessage).toMatchObject({
      subject: `ALARM: "${TWIN_RESOURCES.heartbeatAlarm}" in US East (Ohio)`,
      body: { AlarmName: TWIN_RESOURCES.heartbeatAlarm, OldStateValue: 'OK', NewStateReason: alarmed?.reason },
    });
    // Check 5 fails with when the last cycle ran and how long ago.
    const check5 = reports[0]?.results.find((r) => r.id === CHECK_IDS.alertRules);
    expect(check5).toMatchObject({ status: 'fail' });
    expect(check5?.reason).toMatch(
      /^the alert evaluator has stopped: its last cycle at \S+, \d+ s ago \(more than 2 evaluation intervals, 2 s\)$/,
    );
  });
});
