import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AlertCycleSummary } from '../shared/alerts/index.js';
import { evaluateTarget, parseAlertSettings } from '../shared/alerts/rules/index.js';
import { DynamoDbSilenceStore, silenceTargetKey } from '../shared/alerts/silences/index.js';
import {
  type AlertEvaluatorRun,
  startTwinCalibration,
  type Twin,
  TWIN_CREDENTIALS,
  twinAlertEvaluator,
  twinMetricsSource,
  twinTarget,
  type WorkflowOutcome,
} from '../sim/harness/index.js';
import { pollFor } from './helpers/poll.js';
import { DEMO_SHAPE, sleep, startDemoTwin } from './helpers/twin.js';

// Alerts that know a test is running: while a calibration holds the target, the REAL alert evaluator Lambda (against
// the twin's Prometheus, DynamoDB and SNS) mutes the target's notifications with the execution's name and records
// them as muted; once the calibration ends they go out. A person's silence does the same until it ends.
// A KV-cache fault on every replica keeps VLLMKVCacheFull firing (for shortened to 2 s, repeats every 10 s).

const ALERTS = { repeatInterval: '10s', rules: { VLLMKVCacheFull: { for: '2s', keepFiringFor: '3s' } } };
const LONG = 180_000;

let twin: Twin;
let evaluate: AlertEvaluatorRun;
let dynamodb: DynamoDBClient;
let silences: DynamoDbSilenceStore;
let reportsDir: string;

/** The KV-cache notifications the evaluator sent and muted in one run. */
function kvCache(summary: AlertCycleSummary): { sent: string[]; muted: string[] } {
  const target = summary.targets[0];
  const pick = (lines: readonly string[]) => lines.filter((line) => line.startsWith('VLLMKVCacheFull'));
  return { sent: pick(target?.sent ?? []), muted: pick(target?.muted ?? []) };
}

describe('Alerts: muted while a calibration holds the target, and by a silence until it ends', () => {
  beforeAll(async () => {
    twin = await startDemoTwin();
    reportsDir = await mkdtemp(join(tmpdir(), 'vllm-pilot-silences-'));
    evaluate = twinAlertEvaluator(twin.state, { alerts: ALERTS });
    dynamodb = new DynamoDBClient({
      region: twin.state.region,
      endpoint: twin.state.aws.dynamodbEndpoint,
      credentials: TWIN_CREDENTIALS,
    });
    silences = new DynamoDbSilenceStore({ client: dynamodb, tableName: twin.state.aws.alertSilencesTable ?? '' });
    for (const replica of twin.state.replicas)
      twin.faults.inject({ kind: 'kv-cache-pressure', pod: replica.name, fraction: 0.97 });
    // Due (firing for its `for`) before anything is evaluated with notifications.
    const source = twinMetricsSource(twin.state);
    const settings = parseAlertSettings(ALERTS);
    await pollFor(
      'VLLMKVCacheFull due',
      async () => {
        const evaluation = await evaluateTarget(twinTarget(twin.state), settings, { source }, Date.now());
        return evaluation.firing.some((i) => i.alertname === 'VLLMKVCacheFull') ? true : undefined;
      },
      { timeoutMs: 60_000 },
    );
  }, 120_000);

  afterAll(async () => {
    dynamodb?.destroy();
    await twin?.stop();
    if (reportsDir) await rm(reportsDir, { recursive: true, force: true });
  });

  describe('during a calibration', () => {
    const name = 'calib-muting';
    let during: AlertCycleSummary | undefined;
    let outcome: WorkflowOutcome;
    let after: AlertCycleSummary;

    beforeAll(async () => {
      // Act: one scheduled evaluation while the load step runs, then stop the run; one evaluation after it ended.
      const calibration = await startTwinCalibration(twin.state, {
        input: {
          // adopt: the target itself is saturated, so its alerts are muted (a shadow copy's never reach them).
          deploy: { mode: 'adopt' },
          testReplicas: twin.state.replicas.length,
          request: { promptTokens: DEMO_SHAPE.promptTokens, maxTokens: DEMO_SHAPE.maxTokens },
          warmup: { requests: 5 },
          plan: { rates: [5], holdSeconds: 20, restSeconds: 1 },
          rollout: { timeoutSeconds: 60, pollSeconds: 1 },
          readiness: { timeoutSeconds: 120, pollSeconds: 1 },
          target: {
            cluster: twin.state.clusterName,
            region: twin.state.region,
            namespace: twin.state.namespace,
            deployment: twin.state.deployment,
            model: twin.state.model,
            ampWorkspaceUrl: twin.state.prometheusUrl,
          },
        },
        executionName: name,
        reportsDir,
        waitScale: 0.25,
        retryIntervalMs: 10,
        onEvent: (event) => {
          if (event.type !== 'StateEntered' || event.state.name !== 'WatchLoadStep' || during !== undefined) return;
          void evaluate().then((summary) => {
            during = summary;
            calibration.run.abort();
          });
        },
      });
      try {
        outcome = await calibration.run.result;
      } finally {
        calibration.close();
      }
      after = await evaluate();
    }, LONG);

    it("mutes the target's alerts with the execution's name, and sends nothing", () => {
      // Assess
      expect(during).toBeDefined();
      expect(kvCache(during as AlertCycleSummary)).toEqual({
        sent: [],
        // One instance per replica, each muted.
        muted: twin.state.replicas.map(() =>
          expect.stringContaining(
            `muted by calibration silence calibration:${name} (calibration execution ${name} is saturating`,
          ),
        ),
      });
    });

    it('alerts again once the calibration ended: its cleanup removed the silence', async () => {
      // Assess
      expect(outcome).toMatchObject({ status: 'aborted' });
      expect(kvCache(after).sent).toEqual(
        twin.state.replicas.map(() => expect.stringMatching(/^VLLMKVCacheFull firing \(first\)/)),
      );
      expect(kvCache(after).muted).toEqual([]);
      expect(await silences.list(silenceTargetKey(twinTarget(twin.state)))).toEqual([]);
    });
  });

  describe("a person's silence", () => {
    it(
      'stops the repeats until it ends, recording each as muted with its reason, then they go out again',
      async () => {
        // Prepare: the alert was notified (the previous block); its next repeat is due 10 s after that.
        const nowMs = Date.now();
        await silences.put({
          target: silenceTargetKey(twinTarget(twin.state)),
          id: 'manual-upgrade',
          kind: 'manual',
          reason: 'node pool upgrade',
          createdBy: 'alice',
          startsAtMs: nowMs,
          endsAtMs: nowMs + 14_000,
        });

        // Act
        await sleep(11_000);
        const silenced = await evaluate();
        await sleep(Math.max(0, nowMs + 14_500 - Date.now()));
        const ended = await evaluate();

        // Assess
        expect(kvCache(silenced)).toEqual({
          sent: [],
          muted: twin.state.replicas.map(() =>
            expect.stringContaining('muted by manual silence manual-upgrade (node pool upgrade)'),
          ),
        });
        expect(kvCache(ended)).toEqual({
          sent: twin.state.replicas.map(() => expect.stringMatching(/^VLLMKVCacheFull firing \(repeat\)/)),
          muted: [],
        });
      },
      LONG,
    );
  });
});
