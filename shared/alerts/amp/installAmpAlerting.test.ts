import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import {
  AccessDeniedException,
  AmpClient,
  CreateAlertManagerDefinitionCommand,
  CreateRuleGroupsNamespaceCommand,
  DeleteAlertManagerDefinitionCommand,
  DeleteRuleGroupsNamespaceCommand,
  DescribeAlertManagerDefinitionCommand,
  DescribeRuleGroupsNamespaceCommand,
  PutAlertManagerDefinitionCommand,
  PutRuleGroupsNamespaceCommand,
  ResourceNotFoundException,
  ThrottlingException,
} from '@aws-sdk/client-amp';
import { mockClient } from 'aws-sdk-client-mock';
import { VirtualClock } from '../../clock/index.js';
import { parseAlertTargets } from '../rules/index.js';
import { ClientAmpControlPlane } from './ClientAmpControlPlane.js';
import { desiredAmpAlerting } from './desiredAmpAlerting.js';
import {
  AmpAlertingInstallFailedError,
  AmpRequestError,
  AmpResourceFailedError,
  AmpResourceWaitTimeoutError,
} from './errors.js';
import {
  decideAmpInstall,
  installAmpAlerting,
  removeAmpAlerting,
  type AmpInstallOptions,
} from './installAmpAlerting.js';

// The installer through the real client-amp adapter, with the SDK client mocked (aws-sdk-client-mock): the requests
// are the ones AMP would receive (workspace, name, the YAML as the data blob), the answers scripted per call.

const WORKSPACE = 'ws-b226cc2a-a446-46a9-933a-ac50479a5568';
const NAMESPACE = 'vllm-eks-pilot-prod';
const TOPIC = 'arn:aws:sns:us-east-2:123456789012:vllm-eks-pilot-prod-alerts';
const T0 = Date.parse('2026-12-03T12:00:00Z');
const POLL_MS = 5_000;
const TIMEOUT_MS = 60_000;

const desired = desiredAmpAlerting({
  targets: parseAlertTargets(
    JSON.stringify([
      { name: 'prod', cluster: 'ai-eks', namespace: 'default', deployment: 'vllm', model: 'mistralai/Ministral-8B' },
    ]),
  ),
  namespace: NAMESPACE,
  topicArn: TOPIC,
  topicRegion: 'us-east-2',
});
const RULES = desired.ruleGroupsNamespace.data;
const DEFINITION = desired.alertManagerDefinition.data;
const OTHER_RULES = 'groups:\n  - name: someone-elses\n    rules: []\n';
const OTHER_DEFINITION = "alertmanager_config: |\n  route:\n    receiver: 'default'\n";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array | undefined) => new TextDecoder().decode(data);
const metadata = { $metadata: {} };
const notFound = () =>
  new ResourceNotFoundException({ message: 'not found', resourceId: NAMESPACE, resourceType: 'x', ...metadata });

/** A DescribeRuleGroupsNamespace answer. */
const rules = (data: string, statusCode: string, statusReason?: string) => ({
  ruleGroupsNamespace: {
    arn: `arn:aws:aps:us-east-2:123456789012:rulegroupsnamespace/${WORKSPACE}/${NAMESPACE}`,
    name: NAMESPACE,
    data: bytes(data),
    status: { statusCode: statusCode as 'ACTIVE', ...(statusReason === undefined ? {} : { statusReason }) },
    createdAt: new Date(T0),
    modifiedAt: new Date(T0),
  },
  ...metadata,
});
/** A DescribeAlertManagerDefinition answer. */
const definition = (data: string, statusCode: string, statusReason?: string) => ({
  alertManagerDefinition: {
    data: bytes(data),
    status: { statusCode: statusCode as 'ACTIVE', ...(statusReason === undefined ? {} : { statusReason }) },
    createdAt: new Date(T0),
    modifiedAt: new Date(T0),
  },
  ...metadata,
});

// One stub for the file: a second mockClient on the same class would replace the first.
const amp = mockClient(AmpClient);

describe('Function: installAmpAlerting (through ClientAmpControlPlane)', () => {
  let clock: VirtualClock;
  let options: AmpInstallOptions;
  let controlPlane: ClientAmpControlPlane;
  const logged: string[] = [];

  beforeEach(() => {
    amp.reset();
    logged.length = 0;
    clock = new VirtualClock(T0);
    options = {
      clock,
      pollIntervalMs: POLL_MS,
      waitTimeoutMs: TIMEOUT_MS,
      sleep: (ms) => {
        clock.advance(ms);
        return Promise.resolve();
      },
      log: (message, fields) => logged.push(`${message}: ${String(fields.reason)}`),
    };
    const client = new AmpClient({ region: 'us-east-2', credentials: { accessKeyId: 'AKID', secretAccessKey: 's' } });
    controlPlane = new ClientAmpControlPlane({ client, workspaceId: WORKSPACE });
  });

  afterEach(() => {
    amp.reset();
  });

  it('creates both when the workspace has neither, sending the YAML as the data blob, and waits for ACTIVE', async () => {
    // Prepare
    amp
      .on(DescribeRuleGroupsNamespaceCommand)
      .rejectsOnce(notFound())
      .resolvesOnce(rules(RULES, 'CREATING'))
      .resolves(rules(RULES, 'ACTIVE'));
    amp.on(DescribeAlertManagerDefinitionCommand).rejectsOnce(notFound()).resolves(definition(DEFINITION, 'ACTIVE'));
    amp.on(CreateRuleGroupsNamespaceCommand).resolves({ status: { statusCode: 'CREATING' }, ...metadata });
    amp.on(CreateAlertManagerDefinitionCommand).resolves({ status: { statusCode: 'CREATING' }, ...metadata });

    // Act
    const result = await installAmpAlerting(controlPlane, desired, options);

    // Assess
    const [createRules] = amp.commandCalls(CreateRuleGroupsNamespaceCommand);
    const [createDefinition] = amp.commandCalls(CreateAlertManagerDefinitionCommand);
    expect(createRules?.args[0].input).toMatchObject({ workspaceId: WORKSPACE, name: NAMESPACE });
    expect(text(createRules?.args[0].input.data)).toBe(RULES);
    expect(createDefinition?.args[0].input).toMatchObject({ workspaceId: WORKSPACE });
    expect(text(createDefinition?.args[0].input.data)).toBe(DEFINITION);
    expect(amp.commandCalls(PutRuleGroupsNamespaceCommand)).toHaveLength(0);
    expect(amp.commandCalls(PutAlertManagerDefinitionCommand)).toHaveLength(0);
    expect(result).toEqual({
      workspaceId: WORKSPACE,
      resources: [
        {
          resource: `rule groups namespace ${NAMESPACE}`,
          action: 'created',
          reason: 'missing in the workspace',
          waitedMs: POLL_MS,
        },
        // Both wait side by side on one clock: this one's time includes the other's poll.
        {
          resource: 'Alertmanager definition',
          action: 'created',
          reason: 'missing in the workspace',
          waitedMs: expect.any(Number),
        },
      ],
    });
  });

  it('puts both when AMP holds other data (drift, or a rule change), never creating', async () => {
    // Prepare
    amp
      .on(DescribeRuleGroupsNamespaceCommand)
      .resolvesOnce(rules(OTHER_RULES, 'ACTIVE'))
      .resolvesOnce(rules(RULES, 'UPDATING'))
      .resolves(rules(RULES, 'ACTIVE'));
    amp
      .on(DescribeAlertManagerDefinitionCommand)
      .resolvesOnce(definition(OTHER_DEFINITION, 'ACTIVE'))
      .resolves(definition(DEFINITION, 'ACTIVE'));
    amp.on(PutRuleGroupsNamespaceCommand).resolves({ status: { statusCode: 'UPDATING' }, ...metadata });
    amp.on(PutAlertManagerDefinitionCommand).resolves({ status: { statusCode: 'UPDATING' }, ...metadata });

    // Act
    const result = await installAmpAlerting(controlPlane, desired, options);

    // Assess
    const [putRules] = amp.commandCalls(PutRuleGroupsNamespaceCommand);
    const [putDefinition] = amp.commandCalls(PutAlertManagerDefinitionCommand);
    expect(putRules?.args[0].input).toMatchObject({ workspaceId: WORKSPACE, name: NAMESPACE });
    expect(text(putRules?.args[0].input.data)).toBe(RULES);
    expect(text(putDefinition?.args[0].input.data)).toBe(DEFINITION);
    expect(amp.commandCalls(CreateRuleGroupsNamespaceCommand)).toHaveLength(0);
    expect(amp.commandCalls(CreateAlertManagerDefinitionCommand)).toHaveLength(0);
    expect(result.resources.map((r) => [r.action, r.reason])).toEqual([
      ['updated', 'ACTIVE but holding other data (a rule change, or drift)'],
      ['updated', 'ACTIVE but holding other data (a rule change, or drift)'],
    ]);
  });

  it.each([
    { name: 'the same text', rulesHeld: RULES },
    // AMP or a person may re-serialise: the header comment gone, the same rules.
    { name: 'the same YAML without its comments', rulesHeld: RULES.replace(/^#.*\n/gm, '') },
  ])('changes nothing when both are ACTIVE with $name (one Describe each)', async ({ rulesHeld }) => {
    // Prepare
    amp.on(DescribeRuleGroupsNamespaceCommand).resolves(rules(rulesHeld, 'ACTIVE'));
    amp.on(DescribeAlertManagerDefinitionCommand).resolves(definition(DEFINITION, 'ACTIVE'));

    // Act
    const result = await installAmpAlerting(controlPlane, desired, options);

    // Assess
    expect(amp.calls().map((call) => call.args[0].constructor.name)).toEqual([
      'DescribeRuleGroupsNamespaceCommand',
      'DescribeAlertManagerDefinitionCommand',
    ]);
    expect(result.resources.map((r) => r.action)).toEqual(['unchanged', 'unchanged']);
    expect(logged).toContain(
      `rule groups namespace ${NAMESPACE}: nothing to change: ACTIVE and equal to the desired data`,
    );
  });

  it("fails with AmpResourceFailedError quoting AMP's statusReason when the update ends UPDATE_FAILED", async () => {
    // Prepare
    const reason = 'Invalid rule group: group "vllm-eks-pilot-alerts-prod", rule 2: parse error: unexpected "}"';
    amp
      .on(DescribeRuleGroupsNamespaceCommand)
      .resolvesOnce(rules(OTHER_RULES, 'ACTIVE'))
      .resolvesOnce(rules(RULES, 'UPDATING'))
      .resolves(rules(OTHER_RULES, 'UPDATE_FAILED', reason));
    amp.on(DescribeAlertManagerDefinitionCommand).resolves(definition(DEFINITION, 'ACTIVE'));
    amp.on(PutRuleGroupsNamespaceCommand).resolves({ status: { statusCode: 'UPDATING' }, ...metadata });

    // Act
    const thrown = await installAmpAlerting(controlPlane, desired, options).catch((error: unknown) => error);

    // Assess
    expect(thrown).toBeInstanceOf(AmpResourceFailedError);
    expect(thrown).toMatchObject({ statusCode: 'UPDATE_FAILED', statusReason: reason, retryable: false });
    expect((thrown as Error).message).toBe(`rule groups namespace ${NAMESPACE} is UPDATE_FAILED: ${reason}`);
  });

  it('names both failures in one AmpAlertingInstallFailedError when both are refused', async () => {
    // Prepare
    amp
      .on(DescribeRuleGroupsNamespaceCommand)
      .rejectsOnce(notFound())
      .resolves(rules(RULES, 'CREATION_FAILED', 'rules file too large'));
    amp
      .on(DescribeAlertManagerDefinitionCommand)
      .rejectsOnce(notFound())
      .resolves(definition(DEFINITION, 'CREATION_FAILED', 'sns_configs: topic_arn is not a Standard topic'));
    amp.on(CreateRuleGroupsNamespaceCommand).resolves({ status: { statusCode: 'CREATING' }, ...metadata });
    amp.on(CreateAlertManagerDefinitionCommand).resolves({ status: { statusCode: 'CREATING' }, ...metadata });

    // Act
    const thrown = await installAmpAlerting(controlPlane, desired, options).catch((error: unknown) => error);

    // Assess
    expect(thrown).toBeInstanceOf(AmpAlertingInstallFailedError);
    expect((thrown as Error).message).toContain('CREATION_FAILED: rules file too large');
    expect((thrown as Error).message).toContain('CREATION_FAILED: sns_configs: topic_arn is not a Standard topic');
    expect((thrown as AmpAlertingInstallFailedError).errors).toHaveLength(2);
  });

  it('gives up with AmpResourceWaitTimeoutError (retryable, last status named) when AMP stays CREATING', async () => {
    // Prepare
    amp.on(DescribeRuleGroupsNamespaceCommand).rejectsOnce(notFound()).resolves(rules(RULES, 'CREATING'));
    amp.on(DescribeAlertManagerDefinitionCommand).resolves(definition(DEFINITION, 'ACTIVE'));
    amp.on(CreateRuleGroupsNamespaceCommand).resolves({ status: { statusCode: 'CREATING' }, ...metadata });

    // Act
    const thrown = await installAmpAlerting(controlPlane, desired, options).catch((error: unknown) => error);

    // Assess
    expect(thrown).toBeInstanceOf(AmpResourceWaitTimeoutError);
    expect(thrown).toMatchObject({ retryable: true, waitedMs: TIMEOUT_MS, lastStatus: { code: 'CREATING' } });
    expect((thrown as Error).message).toContain('gave up after the 60 s allowed); last status: CREATING');
    // One Describe to decide, then one per poll until the timeout.
    expect(amp.commandCalls(DescribeRuleGroupsNamespaceCommand)).toHaveLength(1 + TIMEOUT_MS / POLL_MS + 1);
  });

  it("stops waiting at the invocation's deadline (the signal), naming it", async () => {
    // Prepare
    const deadline = new AbortController();
    amp.on(DescribeRuleGroupsNamespaceCommand).rejectsOnce(notFound()).resolves(rules(RULES, 'CREATING'));
    amp.on(DescribeAlertManagerDefinitionCommand).resolves(definition(DEFINITION, 'ACTIVE'));
    amp.on(CreateRuleGroupsNamespaceCommand).resolves({ status: { statusCode: 'CREATING' }, ...metadata });
    const sleep = (ms: number) => {
      clock.advance(ms);
      if (clock.now() - T0 >= 15_000) deadline.abort(new Error('deadline'));
      return Promise.resolve();
    };

    // Act
    const thrown = await installAmpAlerting(controlPlane, desired, {
      ...options,
      sleep,
      signal: deadline.signal,
    }).catch((error: unknown) => error);

    // Assess
    expect(thrown).toBeInstanceOf(AmpResourceWaitTimeoutError);
    expect((thrown as Error).message).toContain("the invocation's deadline came");
  });

  it('waits for an earlier change still UPDATING before putting (AMP refuses a change until then)', async () => {
    // Prepare
    amp
      .on(DescribeRuleGroupsNamespaceCommand)
      .resolvesOnce(rules(OTHER_RULES, 'UPDATING'))
      .resolvesOnce(rules(OTHER_RULES, 'ACTIVE'))
      .resolves(rules(RULES, 'ACTIVE'));
    amp.on(DescribeAlertManagerDefinitionCommand).resolves(definition(DEFINITION, 'ACTIVE'));
    amp.on(PutRuleGroupsNamespaceCommand).resolves({ status: { statusCode: 'UPDATING' }, ...metadata });

    // Act
    const result = await installAmpAlerting(controlPlane, desired, options);

    // Assess: Describe (UPDATING), Describe (settled), Put, Describe (ACTIVE with the rules).
    expect(
      amp
        .calls()
        .map((call) => call.args[0].constructor.name)
        .filter((name) => name.includes('RuleGroups')),
    ).toEqual([
      'DescribeRuleGroupsNamespaceCommand',
      'DescribeRuleGroupsNamespaceCommand',
      'PutRuleGroupsNamespaceCommand',
      'DescribeRuleGroupsNamespaceCommand',
    ]);
    expect(result.resources[0]?.action).toBe('updated');
  });

  it('puts the desired data again over a CREATION_FAILED resource, and reads a stale failed answer as stale', async () => {
    // Prepare: right after the Put, AMP may still answer the old failure before it shows UPDATING.
    amp
      .on(DescribeRuleGroupsNamespaceCommand)
      .resolvesOnce(rules(OTHER_RULES, 'CREATION_FAILED', 'old failure'))
      .resolvesOnce(rules(OTHER_RULES, 'CREATION_FAILED', 'old failure'))
      .resolvesOnce(rules(RULES, 'UPDATING'))
      .resolves(rules(RULES, 'ACTIVE'));
    amp.on(DescribeAlertManagerDefinitionCommand).resolves(definition(DEFINITION, 'ACTIVE'));
    amp.on(PutRuleGroupsNamespaceCommand).resolves({ status: { statusCode: 'UPDATING' }, ...metadata });

    // Act
    const result = await installAmpAlerting(controlPlane, desired, options);

    // Assess
    expect(result.resources[0]).toMatchObject({
      action: 'updated',
      reason: 'CREATION_FAILED (old failure): the desired data is put again',
      waitedMs: 2 * POLL_MS,
    });
  });

  it.each([
    {
      name: 'access denied',
      error: new AccessDeniedException({
        message: 'not authorized to perform aps:DescribeRuleGroupsNamespace',
        ...metadata,
      }),
      retryable: false,
    },
    { name: 'throttling', error: new ThrottlingException({ message: 'Rate exceeded', ...metadata }), retryable: true },
  ])(
    'fails with AmpRequestError naming the operation on $name (retryable: $retryable)',
    async ({ error, retryable }) => {
      // Prepare
      amp.on(DescribeRuleGroupsNamespaceCommand).rejects(error);
      amp.on(DescribeAlertManagerDefinitionCommand).resolves(definition(DEFINITION, 'ACTIVE'));

      // Act
      const thrown = await installAmpAlerting(controlPlane, desired, options).catch((e: unknown) => e);

      // Assess
      expect(thrown).toBeInstanceOf(AmpRequestError);
      expect(thrown).toMatchObject({ operation: 'DescribeRuleGroupsNamespace', retryable });
      expect((thrown as Error).message).toContain(
        `DescribeRuleGroupsNamespace (rule groups namespace ${NAMESPACE}) failed`,
      );
    },
  );
});

describe('Function: removeAmpAlerting', () => {
  const client = new AmpClient({ region: 'us-east-2', credentials: { accessKeyId: 'AKID', secretAccessKey: 's' } });
  const controlPlane = new ClientAmpControlPlane({ client, workspaceId: WORKSPACE });

  afterEach(() => {
    amp.reset();
  });

  it('deletes what is there and counts what is not as removed', async () => {
    // Prepare
    amp.on(DescribeRuleGroupsNamespaceCommand).resolves(rules(RULES, 'ACTIVE'));
    amp.on(DescribeAlertManagerDefinitionCommand).rejects(notFound());
    amp.on(DeleteRuleGroupsNamespaceCommand).resolves(metadata);

    // Act
    const outcomes = await removeAmpAlerting(controlPlane, desired);

    // Assess
    expect(outcomes).toEqual([
      { resource: `rule groups namespace ${NAMESPACE}`, action: 'deleted' },
      { resource: 'Alertmanager definition', action: 'absent' },
    ]);
    expect(amp.commandCalls(DeleteRuleGroupsNamespaceCommand)[0]?.args[0].input).toEqual({
      workspaceId: WORKSPACE,
      name: NAMESPACE,
    });
    expect(amp.commandCalls(DeleteAlertManagerDefinitionCommand)).toHaveLength(0);
  });
});

describe('Function: decideAmpInstall', () => {
  const resource = desired.ruleGroupsNamespace.resource;

  it.each([
    { name: 'nothing held', held: null, action: 'create' },
    { name: 'equal and ACTIVE', held: { data: RULES, status: { code: 'ACTIVE' as const } }, action: 'none' },
    // Another run is already making it so: wait, do not put again.
    { name: 'equal and CREATING', held: { data: RULES, status: { code: 'CREATING' as const } }, action: 'none' },
    { name: 'other data', held: { data: OTHER_RULES, status: { code: 'ACTIVE' as const } }, action: 'put' },
    // AMP refused it before: try the desired data again (a transient failure is then repaired).
    {
      name: 'equal but UPDATE_FAILED',
      held: { data: RULES, status: { code: 'UPDATE_FAILED' as const, reason: 'x' } },
      action: 'put',
    },
  ])('decides $action for $name', ({ held, action }) => {
    expect(decideAmpInstall(resource, held, RULES).action).toBe(action);
  });
});
