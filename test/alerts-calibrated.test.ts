import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DEFAULT_ALERT_SETTINGS } from '../shared/alerts/rules/index.js';
import { DynamoDbHistoryStore, lastCalibratedAlertThresholds } from '../shared/calibration/history/index.js';
import {
  calibrateOnTwin,
  subscribeSlackNotifier,
  type Twin,
  twinAlertEvaluator,
  TWIN_CREDENTIALS,
  twinTarget,
  type TwinCalibrationResult,
} from '../sim/harness/index.js';
import { startScheduler, type Scheduler, watchAlerts } from './helpers/alerts.js';
import { pollFor } from './helpers/poll.js';
import { FAST_TWIN_CALIBRATION, startDemoTwin } from './helpers/twin.js';

// Alert thresholds from the calibration (issue 17, item 2), on the twin: a real calibration derives the queue alert's
// threshold from the replica's capacity and stores it in the history; the REAL alert-evaluator Lambda, reading that
// history, fires VLLMHighQueueDepth at the derived threshold (below the guide's 50), and the notification and Slack
// say which calibration set it and why. The alert's `for` is shortened to 4 s (2 min in production); its threshold is
// not set, so the calibration's applies.

jest.setTimeout(300_000);

const EXECUTION = 'calib-alerts';
const ALERTS = { rules: { VLLMHighQueueDepth: { for: '4s', keepFiringFor: '3s' } } };
const FOR_MS = 4_000;

let twin: Twin;
let reportsDir: string;
let calibration: TwinCalibrationResult;
let scheduler: Scheduler | undefined;
let unsubscribe: (() => void) | undefined;

beforeAll(async () => {
  twin = await startDemoTwin();
  reportsDir = await mkdtemp(join(tmpdir(), 'vllm-pilot-calibrated-alerts-'));
  unsubscribe = subscribeSlackNotifier(twin.sns, twin.state);
  calibration = await calibrateOnTwin(twin.state, {
    input: FAST_TWIN_CALIBRATION,
    executionName: EXECUTION,
    reportsDir,
    waitScale: 0.25,
    retryIntervalMs: 10,
  });
}, 240_000);

afterAll(async () => {
  await scheduler?.stop();
  unsubscribe?.();
  twin?.faults.clear();
  await twin?.stop();
  if (reportsDir) await rm(reportsDir, { recursive: true, force: true });
});

describe('Alerts: thresholds derived by the calibration, used by the evaluator on the twin', () => {
  it('the calibration derives the alert thresholds with reasons and stores them in the history', async () => {
    // Prepare
    const history = new DynamoDbHistoryStore({
      client: new DynamoDBClient({
        region: twin.state.region,
        endpoint: twin.state.aws.dynamodbEndpoint,
        credentials: TWIN_CREDENTIALS,
      }),
      tableName: twin.state.aws.historyTable,
    });

    // Act
    const stored = await lastCalibratedAlertThresholds(history, twinTarget(twin.state));

    // Assess
    const { analysis } = calibration.report;
    const capacity = analysis.capacityRps?.value ?? Number.NaN;
    expect(analysis.alerts?.VLLMHighQueueDepth.value).toBe(Math.floor(capacity));
    expect(analysis.alerts?.VLLMHighQueueDepth.reason).toContain("at the replica's capacity C");
    expect(analysis.alerts?.VLLMHighLatency.value).toBe(analysis.thresholds?.p95LatencySeconds.value);
    expect(stored).toEqual({
      execution: EXECUTION,
      finishedAt: calibration.report.provenance.finishedAt,
      thresholds: analysis.alerts,
    });
    // The summary a user reads lists them with their formulas.
    expect(calibration.stored.summary).toContain('Alert thresholds (the alert evaluator uses them');
    expect(calibration.stored.summary).toMatch(/VLLMHighQueueDepth +> \d+ waiting per Pod\n +formula: max\(KEDA/);
  });

  it("fires VLLMHighQueueDepth at the derived threshold, below the guide's, and says which calibration set it", async () => {
    // Prepare: a queue above the derived threshold and below the guide's 50.
    const derived = calibration.report.analysis.alerts?.VLLMHighQueueDepth.value ?? Number.NaN;
    const waiting = derived + 7;
    expect(waiting).toBeLessThan(DEFAULT_ALERT_SETTINGS.rules.VLLMHighQueueDepth.threshold);
    const [pod] = twin.state.replicas.map((r) => r.name).sort();
    const watch = watchAlerts(twin);
    scheduler = startScheduler(twinAlertEvaluator(twin.state, { alerts: ALERTS }));

    // Act
    const injected = twin.faults.inject({ kind: 'queue-flood', pod: pod ?? '', waiting });
    const firing = await pollFor(
      'the VLLMHighQueueDepth firing message',
      () => watch.published().find((p) => p.message.alertname === 'VLLMHighQueueDepth'),
      { timeoutMs: 90_000 },
    );
    twin.faults.clear();
    await twin.sns.flush();
    const slack = await pollFor('the Slack message', () => watch.slack(firing.message.fingerprint)[0]);
    await scheduler.stop();
    scheduler = undefined;

    process.stdout.write(
      `VLLMHighQueueDepth: derived threshold ${derived} (capacity ${calibration.report.analysis.capacityRps?.value.toFixed(1)} req/s per Pod, the guide's 50); ` +
        `fired at ${firing.message.value} waiting, ${((firing.recorded.receivedAtMs - injected.onsetMs) / 1000).toFixed(1)} s after the flood (for 4 s)\n`,
    );

    // Assess
    expect(firing.message).toMatchObject({ severity: 'warning', status: 'firing', threshold: derived });
    expect(firing.message.labels.pod).toBe(pod);
    expect(firing.message.value).toBeGreaterThan(derived);
    expect(firing.recorded.receivedAtMs - injected.onsetMs).toBeGreaterThanOrEqual(FOR_MS);
    expect(firing.message.description).toContain(
      `The threshold (${derived}) comes from calibration ${EXECUTION} (${calibration.report.provenance.finishedAt}): ` +
        "a queue of Q at one Pod holds about Q / C s of work at the replica's capacity C",
    );
    expect(slack.header).toContain('FIRING: VLLMHighQueueDepth');
    expect(JSON.stringify(twin.slack.deliveries().at(-1)?.body)).toContain(`comes from calibration ${EXECUTION}`);
  });
});
