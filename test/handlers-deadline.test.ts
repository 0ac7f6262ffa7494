import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lambdaContext } from '../sim/harness/index.js';
import * as collector from '../functions/metrics-collector/handler.js';
import * as evaluator from '../functions/alert-evaluator/handler.js';
import * as preflight from '../functions/preflight/handler.js';
import { CapturingLogger } from '../functions/shared/testing.js';

// Issue 15, "Deadlines that hold": with AMP accepting connections and never answering, each function that queries it
// returns (or throws) its named per-target failures at its deadline guard, well before Lambda's own timeout.

const target = (name: string) => ({
  name,
  cluster: 'prod',
  namespace: 'inference',
  deployment: 'vllm-inference-app',
  model: 'mistralai/Ministral-8B-Instruct-2410',
});

const scheduledEvent = {
  version: '0',
  id: '53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa',
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time: '2025-06-01T12:00:00Z',
  region: 'us-east-2',
  resources: [],
  detail: {},
};

/** Runs `invoke`, returning how long it took and what it returned or threw. */
async function timed(invoke: () => Promise<unknown>): Promise<{ ms: number; value?: unknown; error?: unknown }> {
  const started = Date.now();
  try {
    const value = await invoke();
    return { ms: Date.now() - started, value };
  } catch (error) {
    return { ms: Date.now() - started, error };
  }
}

describe('Lambda deadlines with an AMP that never answers', () => {
  let server: Server;
  let amp: string;
  const held: ServerResponse[] = [];
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };

  beforeAll(async () => {
    process.env.AWS_ACCESS_KEY_ID = 'AKIDDEADLINETEST0000';
    process.env.AWS_SECRET_ACCESS_KEY = 'deadline-test-not-a-secret';
    server = createServer((_request, response) => void held.push(response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    amp = `http://127.0.0.1:${(server.address() as AddressInfo).port}/workspaces/ws-1234/`;
  });

  afterAll(async () => {
    for (const response of held) response.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
    else process.env.AWS_ACCESS_KEY_ID = saved.id;
    if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
    else process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
  });

  it('metrics-collector: every target failed, each named, at its guard (3 s margin)', async () => {
    // Prepare: 4.5 s left, so the guard fires after 1.5 s.
    const logger = new CapturingLogger({ serviceName: 'metrics-collector' });
    const env = {
      TARGETS: JSON.stringify([target('prod'), target('staging')]),
      AMP_WORKSPACE_URL: amp,
      AWS_REGION: 'us-east-2',
      CLOUDWATCH_ENDPOINT: 'http://127.0.0.1:9',
    };
    const lambda = collector.createHandler(collector.depsFromEnvironment(env, logger));

    // Act
    const outcome = await timed(() =>
      lambda(scheduledEvent, lambdaContext('metrics-collector', { remainingMs: 4_500 })),
    );

    // Assess
    expect(outcome.ms).toBeLessThan(4_000);
    expect(outcome.error).toMatchObject({ name: 'CollectorAllTargetsFailedError' });
    const failed = logger.lines.filter((l) => l.message === 'target failed').map((l) => l.target);
    expect(failed.sort()).toEqual(['prod', 'staging']);
  }, 20_000);

  it('alert-evaluator: each target fails its rules by name at its guard (15 s margin)', async () => {
    // Prepare: 16.5 s left, so the guard fires after 1.5 s.
    const logger = new CapturingLogger({ serviceName: 'alert-evaluator' });
    const env = {
      TARGETS: JSON.stringify([target('prod'), target('staging')]),
      AMP_WORKSPACE_URL: amp,
      AWS_REGION: 'us-east-2',
      ALERT_TOPIC_ARN: 'arn:aws:sns:us-east-2:123456789012:vllm-eks-pilot-alerts',
      ALERT_STATE_TABLE: 'vllm-eks-pilot-alert-state',
      STAGE: 'test',
      SNS_ENDPOINT: 'http://127.0.0.1:9',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
      CLOUDWATCH_ENDPOINT: 'http://127.0.0.1:9',
    };
    const lambda = evaluator.createHandler(evaluator.depsFromEnvironment(env, logger));

    // Act
    const outcome = await timed(() =>
      lambda(scheduledEvent, lambdaContext('alert-evaluator', { remainingMs: 16_500 })),
    );

    // Assess
    expect(outcome.ms).toBeLessThan(16_000);
    expect(outcome.error).toMatchObject({ name: 'AlertEvaluatorAllTargetsFailedError' });
    const failed = logger.lines.filter((l) => l.message === 'target failed');
    expect(failed.map((l) => l.target).sort()).toEqual(['prod', 'staging']);
    expect(JSON.stringify(failed)).toMatch(/Aborted|LambdaDeadlineError/);
  }, 30_000);

  it('preflight: a report per target, its AMP checks failed by name, at its guard (10 s margin)', async () => {
    // Prepare: 11.5 s left, so the guard fires after 1.5 s.
    const logger = new CapturingLogger({ serviceName: 'preflight' });
    const env = {
      TARGETS: JSON.stringify([target('prod')]),
      AMP_WORKSPACE_URL: amp,
      AWS_REGION: 'us-east-2',
      PREFLIGHT_TOPIC_ARN: 'arn:aws:sns:us-east-2:123456789012:vllm-eks-pilot-preflight',
      HISTORY_TABLE: 'vllm-eks-pilot-calibration-history',
      ALERTING_ENGINE: 'lambda',
      ALERT_STATE_TABLE: 'vllm-eks-pilot-alert-state',
      SNS_ENDPOINT: 'http://127.0.0.1:9',
      EKS_ENDPOINT: 'http://127.0.0.1:9',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
    };
    const lambda = preflight.createHandler(preflight.depsFromEnvironment(env, logger));

    // Act
    const outcome = await timed(() =>
      lambda({ targets: ['prod'] }, lambdaContext('preflight', { remainingMs: 11_500 })),
    );

    // Assess: every check has a report (the AMP ones aborted by the guard, named); the publish to the dead SNS
    // endpoint then fails, named, after them.
    expect(outcome.ms).toBeLessThan(11_000);
    expect(outcome.error).toMatchObject({ name: 'PreflightPublishError' });
    const report = logger.lines.find((l) => l.message === 'target failed preflight' && l.target === 'prod');
    expect(report).toMatchObject({ counts: { fail: 11 } });
    expect(JSON.stringify(report?.problems)).toMatch(/MetricsAbortedError/);
  }, 30_000);
});
