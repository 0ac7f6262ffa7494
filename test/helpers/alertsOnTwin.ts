import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import {
  type AlertEvaluatorRun,
  type FaultRequest,
  type RecordedMessage,
  subscribeSlackNotifier,
  type Twin,
  type VllmVersion,
  twinAlertEvaluator,
  twinMetricsSource,
  twinTarget,
} from '../../sim/harness/index.js';
import { AlertEvaluatorAllTargetsFailedError } from '../../functions/alert-evaluator/errors.js';
import { type AlertName } from '../../shared/alerts/index.js';
import { type AlertSettingsInput, evaluateTarget, parseAlertSettings } from '../../shared/alerts/rules/index.js';
import type { HttpMetricsSource } from '../../shared/metrics/index.js';
import type { Target } from '../../shared/config/index.js';
import { startScheduler, waitUntilQuiet, watchAlerts, type PublishedAlert, type Scheduler } from './alerts.js';
import { pollFor } from './poll.js';
import { backgroundLoad, sleep, startDemoTwin, warmUp } from './twin.js';

// Issue 5's "must show", end to end on the twin: a fault injected into a vLLM Pod → the REAL alert-evaluator Lambda
// handler (against the twin's Prometheus, DynamoDB and SNS) → the alerts topic → the REAL slack-notifier Lambda
// through its subscription → the twin's Slack sink. The same tests run on a twin with vLLM 0.9 metric names and
// one with the latest names (two replicas, 1 s scrapes, the demo profile otherwise).
//
// The settings are the guide's rules with SHORTENED but real timings, so that a test takes seconds, not minutes:
// repeat interval 10 s (4 h by default); `for` and keep-firing times of a few seconds; rate windows of 5 s (5 min in
// the guide), short enough that a cleared fault resolves well inside one repeat interval (a rate alert resolves about
// one window and the keep-firing time after its fault ends). A background scheduler invokes the evaluator every
// second while a test runs, as EventBridge does every minute in production. The only time bounds asserted are the
// lower bounds the issue asks for (never before `for`, never sooner than the repeat interval); timeouts only guard
// against hanging.

/**
 * Kept firing 2 s after the condition last held (90 s by default): short, so that a cleared fault, the latency
 * alert's 5 s window included, resolves before the next repeat. These tests are not about gaps in the data: too short
 * to refill a `for` after a failed scrape, it does not bridge one (test/alerts-scrape-gap.test.ts shows a keep that
 * does).
 */
const KEEP_FIRING_FOR = '2s';

const TEST_ALERTS = {
  repeatInterval: '10s',
  rules: {
    VLLMHighQueueDepth: { for: '6s', keepFiringFor: KEEP_FIRING_FOR },
    // The demo's p95 is ~0.6 s at light load; six times slower decoding puts it near 3-4 s.
    VLLMHighLatency: { threshold: 2, for: '6s', window: '5s', keepFiringFor: KEEP_FIRING_FOR },
    VLLMGPUMemoryCritical: { for: '5s', keepFiringFor: KEEP_FIRING_FOR },
    VLLMKVCacheFull: { for: '4s', keepFiringFor: KEEP_FIRING_FOR },
    // No `for`, as in the guide.
    VLLMPreemptionSpike: { window: '5s', keepFiringFor: KEEP_FIRING_FOR },
    // Not under test here, but a KV-cache fault drives it too: kept 90 s it would still fire into the next test.
    VLLMKVCacheHigh: { keepFiringFor: KEEP_FIRING_FOR },
  },
} satisfies AlertSettingsInput;
const SETTINGS = parseAlertSettings(TEST_ALERTS);
const REPEAT_MS = SETTINGS.repeatIntervalSeconds * 1000;
/** The AWS SDK's default attempts per request (standard retry mode): a run's publish fails only when all fail. */
const SDK_DEFAULT_MAX_ATTEMPTS = 3;

interface Replica {
  pod: string;
  gpuUuid: string;
}

/** One alert of the guide, the fault that trips it, and what it needs. */
interface AlertCase {
  alert: AlertName;
  severity: 'critical' | 'warning';
  fault: FaultRequest['kind'];
  params: Record<string, number>;
  /** Which replica (by name order) takes the fault. */
  replica: 'first' | 'second';
  /** The latency alert needs requests to measure: a light constant load through the Service. */
  load: 'no load' | 'a light load through the Service';
  /** The labels that say where: the Pod, the GPU, or (latency is per model) the model. */
  where: (replica: Replica, twin: Twin) => Record<string, string>;
}

// Latency first: the other faults slow requests too, and the tail of their latency must not be in its test.
const CASES: AlertCase[] = [
  {
    alert: 'VLLMHighLatency',
    severity: 'critical',
    fault: 'slow-decoding',
    params: { factor: 6 },
    replica: 'first',
    load: 'a light load through the Service',
    where: (_replica, twin) => ({ namespace: twin.state.namespace, model_name: twin.state.model }),
  },
  {
    alert: 'VLLMKVCacheFull',
    severity: 'critical',
    fault: 'kv-cache-pressure',
    params: { fraction: 0.97 },
    replica: 'second',
    load: 'no load',
    where: (replica) => ({ pod: replica.pod }),
  },
  {
    alert: 'VLLMGPUMemoryCritical',
    severity: 'critical',
    fault: 'framebuffer-pressure',
    params: { fraction: 0.97 },
    replica: 'first',
    load: 'no load',
    where: (replica) => ({ UUID: replica.gpuUuid }),
  },
  {
    alert: 'VLLMHighQueueDepth',
    severity: 'warning',
    fault: 'queue-flood',
    params: { waiting: 80 },
    replica: 'second',
    load: 'no load',
    where: (replica) => ({ pod: replica.pod }),
  },
  {
    alert: 'VLLMPreemptionSpike',
    severity: 'warning',
    fault: 'preemption-storm',
    params: { rate: 12 },
    replica: 'first',
    load: 'no load',
    where: (replica) => ({ pod: replica.pod }),
  },
];

/** A light constant load through the Service (4 requests/s, the demo request shape) until stopped. */
function lightLoad(twin: Twin): { stop(): Promise<void> } {
  return backgroundLoad(twin, 4);
}

/** The message of `alert` whose labels include `where`, among `alerts`. */
function firstMatching(alerts: PublishedAlert[], alert: AlertName, where: Record<string, string>) {
  return alerts.find(
    ({ message }) =>
      message.alertname === alert &&
      message.status === 'firing' &&
      Object.entries(where).every(([name, value]) => message.labels[name] === value),
  );
}

/**
 * The alert tests on a twin with one vLLM naming era; one test file per era (test/alerts-vllm-*.test.ts), so that the
 * two twins run in parallel.
 */
export function describeAlertsOnTwin(vllmVersion: VllmVersion): void {
  jest.setTimeout(180_000);
  describe(`Function: alert-evaluator + slack-notifier handlers on a twin with vLLM ${vllmVersion} metric names`, () => {
    let twin: Twin;
    let run: AlertEvaluatorRun;
    let target: Target;
    let source: HttpMetricsSource;
    let replicas: Record<'first' | 'second', Replica>;
    const unsubscribe: Array<() => void> = [];
    /** What a pager subscription with a critical-only filter policy received. */
    const pager: RecordedMessage[] = [];
    let pagerSince = 0;
    let scheduler: Scheduler | undefined;
    let load: { stop(): Promise<void> } | undefined;

    beforeAll(async () => {
      twin = await startDemoTwin({ vllmVersion, replicas: 2 });
      run = twinAlertEvaluator(twin.state, { alerts: TEST_ALERTS });
      target = twinTarget(twin.state);
      source = twinMetricsSource(twin.state);
      const sorted = [...twin.state.replicas].sort((a, b) => a.name.localeCompare(b.name));
      const [a, b] = sorted.map((r) => ({ pod: r.name, gpuUuid: r.gpuUuid }));
      if (a === undefined || b === undefined) throw new Error('the demo twin should run two replicas');
      replicas = { first: a, second: b };
      unsubscribe.push(subscribeSlackNotifier(twin.sns, twin.state));
      pagerSince = twin.sns.messages(twin.state.aws.alertTopicArn).length;
      unsubscribe.push(
        twin.sns.subscribe(twin.state.aws.alertTopicArn, (message) => void pager.push(message), {
          filterPolicy: { severity: ['critical'] },
        }),
      );
      await warmUp(twin);
    }, 120_000);

    beforeEach(async () => {
      twin.faults.clear();
      await waitUntilQuiet({ twin, run, target, settings: SETTINGS, source });
    }, 120_000);

    afterEach(async () => {
      // A failed test must leave neither its scheduler, its load nor its fault to the next one.
      await scheduler?.stop();
      scheduler = undefined;
      await load?.stop();
      load = undefined;
      twin?.faults.clear();
    }, 60_000);

    afterAll(async () => {
      for (const stop of unsubscribe.splice(0)) stop();
      await twin?.stop();
    });

    it.each(CASES)(
      '$alert: $fault on one Pod, $load → fires once after its `for`, repeats after the repeat interval, reaches Slack, resolves once',
      async ({ alert, severity, fault, params, replica, load: needs, where }) => {
        // Prepare
        const forMs = SETTINGS.rules[alert].forSeconds * 1000;
        const on = replicas[replica];
        const expectedLabels = where(on, twin);
        const watch = watchAlerts(twin);
        scheduler = startScheduler(run);
        if (needs !== 'no load') {
          load = lightLoad(twin);
          // A few seconds of healthy latency first: the alert must not fire on the load alone.
          await sleep(4_000);
        }

        // Act: inject, and wait for the first notification and the repeat.
        const injected = twin.faults.inject({ kind: fault, pod: on.pod, ...params });
        const first = await pollFor(
          `the first ${alert} firing message`,
          () => firstMatching(watch.published(), alert, expectedLabels),
          {
            timeoutMs: 90_000,
          },
        );
        const fingerprint = first.message.fingerprint;
        const repeat = await pollFor(
          `the ${alert} repeat`,
          () => watch.published(fingerprint).find((p) => p.message.reason === 'repeat'),
          { timeoutMs: 90_000 },
        );
        const firingBeforeRepeat = watch
          .published(fingerprint)
          .filter((p) => p.recorded.receivedAtMs < repeat.recorded.receivedAtMs);
        const runsBetween = scheduler
          .runs()
          .filter((r) => r.startedAtMs > first.recorded.receivedAtMs && r.endedAtMs < repeat.recorded.receivedAtMs);
        twin.faults.clear(on.pod);
        const resolved = await pollFor(
          `the ${alert} resolved message`,
          () => watch.published(fingerprint).find((p) => p.message.status === 'resolved'),
          { timeoutMs: 90_000 },
        );
        await scheduler.waitForRuns(4);
        await twin.sns.flush();
        const slack = await pollFor(`the ${alert} messages in Slack`, () => {
          const deliveries = watch.slack(fingerprint);
          return deliveries.length >= 3 ? deliveries : undefined;
        });

        // Assess: never before its `for`, and about this Pod/GPU/model.
        expect(injected).toMatchObject({ kind: fault, pod: on.pod, params });
        expect(first.message).toMatchObject({ alertname: alert, severity, reason: 'first', endsAt: null });
        expect(first.message.labels).toMatchObject({ ...expectedLabels, target: target.name });
        expect(first.recorded.attributes).toMatchObject({
          severity: { dataType: 'String', value: severity },
          status: { dataType: 'String', value: 'firing' },
          alertname: { dataType: 'String', value: alert },
        });
        expect(first.recorded.receivedAtMs - injected.onsetMs).toBeGreaterThanOrEqual(forMs);
        // Sent once, although the evaluator ran every second; then repeated, no sooner than the interval.
        expect(firingBeforeRepeat.map((p) => p.message.reason)).toEqual(['first']);
        expect(runsBetween.length).toBeGreaterThanOrEqual(5);
        expect(repeat.message).toMatchObject({ status: 'firing', startsAt: first.message.startsAt });
        expect(repeat.recorded.receivedAtMs - first.recorded.receivedAtMs).toBeGreaterThanOrEqual(REPEAT_MS);
        // Exactly one resolved, and nothing after it for a few more evaluations.
        expect(watch.published(fingerprint).map((p) => `${p.message.status}/${p.message.reason}`)).toEqual([
          'firing/first',
          'firing/repeat',
          'resolved/resolved',
        ]);
        expect(resolved.message).toMatchObject({ startsAt: first.message.startsAt, endsAt: expect.any(String) });
        // Slack got each of them through the subscription, its header naming the alert.
        expect(slack.map((d) => d.header)).toEqual([
          expect.stringContaining(`FIRING: ${alert}`),
          expect.stringContaining(`FIRING: ${alert}`),
          expect.stringContaining(`RESOLVED: ${alert}`),
        ]);
        expect(scheduler.runs().filter((r) => r.error !== undefined)).toEqual([]);
      },
    );

    it('delivers to a subscription with filter policy {"severity": ["critical"]} only the critical messages, all of them', async () => {
      // Prepare: the topic carried the alerts of the tests above (VLLMHighQueueDepth and VLLMPreemptionSpike warn).
      await twin.sns.flush();
      const onTopic = twin.sns.messages(twin.state.aws.alertTopicArn).slice(pagerSince);

      // Act
      const received = pager.map((message) => ({
        id: message.messageId,
        attribute: message.attributes.severity?.value,
        severity: (JSON.parse(message.message) as { severity: string }).severity,
      }));

      // Assess
      const severities = onTopic.map((message) => message.attributes.severity?.value);
      expect(severities).toContain('warning');
      expect(received.length).toBeGreaterThan(0);
      for (const message of received) expect(message).toMatchObject({ attribute: 'critical', severity: 'critical' });
      expect(received.map((m) => m.id)).toEqual(
        onTopic.filter((m) => m.attributes.severity?.value === 'critical').map((m) => m.messageId),
      );
    });

    /**
     * Injects KV-cache pressure on `on` and waits, without notifying (the product's evaluation alone, no state), until
     * VLLMKVCacheFull is due there; returns the instance's fingerprint.
     */
    async function dueKvCacheAlert(on: Replica): Promise<string> {
      twin.faults.inject({ kind: 'kv-cache-pressure', pod: on.pod });
      const instance = await pollFor(
        `VLLMKVCacheFull due on ${on.pod}`,
        async () => {
          const evaluation = await evaluateTarget(target, SETTINGS, { source }, Date.now());
          return evaluation.firing.find((i) => i.alertname === 'VLLMKVCacheFull' && i.labels.pod === on.pod);
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      return instance.fingerprint;
    }

    it('sends exactly one notification when two evaluators run at the same moment as an alert becomes due', async () => {
      // Prepare: two Lambda containers (no scheduler: nothing else evaluates).
      const other = twinAlertEvaluator(twin.state, { alerts: TEST_ALERTS });
      const watch = watchAlerts(twin);
      const fingerprint = await dueKvCacheAlert(replicas.first);

      // Act
      const at = Date.now();
      const results = await Promise.all([run(at), other(at)]);
      await twin.sns.flush();
      const slack = await pollFor('the Slack message', () => {
        const deliveries = watch.slack(fingerprint);
        return deliveries.length > 0 ? deliveries : undefined;
      });
      await sleep(500);

      // Assess
      expect(watch.published(fingerprint).map((p) => p.message.reason)).toEqual(['first']);
      expect(results.map((r) => r.totals.sent).sort()).toEqual([0, 1]);
      expect(results.map((r) => r.totals.failed)).toEqual([0, 0]);
      expect(watch.slack(fingerprint)).toHaveLength(1);
      expect(slack[0]?.header).toContain('FIRING: VLLMKVCacheFull');
    });

    it('sends nothing on a run whose SNS publish fails, exactly one message (retry) on the next run, none after', async () => {
      // Prepare: every attempt of the one PublishBatch of the first run fails (the SDK retries a 500 by itself, so a
      // single failed request would not fail the run); no scheduler.
      const watch = watchAlerts(twin);
      const fingerprint = await dueKvCacheAlert(replicas.second);
      twin.sns.failNextRequests(SDK_DEFAULT_MAX_ATTEMPTS);

      // Act: a run whose only target failed to notify throws (the Lambda Errors metric fires), with its summary.
      const failure = await run().then(
        () => undefined,
        (error: unknown) => error,
      );
      await twin.sns.flush();
      const afterFailure = watch.published(fingerprint).length;
      const retried = await run();
      const quiet = await run();
      await twin.sns.flush();
      const slack = await pollFor('the Slack message', () => {
        const deliveries = watch.slack(fingerprint);
        return deliveries.length > 0 ? deliveries : undefined;
      });

      // Assess
      expect(afterFailure).toBe(0);
      expect(failure).toBeInstanceOf(AlertEvaluatorAllTargetsFailedError);
      const failed = (failure as AlertEvaluatorAllTargetsFailedError).summary;
      expect(failed.totals).toMatchObject({ sent: 0, failed: 1 });
      expect(failed.targets[0]?.failed[0]).toMatch(/^VLLMKVCacheFull firing \(first\) .*InternalError/);
      expect(retried.totals).toMatchObject({ sent: 1, failed: 0 });
      expect(quiet.totals).toMatchObject({ sent: 0, failed: 0, firing: 1 });
      expect(watch.published(fingerprint).map((p) => `${p.message.status}/${p.message.reason}`)).toEqual([
        'firing/retry',
      ]);
      expect(slack.map((d) => d.header)).toEqual([expect.stringContaining('FIRING: VLLMKVCacheFull')]);
    });
  });
}
