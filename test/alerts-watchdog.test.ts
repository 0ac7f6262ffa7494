import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { CHECK_IDS } from '../shared/preflight/index.js';
import {
  type RecordedMessage,
  type Twin,
  TWIN_RESOURCES,
  twinAlertEvaluator,
  twinPreflight,
} from '../sim/harness/index.js';
import { startScheduler, type Scheduler } from './helpers/alerts.js';
import { pollFor } from './helpers/poll.js';
import { startDemoTwin } from './helpers/twin.js';

// Watching the watcher (issue 16), on the twin: the REAL alert-evaluator Lambda on the twin's cadence (a cycle a
// second) records its heartbeat in the twin's DynamoDB and CloudWatch; the stack's heartbeat alarm (the same
// definition, a 10 s period) is evaluated by the twin's CloudWatch. Stopping the evaluator turns the alarm to ALARM,
// publishes CloudWatch's alarm message to the operations topic, and fails preflight check 5 with the reason.

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

describe('Alerts: the evaluator heartbeat, its alarm and preflight check 5 on the twin', () => {
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
