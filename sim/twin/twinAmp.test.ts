import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import {
  AmpClient,
  CreateAlertManagerDefinitionCommand,
  CreateRuleGroupsNamespaceCommand,
  DescribeAlertManagerDefinitionCommand,
  DescribeRuleGroupsNamespaceCommand,
  PutRuleGroupsNamespaceCommand,
} from '@aws-sdk/client-amp';
import { parse, stringify } from 'yaml';
import { alertMessageSchema } from '../../shared/alerts/index.js';
import { ampAlertManagerDefinition } from '../../shared/alerts/export/index.js';
import { subscribeSlackNotifier } from '../harness/index.js';
import { connectError } from '../../test/helpers/http.js';
import { pollFor } from '../../test/helpers/poll.js';
import { startDemoTwin } from '../../test/helpers/twin.js';
import { TWIN_AMP_WORKSPACE_ID, TWIN_CREDENTIALS } from './constants.js';
import type { Twin } from './twin.js';

// The twin's AMP route end to end, as an on-call engineer meets it: the product's alert manager definition and a
// rule installed through @aws-sdk/client-amp at the endpoint in the state file; the rule fires in the twin's
// Prometheus, goes through the real Alertmanager, the twin's SNS and the Slack notifier Lambda into the Slack sink,
// and resolves the same way.

jest.setTimeout(120_000);

const NAMESPACE = 'vllm-eks-pilot-twin';
/** The probe's target label: it tells the probe's notifications from any other alert of the twin. */
const PROBE_TARGET = 'amp-twin-probe';

let twin: Twin;
let client: AmpClient;
let unsubscribe: (() => void) | undefined;

beforeAll(async () => {
  twin = await startDemoTwin();
  const endpoint = twin.state.aws.ampControlPlaneEndpoint;
  if (endpoint === undefined) throw new Error('the state file names no AMP control plane');
  client = new AmpClient({ region: twin.state.region, endpoint, credentials: TWIN_CREDENTIALS, maxAttempts: 1 });
  unsubscribe = subscribeSlackNotifier(twin.sns, twin.state);
});

afterAll(async () => {
  unsubscribe?.();
  client?.destroy();
  await twin?.stop();
});

const bytes = (text: string) => new TextEncoder().encode(text);

/**
 * The product's definition for the twin's alerts topic, with Alertmanager's waits shortened (30 s group wait, 5 min
 * group interval) so that a test sees the first and the resolved notification within seconds.
 */
function productDefinition(): string {
  const definition = parse(
    ampAlertManagerDefinition({ topicArn: twin.state.aws.alertTopicArn, region: twin.state.region }),
  ) as { template_files: Record<string, string>; alertmanager_config: string };
  const config = parse(definition.alertmanager_config) as { route: Record<string, unknown> };
  config.route.group_wait = '0s';
  config.route.group_interval = '1s';
  return stringify({ ...definition, alertmanager_config: stringify(config) });
}

/** An alert shaped like the product's VLLMKVCacheFull that fires at once, or, with `firing` false, never. */
function probeRules(firing: boolean): string {
  return stringify({
    groups: [
      {
        name: 'amp-twin-probe',
        rules: [
          {
            alert: 'VLLMKVCacheFull',
            expr: firing ? 'vector(0.97)' : 'vector(0.97) > 1',
            for: '0s',
            labels: { severity: 'critical', target: PROBE_TARGET, cluster: twin.state.clusterName, namespace: 'probe' },
            annotations: {
              value: '0.97',
              threshold: '0.95',
              unit: 'ratio',
              summary: 'KV cache 97 % full (probe)',
              description: 'The AMP twin probe',
              runbook: 'Nothing to do: a test probe.',
            },
          },
        ],
      },
    ],
  });
}

async function atRest(describe: () => Promise<{ statusCode?: string; statusReason?: string } | undefined>) {
  return pollFor(
    'a status at rest',
    async () => {
      const status = await describe();
      return status?.statusCode === 'CREATING' || status?.statusCode === 'UPDATING' ? undefined : status;
    },
    { timeoutMs: 20_000, intervalMs: 200 },
  );
}

function slackTitled(title: string): Promise<string> {
  return pollFor(
    `a Slack message "${title}" for ${PROBE_TARGET}`,
    () =>
      twin.slack
        .deliveries()
        .map((delivery) => JSON.stringify(delivery.body))
        .find((body) => body.includes(title) && body.includes(PROBE_TARGET)),
    { timeoutMs: 45_000, intervalMs: 200 },
  );
}

describe('Function: startTwin (AMP)', () => {
  it('names its AMP control plane and workspace in the state file', () => {
    // Assess
    expect(twin.state.aws.ampControlPlaneEndpoint).toBe(twin.amp.endpoint);
    expect(twin.state.aws.ampWorkspaceId).toBe(TWIN_AMP_WORKSPACE_ID);
    expect(twin.state.aws.ampWorkspaceId).toMatch(/^ws-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it('fires a rule installed through client-amp into Slack through Alertmanager, SNS and the notifier, and resolves it', async () => {
    // Prepare
    const workspaceId = TWIN_AMP_WORKSPACE_ID;
    const topic = twin.state.aws.alertTopicArn;
    const since = twin.sns.messages(topic).length;

    // Act: the definition, then the rule, each waited for until ACTIVE as the installer does on AWS.
    await client.send(new CreateAlertManagerDefinitionCommand({ workspaceId, data: bytes(productDefinition()) }));
    const definition = await atRest(
      async () =>
        (await client.send(new DescribeAlertManagerDefinitionCommand({ workspaceId }))).alertManagerDefinition?.status,
    );
    await client.send(
      new CreateRuleGroupsNamespaceCommand({ workspaceId, name: NAMESPACE, data: bytes(probeRules(true)) }),
    );
    const namespace = await atRest(
      async () =>
        (await client.send(new DescribeRuleGroupsNamespaceCommand({ workspaceId, name: NAMESPACE })))
          .ruleGroupsNamespace?.status,
    );
    const firing = await slackTitled('FIRING: VLLMKVCacheFull');

    // Assess
    expect(definition).toEqual({ statusCode: 'ACTIVE' });
    expect(namespace).toEqual({ statusCode: 'ACTIVE' });
    expect(firing).toContain('KV cache 97 % full (probe)');
    // What Alertmanager published is the product's message v1, with its attributes for filter policies.
    const published = twin.sns
      .messages(topic)
      .slice(since)
      .find((message) => message.attributes.target?.value === PROBE_TARGET);
    expect(published?.subject).toBe('[FIRING] VLLMKVCacheFull amp-twin-probe');
    expect(published?.attributes).toMatchObject({
      severity: { dataType: 'String', value: 'critical' },
      status: { dataType: 'String', value: 'firing' },
      alertname: { dataType: 'String', value: 'VLLMKVCacheFull' },
    });
    const message = alertMessageSchema.parse(JSON.parse(published?.message ?? 'null'));
    expect(message).toMatchObject({ status: 'firing', reason: 'first', value: 0.97, threshold: 0.95, unit: 'ratio' });

    // Act: the rule updated so that it no longer fires.
    await client.send(
      new PutRuleGroupsNamespaceCommand({ workspaceId, name: NAMESPACE, data: bytes(probeRules(false)) }),
    );
    const resolved = await slackTitled('RESOLVED: VLLMKVCacheFull');

    // Assess
    expect(resolved).toContain('VLLMKVCacheFull');
    const probeMessages = twin.sns
      .messages(topic)
      .slice(since)
      .filter((m) => m.attributes.target?.value === PROBE_TARGET)
      .map((m) => m.attributes.status?.value);
    expect(probeMessages).toEqual(['firing', 'resolved']);
  });

  it('stops its AMP control plane and the Alertmanager with the twin', async () => {
    // Prepare
    const alertmanager = twin.amp.alertmanagerUrl();
    expect(alertmanager).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    // Act
    await twin.stop();

    // Assess
    for (const url of [twin.amp.endpoint, alertmanager ?? ''])
      expect({ url, error: await connectError(url) }).toEqual({ url, error: 'ECONNREFUSED' });
  });
});
