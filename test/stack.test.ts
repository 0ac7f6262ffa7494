import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadAlertEvaluatorConfig } from '../functions/alert-evaluator/config.js';
import { loadAlertInstallerConfig } from '../functions/alert-installer/config.js';
import { loadCalibrationConfig } from '../functions/calibration/config.js';
import { CALIBRATION_STEPS, type CalibrationStepName } from '../shared/calibration/workflow/index.js';
import { loadCollectorConfig } from '../functions/metrics-collector/config.js';
import { loadPreflightConfig } from '../functions/preflight/config.js';
import { loadDriftDetectorConfig } from '../functions/drift-detector/config.js';
import { loadSlackNotifierConfig } from '../functions/slack-notifier/config.js';
import { StackSettingsInvalidError } from '../infra/serverless/errors.js';
import { calibrationFunctionKey } from '../infra/serverless/names.js';
import { buildStack } from '../infra/serverless/stack.js';
import { ALERT_STATE_TABLE } from '../shared/alerts/state/index.js';
import { CALIBRATION_HISTORY_TABLE } from '../shared/calibration/history/index.js';
import { RBAC_GROUPS } from '../shared/kube/manifests/index.js';

// `osls package` run once, offline and with no AWS credentials, and the CloudFormation template it writes read back:
// what a platform engineer deploys, checked for every function, schedule, the state machine, the data stores, and
// least privilege.

const execFileAsync = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ASL_FILE = join(ROOT, 'statemachines', 'calibration.asl.json');
// The placeholder defaults of serverless.yml `params.default` that the template is built from.
const DEFAULTS = {
  workspaceId: 'ws-00000000-0000-0000-0000-000000000000',
  secretArn: 'arn:aws:secretsmanager:us-east-2:123456789012:secret:vllm-eks-pilot/slack-webhook-AbCdEf',
  cluster: 'example-cluster',
  namespace: 'vLLM/EKSPilot',
} as const;

type Json = Record<string, unknown>;
interface Resource {
  Type: string;
  Properties: Json;
  DeletionPolicy?: string;
}
interface Statement {
  Sid?: string;
  Effect: 'Allow' | 'Deny';
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

type Template = { Resources: Record<string, Resource>; Outputs: Record<string, Json> };

let scratch: string;
let template: Template;
let templateText: string;
let aslText: string;
/** The template packaged with `--param alerting.engine=amp`. */
let ampTemplate: Template;

/** Linux user namespaces give osls no network at all, proving it needs none; elsewhere it runs as is. */
function offlineCommand(command: string[]): string[] {
  try {
    execFileSync('unshare', ['-rn', 'true'], { stdio: 'ignore' });
    return ['unshare', '-rn', ...command];
  } catch {
    return command;
  }
}

/** Runs `osls package` offline into `scratch/<name>` with `params` (`--param`), and returns the template's text. */
async function packageStack(name: string, params: string[] = []): Promise<string> {
  return (await packageStackWithOutput(name, params)).template;
}

/** packageStack, with what osls wrote on stderr (the stack's warnings); rejects with osls' `stderr` when it fails. */
async function packageStackWithOutput(
  name: string,
  params: string[] = [],
): Promise<{ template: string; stderr: string }> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('AWS_') && key !== 'NODE_OPTIONS'),
  );
  const [bin, ...args] = offlineCommand([
    process.execPath,
    join(ROOT, 'node_modules', 'osls', 'bin', 'serverless.js'),
    'package',
    '--package',
    join(scratch, name),
    ...params.map((param) => `--param=${param}`),
  ]);
  // No credentials, no ~/.aws: packaging must not call AWS.
  const { stderr } = await execFileAsync(bin!, args, {
    cwd: ROOT,
    env: { ...env, HOME: scratch },
    maxBuffer: 16 * 1024 * 1024,
    // Kills a stuck osls rather than leaving it behind when the hook gives up.
    timeout: 200_000,
  });
  return { template: await readFile(join(scratch, name, 'cloudformation-template-update-stack.json'), 'utf8'), stderr };
}

const pascal = (key: string) => key.charAt(0).toUpperCase() + key.slice(1);
const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** Reading helpers over one packaged template. */
function templateView(current: () => Template) {
  const resource = (logicalId: string): Resource => {
    const found = current().Resources[logicalId];
    if (found === undefined) throw new Error(`the template has no resource ${logicalId}`);
    return found;
  };
  const resourcesOfType = (type: string): Array<[string, Resource]> =>
    Object.entries(current().Resources).filter(([, r]) => r.Type === type);

  /** Every policy statement in the template, with where it sits (KMS key policies too: `keyPolicy` is true). */
  const allStatements = (): Array<{ where: string; statement: Statement; keyPolicy: boolean }> => {
    const found: Array<{ where: string; statement: Statement; keyPolicy: boolean }> = [];
    const add = (where: string, document: unknown, keyPolicy = false) => {
      for (const statement of asArray((document as { Statement: Statement | Statement[] }).Statement))
        found.push({ where, statement, keyPolicy });
    };
    for (const [id, r] of Object.entries(current().Resources)) {
      if (r.Type === 'AWS::IAM::Role')
        for (const policy of (r.Properties.Policies as Array<{ PolicyName: string; PolicyDocument: unknown }>) ?? [])
          add(`${id}.${policy.PolicyName}`, policy.PolicyDocument);
      if (['AWS::IAM::Policy', 'AWS::IAM::ManagedPolicy'].includes(r.Type)) add(id, r.Properties.PolicyDocument);
      if (r.Type.endsWith('Policy') && r.Properties.PolicyDocument !== undefined && !r.Type.startsWith('AWS::IAM'))
        add(id, r.Properties.PolicyDocument);
      if (r.Type === 'AWS::KMS::Key') add(id, r.Properties.KeyPolicy, true);
    }
    return found;
  };

  /** The Allow statements of a function's own role. */
  const roleStatements = (roleId: string): Statement[] => {
    const policies = resource(roleId).Properties.Policies as Array<{ PolicyDocument: { Statement: Statement[] } }>;
    return policies.flatMap((policy) => policy.PolicyDocument.Statement);
  };

  /** The EventBridge rules whose target is function `key`. */
  const rulesTargeting = (key: string): Resource[] =>
    resourcesOfType('AWS::Events::Rule')
      .filter(([, rule]) =>
        (rule.Properties.Targets as Array<{ Arn: unknown }>).some(
          (target) =>
            JSON.stringify(target.Arn) === JSON.stringify({ 'Fn::GetAtt': [`${pascal(key)}LambdaFunction`, 'Arn'] }),
        ),
      )
      .map(([, rule]) => rule);

  /**
   * Allow statements with a wildcard action, or Resource "*" outside WILDCARD_RESOURCE_ALLOWLIST. In a KMS key
   * policy Resource "*" is the key itself, and WILDCARD_ACTION_ALLOWLIST names the one documented action pattern.
   */
  const leastPrivilegeProblems = (): string[] => {
    const problems: string[] = [];
    for (const { where, statement, keyPolicy } of allStatements()) {
      if (statement.Effect !== 'Allow') continue;
      const actions = asArray(statement.Action);
      for (const action of actions)
        if (action.includes('*') && !(keyPolicy && WILDCARD_ACTION_ALLOWLIST.some((entry) => entry.action === action)))
          problems.push(`${where}: action ${action}`);
      if (keyPolicy || !asArray(statement.Resource).includes('*')) continue;
      for (const action of actions) {
        const allowed = WILDCARD_RESOURCE_ALLOWLIST.find((entry) => entry.action === action);
        const condition = allowed?.condition;
        if (allowed === undefined) problems.push(`${where}: ${action} on Resource "*"`);
        else if (condition !== undefined && !Object.values(statement.Condition ?? {}).some((keys) => condition in keys))
          problems.push(`${where}: ${action} on "*" without the ${condition} condition`);
      }
    }
    return problems;
  };

  return { resource, resourcesOfType, allStatements, roleStatements, rulesTargeting, leastPrivilegeProblems };
}

const { resource, resourcesOfType, allStatements, roleStatements, rulesTargeting, leastPrivilegeProblems } =
  templateView(() => template);

const MAIN_FUNCTIONS = [
  { key: 'metricsCollector', handler: 'functions/metrics-collector/handler.handler' },
  { key: 'alertEvaluator', handler: 'functions/alert-evaluator/handler.handler' },
  { key: 'slackNotifier', handler: 'functions/slack-notifier/handler.handler' },
  { key: 'preflight', handler: 'functions/preflight/handler.handler' },
  { key: 'driftDetector', handler: 'functions/drift-detector/handler.handler' },
] as const;
const CALIBRATION_TASKS = Object.keys(CALIBRATION_STEPS) as CalibrationStepName[];
const ALL_FUNCTIONS = [
  ...MAIN_FUNCTIONS,
  ...[...CALIBRATION_TASKS, 'cleanupEndedExecution' as const, 'sweepLeases' as const, 'rollback' as const].map(
    (task) => ({
      key: calibrationFunctionKey(task),
      handler: `functions/calibration/${task}.handler`,
    }),
  ),
];

/**
 * The one action pattern allowed in a policy, and only in a KMS key policy: the statement AWS documents for a
 * service publishing to an encrypted topic (AMP user guide, "Giving Amazon Managed Service for Prometheus permission
 * to send alert messages to your Amazon SNS topic"; SNS developer guide, "Key management").
 */
const WILDCARD_ACTION_ALLOWLIST = [{ action: 'kms:GenerateDataKey*' }] as const;

/**
 * Where AWS allows no narrower resource than "*". Each entry: the action, the AWS reason, and the condition key
 * that must narrow it instead (none where AWS offers none).
 */
const WILDCARD_RESOURCE_ALLOWLIST: ReadonlyArray<{ action: string; condition?: string }> = [
  {
    action: 'cloudwatch:PutMetricData',
    // Service Authorization Reference, Amazon CloudWatch: PutMetricData lists no resource type, so IAM accepts only
    // "*"; the `cloudwatch:namespace` condition key confines it to the collector's namespace.
    condition: 'cloudwatch:namespace',
  },
  {
    // Only with the vpc.* parameters. Lambda developer guide, VPC execution role permissions: DescribeNetworkInterfaces
    // "only works if it's allowed on all resources"; it reads, and no condition key narrows it.
    action: 'ec2:DescribeNetworkInterfaces',
  },
];

describe('Stack: the packaged CloudFormation template', () => {
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'stack-'));
    templateText = await packageStack('package');
    template = JSON.parse(templateText) as typeof template;
    aslText = await readFile(ASL_FILE, 'utf8');
  }, 240_000);

  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  describe('Functions', () => {
    it.each(ALL_FUNCTIONS)(
      'has $key with handler $handler on nodejs22.x arm64 and its own role',
      ({ key, handler }) => {
        // Prepare
        const fn = resource(`${pascal(key)}LambdaFunction`);

        // Assess
        expect(fn.Properties.Handler).toBe(handler);
        expect(fn.Properties.Runtime).toBe('nodejs22.x');
        expect(fn.Properties.Architectures).toEqual(['arm64']);
        expect(fn.Properties.Role).toEqual({ 'Fn::GetAtt': [`${pascal(key)}Role`, 'Arn'] });
      },
    );

    it('has exactly one role per function plus the state machine role, and no shared provider role', () => {
      // Prepare
      const roleIds = resourcesOfType('AWS::Lambda::Function').map(
        ([, fn]) => (fn.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0],
      );

      // Assess
      expect(roleIds).toHaveLength(ALL_FUNCTIONS.length);
      expect(new Set(roleIds).size).toBe(roleIds.length);
      expect(template.Resources.IamRoleLambdaExecution).toBeUndefined();
      expect(resourcesOfType('AWS::IAM::Role')).toHaveLength(ALL_FUNCTIONS.length + 1);
    });

    it.each([
      { key: 'metricsCollector', schedule: 'rate(1 minute)' },
      { key: 'alertEvaluator', schedule: 'rate(1 minute)' },
      { key: 'preflight', schedule: 'cron(0 8 ? * MON *)' },
      { key: 'driftDetector', schedule: 'rate(1 hour)' },
      { key: 'calibrationSweepLeases', schedule: 'rate(10 minutes)' },
    ])('schedules $key at $schedule', ({ key, schedule }) => {
      // Prepare
      const rules = rulesTargeting(key);

      // Assess
      expect(rules.map((rule) => rule.Properties.ScheduleExpression)).toEqual([schedule]);
      expect(rules[0]?.Properties.State).toBe('ENABLED');
    });

    it('has no alert-installer, alert topic key or topic policy with the default engine (lambda)', () => {
      expect(template.Resources.AlertInstallerLambdaFunction).toBeUndefined();
      // The one key is the operations topic's (CloudWatch alarms cannot use aws/sns).
      expect(resourcesOfType('AWS::KMS::Key').map(([id]) => id)).toEqual(['OperationsTopicKey']);
      expect(resourcesOfType('AWS::SNS::TopicPolicy')).toEqual([]);
      expect(resourcesOfType('Custom::AmpAlerting')).toEqual([]);
    });

    it("sends the calibration machine's ABORTED, TIMED_OUT and FAILED executions to calibrationCleanupEndedExecution", () => {
      // Prepare
      const target = { 'Fn::GetAtt': ['CalibrationCleanupEndedExecutionLambdaFunction', 'Arn'] };
      const rules = resourcesOfType('AWS::Events::Rule').filter(([, rule]) =>
        (rule.Properties.Targets as Array<{ Arn: unknown }>).some(
          (t) => JSON.stringify(t.Arn) === JSON.stringify(target),
        ),
      );

      // Assess
      expect(rules.map(([, rule]) => rule.Properties.EventPattern)).toEqual([
        {
          source: ['aws.states'],
          'detail-type': ['Step Functions Execution Status Change'],
          detail: { status: ['ABORTED', 'TIMED_OUT', 'FAILED'], stateMachineArn: [{ Ref: 'CalibrationStateMachine' }] },
        },
      ]);
    });

    it('gives the sweep only the DescribeExecution of its own state machine', () => {
      // Prepare
      const statement = roleStatements('CalibrationSweepLeasesRole').find(
        (s) => s.Sid === 'DescribeCalibrationExecutions',
      );

      // Assess
      expect(statement?.Resource).toEqual({
        'Fn::Sub': expect.stringMatching(
          /:states:\$\{AWS::Region\}:\$\{AWS::AccountId\}:execution:[\w-]+-calibration:\*$/,
        ),
      });
    });

    it.each([
      {
        name: 'metricsCollector',
        load: loadCollectorConfig,
        expect: (config: unknown) =>
          expect(config).toMatchObject({ cloudWatchNamespace: DEFAULTS.namespace, targets: [{ name: 'example' }] }),
      },
      {
        name: 'alertEvaluator',
        load: loadAlertEvaluatorConfig,
        expect: (config: unknown) =>
          expect(config).toMatchObject({
            topicArn: expect.stringContaining('-alerts'),
            historyTableName: expect.stringContaining('CalibrationHistoryTable'),
          }),
      },
      {
        name: 'slackNotifier',
        load: loadSlackNotifierConfig,
        expect: (config: unknown) =>
          expect(config).toMatchObject({ webhookSecretId: DEFAULTS.secretArn, allowInsecureWebhookUrl: false }),
      },
      {
        name: 'preflight',
        load: loadPreflightConfig,
        expect: (config: unknown) =>
          expect(config).toMatchObject({
            topicArn: expect.stringContaining('-preflight'),
            settings: { alertingEngine: 'lambda' },
            alertStateTable: expect.any(String),
          }),
      },
      {
        name: 'driftDetector',
        load: loadDriftDetectorConfig,
        expect: (config: unknown) =>
          expect(config).toMatchObject({
            topicArn: expect.stringContaining('-preflight'),
            stateMachineArn: expect.stringContaining(':stateMachine:'),
            targets: [{ target: { name: 'example' }, settings: { mode: 'notify', windowSeconds: 600 } }],
          }),
      },
      {
        name: calibrationFunctionKey('storeReport'),
        load: loadCalibrationConfig,
        expect: (config: unknown) => expect(config).toMatchObject({ reportBucket: expect.any(String) }),
      },
    ])('gives $name an environment its own configuration loader accepts', ({ name, load, expect: assess }) => {
      // Prepare: CloudFormation fills Refs at deploy time; stand-ins of the same shape take their place.
      const variables = (resource(`${pascal(name)}LambdaFunction`).Properties.Environment as { Variables: Json })
        .Variables;
      const env = Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, standIn(v)]));

      // Act
      const config = load({ ...env, AWS_REGION: 'us-east-2' });

      // Assess
      assess(config);
    });
  });

  describe('State machine', () => {
    it('is the ASL file itself, with every placeholder filled by DefinitionSubstitutions', () => {
      // Prepare
      const machine = resource('CalibrationStateMachine');
      const definition = machine.Properties.DefinitionString as string;
      const substitutions = machine.Properties.DefinitionSubstitutions as Record<string, unknown>;
      const placeholders = new Set([...aslText.matchAll(/\$\{([A-Za-z0-9]+)\}/g)].map((match) => match[1]));
      // What CloudFormation does (the StepFunctions resource provider): replace each `${key}` with its value.
      const substitute = (text: string) =>
        Object.keys(substitutions).reduce(
          (result, key) => result.replaceAll(`\${${key}}`, `arn:aws:test:us-east-2:123456789012:${key}`),
          text,
        );

      // Assess
      expect(JSON.parse(definition)).toEqual(JSON.parse(aslText));
      expect(new Set(Object.keys(substitutions))).toEqual(placeholders);
      expect(JSON.parse(substitute(definition))).toEqual(JSON.parse(substitute(aslText)));
      expect(substitute(definition)).not.toMatch(/\$\{[A-Za-z0-9]+\}/);
    });

    it.each(CALIBRATION_TASKS)('substitutes the placeholder of %s with that function', (task) => {
      // Prepare
      const substitutions = resource('CalibrationStateMachine').Properties.DefinitionSubstitutions as Json;

      // Assess
      expect(substitutions[CALIBRATION_STEPS[task].placeholder]).toEqual({
        'Fn::GetAtt': [`${pascal(calibrationFunctionKey(task))}LambdaFunction`, 'Arn'],
      });
    });

    it('publishes to the calibration topic and may invoke exactly the calibration functions', () => {
      // Prepare
      const machine = resource('CalibrationStateMachine');
      const statements = roleStatements('CalibrationStateMachineRole');
      const invoke = statements.find((s) => asArray(s.Action).includes('lambda:InvokeFunction'));

      // Assess
      expect((machine.Properties.DefinitionSubstitutions as Json).CalibrationTopicArn).toEqual({
        Ref: 'CalibrationTopic',
      });
      expect(machine.Properties.RoleArn).toEqual({ 'Fn::GetAtt': ['CalibrationStateMachineRole', 'Arn'] });
      expect(asArray(invoke?.Resource)).toEqual(
        CALIBRATION_TASKS.map((task) => ({
          'Fn::GetAtt': [`${pascal(calibrationFunctionKey(task))}LambdaFunction`, 'Arn'],
        })),
      );
      expect(
        statements
          .map((s) => asArray(s.Action))
          .flat()
          .sort(),
      ).toEqual([
        // Many targets: Step Functions' managed rule for .sync children, and its own executions only.
        'events:DescribeRule',
        'events:PutRule',
        'events:PutTargets',
        'lambda:InvokeFunction',
        'sns:Publish',
        'states:DescribeExecution',
        'states:StartExecution',
        'states:StopExecution',
      ]);
      expect(statements.find((s) => asArray(s.Action).includes('sns:Publish'))?.Resource).toEqual({
        Ref: 'CalibrationTopic',
      });
    });

    it('may start and follow only its own executions (one per target of a many-target execution)', () => {
      // Prepare
      const statements = roleStatements('CalibrationStateMachineRole');
      const resourceOf = (action: string) => statements.find((s) => asArray(s.Action).includes(action))?.Resource;
      const sub = (action: string) => (resourceOf(action) as { 'Fn::Sub'?: string } | undefined)?.['Fn::Sub'];
      const machine = String.raw`^arn:\$\{AWS::Partition\}:states:\$\{AWS::Region\}:\$\{AWS::AccountId\}`;

      // Assess
      expect(sub('states:StartExecution')).toMatch(new RegExp(`${machine}:stateMachine:[\\w-]+-calibration$`));
      expect(sub('states:DescribeExecution')).toMatch(new RegExp(`${machine}:execution:[\\w-]+-calibration:\\*$`));
      expect(resourceOf('states:StopExecution')).toEqual(resourceOf('states:DescribeExecution'));
      expect(resourceOf('events:PutRule')).toEqual({
        'Fn::Sub':
          'arn:${AWS::Partition}:events:${AWS::Region}:${AWS::AccountId}:rule/StepFunctionsGetEventsForStepFunctionsExecutionRule',
      });
    });
  });

  describe('Data stores and topics', () => {
    it.each(['AlertTopic', 'CalibrationTopic', 'PreflightTopic'])('has the %s topic, encrypted', (id) => {
      expect(resource(id)).toMatchObject({
        Type: 'AWS::SNS::Topic',
        Properties: { KmsMasterKeyId: 'alias/aws/sns' },
      });
    });

    it.each([
      { id: 'AlertStateTable', definition: ALERT_STATE_TABLE },
      { id: 'CalibrationHistoryTable', definition: CALIBRATION_HISTORY_TABLE },
    ])(
      'has the $id with the key schema of its definition in shared/ and point-in-time recovery',
      ({ id, definition }) => {
        // Prepare
        const table = resource(id);

        // Assess
        expect(table.Type).toBe('AWS::DynamoDB::Table');
        expect(table.Properties.KeySchema).toEqual(definition.KeySchema);
        expect(table.Properties.AttributeDefinitions).toEqual(definition.AttributeDefinitions);
        expect(table.Properties.BillingMode).toBe('PAY_PER_REQUEST');
        expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
      },
    );

    it('expires resolved alert states through the TTL attribute', () => {
      expect(resource('AlertStateTable').Properties.TimeToLiveSpecification).toEqual({
        AttributeName: 'expiresAt',
        Enabled: true,
      });
    });

    it('has the report bucket encrypted, closed to the public, and refusing plain HTTP', () => {
      // Prepare
      const bucket = resource('ReportBucket');
      const policy = resource('ReportBucketPolicy').Properties.PolicyDocument as { Statement: Statement[] };

      // Assess
      expect(bucket.Properties.BucketEncryption).toEqual({
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      });
      expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(policy.Statement).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    });

    it('keeps the Slack webhook out of the template: the secret is referenced by ARN only', () => {
      // Prepare
      const slackEnv = (resource('SlackNotifierLambdaFunction').Properties.Environment as { Variables: Json })
        .Variables;
      const secretRead = roleStatements('SlackNotifierRole').find((s) =>
        asArray(s.Action).includes('secretsmanager:GetSecretValue'),
      );

      // Assess
      expect(slackEnv.SLACK_WEBHOOK_SECRET_ID).toBe(DEFAULTS.secretArn);
      expect(secretRead?.Resource).toBe(DEFAULTS.secretArn);
      expect(resourcesOfType('AWS::SecretsManager::Secret')).toEqual([]);
      expect(templateText).not.toContain('hooks.slack.com');
    });

    it('subscribes the Slack notifier to the alert topic and keeps what it cannot deliver in a queue', () => {
      // Prepare
      const subscription = resourcesOfType('AWS::SNS::Subscription').map(([, r]) => r.Properties);
      const invokeConfig = resourcesOfType('AWS::Lambda::EventInvokeConfig').map(([, r]) => r.Properties);

      // Assess
      expect(subscription).toEqual([
        expect.objectContaining({
          TopicArn: { Ref: 'AlertTopic' },
          Protocol: 'lambda',
          Endpoint: { 'Fn::GetAtt': ['SlackNotifierLambdaFunction', 'Arn'] },
        }),
      ]);
      expect(invokeConfig).toEqual([
        expect.objectContaining({
          MaximumRetryAttempts: 2,
          DestinationConfig: {
            OnFailure: { Destination: { 'Fn::GetAtt': ['SlackNotifierDeadLetterQueue', 'Arn'] } },
          },
        }),
      ]);
    });
  });

  describe('Least privilege', () => {
    it('has no Allow statement with a wildcard action, nor Resource "*" beyond the documented allowlist', () => {
      // Deny statements narrow access (the buckets' "refuse plain HTTP" uses s3:* on purpose), so only Allow
      // statements are held to this.
      expect(allStatements().filter(({ statement }) => statement.Effect === 'Allow').length).toBeGreaterThan(
        ALL_FUNCTIONS.length,
      );
      expect(leastPrivilegeProblems()).toEqual([]);
    });

    it('attaches no managed policies (they grant more than any one function needs)', () => {
      for (const [, role] of resourcesOfType('AWS::IAM::Role'))
        expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    });

    // Each function's actions, from its code (the adapters it builds and the calls they make).
    it.each([
      {
        key: 'metricsCollector',
        actions: ['aps:QueryMetrics', 'cloudwatch:PutMetricData'],
      },
      {
        key: 'alertEvaluator',
        // Query: its alert state, the silences, and the calibration history (the derived alert thresholds).
        actions: [
          'aps:QueryMetrics',
          'cloudwatch:PutMetricData',
          'dynamodb:Query',
          'dynamodb:Query',
          'dynamodb:Query',
          'dynamodb:UpdateItem',
          'sns:Publish',
        ],
      },
      { key: 'slackNotifier', actions: ['secretsmanager:GetSecretValue', 'sqs:SendMessage'] },
      {
        key: 'preflight',
        actions: [
          'aps:DescribeRuleGroupsNamespace',
          'aps:ListRules',
          'aps:QueryMetrics',
          'dynamodb:GetItem',
          'dynamodb:Query',
          'eks:DescribeCluster',
          'sns:Publish',
        ],
      },
      {
        key: 'driftDetector',
        // ListExecutions and StartExecution on this stage's calibration state machine only.
        actions: [
          'aps:QueryMetrics',
          'dynamodb:Query',
          'eks:DescribeCluster',
          'sns:Publish',
          'states:ListExecutions',
          'states:StartExecution',
        ],
      },
      { key: 'calibrationValidateInput', actions: [] },
      { key: 'calibrationPlanNextStep', actions: [] },
      { key: 'calibrationAnalyze', actions: [] },
      {
        key: 'calibrationDeploy',
        actions: ['aps:QueryMetrics', 'dynamodb:PutItem', 'eks:DescribeCluster'],
      },
      { key: 'calibrationMeasureStep', actions: ['aps:QueryMetrics', 'eks:DescribeCluster'] },
      { key: 'calibrationWatchLoadStep', actions: ['aps:QueryMetrics', 'eks:DescribeCluster'] },
      { key: 'calibrationAwaitStepData', actions: ['aps:QueryMetrics', 'eks:DescribeCluster'] },
      { key: 'calibrationReadinessGate', actions: ['aps:QueryMetrics', 'eks:DescribeCluster'] },
      {
        key: 'calibrationStoreReport',
        actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'eks:DescribeCluster', 's3:PutObject'],
      },
      {
        key: 'calibrationCleanupEndedExecution',
        actions: ['dynamodb:DeleteItem', 'eks:DescribeCluster'],
      },
      {
        key: 'calibrationSweepLeases',
        actions: ['dynamodb:DeleteItem', 'eks:DescribeCluster', 'states:DescribeExecution'],
      },
      {
        key: 'calibrationRollback',
        actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'eks:DescribeCluster'],
      },
    ])('lets $key write its own logs and do only $actions', ({ key, actions }) => {
      // Prepare
      const statements = roleStatements(`${pascal(key)}Role`);
      const logs = statements.find((s) => s.Sid === 'WriteOwnLogs');

      // Assess
      expect(logs?.Resource).toEqual({ 'Fn::GetAtt': [`${pascal(key)}LogGroup`, 'Arn'] });
      expect(
        statements
          .filter((s) => s !== logs)
          .flatMap((s) => asArray(s.Action))
          .sort(),
      ).toEqual(actions);
    });

    it.each([
      { what: 'AMP', action: 'aps:QueryMetrics', resource: `:workspace/${DEFAULTS.workspaceId}` },
      { what: 'EKS', action: 'eks:DescribeCluster', resource: `:cluster/${DEFAULTS.cluster}` },
    ])('grants $action only on the configured $what resource', ({ action, resource: suffix }) => {
      // Prepare
      const granted = allStatements()
        .map(({ statement }) => statement)
        .filter((s) => asArray(s.Action).includes(action))
        .flatMap((s) => asArray(s.Resource));

      // Assess
      expect(granted.length).toBeGreaterThan(0);
      for (const value of granted)
        expect((value as { 'Fn::Sub': string })['Fn::Sub']).toMatch(new RegExp(`${suffix}$`));
    });

    it("limits S3 writes to the report prefix and DynamoDB and SNS to the stack's own tables and topics", () => {
      // Prepare
      const statements = allStatements()
        .map(({ statement }) => statement)
        .filter((s) => s.Effect === 'Allow');
      const resourcesOf = (prefix: string) =>
        statements
          .filter((s) => asArray(s.Action).some((a) => a.startsWith(prefix)))
          .flatMap((s) => asArray(s.Resource));

      // Assess
      expect([...new Set(resourcesOf('s3:').map((r) => JSON.stringify(r)))]).toEqual([
        JSON.stringify({ 'Fn::Sub': '${ReportBucket.Arn}/calibrations/*' }),
      ]);
      for (const value of resourcesOf('dynamodb:'))
        expect(['AlertStateTable', 'CalibrationHistoryTable', 'AlertSilencesTable']).toContain(
          (value as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0],
        );
      for (const value of resourcesOf('sns:'))
        expect(['AlertTopic', 'CalibrationTopic', 'PreflightTopic']).toContain((value as { Ref: string }).Ref);
    });
  });

  describe('Access to the cluster', () => {
    it('says in each cluster role output which Kubernetes group its EKS access entry maps it to', () => {
      // Assess
      const description = (name: string) => (template.Outputs[name] as { Description?: string }).Description;
      expect(description('PreflightRoleArn')).toContain(`Kubernetes group ${RBAC_GROUPS.read}:`);
      expect(description('DriftDetectorRoleArn')).toContain(`Kubernetes group ${RBAC_GROUPS.read}:`);
      expect(description('CalibrationClusterRoleArns')).toContain(`Kubernetes group ${RBAC_GROUPS.calibration}:`);
    });
  });

  describe('Alarms and the operations topic', () => {
    const OPERATIONS = { Ref: 'OperationsTopic' };
    const alarms = (): Json[] => resourcesOfType('AWS::CloudWatch::Alarm').map(([, r]) => r.Properties);

    it('has an Errors alarm for every function, on its own name, at the first error in 5 minutes', () => {
      // Prepare
      const errors = alarms().filter((a) => a.MetricName === 'Errors');

      // Assess
      expect(
        errors.map((a) => a.Dimensions).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
      ).toEqual(
        ALL_FUNCTIONS.map(({ key }) => [{ Name: 'FunctionName', Value: { Ref: `${pascal(key)}LambdaFunction` } }]).sort(
          (a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)),
        ),
      );
      for (const alarm of errors)
        expect(alarm).toMatchObject({
          Namespace: 'AWS/Lambda',
          Statistic: 'Sum',
          Period: 300,
          EvaluationPeriods: 1,
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          TreatMissingData: 'notBreaching',
        });
    });

    it("watches the state machine's failed and timed-out executions and the Slack dead-letter queue", () => {
      // Prepare
      const byMetric = (name: string) => alarms().find((a) => a.MetricName === name);
      const stateMachine = [{ Name: 'StateMachineArn', Value: { Ref: 'CalibrationStateMachine' } }];

      // Assess
      expect(byMetric('ExecutionsFailed')).toMatchObject({ Namespace: 'AWS/States', Dimensions: stateMachine });
      expect(byMetric('ExecutionsTimedOut')).toMatchObject({ Namespace: 'AWS/States', Dimensions: stateMachine });
      expect(byMetric('ApproximateNumberOfMessagesVisible')).toMatchObject({
        Namespace: 'AWS/SQS',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': ['SlackNotifierDeadLetterQueue', 'QueueName'] } }],
        Statistic: 'Maximum',
        Threshold: 1,
        // An idle queue stops reporting while its dead letters wait: the alarm stays in ALARM.
        TreatMissingData: 'ignore',
      });
    });

    it('alarms on a missing evaluator heartbeat, missing data breaching, on the metric the evaluator publishes', () => {
      // Prepare
      const heartbeat = resource('EvaluatorHeartbeatAlarm').Properties;
      const evaluator = (resource('AlertEvaluatorLambdaFunction').Properties.Environment as { Variables: Json })
        .Variables;

      // Assess
      expect(heartbeat).toMatchObject({
        AlarmName: 'vllm-eks-pilot-dev-evaluator-heartbeat',
        Namespace: DEFAULTS.namespace,
        MetricName: 'EvaluatorCycles',
        Dimensions: [{ Name: 'Stage', Value: 'dev' }],
        Statistic: 'Sum',
        Period: 60,
        EvaluationPeriods: 3,
        DatapointsToAlarm: 3,
        Threshold: 1,
        ComparisonOperator: 'LessThanThreshold',
        TreatMissingData: 'breaching',
      });
      expect(evaluator).toMatchObject({
        CLOUDWATCH_NAMESPACE: DEFAULTS.namespace,
        STAGE: 'dev',
        EVALUATION_INTERVAL_SECONDS: '15',
        SCHEDULE_PERIOD_SECONDS: '60',
      });
      // Four cycles: the last starts 45 s in and needs 20 s (queries, then the 15 s margin to publish).
      expect(resource('AlertEvaluatorLambdaFunction').Properties.Timeout).toBeGreaterThanOrEqual(65);
    });

    it('publishes every alarm, ALARM and OK, to the operations topic, encrypted with a key CloudWatch may use', () => {
      // Prepare
      const key = resource('OperationsTopicKey').Properties;
      const statements = (key.KeyPolicy as { Statement: Statement[] }).Statement;
      const cloudWatch = statements.find((s) =>
        JSON.stringify((s as unknown as { Principal: unknown }).Principal).includes('cloudwatch.amazonaws.com'),
      );

      // Assess
      expect(alarms().length).toBe(ALL_FUNCTIONS.length + 4);
      for (const alarm of alarms())
        expect(alarm).toMatchObject({ ActionsEnabled: true, AlarmActions: [OPERATIONS], OKActions: [OPERATIONS] });
      expect(resource('OperationsTopic').Properties).toEqual({
        TopicName: 'vllm-eks-pilot-dev-operations',
        KmsMasterKeyId: { Ref: 'OperationsTopicKey' },
      });
      expect(key.EnableKeyRotation).toBe(true);
      expect(cloudWatch).toMatchObject({ Effect: 'Allow', Action: ['kms:GenerateDataKey', 'kms:Decrypt'] });
      expect(template.Outputs.OperationsTopicArn).toMatchObject({ Value: OPERATIONS });
    });
  });

  describe('With alerting.engine amp', () => {
    const amp = templateView(() => ampTemplate);
    const fromThisWorkspace = {
      StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
      ArnEquals: { 'aws:SourceArn': { 'Fn::Sub': expect.stringMatching(/:workspace\/ws-0{8}-0{4}-0{4}-0{4}-0{12}$/) } },
    };

    beforeAll(async () => {
      ampTemplate = JSON.parse(await packageStack('package-amp', ['alerting.engine=amp'])) as Template;
    }, 240_000);

    it('has the alert-installer with its own role, hourly, and turns the evaluator schedule off', () => {
      // Prepare
      const fn = amp.resource('AlertInstallerLambdaFunction');
      const variables = (fn.Properties.Environment as { Variables: Json }).Variables;

      // Assess
      expect(fn.Properties.Handler).toBe('functions/alert-installer/handler.handler');
      expect(fn.Properties.Role).toEqual({ 'Fn::GetAtt': ['AlertInstallerRole', 'Arn'] });
      expect(variables).toMatchObject({
        AMP_WORKSPACE_ID: DEFAULTS.workspaceId,
        AMP_RULE_NAMESPACE: 'vllm-eks-pilot-dev',
        ALERT_TOPIC_ARN: { Ref: 'AlertTopic' },
      });
      expect(amp.rulesTargeting('alertInstaller').map((rule) => rule.Properties)).toEqual([
        expect.objectContaining({ ScheduleExpression: 'rate(1 hour)', State: 'ENABLED' }),
      ]);
      expect(amp.rulesTargeting('alertEvaluator').map((rule) => rule.Properties.State)).toEqual(['DISABLED']);
      expect(amp.resourcesOfType('AWS::IAM::Role')).toHaveLength(ALL_FUNCTIONS.length + 2);
    });

    it('gives the installer an environment its configuration loader accepts', () => {
      // Prepare
      const variables = (amp.resource('AlertInstallerLambdaFunction').Properties.Environment as { Variables: Json })
        .Variables;
      const topicArn = 'arn:aws:sns:us-east-2:123456789012:vllm-eks-pilot-dev-alerts';
      const env = Object.fromEntries(
        Object.entries(variables).map(([k, v]) => [k, typeof v === 'string' ? v : topicArn]),
      );

      // Act
      const config = loadAlertInstallerConfig({ ...env, AWS_REGION: 'us-east-2' });

      // Assess
      expect(config).toMatchObject({ ruleNamespace: 'vllm-eks-pilot-dev', topicArn, waitTimeoutMs: 240_000 });
    });

    it('lets the installer do only the six install calls and the two deletes, on its namespace and workspace', () => {
      // Prepare
      const statements = amp.roleStatements('AlertInstallerRole').filter((s) => s.Sid !== 'WriteOwnLogs');

      // Assess
      expect(statements).toEqual([
        expect.objectContaining({
          Action: [
            'aps:CreateRuleGroupsNamespace',
            'aps:DescribeRuleGroupsNamespace',
            'aps:PutRuleGroupsNamespace',
            'aps:DeleteRuleGroupsNamespace',
          ],
          Resource: {
            'Fn::Sub': expect.stringMatching(
              new RegExp(`:rulegroupsnamespace/${DEFAULTS.workspaceId}/vllm-eks-pilot-dev$`),
            ),
          },
        }),
        expect.objectContaining({
          Action: [
            'aps:CreateAlertManagerDefinition',
            'aps:DescribeAlertManagerDefinition',
            'aps:PutAlertManagerDefinition',
            'aps:DeleteAlertManagerDefinition',
          ],
          Resource: { 'Fn::Sub': expect.stringMatching(new RegExp(`:workspace/${DEFAULTS.workspaceId}$`)) },
        }),
      ]);
    });

    it('encrypts the alert topic with its own rotated key, which AMP (this workspace only) and the evaluator may use', () => {
      // Prepare
      const key = amp.resource('AlertTopicKey');
      const statements = (key.Properties.KeyPolicy as { Statement: Statement[] }).Statement;
      const principal = (s: Statement) => JSON.stringify((s as unknown as { Principal: unknown }).Principal);

      // Assess
      expect(amp.resource('AlertTopic').Properties.KmsMasterKeyId).toEqual({ Ref: 'AlertTopicKey' });
      expect(key.Properties.EnableKeyRotation).toBe(true);
      expect(statements.find((s) => principal(s).includes('aps.amazonaws.com'))).toMatchObject({
        Effect: 'Allow',
        Action: ['kms:GenerateDataKey*', 'kms:Decrypt'],
        Condition: fromThisWorkspace,
      });
      expect(statements.find((s) => principal(s).includes('AlertEvaluatorRole'))?.Action).toEqual([
        'kms:GenerateDataKey*',
        'kms:Decrypt',
      ]);
      expect(statements.find((s) => principal(s).includes(':root'))?.Action).toEqual(
        expect.arrayContaining(['kms:PutKeyPolicy', 'kms:ScheduleKeyDeletion']),
      );
    });

    it('lets AMP (this account and workspace only) publish to the alert topic, and nothing else', () => {
      // Prepare
      const policies = amp.resourcesOfType('AWS::SNS::TopicPolicy').map(([, r]) => r.Properties);

      // Assess
      expect(policies).toEqual([
        {
          Topics: [{ Ref: 'AlertTopic' }],
          PolicyDocument: {
            Version: '2012-10-17',
            Statement: [
              {
                Sid: 'AmpAlertmanagerPublishes',
                Effect: 'Allow',
                Principal: { Service: 'aps.amazonaws.com' },
                Action: ['sns:Publish', 'sns:GetTopicAttributes'],
                Resource: { Ref: 'AlertTopic' },
                Condition: fromThisWorkspace,
              },
            ],
          },
        },
      ]);
    });

    it('installs through the custom resource, after the topic policy, with digests that change with the rules', () => {
      // Prepare
      const [[, custom] = []] = amp.resourcesOfType('Custom::AmpAlerting');

      // Assess
      expect(custom).toMatchObject({
        DependsOn: ['AlertTopicPolicy'],
        Properties: {
          ServiceToken: { 'Fn::GetAtt': ['AlertInstallerLambdaFunction', 'Arn'] },
          ServiceTimeout: 360,
          WorkspaceId: DEFAULTS.workspaceId,
          RuleGroupsNamespace: 'vllm-eks-pilot-dev',
          TopicArn: { Ref: 'AlertTopic' },
          RuleGroupsSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
          AlertManagerDefinitionSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        },
      });
    });

    it('has no heartbeat alarm (the evaluator does not run) but an Errors alarm for the installer', () => {
      // Prepare
      const alarms = amp.resourcesOfType('AWS::CloudWatch::Alarm').map(([, r]) => r.Properties);

      // Assess
      expect(alarms.find((a) => a.MetricName === 'EvaluatorCycles')).toBeUndefined();
      expect(alarms).toContainEqual(
        expect.objectContaining({
          MetricName: 'Errors',
          Dimensions: [{ Name: 'FunctionName', Value: { Ref: 'AlertInstallerLambdaFunction' } }],
        }),
      );
    });

    it('still has no wildcard action and no Resource "*" beyond the allowlist', () => {
      expect(amp.allStatements().some(({ keyPolicy }) => keyPolicy)).toBe(true);
      expect(amp.leastPrivilegeProblems()).toEqual([]);
    });
  });

  describe('Private clusters: the vpc.* stage parameters', () => {
    const SUBNETS = ['subnet-0a1b2c3d4e5f67890', 'subnet-0b1c2d3e4f5a67890'];
    const SECURITY_GROUPS = ['sg-0c1d2e3f4a5b67890'];
    /** The ENI actions Lambda takes with the function role (AWSLambdaVPCAccessExecutionRole's, without logs:*). */
    const ENI_ACTIONS = [
      'ec2:AssignPrivateIpAddresses',
      'ec2:CreateNetworkInterface',
      'ec2:DeleteNetworkInterface',
      'ec2:DescribeNetworkInterfaces',
      'ec2:UnassignPrivateIpAddresses',
    ];
    const vpc = templateView(() => vpcTemplate);
    let vpcTemplate: Template;
    let vpcStderr: string;

    /** Function key → its Lambda resource and the actions of its role, in one template. */
    const functionsOf = (view: ReturnType<typeof templateView>) =>
      ALL_FUNCTIONS.map(({ key }) => ({
        key,
        fn: view.resource(`${pascal(key)}LambdaFunction`),
        actions: view.roleStatements(`${pascal(key)}Role`).flatMap((s) => asArray(s.Action)),
      }));

    beforeAll(async () => {
      const packaged = await packageStackWithOutput('package-vpc', [
        `vpc.subnetIds=${SUBNETS.join(',')}`,
        `vpc.securityGroupIds=${SECURITY_GROUPS.join(',')}`,
      ]);
      vpcTemplate = JSON.parse(packaged.template) as Template;
      vpcStderr = packaged.stderr;
    }, 240_000);

    it('puts every function that calls the Kubernetes API in the VPC, and no other', () => {
      // Prepare: Kubernetes-facing = its role may look the cluster up (eks:DescribeCluster)
      const functions = functionsOf(vpc);
      const inVpc = functions.filter(({ fn }) => fn.Properties.VpcConfig !== undefined).map(({ key }) => key);
      const kubernetesFacing = functions
        .filter(({ actions }) => actions.includes('eks:DescribeCluster'))
        .map(({ key }) => key);

      // Assess
      expect(inVpc).toEqual(kubernetesFacing);
      expect(inVpc).toEqual(
        expect.arrayContaining([
          'preflight',
          'driftDetector',
          'calibrationDeploy',
          'calibrationMeasureStep',
          'calibrationCleanup',
          'calibrationCleanupEndedExecution',
          'calibrationSweepLeases',
          'calibrationRollback',
        ]),
      );
      for (const outside of ['metricsCollector', 'alertEvaluator', 'slackNotifier', 'calibrationAnalyze'])
        expect(inVpc).not.toContain(outside);
      for (const { key, fn } of functions.filter(({ key }) => inVpc.includes(key)))
        expect([key, fn.Properties.VpcConfig]).toEqual([
          key,
          { SubnetIds: SUBNETS, SecurityGroupIds: SECURITY_GROUPS },
        ]);
      // Two subnets: no single-zone warning.
      expect(vpcStderr).not.toContain('warning');
    });

    it('gives exactly the in-VPC functions the five ENI actions, and still no wildcard action', () => {
      for (const { key, fn, actions } of functionsOf(vpc)) {
        const ec2 = actions.filter((action) => action.startsWith('ec2:')).sort();
        expect([key, ec2]).toEqual([key, fn.Properties.VpcConfig === undefined ? [] : ENI_ACTIONS]);
      }
      // Create/Delete/Assign/Unassign on this account's EC2 resources in this region; only Describe on "*".
      const manage = vpc
        .roleStatements('PreflightRole')
        .find((statement) => asArray(statement.Action).includes('ec2:CreateNetworkInterface'));
      expect(manage?.Resource).toEqual({ 'Fn::Sub': 'arn:${AWS::Partition}:ec2:${AWS::Region}:${AWS::AccountId}:*/*' });
      expect(vpc.leastPrivilegeProblems()).toEqual([]);
    });

    it('without them, puts no function in a VPC and grants no ec2 action', () => {
      expect(
        functionsOf(templateView(() => template)).filter(({ fn }) => fn.Properties.VpcConfig !== undefined),
      ).toEqual([]);
      expect(
        allStatements()
          .flatMap(({ statement }) => asArray(statement.Action))
          .filter((a) => a.startsWith('ec2:')),
      ).toEqual([]);
    });

    it('refuses a bad subnet id at package time, naming the parameter, the value and what is accepted', async () => {
      // Act
      const outcome = packageStackWithOutput('package-bad-vpc', [
        'vpc.subnetIds=subnet-0a1b2c3d4e5f67890,subnet-12345',
        `vpc.securityGroupIds=${SECURITY_GROUPS.join(',')}`,
      ]);

      // Assess
      await expect(outcome).rejects.toMatchObject({
        stderr: expect.stringContaining(
          'vpc.subnetIds[1]: "subnet-12345" is not a subnet id; accepted: subnet- and 8 or 17 hex digits',
        ),
      });
    }, 240_000);
  });
});

describe('Function: buildStack', () => {
  const valid = {
    service: 'vllm-eks-pilot',
    stage: 'prod',
    targets: JSON.stringify([
      { name: 'prod', cluster: 'ai-eks', namespace: 'default', deployment: 'vllm', model: 'm', service: 'vllm' },
      { name: 'b', cluster: 'other', namespace: 'ml', deployment: 'vllm', model: 'm', alerts: {} },
    ]),
    ampWorkspaceId: 'ws-b226cc2a-a446-46a9-933a-ac50479a5568',
    ampRegion: 'us-east-2',
    slackWebhookSecretArn: 'arn:aws:secretsmanager:us-east-2:123456789012:secret:slack-AbCdEf',
    slackFilterPolicy: '{"severity":["critical"]}',
    cloudWatchNamespace: 'vLLM/EKSPilot',
    preflightSettings: '',
  };

  it.each([
    { engine: undefined, installer: false, evaluatorScheduled: true },
    { engine: 'lambda', installer: false, evaluatorScheduled: true },
    { engine: 'amp', installer: true, evaluatorScheduled: false },
  ])(
    'with alerting.engine $engine: installer $installer, evaluator scheduled $evaluatorScheduled',
    ({ engine, installer, evaluatorScheduled }) => {
      // Act
      const stack = buildStack({ ...valid, ...(engine === undefined ? {} : { alerting: { engine } }) });

      // Assess
      expect(Object.keys(stack.alertingFunctions)).toEqual(installer ? ['alertInstaller'] : []);
      expect(stack.alertEvaluatorScheduleEnabled).toBe(evaluatorScheduled);
      expect('AmpAlerting' in stack.resources.Resources).toBe(installer);
    },
  );

  it.each([
    // The default: every minute, every catalog metric.
    { collector: undefined, schedule: 'rate(1 minute)', enabled: true, metrics: '' },
    {
      collector: { schedule: 'rate(5 minutes)', metrics: '' },
      schedule: 'rate(5 minutes)',
      enabled: true,
      metrics: '',
    },
    // `off`: EventBridge still needs a valid rate; the rule is disabled, so nothing reaches CloudWatch.
    { collector: { schedule: 'off' }, schedule: 'rate(1 minute)', enabled: false, metrics: '' },
    {
      collector: { schedule: 'rate(1 hour)', metrics: 'KVCacheUsage, QueueDepth' },
      schedule: 'rate(1 hour)',
      enabled: true,
      metrics: 'KVCacheUsage,QueueDepth',
    },
  ])(
    'with collector $collector: the collector runs on $schedule (enabled $enabled), publishing "$metrics"',
    ({ collector, schedule, enabled, metrics }) => {
      // Act
      const stack = buildStack({ ...valid, ...(collector === undefined ? {} : { collector }) });

      // Assess
      expect(stack.collector).toEqual({ schedule, enabled, metrics });
    },
  );

  it('gives each function only the target fields its parser accepts, and DescribeCluster every named cluster', () => {
    // Act
    const stack = buildStack(valid);

    // Assess
    expect(JSON.parse(stack.targets.metricsCollector)).toEqual([
      { name: 'prod', cluster: 'ai-eks', namespace: 'default', deployment: 'vllm', model: 'm' },
      { name: 'b', cluster: 'other', namespace: 'ml', deployment: 'vllm', model: 'm' },
    ]);
    expect((JSON.parse(stack.targets.preflight) as Json[])[0]).toMatchObject({ service: 'vllm' });
    expect((JSON.parse(stack.targets.alertEvaluator) as Json[])[1]).toMatchObject({ alerts: {} });
    expect(stack.settings.clusters).toEqual(['ai-eks', 'other']);
    expect(stack.slackSubscription).toMatchObject({
      filterPolicy: { severity: ['critical'] },
      filterPolicyScope: 'MessageAttributes',
    });
  });

  it.each([
    { name: 'a bad target field', change: { targets: '[{"name":"a"}]' }, path: 'targets[0].cluster' },
    {
      name: 'a misspelt target field',
      change: { targets: '[{"name":"a","cluster":"c","namspace":"d","deployment":"v","model":"m"}]' },
      path: 'targets[0].namspace',
    },
    { name: 'targets that are not JSON', change: { targets: '[{' }, path: 'targets' },
    { name: 'a workspace id', change: { ampWorkspaceId: 'my-workspace' }, path: 'ampWorkspaceId' },
    {
      name: 'a secret ARN without its suffix',
      change: { slackWebhookSecretArn: 'arn:aws:secretsmanager:us-east-2:123456789012:secret:slack' },
      path: 'slackWebhookSecretArn',
    },
    {
      name: 'a filter on an attribute alerts lack',
      change: { slackFilterPolicy: '{"team":["a"]}' },
      path: 'slackFilterPolicy.team',
    },
    { name: 'a reserved namespace', change: { cloudWatchNamespace: 'AWS/Lambda' }, path: 'cloudWatchNamespace' },
    {
      name: 'bad preflight settings',
      change: { preflightSettings: '{"freshnessSeconds":-1}' },
      path: 'preflightSettings',
    },
    { name: 'an unknown alerting engine', change: { alerting: { engine: 'prometheus' } }, path: 'alerting.engine' },
    {
      name: 'a security group id of 7 hex digits',
      change: { vpc: { subnetIds: 'subnet-12345678,subnet-87654321', securityGroupIds: 'sg-1234567' } },
      path: 'vpc.securityGroupIds[0]',
    },
    {
      name: 'a subnet given twice',
      change: { vpc: { subnetIds: 'subnet-12345678, subnet-12345678', securityGroupIds: 'sg-12345678' } },
      path: 'vpc.subnetIds[1]',
    },
    {
      name: 'subnets without security groups',
      change: { vpc: { subnetIds: 'subnet-12345678,subnet-87654321', securityGroupIds: '' } },
      path: 'vpc.securityGroupIds',
    },
    {
      name: 'security groups without subnets',
      change: { vpc: { subnetIds: '', securityGroupIds: 'sg-12345678' } },
      path: 'vpc.subnetIds',
    },
    {
      name: 'six security groups (Lambda takes five)',
      change: {
        vpc: {
          subnetIds: 'subnet-12345678',
          securityGroupIds: 'sg-00000001,sg-00000002,sg-00000003,sg-00000004,sg-00000005,sg-00000006',
        },
      },
      path: 'vpc.securityGroupIds',
    },
    {
      name: 'subnets that are neither a list nor JSON',
      change: { vpc: { subnetIds: '["subnet-12345678"', securityGroupIds: 'sg-12345678' } },
      path: 'vpc.subnetIds',
    },
    {
      name: 'a collector schedule EventBridge writes otherwise',
      change: { collector: { schedule: 'rate(1 minutes)' } },
      path: 'collector.schedule',
    },
    {
      name: 'a collector schedule in seconds',
      change: { collector: { schedule: 'rate(30 seconds)' } },
      path: 'collector.schedule',
    },
    {
      name: 'a collector metric the catalog does not have',
      change: { collector: { schedule: 'rate(1 minute)', metrics: 'QueueDepth,GpuUtil' } },
      path: 'collector.metrics',
    },
    {
      // Fine for the Lambda engine; AMP's Alertmanager takes 60 s to 5 days: refused at package time, not on deploy.
      name: 'a repeat interval AMP cannot take',
      change: {
        alerting: { engine: 'amp' },
        targets:
          '[{"name":"a","cluster":"c","namespace":"d","deployment":"v","model":"m","alerts":{"repeatInterval":"10s"}}]',
      },
      path: 'targets',
    },
  ])('refuses $name, naming $path', ({ change, path }) => {
    // Act
    let thrown: unknown;
    try {
      buildStack({ ...valid, ...change });
    } catch (error) {
      thrown = error;
    }

    // Assess
    expect(thrown).toBeInstanceOf(StackSettingsInvalidError);
    expect((thrown as StackSettingsInvalidError).issues.map((issue) => issue.path)).toContain(path);
  });
});

describe('Function: buildStack with the vpc.* parameters', () => {
  const valid = {
    service: 'vllm-eks-pilot',
    stage: 'prod',
    targets: '[{"name":"a","cluster":"c","namespace":"d","deployment":"v","model":"m"}]',
    ampWorkspaceId: 'ws-b226cc2a-a446-46a9-933a-ac50479a5568',
    ampRegion: 'us-east-2',
    slackWebhookSecretArn: 'arn:aws:secretsmanager:us-east-2:123456789012:secret:slack-AbCdEf',
    cloudWatchNamespace: 'vLLM/EKSPilot',
  };

  it.each([
    { form: 'comma-separated', subnetIds: 'subnet-0a1b2c3d4e5f67890,subnet-12345678', securityGroupIds: 'sg-12345678' },
    {
      form: 'JSON arrays',
      subnetIds: '["subnet-0a1b2c3d4e5f67890","subnet-12345678"]',
      securityGroupIds: '["sg-12345678"]',
    },
    {
      form: 'YAML lists',
      subnetIds: ['subnet-0a1b2c3d4e5f67890', 'subnet-12345678'],
      securityGroupIds: ['sg-12345678'],
    },
  ])('reads $form, and gives only the Kubernetes-facing functions a vpc', ({ subnetIds, securityGroupIds }) => {
    // Act
    const stack = buildStack({ ...valid, vpc: { subnetIds, securityGroupIds } });

    // Assess
    const expected = { subnetIds: ['subnet-0a1b2c3d4e5f67890', 'subnet-12345678'], securityGroupIds: ['sg-12345678'] };
    expect(stack.vpc).toEqual({
      metricsCollector: false,
      alertEvaluator: false,
      slackNotifier: false,
      preflight: expected,
      driftDetector: expected,
    });
    expect(stack.calibrationFunctions[calibrationFunctionKey('deploy')]?.vpc).toEqual(expected);
    expect(stack.calibrationFunctions[calibrationFunctionKey('analyze')]).not.toHaveProperty('vpc');
    expect(stack.settings.warnings).toEqual([]);
  });

  it('accepts one subnet, as Lambda does, with a warning that it is one Availability Zone', () => {
    // Act
    const stack = buildStack({ ...valid, vpc: { subnetIds: 'subnet-12345678', securityGroupIds: 'sg-12345678' } });

    // Assess
    expect(stack.vpc.preflight).toEqual({ subnetIds: ['subnet-12345678'], securityGroupIds: ['sg-12345678'] });
    expect(stack.settings.warnings).toEqual([expect.stringContaining('one Availability Zone')]);
  });

  it('puts nothing in a VPC when both parameters are empty (the default)', () => {
    // Act
    const stack = buildStack({ ...valid, vpc: { subnetIds: '', securityGroupIds: '' } });

    // Assess
    expect(Object.values(stack.vpc)).toEqual([false, false, false, false, false]);
    expect(Object.values(stack.calibrationFunctions).filter((fn) => 'vpc' in fn)).toEqual([]);
  });
});

/** A deploy-time value of the same shape as what CloudFormation puts in place of a Ref. */
function standIn(value: unknown): string {
  if (typeof value === 'string') return value;
  const ref = (value as { Ref?: string }).Ref;
  if (ref === undefined) throw new Error(`no stand-in for ${JSON.stringify(value)}`);
  const target = resource(ref);
  if (target.Type === 'AWS::SNS::Topic')
    return `arn:aws:sns:us-east-2:123456789012:${target.Properties.TopicName as string}`;
  if (target.Type === 'AWS::DynamoDB::Table') return `vllm-eks-pilot-dev-${ref}-1A2B3C4D5E6F`;
  if (target.Type === 'AWS::S3::Bucket') return `vllm-eks-pilot-dev-${ref.toLowerCase()}-1a2b3c4d5e6f`;
  // Ref of a state machine is its ARN.
  if (target.Type === 'AWS::StepFunctions::StateMachine')
    return `arn:aws:states:us-east-2:123456789012:stateMachine:${ref}-dev`;
  throw new Error(`no stand-in for a Ref to ${target.Type}`);
}
