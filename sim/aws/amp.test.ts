import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import {
  AmpClient,
  ConflictException,
  CreateAlertManagerDefinitionCommand,
  CreateRuleGroupsNamespaceCommand,
  DeleteAlertManagerDefinitionCommand,
  DeleteRuleGroupsNamespaceCommand,
  DescribeAlertManagerDefinitionCommand,
  DescribeRuleGroupsNamespaceCommand,
  ListRuleGroupsNamespacesCommand,
  PutAlertManagerDefinitionCommand,
  PutRuleGroupsNamespaceCommand,
  ResourceNotFoundException,
  ValidationException,
} from '@aws-sdk/client-amp';
import { stringify } from 'yaml';
import { ensurePrometheus } from '../prometheus/ensurePrometheus.js';
import { type PrometheusInstance, startPrometheus } from '../prometheus/startPrometheus.js';
import { type AmpTwin, startAmpTwin } from './amp.js';
import { type AmpWorkspaceBackend, createTwinAmpWorkspace } from './ampWorkspace.js';
import { type RecordedMessage, type SnsTwin, startSnsTwin } from './sns.js';

// The twin's AMP control plane, driven by @aws-sdk/client-amp as the product's installer drives AMP: rules installed
// through it fire in the real Prometheus, go through the real Alertmanager (Debian's) and arrive in the twin's SNS,
// and resolve; refused data ends in CREATION_FAILED / UPDATE_FAILED with the tool's reason; errors are AWS's.

jest.setTimeout(90_000);

const REGION = 'us-east-2';
const WORKSPACE = 'ws-a3f10000-7e1a-4000-8000-00000000aaaa';
const CREDENTIALS = { accessKeyId: 'AKIDAMPTWINTEST00000', secretAccessKey: 'amp-twin-not-a-secret' };
/** Short, so the tests do not wait; the twin's default (1 s) makes clients wait for ACTIVE as on AWS. */
const SETTLE_MS = 400;
const AT_REST = ['ACTIVE', 'CREATION_FAILED', 'UPDATE_FAILED'];

let prometheus: PrometheusInstance;
let sns: SnsTwin;
let workspace: AmpWorkspaceBackend;
let amp: AmpTwin;
let client: AmpClient;
let topicArn: string;
const lines: string[] = [];

beforeAll(async () => {
  const installation = await ensurePrometheus({ allowInstall: false });
  if (installation.alertmanager === undefined)
    throw new Error('these tests need Alertmanager: sudo apt-get install -y prometheus-alertmanager');
  prometheus = await startPrometheus({
    bin: installation.bin,
    scrapeIntervalSeconds: 1,
    targetGroups: {},
    ruleNamespaces: true,
  });
  sns = await startSnsTwin({ region: REGION, log: (line) => lines.push(line) });
  topicArn = sns.createTopic('amp-twin-alerts');
  workspace = await createTwinAmpWorkspace({
    prometheus,
    promtool: installation.promtool,
    alertmanager: installation.alertmanager,
    snsEndpoint: sns.endpoint,
    credentials: CREDENTIALS,
    log: (line) => lines.push(line),
  });
  amp = await startAmpTwin({
    region: REGION,
    workspaceId: WORKSPACE,
    backend: workspace,
    settleMs: SETTLE_MS,
    log: (line) => lines.push(line),
  });
  client = new AmpClient({ region: REGION, endpoint: amp.endpoint, credentials: CREDENTIALS, maxAttempts: 1 });
});

afterAll(async () => {
  client?.destroy();
  await amp?.stop();
  await sns?.stop();
  await prometheus?.stop();
});

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array | undefined) => new TextDecoder().decode(data);

/** A rules file with one alert that fires at once (`vector(1)`, no `for`) or, with `firing` false, never. */
function rulesFile(firing: boolean): string {
  return stringify({
    groups: [
      {
        name: 'amp-twin',
        rules: [
          {
            alert: 'AmpTwinProbe',
            expr: firing ? 'vector(1)' : 'vector(1) > 2',
            for: '0s',
            labels: { severity: 'warning' },
            annotations: { summary: 'the AMP twin probe' },
          },
        ],
      },
    ],
  });
}

/**
 * An alert manager definition in AMP's format: an SNS receiver (topic and sigv4 region, no api_url), a message
 * template in `template_files`, and timings short enough for a test (one notification per alert, resolved at once).
 */
function definitionFile(receiverOverrides: Record<string, unknown> = {}): string {
  const alertmanagerConfig = {
    route: { receiver: 'sns', group_by: ['alertname'], group_wait: '0s', group_interval: '1s', repeat_interval: '1h' },
    receivers: [
      {
        name: 'sns',
        sns_configs: [
          {
            topic_arn: topicArn,
            sigv4: { region: REGION },
            send_resolved: true,
            subject: '[{{ .Status | toUpper }}] {{ .CommonLabels.alertname }}',
            attributes: { severity: '{{ .CommonLabels.severity }}', status: '{{ .Status }}' },
            ...receiverOverrides,
          },
        ],
      },
    ],
  };
  return stringify({
    template_files: {
      default_template: '{{ define "sns.default.message" }}{{ .Status }}: {{ .CommonLabels.alertname }}{{ end }}',
    },
    alertmanager_config: stringify(alertmanagerConfig),
  });
}

async function namespaceAtRest(name: string) {
  for (let i = 0; i < 150; i++) {
    const { ruleGroupsNamespace } = await client.send(
      new DescribeRuleGroupsNamespaceCommand({ workspaceId: WORKSPACE, name }),
    );
    if (AT_REST.includes(ruleGroupsNamespace?.status?.statusCode ?? '')) return ruleGroupsNamespace;
    await sleep(100);
  }
  throw new Error(`rule groups namespace ${name} did not come to rest`);
}

async function definitionAtRest() {
  for (let i = 0; i < 150; i++) {
    const { alertManagerDefinition } = await client.send(
      new DescribeAlertManagerDefinitionCommand({ workspaceId: WORKSPACE }),
    );
    if (AT_REST.includes(alertManagerDefinition?.status?.statusCode ?? '')) return alertManagerDefinition;
    await sleep(100);
  }
  throw new Error('the alert manager definition did not come to rest');
}

/** Waits for the first message of the alerts topic that `accept` takes, after `since` messages. */
async function snsMessage(accept: (message: RecordedMessage) => boolean, since: number): Promise<RecordedMessage> {
  // A notification sent while Prometheus's notifier re-learns its Alertmanagers after a reload waits for the resend
  // delay (ALERT_RESEND_DELAY, 15 s): allow for it.
  for (let i = 0; i < 400; i++) {
    const found = sns.messages(topicArn).slice(since).find(accept);
    if (found) return found;
    await sleep(100);
  }
  throw new Error(`no such SNS message within 40 s; the twin said:\n${lines.slice(-20).join('\n')}`);
}

async function failure(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    const e = error as Error & { $metadata?: { httpStatusCode?: number } };
    return { error: e, name: e.name, status: e.$metadata?.httpStatusCode, message: e.message };
  }
  throw new Error('expected the request to fail');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('Function: startAmpTwin', () => {
  describe('Errors, as AWS shapes them', () => {
    it.each([
      {
        case: 'describing a namespace that does not exist',
        send: () => client.send(new DescribeRuleGroupsNamespaceCommand({ workspaceId: WORKSPACE, name: 'nope' })),
        type: ResourceNotFoundException,
        status: 404,
      },
      {
        case: 'updating a namespace that does not exist',
        send: () =>
          client.send(new PutRuleGroupsNamespaceCommand({ workspaceId: WORKSPACE, name: 'nope', data: bytes('x') })),
        type: ResourceNotFoundException,
        status: 404,
      },
      {
        case: 'describing the alert manager definition before there is one',
        send: () => client.send(new DescribeAlertManagerDefinitionCommand({ workspaceId: WORKSPACE })),
        type: ResourceNotFoundException,
        status: 404,
      },
      {
        case: 'deleting the alert manager definition before there is one',
        send: () => client.send(new DeleteAlertManagerDefinitionCommand({ workspaceId: WORKSPACE })),
        type: ResourceNotFoundException,
        status: 404,
      },
      {
        case: 'a workspace that does not exist',
        send: () =>
          client.send(new ListRuleGroupsNamespacesCommand({ workspaceId: 'ws-00000000-0000-4000-8000-000000000000' })),
        type: ResourceNotFoundException,
        status: 404,
      },
      {
        case: 'a namespace name AMP refuses',
        send: () =>
          client.send(
            new CreateRuleGroupsNamespaceCommand({ workspaceId: WORKSPACE, name: 'two words', data: bytes('x') }),
          ),
        type: ValidationException,
        status: 400,
      },
    ])('raises the named exception: $case', async ({ send, type, status }) => {
      // Act
      const result = await failure(send());

      // Assess
      expect(result.error).toBeInstanceOf(type);
      expect(result.status).toBe(status);
    });

    it('refuses a request signed for another region or without a signature, as AWS’s front door does', async () => {
      // Prepare
      const elsewhere = new AmpClient({
        region: 'eu-west-1',
        endpoint: amp.endpoint,
        credentials: CREDENTIALS,
        maxAttempts: 1,
      });

      // Act
      const wrongRegion = await failure(
        elsewhere.send(new ListRuleGroupsNamespacesCommand({ workspaceId: WORKSPACE })),
      );
      const unsigned = await fetch(`${amp.endpoint}/workspaces/${WORKSPACE}/rulegroupsnamespaces`);
      elsewhere.destroy();

      // Assess
      expect(wrongRegion).toMatchObject({ name: 'InvalidSignatureException', status: 403 });
      expect(wrongRegion.message).toMatch(/scoped to a valid region/);
      expect(unsigned.status).toBe(403);
      expect(unsigned.headers.get('x-amzn-errortype')).toBe('MissingAuthenticationTokenException');
    });
  });

  describe('The AMP route end to end', () => {
    it('installs an alert manager definition and a rule through client-amp: the alert reaches SNS, then resolves', async () => {
      // Prepare
      const since = sns.messages(topicArn).length;

      // Act: the definition first (AMP's Alertmanager), then the rules (AMP's ruler), each waited for as on AWS.
      const created = await client.send(
        new CreateAlertManagerDefinitionCommand({ workspaceId: WORKSPACE, data: bytes(definitionFile()) }),
      );
      const definition = await definitionAtRest();
      const namespaceCreated = await client.send(
        new CreateRuleGroupsNamespaceCommand({
          workspaceId: WORKSPACE,
          name: 'vllm-eks-pilot-test',
          data: bytes(rulesFile(true)),
          tags: { stage: 'test' },
        }),
      );
      const namespace = await namespaceAtRest('vllm-eks-pilot-test');
      const firing = await snsMessage((m) => m.subject === '[FIRING] AmpTwinProbe', since);

      // Assess
      expect(created.status?.statusCode).toBe('CREATING');
      expect(definition?.status).toEqual({ statusCode: 'ACTIVE' });
      expect(text(definition?.data)).toBe(definitionFile());
      expect(namespaceCreated).toMatchObject({
        name: 'vllm-eks-pilot-test',
        arn: `arn:aws:aps:${REGION}:000000000000:rulegroupsnamespace/${WORKSPACE}/vllm-eks-pilot-test`,
        status: { statusCode: 'CREATING' },
        tags: { stage: 'test' },
      });
      expect(namespace?.status).toEqual({ statusCode: 'ACTIVE' });
      expect(text(namespace?.data)).toBe(rulesFile(true));
      expect(namespace?.createdAt).toBeInstanceOf(Date);
      // The message came from the definition's template_files, its attributes from its sns_configs.
      expect(firing.message).toBe('firing: AmpTwinProbe');
      expect(firing.attributes).toEqual({
        severity: { dataType: 'String', value: 'warning' },
        status: { dataType: 'String', value: 'firing' },
      });
      expect(firing.action).toBe('Publish');

      // Act: the rule updated so that it no longer fires.
      const resolvedSince = sns.messages(topicArn).length;
      const put = await client.send(
        new PutRuleGroupsNamespaceCommand({
          workspaceId: WORKSPACE,
          name: 'vllm-eks-pilot-test',
          data: bytes(rulesFile(false)),
        }),
      );
      const updated = await namespaceAtRest('vllm-eks-pilot-test');
      const resolved = await snsMessage((m) => m.subject === '[RESOLVED] AmpTwinProbe', resolvedSince);

      // Assess
      expect(put.status?.statusCode).toBe('UPDATING');
      expect(updated?.status).toEqual({ statusCode: 'ACTIVE' });
      expect(resolved.message).toBe('resolved: AmpTwinProbe');
      expect(resolved.attributes.status).toEqual({ dataType: 'String', value: 'resolved' });
      // One notification each way: the route groups by alertname and repeats only after an hour.
      const probe = sns.messages(topicArn).slice(since);
      expect(probe.map((m) => m.subject)).toEqual(['[FIRING] AmpTwinProbe', '[RESOLVED] AmpTwinProbe']);
    });

    it('answers a second create with ConflictException, and a change during CREATING or UPDATING too', async () => {
      // Act
      const again = await failure(
        client.send(
          new CreateRuleGroupsNamespaceCommand({
            workspaceId: WORKSPACE,
            name: 'vllm-eks-pilot-test',
            data: bytes(rulesFile(false)),
          }),
        ),
      );
      const definitionAgain = await failure(
        client.send(new CreateAlertManagerDefinitionCommand({ workspaceId: WORKSPACE, data: bytes(definitionFile()) })),
      );
      await client.send(
        new CreateRuleGroupsNamespaceCommand({ workspaceId: WORKSPACE, name: 'busy', data: bytes(rulesFile(false)) }),
      );
      const whileCreating = await failure(
        client.send(new PutRuleGroupsNamespaceCommand({ workspaceId: WORKSPACE, name: 'busy', data: bytes('x') })),
      );
      await namespaceAtRest('busy');

      // Assess
      expect(again.error).toBeInstanceOf(ConflictException);
      expect(again.status).toBe(409);
      expect(definitionAgain.error).toBeInstanceOf(ConflictException);
      expect(whileCreating.error).toBeInstanceOf(ConflictException);
      expect(whileCreating.message).toMatch(/CREATING/);
    });

    it('treats a create retried with the same clientToken as the same request, not a conflict', async () => {
      // Prepare
      const input = {
        workspaceId: WORKSPACE,
        name: 'retried',
        data: bytes(rulesFile(false)),
        clientToken: 'retry-token-1',
      };

      // Act
      const first = await client.send(new CreateRuleGroupsNamespaceCommand(input));
      const retry = await client.send(new CreateRuleGroupsNamespaceCommand(input));
      await namespaceAtRest('retried');

      // Assess
      expect(retry.arn).toBe(first.arn);
    });

    it('lists the namespaces by name prefix, a page at a time, without their data', async () => {
      // Act
      const all = await client.send(new ListRuleGroupsNamespacesCommand({ workspaceId: WORKSPACE }));
      const prefixed = await client.send(new ListRuleGroupsNamespacesCommand({ workspaceId: WORKSPACE, name: 'vllm' }));
      const page = await client.send(new ListRuleGroupsNamespacesCommand({ workspaceId: WORKSPACE, maxResults: 2 }));
      const next = await client.send(
        new ListRuleGroupsNamespacesCommand({ workspaceId: WORKSPACE, maxResults: 2, nextToken: page.nextToken }),
      );

      // Assess
      expect(all.ruleGroupsNamespaces?.map((n) => n.name)).toEqual(['busy', 'retried', 'vllm-eks-pilot-test']);
      expect(prefixed.ruleGroupsNamespaces?.map((n) => n.name)).toEqual(['vllm-eks-pilot-test']);
      expect(page.ruleGroupsNamespaces?.map((n) => n.name)).toEqual(['busy', 'retried']);
      expect(next.ruleGroupsNamespaces?.map((n) => n.name)).toEqual(['vllm-eks-pilot-test']);
      expect(next.nextToken).toBeUndefined();
      expect(all.ruleGroupsNamespaces?.[0]).not.toHaveProperty('data');
    });
  });

  describe('Refused data', () => {
    it('ends a rules file promtool refuses in CREATION_FAILED, with promtool’s reason', async () => {
      // Prepare
      const broken = 'groups:\n  - name: broken\n    rules:\n      - alert: Broken\n        expr: sum(\n';

      // Act
      await client.send(
        new CreateRuleGroupsNamespaceCommand({ workspaceId: WORKSPACE, name: 'broken', data: bytes(broken) }),
      );
      const namespace = await namespaceAtRest('broken');

      // Assess
      expect(namespace?.status?.statusCode).toBe('CREATION_FAILED');
      expect(namespace?.status?.statusReason).toMatch(/^namespace broken: 5:\d+: group "broken", rule 1, "Broken"/);
      expect(namespace?.status?.statusReason).toMatch(/unclosed left parenthesis/);
      const rules = (await (await fetch(`${prometheus.url}/api/v1/rules`)).json()) as {
        data: { groups: Array<{ name: string }> };
      };
      expect(rules.data.groups.map((group) => group.name)).not.toContain('broken');
    });

    it('ends an update Alertmanager refuses in UPDATE_FAILED with amtool’s reason, and keeps the running one', async () => {
      // Prepare
      const running = workspace.alertmanagerUrl();
      const undefinedReceiver = stringify({
        alertmanager_config: stringify({ route: { receiver: 'missing' }, receivers: [{ name: 'sns' }] }),
      });

      // Act
      await client.send(
        new PutAlertManagerDefinitionCommand({ workspaceId: WORKSPACE, data: bytes(undefinedReceiver) }),
      );
      const definition = await definitionAtRest();

      // Assess
      expect(definition?.status?.statusCode).toBe('UPDATE_FAILED');
      expect(definition?.status?.statusReason).toMatch(/undefined receiver "missing" used in route/);
      expect(workspace.alertmanagerUrl()).toBe(running);
      expect((await fetch(`${running ?? ''}/-/ready`)).status).toBe(200);
    });

    it.each([
      {
        case: 'an api_url (AMP sets it)',
        overrides: { api_url: 'https://sns.us-east-2.amazonaws.com' },
        reason: /api_url is not allowed/,
      },
      { case: 'no sigv4 region', overrides: { sigv4: {} }, reason: /sigv4.region is required/ },
    ])('refuses a definition AMP refuses: $case', async ({ overrides, reason }) => {
      // Act
      await client.send(
        new PutAlertManagerDefinitionCommand({ workspaceId: WORKSPACE, data: bytes(definitionFile(overrides)) }),
      );
      const definition = await definitionAtRest();

      // Assess
      expect(definition?.status?.statusCode).toBe('UPDATE_FAILED');
      expect(definition?.status?.statusReason).toMatch(reason);
    });
  });

  describe('Deletion', () => {
    it('deletes a namespace (DELETING, then gone) and the definition (its Alertmanager stops)', async () => {
      // Prepare
      const alertmanager = workspace.alertmanagerUrl();

      // Act
      await client.send(new DeleteRuleGroupsNamespaceCommand({ workspaceId: WORKSPACE, name: 'busy' }));
      const deleting = await client.send(
        new DescribeRuleGroupsNamespaceCommand({ workspaceId: WORKSPACE, name: 'busy' }),
      );
      await client.send(new DeleteAlertManagerDefinitionCommand({ workspaceId: WORKSPACE }));
      await amp.settled();
      const gone = await failure(
        client.send(new DescribeRuleGroupsNamespaceCommand({ workspaceId: WORKSPACE, name: 'busy' })),
      );
      const noDefinition = await failure(
        client.send(new DescribeAlertManagerDefinitionCommand({ workspaceId: WORKSPACE })),
      );

      // Assess
      expect(deleting.ruleGroupsNamespace?.status?.statusCode).toBe('DELETING');
      expect(gone.error).toBeInstanceOf(ResourceNotFoundException);
      expect(noDefinition.error).toBeInstanceOf(ResourceNotFoundException);
      expect(workspace.alertmanagerUrl()).toBeUndefined();
      await expect(fetch(`${alertmanager ?? ''}/-/ready`)).rejects.toThrow();
    });
  });
});
