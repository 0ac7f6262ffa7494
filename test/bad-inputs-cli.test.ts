import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { loadAlertEvaluatorConfig } from '../functions/alert-evaluator/config.js';
import { loadCollectorConfig } from '../functions/metrics-collector/config.js';
import { loadPreflightConfig } from '../functions/preflight/config.js';
import { loadSlackNotifierConfig } from '../functions/slack-notifier/config.js';
import { buildStack } from '../infra/serverless/stack.js';
import { CLI_TEST_TIMEOUT_MS, runCli } from './helpers/cli.js';

// The bad-input corpus of issue 15 ("One line, always"): test/bad-inputs/*.yaml. Every case is refused in exactly
// one line that names the flag, field, variable or parameter the user wrote; never a stack, never a code frame.

jest.setTimeout(CLI_TEST_TIMEOUT_MS);

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const corpus = async <T>(name: string): Promise<T> =>
  parseYaml(await readFile(join(ROOT, 'test', 'bad-inputs', name), 'utf8')) as T;

/** The lines that state a problem (stderr without blank lines). */
const lines = (text: string): string[] => text.split('\n').filter((line) => line.trim() !== '');

/** Neither a stack frame nor a YAML code frame (a line of spaces and a caret). */
const NOT_A_FRAME = /^(?!\s+at )(?!\s*\^\s*$)/;

interface CliCase {
  case: string;
  args: string[];
  field: string;
  exit: number;
}
const cli = await corpus<{ files: Record<string, string>; cases: CliCase[] }>('cli.yaml');

describe('Corpus: test/bad-inputs/cli.yaml', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bad-inputs-'));
    await Promise.all(Object.entries(cli.files).map(([name, text]) => writeFile(join(dir, name), text)));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('holds at least 15 cases', () => {
    expect(cli.cases.length).toBeGreaterThanOrEqual(15);
  });

  it.concurrent.each(cli.cases)('refuses $case in one line naming $field', async ({ args, field, exit }) => {
    // Act
    const result = await runCli(args.map((arg) => arg.replaceAll('{dir}', dir)));

    // Assess
    const stderr = lines(result.stderr);
    expect(stderr).toHaveLength(1);
    expect(stderr[0]).toMatch(/^vllm-pilot: /);
    expect(stderr[0]).toMatch(NOT_A_FRAME);
    expect(stderr[0]).toContain(field.replaceAll('{dir}', dir));
    expect(result.code).toBe(exit);
  });
});

interface StageCase {
  case: string;
  parameters: Record<string, string>;
  field: string;
}
const stage = await corpus<{ cases: StageCase[] }>('stage-parameters.yaml');

/** The stage parameters of serverless.yml's `custom.stack` as osls resolves them for `params.default`. */
const VALID_PARAMETERS = {
  service: 'vllm-eks-pilot',
  stage: 'dev',
  targets:
    '[{"name":"example","cluster":"example-cluster","namespace":"default","deployment":"vllm-inference-app","model":"mistralai/Ministral-3-8B-Instruct-2512"}]',
  ampWorkspaceId: 'ws-00000000-0000-0000-0000-000000000000',
  ampRegion: 'us-east-2',
  slackWebhookSecretArn: 'arn:aws:secretsmanager:us-east-2:123456789012:secret:vllm-eks-pilot/slack-webhook-AbCdEf',
  slackFilterPolicy: '',
  cloudWatchNamespace: 'vLLM/EKSPilot',
  preflightSettings: '',
};

describe('Corpus: test/bad-inputs/stage-parameters.yaml', () => {
  it('holds at least 5 cases, and the valid set builds', () => {
    expect(stage.cases.length).toBeGreaterThanOrEqual(5);
    expect(() => buildStack(VALID_PARAMETERS)).not.toThrow();
  });

  it.each(stage.cases)('refuses $case in one line naming $field', ({ parameters, field }) => {
    // Act
    const error = (() => {
      try {
        buildStack({ ...VALID_PARAMETERS, ...parameters });
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();

    // Assess
    expect(error?.name).toBe('StackSettingsInvalidError');
    expect(error?.message).not.toContain('\n');
    expect(error?.message).toContain(field);
  });

  it('osls package prints a bad parameter once, in one line, and exits non-zero', async () => {
    // Prepare: no credentials, a scratch HOME: packaging never reaches AWS (as test/stack.test.ts runs it).
    const scratch = await mkdtemp(join(tmpdir(), 'bad-stage-'));
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_') && name !== 'NODE_OPTIONS'),
    );

    // Act
    const result = await promisify(execFile)(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'osls', 'bin', 'serverless.js'),
        'package',
        '--package',
        join(scratch, 'package'),
        '--param=cloudWatchNamespace=AWS/vLLM',
      ],
      { cwd: ROOT, env: { ...env, HOME: scratch }, timeout: 60_000 },
    ).then(
      (ok) => ({ code: 0, stdout: ok.stdout, stderr: ok.stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    await rm(scratch, { recursive: true, force: true });

    // Assess
    expect(result.code).not.toBe(0);
    const printed = lines(`${result.stdout}\n${result.stderr}`);
    expect(printed).toEqual([
      expect.stringMatching(/^vllm-eks-pilot: invalid stage parameters: cloudWatchNamespace: /),
    ]);
  }, 90_000);
});

interface EnvCase {
  case: string;
  function: 'metrics-collector' | 'alert-evaluator' | 'preflight' | 'slack-notifier';
  env: Record<string, string | null>;
  field: string;
}
const functionEnv = await corpus<{ cases: EnvCase[] }>('function-env.yaml');

const TARGETS = JSON.stringify([
  { name: 'prod', cluster: 'prod', namespace: 'inference', deployment: 'vllm', model: 'mistralai/Ministral-8B' },
]);
/** A valid environment of each function, and its parser (what the Lambda entry runs once per container). */
const FUNCTIONS = {
  'metrics-collector': {
    load: loadCollectorConfig,
    env: {
      TARGETS,
      AMP_WORKSPACE_URL: 'https://aps-workspaces.us-east-2.amazonaws.com/workspaces/ws-1/',
      AWS_REGION: 'us-east-2',
    },
  },
  'alert-evaluator': {
    load: loadAlertEvaluatorConfig,
    env: {
      TARGETS,
      AMP_WORKSPACE_URL: 'https://aps-workspaces.us-east-2.amazonaws.com/workspaces/ws-1/',
      AWS_REGION: 'us-east-2',
      ALERT_TOPIC_ARN: 'arn:aws:sns:us-east-2:123456789012:vllm-eks-pilot-alerts',
      ALERT_STATE_TABLE: 'vllm-eks-pilot-alert-state',
      STAGE: 'prod',
    },
  },
  preflight: {
    load: loadPreflightConfig,
    env: {
      TARGETS,
      AMP_WORKSPACE_URL: 'https://aps-workspaces.us-east-2.amazonaws.com/workspaces/ws-1/',
      AWS_REGION: 'us-east-2',
      PREFLIGHT_TOPIC_ARN: 'arn:aws:sns:us-east-2:123456789012:vllm-eks-pilot-preflight',
      HISTORY_TABLE: 'vllm-eks-pilot-calibration-history',
      ALERTING_ENGINE: 'lambda',
      ALERT_STATE_TABLE: 'vllm-eks-pilot-alert-state',
    },
  },
  'slack-notifier': {
    load: loadSlackNotifierConfig,
    env: { SLACK_WEBHOOK_SECRET_ID: 'vllm-eks-pilot/slack-webhook', AWS_REGION: 'us-east-2' },
  },
} as const;

describe('Corpus: test/bad-inputs/function-env.yaml', () => {
  it('holds at least 5 cases, and every valid environment loads', () => {
    expect(functionEnv.cases.length).toBeGreaterThanOrEqual(5);
    for (const { load, env } of Object.values(FUNCTIONS)) expect(() => load(env)).not.toThrow();
  });

  it.each(functionEnv.cases)('refuses $case in one line naming $field', ({ function: name, env, field }) => {
    // Prepare: null removes the variable.
    const { load, env: valid } = FUNCTIONS[name];
    const merged: Record<string, string | undefined> = { ...valid };
    for (const [key, value] of Object.entries(env)) merged[key] = value ?? undefined;

    // Act
    const error = (() => {
      try {
        load(merged);
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();

    // Assess
    expect(error?.name).toBe('ConfigInvalidError');
    expect(error?.message).not.toContain('\n');
    expect(error?.message).toContain(`${field}:`);
  });
});
