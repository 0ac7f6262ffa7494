import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  calibrateOnTwin,
  type EksTwin,
  startEksTwin,
  type Twin,
  TWIN_CLUSTER,
  TWIN_IDENTITIES,
  TWIN_REGION,
} from '../sim/harness/index.js';
import { cliEnv, runCli, type CliResult } from './helpers/cli.js';
import { pollFor } from './helpers/poll.js';
import { startSilentServer } from './helpers/silentServer.js';
import { FAST_TWIN_CALIBRATION, startDemoTwin } from './helpers/twin.js';

// The CLI against a real account (issue 19), with the twin standing in for AWS: no --state-file, only what a laptop
// has (credentials in the environment, the region, the target's names, the workspace id) and the endpoint overrides
// the functions accept. Each read-only command must print what its --state-file form prints, and the twin's API
// server must record no write from it. The mistakes of a first day each give one line naming the cause and the fix.

jest.setTimeout(600_000);

/** The fields of a check that do not move between two runs a few seconds apart (timings and ages do). */
function checkOutline(report: { results: Array<{ id: string; status: string; reason: string }> }) {
  return report.results.map((r) => ({ id: r.id, status: r.status, reason: r.reason.replace(/\d+(\.\d+)?/g, '#') }));
}

/** The problem lines on stderr (commander's usage hint aside). */
function problemLines(result: CliResult): string[] {
  return result.stderr.split('\n').filter((line) => line.trim() !== '' && !line.includes('(run with --help'));
}

function parseJson<T>(result: CliResult): T {
  if (result.code !== 0 && result.code !== 1) throw new Error(`CLI exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

let twin: Twin;
let dir: string;
let stateFile: string;
let executionName: string;

/** A laptop's environment pointed at the twin: keys in the environment, no config files, no instance metadata. */
function laptopEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = cliEnv({
    AWS_REGION: TWIN_REGION,
    EKS_ENDPOINT: twin.state.aws.eksEndpoint,
    DYNAMODB_ENDPOINT: twin.state.aws.dynamodbEndpoint,
    AMP_CONTROL_PLANE_ENDPOINT: twin.state.aws.ampControlPlaneEndpoint ?? '',
    // The preflight function's keys: a person whose access entry maps to the read-only group.
    AWS_ACCESS_KEY_ID: TWIN_IDENTITIES.preflight.accessKeyId,
    AWS_SECRET_ACCESS_KEY: TWIN_IDENTITIES.preflight.secretAccessKey,
    AWS_CONFIG_FILE: join(dir, 'no-such-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-such-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
    HOME: dir,
    ...extra,
  });
  for (const key of ['AWS_PROFILE', 'AWS_SESSION_TOKEN', 'AWS_DEFAULT_PROFILE', 'AWS_DEFAULT_REGION', 'KUBECONFIG'])
    if (!(key in extra)) delete env[key];
  // A variable given as undefined is one the laptop does not have.
  for (const [key, value] of Object.entries(env)) if (value === undefined) delete env[key];
  return env;
}

/** The twin's AMP workspace id (DescribeWorkspace answers for it). */
function workspaceId(): string {
  return twin.state.aws.ampWorkspaceId ?? '';
}

/** The deployment as flags (what the calibration history is keyed by). */
function deploymentFlags(): string[] {
  return ['--cluster', TWIN_CLUSTER, '--namespace', twin.state.namespace, '--deployment', twin.state.deployment];
}

/** The target as flags, as a user would type them for their own deployment. */
function targetFlags(): string[] {
  return [
    '--name',
    `twin-${twin.state.profile}`,
    ...deploymentFlags(),
    '--model',
    twin.state.model,
    '--amp-workspace',
    workspaceId(),
  ];
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vllm-pilot-cli-account-'));
  stateFile = join(dir, 'twin.json');
  twin = await startDemoTwin({}, stateFile);
  // One calibration in the history, for `calibrate list|show` and the calibrated alert thresholds.
  const { report } = await calibrateOnTwin(twin.state, {
    input: FAST_TWIN_CALIBRATION,
    executionName: 'calib-cli-account',
    reportsDir: join(dir, 'reports'),
    waitScale: 0.25,
    retryIntervalMs: 10,
  });
  executionName = report.provenance.executionName;
  await writeFile(join(dir, 'settings.json'), JSON.stringify(twin.state.preflightSettings));
  await writeFile(join(dir, 'alerts.yaml'), 'rules:\n  VLLMKVCacheFull: { for: 0s }\n  VLLMKVCacheHigh: { for: 0s }\n');
}, 300_000);

afterAll(async () => {
  await twin?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('CLI against an account: the same results as --state-file, and no write', () => {
  const readers = new Set([
    `arn:aws:sts::000000000000:assumed-role/vllm-eks-pilot-twin-preflight/${TWIN_IDENTITIES.preflight.accessKeyId}`,
    'twin-read-only',
  ]);
  let auditFrom = 0;
  let auditTo = 0;
  const runs: Record<string, { twin: CliResult; account: CliResult }> = {};

  beforeAll(async () => {
    for (const replica of twin.state.replicas)
      twin.faults.inject({ kind: 'kv-cache-pressure', pod: replica.name, fraction: 0.97 });
    // The twin's form first (its preflight runs as the same function identity: outside the audited window), once the
    // fault shows in the metrics, so that both forms see the same world.
    const alerts = await pollFor('the KV-cache alerts firing on the twin', async () => {
      const run = await runCli([
        'alerts',
        'evaluate',
        '--state-file',
        stateFile,
        '--dry-run',
        '--alerts',
        join(dir, 'alerts.yaml'),
        '--json',
      ]);
      return run.stdout.includes('VLLMKVCacheFull') ? run : undefined;
    });
    const twinRuns = {
      alerts,
      preflight: await runCli(['preflight', '--state-file', stateFile, '--json']),
      metrics: await runCli(['metrics', 'read', '--state-file', stateFile, '--json']),
      list: await runCli(['calibrate', 'list', '--state-file', stateFile, '--json']),
    };
    auditFrom = twin.kubeApi.audit().length;
    const history = ['--history-table', twin.state.aws.historyTable];
    // The stack's settings and tables, as the twin's preflight function has them.
    const preflightArgs = [
      'preflight',
      ...targetFlags(),
      '--service',
      twin.state.service,
      '--settings',
      join(dir, 'settings.json'),
      ...history,
      '--alert-state-table',
      twin.state.aws.alertStateTable,
      '--json',
    ];
    const account = {
      preflight: await runCli(preflightArgs, laptopEnv()),
      kubeconfig: await runCli([...preflightArgs, '--kubeconfig', twin.state.readOnlyKubeconfigPath], laptopEnv()),
      metrics: await runCli(['metrics', 'read', ...targetFlags(), '--json'], laptopEnv()),
      alerts: await runCli(
        [
          'alerts',
          'evaluate',
          '--dry-run',
          ...targetFlags(),
          ...history,
          '--alerts',
          join(dir, 'alerts.yaml'),
          '--json',
        ],
        laptopEnv(),
      ),
      list: await runCli(['calibrate', 'list', ...deploymentFlags(), ...history, '--json'], laptopEnv()),
    };
    auditTo = twin.kubeApi.audit().length;
    twin.faults.clear();
    for (const key of ['preflight', 'metrics', 'alerts', 'list'] as const)
      runs[key] = { twin: twinRuns[key], account: account[key] };
    runs.kubeconfig = { twin: twinRuns.preflight, account: account.kubeconfig };
  }, 300_000);

  it.each(['preflight', 'kubeconfig'])('%s: the eleven checks give the same statuses and reasons', (key) => {
    // Arrange
    const { twin: onTwin, account } = runs[key] as { twin: CliResult; account: CliResult };
    type Report = { status: string; results: Array<{ id: string; status: string; reason: string }> };

    // Act
    const expected = parseJson<Report>(onTwin);
    const actual = parseJson<Report>(account);

    // Assess
    expect(account.stderr).toBe('');
    expect(actual.results).toHaveLength(11);
    expect(checkOutline(actual)).toEqual(checkOutline(expected));
    expect(account.code).toBe(onTwin.code);
    const count = (status: string) => actual.results.filter((r) => r.status === status).length;
    console.log(`${key}: pass ${count('pass')}, warn ${count('warn')}, fail ${count('fail')} in both forms`);
  });

  it('metrics read: the same readings (metric, where, unit), nothing failed', () => {
    // Arrange
    const { twin: onTwin, account } = runs.metrics as { twin: CliResult; account: CliResult };
    type Result = { readings: Array<{ metricName: string; dimensions: object; unit: string }>; failures: unknown[] };
    const outline = (r: Result) =>
      r.readings.map((x) => `${x.metricName} ${JSON.stringify(x.dimensions)} ${x.unit}`).sort();

    // Act
    const expected = parseJson<Result>(onTwin);
    const actual = parseJson<Result>(account);

    // Assess
    expect(account.code).toBe(0);
    expect(actual.failures).toEqual([]);
    expect(outline(actual).length).toBeGreaterThan(5);
    expect(outline(actual)).toEqual(outline(expected));
  });

  it('alerts evaluate --dry-run: the same alerts would fire, the warning inhibited by the critical on each Pod', () => {
    // Arrange
    const { twin: onTwin, account } = runs.alerts as { twin: CliResult; account: CliResult };
    type Result = { firing: Array<{ alertname: string; labels: { pod?: string }; inhibitedBy: string | null }> };
    const outline = (r: Result) =>
      r.firing.map((a) => `${a.alertname} ${a.labels.pod ?? ''} ${a.inhibitedBy ?? '-'}`).sort();

    // Act
    const expected = parseJson<Result>(onTwin);
    const actual = parseJson<Result>(account);

    // Assess
    expect(account.code).toBe(0);
    expect(outline(actual)).toEqual(outline(expected));
    const pods = twin.state.replicas.map((r) => r.name);
    for (const pod of pods) {
      expect(outline(actual)).toContain(`VLLMKVCacheFull ${pod} -`);
      expect(outline(actual)).toContain(`VLLMKVCacheHigh ${pod} VLLMKVCacheFull`);
    }
  });

  it('calibrate list: the same history, holding the calibration run before', () => {
    // Arrange
    const { twin: onTwin, account } = runs.list as { twin: CliResult; account: CliResult };

    // Act
    const expected = parseJson<Array<{ execution: string }>>(onTwin);
    const actual = parseJson<Array<{ execution: string; capacityRps: number | null }>>(account);

    // Assess
    expect(actual).toEqual(expected);
    expect(actual.map((r) => r.execution)).toContain(executionName);
    expect(actual.find((r) => r.execution === executionName)?.capacityRps).toBeGreaterThan(0);
  });

  it("the twin's API server recorded reads from the laptop's identities and no write", () => {
    // Act
    const events = twin.kubeApi
      .audit()
      .slice(auditFrom, auditTo)
      .filter((e) => e.user !== null && readers.has(e.user));

    // Assess
    expect(events.length).toBeGreaterThan(10);
    expect(new Set(events.map((e) => e.user))).toEqual(readers);
    expect(events.filter((e) => e.method !== 'GET')).toEqual([]);
    console.log(`audit: ${events.length} requests from ${[...readers].join(' and ')}, all GET`);
  });
});

describe('CLI against an account: calibrate show', () => {
  it('shows the summary and where the report is, and draws the chart', async () => {
    // Arrange
    const chart = join(dir, 'chart.svg');

    // Act
    const result = await runCli(
      [
        'calibrate',
        'show',
        executionName,
        ...deploymentFlags(),
        '--history-table',
        twin.state.aws.historyTable,
        '--report-bucket',
        'vllm-eks-pilot-reports',
        '--chart',
        chart,
      ],
      laptopEnv(),
    );

    // Assess
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(executionName);
    expect(result.stdout).toMatch(/queue/i);
    expect(result.stdout).toContain(
      `Report: s3://vllm-eks-pilot-reports/calibrations/${TWIN_CLUSTER}/${twin.state.namespace}/${twin.state.deployment}/${executionName}/report.json`,
    );
    expect(await readFile(chart, 'utf8')).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
  });
});

describe('CLI against an account: the mistakes of a first day, one line each', () => {
  let silent: Awaited<ReturnType<typeof startSilentServer>>;
  let privateEks: EksTwin;
  const ssoStartUrl = 'https://example.awsapps.com/start';

  beforeAll(async () => {
    silent = await startSilentServer();
    privateEks = await startEksTwin({
      clusters: [{ name: 'private-cluster', endpoint: `https://127.0.0.1:${silent.port}`, region: TWIN_REGION }],
    });
    // An SSO profile whose cached session expired yesterday, as `aws sso login` leaves it.
    await writeFile(
      join(dir, 'sso-config'),
      `[profile expired]\nsso_start_url = ${ssoStartUrl}\nsso_region = us-east-1\nsso_account_id = 123456789012\n` +
        'sso_role_name = ReadOnly\nregion = us-east-2\n',
    );
    const cache = join(dir, '.aws', 'sso', 'cache');
    await mkdir(cache, { recursive: true });
    await writeFile(
      join(cache, `${createHash('sha1').update(ssoStartUrl).digest('hex')}.json`),
      JSON.stringify({
        startUrl: ssoStartUrl,
        region: 'us-east-1',
        accessToken: 'expired-token',
        expiresAt: new Date(Date.now() - 86_400_000).toISOString(),
      }),
    );
  });

  afterAll(async () => {
    await privateEks?.stop();
    await silent?.stop();
  });

  const noKeys = { AWS_ACCESS_KEY_ID: undefined, AWS_SECRET_ACCESS_KEY: undefined };
  const cases: Array<{
    case: string;
    args: () => string[];
    env: () => NodeJS.ProcessEnv;
    code: number;
    line: () => RegExp;
  }> = [
    {
      case: 'no credentials at all',
      args: () => ['metrics', 'read', ...targetFlags()],
      env: () => laptopEnv(noKeys),
      code: 1,
      line: () => /^vllm-pilot: AwsCredentialsMissingError: no AWS credentials found .*aws sso login --profile/,
    },
    {
      case: 'an expired SSO session',
      args: () => ['preflight', ...targetFlags()],
      env: () => laptopEnv({ ...noKeys, AWS_PROFILE: 'expired', AWS_CONFIG_FILE: join(dir, 'sso-config') }),
      code: 1,
      line: () =>
        /^vllm-pilot: AwsSsoSessionExpiredError: the SSO session of profile expired has expired .*run `aws sso login --profile expired`/,
    },
    {
      case: 'a private cluster endpoint that never answers',
      args: () => ['preflight', ...targetFlags().map((a) => (a === TWIN_CLUSTER ? 'private-cluster' : a))],
      env: () => laptopEnv({ EKS_ENDPOINT: privateEks.endpoint }),
      code: 1,
      line: () =>
        new RegExp(
          `^vllm-pilot: ClusterUnreachableError: cluster private-cluster \\(us-east-2\\) cannot be reached: 127\\.0\\.0\\.1:${silent.port} did not answer within .*--kubeconfig/--context`,
        ),
    },
    {
      case: 'an identity with no access entry in the cluster',
      args: () => ['preflight', ...targetFlags()],
      env: () => laptopEnv({ AWS_ACCESS_KEY_ID: 'AKIANOACCESSENTRY000', AWS_SECRET_ACCESS_KEY: 'not-a-secret' }),
      code: 1,
      line: () =>
        /^vllm-pilot: ClusterAccessDeniedError: cluster ai-eks-docs \(us-east-2\) refused your IAM identity \(401 Unauthorized\): .*aws eks create-access-entry --cluster-name ai-eks-docs/,
    },
    {
      case: 'a workspace in another region',
      args: () => ['metrics', 'read', ...targetFlags(), '--amp-region', 'eu-west-1'],
      env: () => laptopEnv(),
      code: 1,
      line: () =>
        new RegExp(
          `^vllm-pilot: AmpWorkspaceNotFoundError: AMP workspace ${workspaceId()} was not found in eu-west-1 .*give --amp-region with its region`,
        ),
    },
    {
      case: 'a model name that matches no series',
      args: () => [
        'alerts',
        'evaluate',
        '--dry-run',
        ...targetFlags().map((a) => (a === twin.state.model ? 'mistralai/Wrong-Model' : a)),
      ],
      env: () => laptopEnv(),
      code: 1,
      line: () =>
        new RegExp(
          `^vllm-pilot: ModelSeriesNotFoundError: no vLLM series for model "mistralai/Wrong-Model" in namespace ${twin.state.namespace}; AMP has "${twin.state.model.replace(/[.]/g, '\\.')}" there`,
        ),
    },
    {
      case: 'alerts evaluate against an account without --dry-run',
      args: () => ['alerts', 'evaluate', ...targetFlags()],
      env: () => laptopEnv(),
      code: 1,
      line: () =>
        /^vllm-pilot: CliOptionRequiredError: --dry-run is required: against an account this command only shows/,
    },
    {
      case: 'both --state-file and target flags',
      args: () => ['metrics', 'read', '--state-file', stateFile, ...targetFlags()],
      env: () => laptopEnv(),
      code: 1,
      line: () =>
        /^vllm-pilot: CliOptionInvalidError: --state-file ".*": expected either the twin's state file or a target in your account \(--name, --cluster/,
    },
    {
      case: 'a namespace that is no Kubernetes name',
      args: () => ['metrics', 'read', ...targetFlags().map((a) => (a === twin.state.namespace ? 'Prod_NS' : a))],
      env: () => laptopEnv(),
      code: 1,
      line: () =>
        /^vllm-pilot: ConfigInvalidError: invalid target: --namespace: "Prod_NS" is not valid; accepted: a DNS-1123 label/,
    },
    {
      case: 'no region anywhere',
      args: () => ['metrics', 'read', ...targetFlags()],
      env: () => laptopEnv({ AWS_REGION: undefined, AWS_DEFAULT_REGION: undefined }),
      code: 1,
      line: () =>
        /^vllm-pilot: CliOptionRequiredError: --region is required: an AWS region such as us-east-2 \(or set AWS_REGION\)/,
    },
    {
      case: 'a history table the account does not have',
      args: () => ['calibrate', 'list', ...deploymentFlags(), '--history-table', 'no-such-table'],
      env: () => laptopEnv(),
      code: 1,
      line: () =>
        /^vllm-pilot: HistoryTableNotFoundError: --history-table no-such-table: no such DynamoDB table in us-east-2/,
    },
  ];

  it.each(cases)('$case', async ({ args, env, code, line }) => {
    // Act
    const result = await runCli(args(), env());

    // Assess
    expect(problemLines(result)).toEqual([expect.stringMatching(line())]);
    expect(result.code).toBe(code);
    expect(result.stdout).toBe('');
  });
});

describe('CLI: --help of every command shows an example against a real account', () => {
  /** The twin's own commands and the demo run only on this machine: an account has nothing for them to do. */
  const LOCAL_ONLY = new Set(['twin', 'demo', 'help']);
  /** A line that runs against an account: credentials, a deployed function, AWS's CLI, or a cluster through kubectl. */
  const ACCOUNT_EXAMPLE =
    /AWS_PROFILE=|aws lambda invoke|aws amp |--table \S+ --region|kubectl (--context \S+ )?(apply|get)|--aws/;

  /** `vllm-pilot <path> --help`: its text, and the subcommands it lists (its "Commands:" block, up to a blank line). */
  async function helpOf(path: readonly string[]): Promise<{ text: string; code: number | null; children: string[] }> {
    const help = await runCli([...path, '--help']);
    const block = (help.stdout.split(/\nCommands:\n/)[1] ?? '').split(/\n\s*\n/)[0] ?? '';
    const children = [...block.matchAll(/^ {2}([a-z][a-z-]*)/gm)]
      .map((m) => m[1] as string)
      .filter((name) => name !== 'help');
    return { text: help.stdout, code: help.code, children };
  }

  it('lists each command, and each shows such an example', async () => {
    // Arrange: every command, found by walking the help from the root
    const root = await helpOf([]);
    const queue: string[][] = root.children.filter((c) => !LOCAL_ONLY.has(c)).map((c) => [c]);
    const commands: string[][] = [];
    const missing: string[] = [];

    // Act
    while (queue.length > 0) {
      const path = queue.shift() as string[];
      const help = await helpOf(path);
      queue.push(...help.children.map((child) => [...path, child]));
      // A group without an action of its own (metrics, alerts) is only a name for its subcommands; calibrate runs.
      if (help.children.length > 0 && path.join(' ') !== 'calibrate') continue;
      commands.push(path);
      if (help.code !== 0 || !ACCOUNT_EXAMPLE.test(help.text)) missing.push(path.join(' '));
    }

    // Assess
    expect(commands.map((p) => p.join(' '))).toEqual(
      expect.arrayContaining(['preflight', 'metrics read', 'alerts evaluate', 'calibrate list', 'calibrate show']),
    );
    expect(missing).toEqual([]);
  }, 300_000);
});
