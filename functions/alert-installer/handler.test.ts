import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lambdaContext } from '../../sim/harness/index.js';
import { desiredAmpAlerting } from '../../shared/alerts/amp/index.js';
import { InMemoryAmpControlPlane } from '../../shared/alerts/amp/testing/inMemoryControlPlane.js';
import { VirtualClock } from '../../shared/clock/index.js';
import { CapturingLogger } from '../shared/testing.js';
import { loadAlertInstallerConfig } from './config.js';
import {
  type CustomResourceResponse,
  fitted,
  MAX_RESPONSE_BYTES,
  sendCustomResourceResponse,
} from './customResource.js';
import { AlertInstallerEventInvalidError, CustomResourceResponseError } from './errors.js';
import { type AlertInstallerResult, createHandler } from './handler.js';

const WORKSPACE = 'ws-b226cc2a-a446-46a9-933a-ac50479a5568';
const NAMESPACE = 'vllm-eks-pilot-prod';
const PHYSICAL_ID = `${WORKSPACE}/${NAMESPACE}`;
const env = {
  TARGETS: JSON.stringify([
    { name: 'prod', cluster: 'ai-eks', namespace: 'default', deployment: 'vllm', model: 'mistralai/Ministral-8B' },
  ]),
  AWS_REGION: 'us-east-2',
  AMP_WORKSPACE_ID: WORKSPACE,
  AMP_RULE_NAMESPACE: NAMESPACE,
  ALERT_TOPIC_ARN: 'arn:aws:sns:us-east-2:123456789012:vllm-eks-pilot-prod-alerts',
  AMP_POLL_INTERVAL_SECONDS: '5',
  AMP_WAIT_TIMEOUT_SECONDS: '60',
};
const config = loadAlertInstallerConfig(env);
const desired = desiredAmpAlerting({
  targets: config.targets,
  namespace: NAMESPACE,
  topicArn: config.topicArn,
  topicRegion: config.topicRegion,
});
const RULES = desired.ruleGroupsNamespace.resource;
const DEFINITION = desired.alertManagerDefinition.resource;

const scheduledEvent = {
  version: '0',
  id: '53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa',
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time: '2026-12-03T12:00:00Z',
  region: 'us-east-2',
  resources: ['arn:aws:events:us-east-2:123456789012:rule/vllm-eks-pilot-prod-alert-installer'],
  detail: {},
};

/** What the pre-signed response URL received: one entry per PUT. */
interface Received {
  method: string;
  headers: IncomingHttpHeaders;
  body: CustomResourceResponse;
}

describe('Function: createHandler (alert-installer)', () => {
  let server: Server;
  let responseUrl: string;
  const received: Received[] = [];
  let answerStatus = 200;
  let controlPlane: InMemoryAmpControlPlane;
  let logger: CapturingLogger;

  beforeAll(async () => {
    // Stands in for the pre-signed S3 URL CloudFormation hands the function.
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({
          method: req.method ?? '',
          headers: req.headers,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as CustomResourceResponse,
        });
        res.writeHead(answerStatus).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    responseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/cfn-response?X-Amz-Signature=abc`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  beforeEach(() => {
    received.length = 0;
    answerStatus = 200;
    controlPlane = new InMemoryAmpControlPlane(WORKSPACE);
    logger = new CapturingLogger({ serviceName: 'alert-installer' });
  });

  const run = (event: unknown): Promise<AlertInstallerResult> => {
    const clock = new VirtualClock(Date.parse('2026-12-03T12:00:00Z'));
    const handler = createHandler({
      config,
      controlPlane,
      logger,
      clock,
      sleep: (ms) => {
        clock.advance(ms);
        return Promise.resolve();
      },
    });
    return handler(event, lambdaContext('alert-installer', { remainingMs: 300_000 }));
  };

  const request = (requestType: 'Create' | 'Update' | 'Delete', extra: Record<string, unknown> = {}) => ({
    RequestType: requestType,
    ServiceToken: 'arn:aws:lambda:us-east-2:123456789012:function:vllm-eks-pilot-prod-alertInstaller',
    ResponseURL: responseUrl,
    StackId: 'arn:aws:cloudformation:us-east-2:123456789012:stack/vllm-eks-pilot-prod/1a2b3c4d',
    RequestId: 'b7e8d1f0-0000-4000-8000-000000000001',
    LogicalResourceId: 'AmpAlerting',
    ResourceType: 'Custom::AmpAlerting',
    ResourceProperties: { WorkspaceId: WORKSPACE, RuleGroupsNamespace: NAMESPACE },
    ...(requestType === 'Create' ? {} : { PhysicalResourceId: PHYSICAL_ID }),
    ...extra,
  });

  it('on Create installs both resources and answers SUCCESS once, with an empty Content-Type', async () => {
    // Act
    const result = await run(request('Create'));

    // Assess
    expect(controlPlane.held(RULES)).toBe(desired.ruleGroupsNamespace.data);
    expect(controlPlane.held(DEFINITION)).toBe(desired.alertManagerDefinition.data);
    expect(received).toHaveLength(1);
    expect(received[0]?.method).toBe('PUT');
    expect(received[0]?.headers['content-type']).toBe('');
    expect(received[0]?.body).toEqual({
      Status: 'SUCCESS',
      PhysicalResourceId: PHYSICAL_ID,
      StackId: 'arn:aws:cloudformation:us-east-2:123456789012:stack/vllm-eks-pilot-prod/1a2b3c4d',
      RequestId: 'b7e8d1f0-0000-4000-8000-000000000001',
      LogicalResourceId: 'AmpAlerting',
      Data: { WorkspaceId: WORKSPACE, RuleGroupsNamespace: NAMESPACE },
    });
    expect(result).toMatchObject({ trigger: 'cloudformation', status: 'SUCCESS' });
  });

  it("on Update answers FAILED with AMP's statusReason (and does not throw: Lambda must not run it again)", async () => {
    // Prepare
    controlPlane.seed(RULES, 'groups: []\n');
    controlPlane.refuse(RULES, 'unknown function "histogram_quantil"');

    // Act
    const result = await run(request('Update'));

    // Assess
    expect(received).toHaveLength(1);
    expect(received[0]?.body).toMatchObject({ Status: 'FAILED', PhysicalResourceId: PHYSICAL_ID });
    expect(received[0]?.body.Reason).toBe(
      `AmpResourceFailedError: rule groups namespace ${NAMESPACE} is UPDATE_FAILED: unknown function "histogram_quantil"`,
    );
    expect(result).toMatchObject({ status: 'FAILED' });
  });

  it('on Delete of its own resource removes the rules and the definition (no double alerting after a switch)', async () => {
    // Prepare
    controlPlane.seed(RULES, desired.ruleGroupsNamespace.data);
    controlPlane.seed(DEFINITION, desired.alertManagerDefinition.data);

    // Act
    const result = await run(request('Delete'));

    // Assess
    expect(controlPlane.held(RULES)).toBeUndefined();
    expect(controlPlane.held(DEFINITION)).toBeUndefined();
    expect(received[0]?.body.Status).toBe('SUCCESS');
    expect(result).toMatchObject({ removed: [{ action: 'deleted' }, { action: 'deleted' }] });
  });

  it("on Delete of another workspace's resource (replaced) leaves it and says so", async () => {
    // Prepare
    controlPlane.seed(RULES, desired.ruleGroupsNamespace.data);
    const old = 'ws-00000000-0000-0000-0000-000000000000/vllm-eks-pilot-prod';

    // Act
    await run(request('Delete', { PhysicalResourceId: old }));

    // Assess
    expect(controlPlane.calls.filter((call) => call.startsWith('delete'))).toEqual([]);
    expect(received[0]?.body).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: old });
    expect(received[0]?.body.Reason).toContain('left in place');
  });

  it('answers FAILED to a request it cannot read, then throws the named error', async () => {
    // Act
    const thrown = await run({ ...request('Create'), RequestType: 'Replace' }).catch((error: unknown) => error);

    // Assess
    expect(thrown).toBeInstanceOf(AlertInstallerEventInvalidError);
    expect(received[0]?.body.Status).toBe('FAILED');
    expect(received[0]?.body.Reason).toContain('event.RequestType: must be Create, Update or Delete');
  });

  it('throws CustomResourceResponseError when the response URL refuses the answer (Lambda retries the request)', async () => {
    // Prepare
    answerStatus = 403;

    // Act
    const thrown = await run(request('Create')).catch((error: unknown) => error);

    // Assess
    expect(thrown).toBeInstanceOf(CustomResourceResponseError);
    expect((thrown as Error).message).toContain('HTTP 403');
    // A 4xx fails the same way again: one attempt.
    expect(received).toHaveLength(1);
  });

  it('on its schedule repairs drift and reports what it did', async () => {
    // Prepare
    controlPlane.seed(RULES, 'groups: []\n');
    controlPlane.seed(DEFINITION, desired.alertManagerDefinition.data);

    // Act
    const result = await run(scheduledEvent);

    // Assess
    expect(result).toMatchObject({
      trigger: 'schedule',
      installed: { resources: [{ action: 'updated' }, { action: 'unchanged' }] },
    });
    expect(controlPlane.held(RULES)).toBe(desired.ruleGroupsNamespace.data);
    expect(received).toEqual([]);
  });

  it('on its schedule throws the named error when AMP refuses (the Errors metric sees it)', async () => {
    // Prepare
    controlPlane.refuse(DEFINITION, 'receiver "sns": topic_arn: access denied');

    // Act
    const thrown = await run(scheduledEvent).catch((error: unknown) => error);

    // Assess
    expect((thrown as Error).name).toBe('AmpResourceFailedError');
    expect((thrown as Error).message).toContain('access denied');
  });

  it('refuses an event that is neither, naming what is missing', async () => {
    const thrown = await run({ hello: 'world' }).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(AlertInstallerEventInvalidError);
    expect((thrown as Error).message).toContain('event.time');
  });
});

describe('Function: sendCustomResourceResponse', () => {
  const response: CustomResourceResponse = {
    Status: 'FAILED',
    Reason: 'x'.repeat(10_000),
    PhysicalResourceId: PHYSICAL_ID,
    StackId: 'stack',
    RequestId: 'request',
    LogicalResourceId: 'AmpAlerting',
  };

  it("cuts a long Reason so the body fits CloudFormation's 4,096 bytes", () => {
    // Act
    const body = fitted(response);

    // Assess
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_RESPONSE_BYTES);
    expect((JSON.parse(body) as CustomResourceResponse).Reason).toMatch(/x+ … \(cut; see the function log\)$/);
  });

  it('retries a 5xx, then gives up with CustomResourceResponseError', async () => {
    // Prepare
    const statuses: number[] = [];
    const fakeFetch = (() => {
      statuses.push(503);
      return Promise.resolve(new Response(null, { status: 503 }));
    }) as unknown as typeof fetch;

    // Act
    const thrown = await sendCustomResourceResponse('https://example.invalid/response', response, {
      fetch: fakeFetch,
      sleep: () => Promise.resolve(),
    }).catch((error: unknown) => error);

    // Assess
    expect(statuses).toEqual([503, 503, 503]);
    expect(thrown).toBeInstanceOf(CustomResourceResponseError);
  });
});
