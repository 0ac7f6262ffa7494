import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbHistoryStore, historyTargetKey } from '../shared/calibration/history/index.js';
import type { CalibrationReport } from '../shared/calibration/index.js';
import { scaledObject } from '../shared/keda/index.js';
import { runConstantArrivalLoad, type Twin, TWIN_CREDENTIALS, twinTarget } from '../sim/harness/index.js';
import { runCli } from './helpers/cli.js';
import { kubectl, requireKubectl } from './helpers/kubectl.js';
import { DEMO_SHAPE, sleep, startDemoTwin } from './helpers/twin.js';

// `vllm-pilot whatif --state-file` on a running twin: the live ScaledObject read through the product's cluster client,
// the newest calibrated thresholds from the history in the twin's DynamoDB, and the request rate from its AMP.

jest.setTimeout(180_000);

const REPORT = 'sim/whatif/fixtures/report-demo.json';
const EXECUTION = 'calib-whatif-fixture';

let twin: Twin;
let dir: string;
let stateFile: string;
let sent = 0;

beforeAll(async () => {
  requireKubectl();
  dir = await mkdtemp(join(tmpdir(), 'whatif-twin-'));
  stateFile = join(dir, 'twin.json');
  twin = await startDemoTwin({}, stateFile);
  // The live ScaledObject: the product's, with thresholds no other candidate has (queue 12 per Pod, p95 3 s).
  const live = scaledObject({
    model: twin.state.model,
    ampWorkspaceUrl: twin.state.prometheusUrl,
    authentication: false,
    queueThreshold: 12,
    latencyThresholdSeconds: 3,
  });
  const applied = await kubectl(['apply', '-f', '-'], {
    kubeconfig: twin.state.kubeconfigPath,
    cacheDir: join(dir, 'kube-cache'),
    stdin: JSON.stringify(live),
  });
  expect(applied.stderr).toBe('');
  // A calibration's record in the history: the fixture report's thresholds.
  const report = JSON.parse(await readFile(REPORT, 'utf8')) as CalibrationReport;
  const history = new DynamoDbHistoryStore({
    client: new DynamoDBClient({
      region: twin.state.region,
      endpoint: twin.state.aws.dynamodbEndpoint,
      credentials: TWIN_CREDENTIALS,
    }),
    tableName: twin.state.aws.historyTable,
  });
  await history.put({
    targetKey: historyTargetKey(twinTarget(twin.state)),
    finishedAt: '2026-12-01T12:00:00.000Z',
    executionName: EXECUTION,
    report,
    thresholds: report.analysis.thresholds,
    previousThresholds: null,
    podTemplateHash: 'fixture',
  });
  // Traffic for AMP to hold a request rate: 20 req/s for 40 s.
  const load = await runConstantArrivalLoad({
    urls: [twin.state.serviceUrl],
    model: twin.state.model,
    rps: 20,
    durationS: 40,
    promptTokens: DEMO_SHAPE.promptTokens,
    maxTokens: DEMO_SHAPE.maxTokens,
    maxVUs: 500,
  });
  sent = load.completed;
  // One more scrape and rate window.
  await sleep(5_000);
}, 150_000);

afterAll(async () => {
  await twin?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('Command: vllm-pilot whatif --state-file (a running twin)', () => {
  it('replays the request rate from AMP through the live ScaledObject, the calibrated thresholds and the guide', async () => {
    // Act
    const result = await runCli([
      'whatif',
      '--profile',
      'demo',
      '--state-file',
      stateFile,
      '--from-amp',
      '--hours',
      '0.1',
      '--candidate',
      'live',
      '--candidate',
      'calibrated',
      '--candidate',
      'guide',
      '--json',
    ]);

    // Assess
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout) as {
      trace: { seconds: number };
      candidates: Array<{ candidate: string; queuePerPod: number; p95Seconds: number; offeredRequests: number }>;
      notes: string[];
    };
    expect(out.candidates.map((c) => [c.candidate, c.queuePerPod, c.p95Seconds])).toEqual([
      ['live', 12, 3],
      [`calibrated (${EXECUTION})`, 5, 4.8],
      ['guide', 25, 5],
    ]);
    // The completed-request rate AMP holds, one sample a minute: about the requests the load completed.
    expect(sent).toBeGreaterThan(700);
    const offered = out.candidates[0]?.offeredRequests ?? 0;
    expect(offered).toBeGreaterThan(0.5 * sent);
    expect(offered).toBeLessThan(2 * sent);
    // The fixture was calibrated with max_tokens 100; this replay used the default 100 too: no note.
    expect(out.notes).toEqual([]);
  });

  it('refuses live without a ScaledObject for the Deployment, naming the candidate', async () => {
    // Prepare
    await kubectl(['delete', 'scaledobject', twin.state.deployment, '-n', twin.state.namespace], {
      kubeconfig: twin.state.kubeconfigPath,
      cacheDir: join(dir, 'kube-cache'),
    });

    // Act
    const result = await runCli([
      'whatif',
      '--profile',
      'demo',
      '--state-file',
      stateFile,
      '--trace',
      'sim/whatif/traces/diurnal-24h.csv',
      '--candidate',
      'live',
    ]);

    // Assess
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      `vllm-pilot: WhatIfTwinSourceMissingError: --candidate live: no ScaledObject in ${twin.state.namespace} scales ${twin.state.deployment} on the twin`,
    );
  });
});
