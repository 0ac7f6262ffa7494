import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { type EksTwin, lambdaContext, type SnsTwin, startEksTwin, startSnsTwin } from '../../sim/harness/index.js';
import { VirtualClock } from '../../shared/clock/index.js';
import {
  CHECK_IDS,
  type CheckId,
  type CheckResult,
  type CheckStatus,
  type PreflightReport,
  type PreflightTarget,
} from '../../shared/preflight/index.js';
import { PreflightEventInvalidError, PreflightPublishError, PreflightTargetUnknownError } from './errors.js';
import { createHandler, depsFromEnvironment, type CheckTargetFn, type PreflightDeps } from './handler.js';
import type { PreflightSummary } from '../../shared/preflight/index.js';
import { CapturingLogger } from '../shared/testing.js';

const REGION = 'us-east-2';

/** An EventBridge scheduled event as Lambda receives it (the weekly rule). */
const scheduledEvent = {
  version: '0',
  id: '53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa',
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time: '2025-06-02T08:00:00Z',
  region: REGION,
  resources: ['arn:aws:events:us-east-2:123456789012:rule/vllm-eks-pilot-preflight-weekly'],
  detail: {},
};

const context = lambdaContext('preflight', { awsRequestId: 'req-1' });

const targetJson = (name: string, cluster = 'prod'): PreflightTarget => ({
  name,
  cluster,
  namespace: 'llm',
  deployment: 'ministral',
  model: 'mistralai/Ministral-8B-Instruct-2410',
});

/** A report in which every check passes except those given. */
function reportFor(target: PreflightTarget, statuses: Partial<Record<CheckId, CheckStatus>> = {}): PreflightReport {
  const results: CheckResult[] = Object.values(CHECK_IDS).map((id, index) => {
    const status = statuses[id] ?? 'pass';
    return {
      id,
      item: index + 1,
      title: `check ${id}`,
      status,
      reason: status === 'pass' ? `${id} is fine` : `${id} found a problem`,
      evidence: [],
      ...(status === 'pass' ? {} : { fix: `fix ${id}` }),
    };
  });
  const counts = { pass: 0, warn: 0, fail: 0 };
  for (const result of results) counts[result.status] += 1;
  const status = counts.fail > 0 ? 'fail' : counts.warn > 0 ? 'warn' : 'pass';
  return { target, checkedAt: '2025-06-02T08:00:05.000Z', results, counts, status };
}

/** Targets whose checks are canned: `prod` fails the ServiceMonitor, `staging` warns on GPU memory, `dev` passes. */
const cannedChecks =
  (checked: string[] = []): CheckTargetFn =>
  (target) => {
    checked.push(target.name);
    const statuses: Partial<Record<CheckId, CheckStatus>> =
      target.name === 'prod'
        ? { 'service-monitor-scraping': 'fail', 'gpu-memory-settings': 'warn' }
        : target.name === 'staging'
          ? { 'gpu-memory-settings': 'warn' }
          : {};
    return Promise.resolve(reportFor(target, statuses));
  };

describe('Function: createHandler', () => {
  let sns: SnsTwin;
  let eks: EksTwin;
  let topicArn: string;
  let logger: CapturingLogger;
  const savedCredentials = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };

  beforeAll(async () => {
    // depsFromEnvironment builds its clients from the default credential chain, as in Lambda.
    process.env.AWS_ACCESS_KEY_ID = 'AKIDPREFLIGHTTEST000';
    process.env.AWS_SECRET_ACCESS_KEY = 'preflight-test-not-a-secret';
    [sns, eks] = await Promise.all([startSnsTwin({ region: REGION }), startEksTwin({ clusters: [] })]);
    topicArn = sns.createTopic('vllm-eks-pilot-preflight');
  });

  afterAll(async () => {
    await Promise.all([sns.stop(), eks.stop()]);
    process.env.AWS_ACCESS_KEY_ID = savedCredentials.id;
    process.env.AWS_SECRET_ACCESS_KEY = savedCredentials.secret;
    if (savedCredentials.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
    if (savedCredentials.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
  });

  beforeEach(() => {
    sns.clear();
    logger = new CapturingLogger({ serviceName: 'preflight' });
  });

  function environment(targets: PreflightTarget[], topic = topicArn): Record<string, string> {
    return {
      TARGETS: JSON.stringify(targets),
      // Nothing listens on port 9: a check that reaches AMP fails with a connection error.
      AMP_WORKSPACE_URL: 'http://127.0.0.1:9/workspaces/ws-1234/',
      AWS_REGION: REGION,
      PREFLIGHT_TOPIC_ARN: topic,
      HISTORY_TABLE: 'vllm-eks-pilot-calibration-history',
      ALERTING_ENGINE: 'lambda',
      ALERT_STATE_TABLE: 'vllm-eks-pilot-alert-state',
      SNS_ENDPOINT: sns.endpoint,
      EKS_ENDPOINT: eks.endpoint,
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
    };
  }

  /** The function as Lambda builds it, with the checks replaced by canned reports (the SNS client is real). */
  function build(names: string[], check: CheckTargetFn = cannedChecks(), topic = topicArn) {
    const deps: PreflightDeps = {
      ...depsFromEnvironment(
        environment(
          names.map((n) => targetJson(n)),
          topic,
        ),
        logger,
      ),
      check,
    };
    return createHandler({ ...deps, clock: new VirtualClock(Date.parse('2025-06-02T08:00:03Z')) });
  }

  it('checks every target on the schedule and publishes one message naming the failed one, with reasons and fixes', async () => {
    // Prepare
    const checked: string[] = [];
    const lambda = build(['prod', 'staging', 'dev'], cannedChecks(checked));

    // Act
    const result = await lambda(scheduledEvent, context);

    // Assess: every target, the worst status
    expect(checked.sort()).toEqual(['dev', 'prod', 'staging']);
    expect(result.status).toBe('fail');
    expect(result.reports.map((r) => [r.target.name, r.status])).toEqual([
      ['prod', 'fail'],
      ['staging', 'warn'],
      ['dev', 'pass'],
    ]);

    // Assess: one SNS message, filterable by its attributes
    const messages = sns.messages(topicArn);
    expect(messages).toHaveLength(1);
    const [message] = messages;
    expect(message?.subject).toBe('Preflight FAIL: prod (1 fail, 1 warn)');
    expect(result.notification).toEqual({ messageId: message?.messageId, subject: message?.subject });
    expect(
      Object.fromEntries(Object.entries(message?.attributes ?? {}).map(([k, v]) => [k, `${v.dataType}:${v.value}`])),
    ).toEqual({ kind: 'String:preflight', status: 'String:fail', target: 'String:prod', cluster: 'String:prod' });

    // Assess: the body lists each target's problems with reason and fix, and carries the table
    const body = JSON.parse(message?.message ?? '{}') as PreflightSummary;
    expect(body).toMatchObject({
      kind: 'preflight',
      version: 1,
      status: 'fail',
      checkedAt: '2025-06-02T08:00:03.000Z',
    });
    expect(
      body.targets.map((t) => [
        t.name,
        t.status,
        t.problems.map((p) => `${p.item} ${p.status}: ${p.reason} / ${p.fix}`),
      ]),
    ).toEqual([
      [
        'prod',
        'fail',
        [
          '2 fail: service-monitor-scraping found a problem / fix service-monitor-scraping',
          '10 warn: gpu-memory-settings found a problem / fix gpu-memory-settings',
        ],
      ],
      ['staging', 'warn', ['10 warn: gpu-memory-settings found a problem / fix gpu-memory-settings']],
      ['dev', 'pass', []],
    ]);
    expect(body.text).toContain('service-monitor-scraping found a problem');

    // Assess: one log line per target, at the level of its status
    const perTarget = logger.lines.filter((l) =>
      ['target ready', 'target has warnings', 'target failed preflight'].includes(String(l.message)),
    );
    expect(perTarget.map((l) => [l.level, l.target])).toEqual([
      ['ERROR', 'prod'],
      ['WARN', 'staging'],
      ['INFO', 'dev'],
    ]);
  });

  it.each([
    { case: 'only warnings', names: ['staging', 'dev'] },
    { case: 'all pass', names: ['dev'] },
  ])('publishes nothing when no check fails: $case', async ({ names }) => {
    // Prepare
    const lambda = build(names);

    // Act
    const result = await lambda(scheduledEvent, context);

    // Assess
    expect(result.status).not.toBe('fail');
    expect(result.notification).toBeNull();
    expect(sns.messages(topicArn)).toEqual([]);
  });

  it('names every failed target in the subject and attributes of the one message', async () => {
    // Prepare
    const fail = (target: PreflightTarget) => Promise.resolve(reportFor(target, { 'alert-rules': 'fail' }));
    const lambda = build(['prod', 'dev', 'eu'], fail);

    // Act
    await lambda(scheduledEvent, context);

    // Assess
    const [message] = sns.messages(topicArn);
    expect(sns.messages(topicArn)).toHaveLength(1);
    expect(message?.subject).toBe('Preflight FAIL: 3 of 3 targets (prod, dev, eu)');
    expect(message?.attributes.target?.value).toBe('prod,dev,eu');
  });

  it.each([
    { case: 'one target by name', event: { targets: ['staging'] }, checked: ['staging'] },
    { case: 'two targets by name', event: { targets: ['dev', 'prod'] }, checked: ['prod', 'dev'] },
    { case: 'an empty list (every target)', event: { targets: [] }, checked: ['prod', 'staging', 'dev'] },
    { case: 'no event at all', event: undefined, checked: ['prod', 'staging', 'dev'] },
  ])('on demand, checks $case', async ({ event, checked }) => {
    // Prepare
    const seen: string[] = [];
    const lambda = build(['prod', 'staging', 'dev'], cannedChecks(seen));

    // Act
    const result = await lambda(event, context);

    // Assess
    expect(result.reports.map((r) => r.target.name)).toEqual(checked);
  });

  it.each([
    {
      case: 'an unknown target',
      event: { targets: ['prod', 'qa'] },
      error: PreflightTargetUnknownError,
      message: 'unknown target "qa"; accepted: "prod", "dev"',
    },
    {
      case: 'targets that are not a list',
      event: { targets: 'prod' },
      error: PreflightEventInvalidError,
      message: 'event.targets: must be a list of target names',
    },
    { case: 'a string event', event: 'prod', error: PreflightEventInvalidError, message: 'accepted: an EventBridge' },
  ])('refuses $case with a named error and checks nothing', async ({ event, error, message }) => {
    // Prepare
    const seen: string[] = [];
    const lambda = build(['prod', 'dev'], cannedChecks(seen));

    // Act
    const outcome = lambda(event, context);

    // Assess
    await expect(outcome).rejects.toThrow(error);
    await expect(outcome).rejects.toThrow(message);
    expect(seen).toEqual([]);
  });

  it('throws PreflightPublishError, retryable, when the summary cannot be published', async () => {
    // Prepare: a topic SNS does not have
    const missing = topicArn.replace(/preflight$/, 'deleted');
    const lambda = build(['prod'], cannedChecks(), missing);

    // Act
    const outcome = lambda(scheduledEvent, context);

    // Assess
    await expect(outcome).rejects.toThrow(PreflightPublishError);
    await expect(outcome).rejects.toMatchObject({ retryable: true, topicArn: missing });
  });

  it('fails every check it could not run with the reason, when the cluster and AMP cannot be reached', async () => {
    // Prepare: the real checks; EKS knows no cluster "prod", nothing answers for AMP or DynamoDB
    const deps = depsFromEnvironment(environment([targetJson('prod')]), logger);
    const lambda = createHandler(deps);

    // Act
    const result = await lambda({ targets: ['prod'] }, context);

    // Assess: eleven results, none passes, each says why; one message went out
    const [report] = result.reports;
    expect(report?.results).toHaveLength(11);
    expect(report?.status).toBe('fail');
    expect(report?.counts.pass).toBe(0);
    const reasons = report?.results.map((r) => r.reason).join('\n') ?? '';
    expect(reasons).toMatch(/could not check: KubeCluster\w*Error/);
    expect(sns.messages(topicArn)).toHaveLength(1);
  }, 30_000);
});
