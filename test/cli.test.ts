import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTwinState, type TwinState } from '../sim/harness/index.js';
import { CLI_TEST_TIMEOUT_MS, runCli, startCli } from './helpers/cli.js';
import { kubectl } from './helpers/kubectl.js';

// The `vllm-pilot` command as a user runs it: `node bin/vllm-pilot.js ...` in a child process.

/** Commander's hint after a usage error; the reason itself must still fit on one line. */
const USAGE_HINT = '(run with --help for usage)';

jest.setTimeout(CLI_TEST_TIMEOUT_MS);

const run = (args: readonly string[]) => runCli(args);
const start = (args: readonly string[]) => startCli(args);

/** The lines on stderr that state the problem (everything but commander's usage hint). */
function reasonLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.trim() !== '' && line.trim() !== USAGE_HINT);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Opens a TCP connection to a URL's port: 'connected', or the error code (ECONNREFUSED once nothing listens). */
function tcpProbe(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** The pid of a process that has exited (a state file naming it is stale). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((done) => child.once('exit', done));
  if (child.pid === undefined) throw new Error('could not start a short-lived process');
  return child.pid;
}

/** A state file as `twin up` writes it (valid against the schema), for the error cases. */
function stateFixture(pid: number): TwinState {
  return {
    version: 2,
    profile: 'demo',
    pid,
    startedAt: '2026-01-01T00:00:00.000Z',
    clusterName: 'ai-eks-docs',
    region: 'us-east-2',
    namespace: 'default',
    deployment: 'vllm-inference-app',
    service: 'vllm-inference-svc',
    model: 'mistralai/Ministral-3-8B-Instruct-2512',
    vllmVersion: '0.11',
    prometheusUrl: 'http://127.0.0.1:9',
    kubeApiUrl: 'https://127.0.0.1:9',
    kubeconfigPath: '/nonexistent/twin.kubeconfig',
    readOnlyKubeconfigPath: '/nonexistent/twin.read-only.kubeconfig',
    serviceUrl: 'http://127.0.0.1:9',
    controlUrl: 'http://127.0.0.1:9',
    replicas: [
      {
        name: 'vllm-inference-app-7d9c8b6f5d-x2k4q',
        node: 'ip-10-0-16-17.us-east-2.compute.internal',
        gpuUuid: 'GPU-1c7f2a9e-5b3d-4e8f-a0c2-7d9e6b4f3a21',
        url: 'http://127.0.0.1:9',
        metricsUrl: 'http://127.0.0.1:9/metrics',
        dcgmMetricsUrl: 'http://127.0.0.1:9/metrics',
        cadvisorMetricsUrl: 'http://127.0.0.1:9/metrics/cadvisor',
      },
    ],
    aws: {
      region: 'us-east-2',
      cloudwatchEndpoint: 'http://127.0.0.1:9',
      eksEndpoint: 'http://127.0.0.1:9',
      snsEndpoint: 'http://127.0.0.1:9',
      dynamodbEndpoint: 'http://127.0.0.1:9',
      calibrationTopicArn: 'arn:aws:sns:us-east-2:000000000000:vllm-eks-pilot-calibration',
      historyTable: 'vllm-eks-pilot-calibration-history',
      alertTopicArn: 'arn:aws:sns:us-east-2:000000000000:vllm-eks-pilot-alerts',
      alertStateTable: 'vllm-eks-pilot-alert-state',
      secretsManagerEndpoint: 'http://127.0.0.1:9',
      slackWebhookSecretId: 'vllm-eks-pilot/slack-webhook',
      preflightTopicArn: 'arn:aws:sns:us-east-2:000000000000:vllm-eks-pilot-preflight',
    },
    preflightSettings: { freshnessSeconds: 10, warmupRequests: 10 },
  };
}

let dir: string;
let unknownKeyProfile: string;
let badValueProfile: string;
let oneReplicaProfile: string;
let staleStateFile: string;
let notJsonStateFile: string;
let stalePid: number;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vllm-pilot-cli-'));
  unknownKeyProfile = join(dir, 'unknown-key.yaml');
  await writeFile(unknownKeyProfile, 'extends: demo\nengine:\n  maxNumSeq: 4\n');
  badValueProfile = join(dir, 'bad-value.yaml');
  await writeFile(badValueProfile, 'extends: demo\nengine:\n  decodeStepMs:\n    base: -1\n');
  oneReplicaProfile = join(dir, 'one-replica.yaml');
  // No AMP lag: `metrics read` right after the load expects its p95 (the lag has its own tests).
  await writeFile(
    oneReplicaProfile,
    'extends: demo\nreplicas: 1\namp:\n  ingestionLagSeconds: 0\n  ingestionJitterSeconds: 0\n',
  );
  stalePid = await deadPid();
  staleStateFile = join(dir, 'stale-state.json');
  await writeFile(staleStateFile, JSON.stringify(stateFixture(stalePid)));
  notJsonStateFile = join(dir, 'not-json.json');
  await writeFile(notJsonStateFile, 'not json');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('Command: vllm-pilot --help', () => {
  it.each([
    { case: 'the root', args: [], lists: ['demo', 'twin', 'metrics', 'alerts', 'preflight', '--help'] },
    { case: 'twin', args: ['twin'], lists: ['up', 'capacity', 'load'] },
    {
      case: 'twin up',
      args: ['twin', 'up'],
      lists: ['--profile', '--state-file', '--no-install', '--alerting-engine'],
    },
    {
      case: 'twin capacity',
      args: ['twin', 'capacity'],
      lists: ['--profile', '--prompt-tokens', '--max-tokens', '--at-rps', '--json'],
    },
    {
      case: 'twin load',
      args: ['twin', 'load'],
      lists: ['--state-file', '--rps', '--duration', '--prompt-tokens', '--max-tokens', '--max-vus', '--json'],
    },
    { case: 'metrics', args: ['metrics'], lists: ['collect', 'read'] },
    { case: 'metrics read', args: ['metrics', 'read'], lists: ['--state-file', '--rate-window', '--json'] },
    {
      case: 'metrics collect',
      args: ['metrics', 'collect'],
      lists: ['--state-file', '--rate-window', '--verbose', '--json'],
    },
    { case: 'demo', args: ['demo'], lists: ['--profile', '--out', '--load-seconds', '--no-install'] },
    { case: 'alerts', args: ['alerts'], lists: ['rules', 'evaluate'] },
    { case: 'alerts evaluate', args: ['alerts', 'evaluate'], lists: ['--state-file', '--alerts', '--json'] },
    { case: 'preflight', args: ['preflight'], lists: ['--state-file', '--target', '--json', 'Exit status'] },
    {
      case: 'twin fault',
      args: ['twin', 'fault'],
      lists: ['kv-cache-pressure', 'framebuffer-pressure', 'slow-decoding', 'preemption-storm', 'queue-flood'],
    },
  ])(
    '$case: exits 0 and lists its commands and options',
    async ({ args, lists }) => {
      // Act
      const result = await run([...args, '--help']);

      // Assess
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(/^Usage: vllm-pilot/);
      for (const item of lists) expect(result.stdout).toContain(item);
    },
    30_000,
  );
});

describe('Command: vllm-pilot (bad input)', () => {
  it.each([
    {
      case: 'an unknown profile lists the built-ins',
      args: () => ['twin', 'capacity', '--profile', 'no-such-profile'],
      code: 1,
      reason: () => /Unknown profile "no-such-profile".*demo, ministral-8b-l40s/,
    },
    {
      case: 'a profile file with an unknown key names the key',
      args: () => ['twin', 'capacity', '--profile', unknownKeyProfile],
      code: 1,
      reason: () => /engine: unknown key "maxNumSeq" \(accepted: maxNumSeqs/,
    },
    {
      case: 'a profile file with a bad value names its path',
      args: () => ['twin', 'capacity', '--profile', badValueProfile],
      code: 1,
      reason: () => /engine\.decodeStepMs\.base: .*\(got -1\)/,
    },
    {
      case: '--rps -1',
      args: () => ['twin', 'load', '--state-file', staleStateFile, '--rps', '-1', '--duration', '3'],
      code: 2,
      reason: () => /--rps.*'-1' is invalid.*expected a number > 0/,
    },
    {
      case: '--alerting-engine prometheus lists the engines',
      args: () => [
        'twin',
        'up',
        '--profile',
        'demo',
        '--state-file',
        join(dir, 'never.json'),
        '--alerting-engine',
        'prometheus',
      ],
      code: 2,
      reason: () => /--alerting-engine.*'prometheus' is invalid.*Allowed choices are lambda, amp/,
    },
    {
      case: '--max-tokens 0',
      args: () => ['twin', 'capacity', '--profile', 'demo', '--max-tokens', '0'],
      code: 2,
      reason: () => /--max-tokens.*'0' is invalid.*expected an integer >= 1/,
    },
    {
      case: 'a missing --state-file file',
      args: () => ['metrics', 'read', '--state-file', join(dir, 'missing.json')],
      code: 1,
      reason: () => /twin state file .*missing\.json: cannot read it \(ENOENT\).*twin up/,
    },
    {
      case: 'a state file whose twin (pid) is dead',
      args: () => ['twin', 'load', '--state-file', staleStateFile, '--rps', '1', '--duration', '1'],
      code: 1,
      reason: () => new RegExp(`the twin that wrote it \\(pid ${stalePid}\\) is no longer running`),
    },
    {
      case: 'a state file that is not JSON',
      args: () => ['metrics', 'collect', '--state-file', notJsonStateFile],
      code: 1,
      reason: () => /twin state file .*not-json\.json: it is not JSON/,
    },
    {
      case: 'alerts silence --for 0s',
      args: () => ['alerts', 'silence', '--state-file', staleStateFile, '--for', '0s', '--reason', 'x'],
      code: 2,
      reason: () => /--for.*expected a duration from 1m to 7d such as "30m" or "2h", got "0s"/,
    },
    {
      case: 'alerts silence --for 8d',
      args: () => [
        'alerts',
        'silence',
        '--table',
        't-silences',
        '--region',
        'us-east-2',
        '--for',
        '8d',
        '--reason',
        'x',
      ],
      code: 2,
      reason: () => /--for.*got "8d"/,
    },
    {
      case: 'alerts silence without --reason',
      args: () => ['alerts', 'silence', '--state-file', staleStateFile, '--for', '2h'],
      code: 2,
      reason: () => /required option '--reason <text>' not specified/,
    },
    {
      case: 'alerts silence with neither --state-file nor --table',
      args: () => ['alerts', 'silence', '--for', '2h', '--reason', 'upgrade'],
      code: 1,
      reason: () => /AlertSilenceCommandError: give either --state-file \(the twin\) or --table with --region/,
    },
    {
      case: 'alerts silences --table without --target',
      args: () => ['alerts', 'silences', '--table', 't-silences', '--region', 'us-east-2'],
      code: 1,
      reason: () => /--target is required with --table: <cluster>\/<namespace>\/<deployment>/,
    },
    {
      case: 'calibrate rollback without --state-file',
      args: () => ['calibrate', 'rollback'],
      code: 1,
      reason: () => /calibrate rollback needs --state-file \(the twin\); on AWS invoke the rollback Lambda/,
    },
    {
      case: 'calibrate rollback --execution with a space',
      args: () => ['calibrate', 'rollback', '--state-file', staleStateFile, '--execution', 'bad name'],
      code: 2,
      reason: () => /--execution.*"bad name" is not an execution name; accepted: 1-80 letters, digits/,
    },
    {
      case: 'calibrate without --input',
      args: () => ['calibrate', '--state-file', staleStateFile],
      code: 2,
      reason: () => /required option '--input <file>' not specified/,
    },
    {
      case: 'an unknown command',
      args: () => ['no-such-command'],
      code: 2,
      reason: () => /unknown command 'no-such-command'/,
    },
  ])(
    '$case: exits non-zero with one line on stderr naming the problem',
    async ({ args, code, reason }) => {
      // Act
      const result = await run(args());

      // Assess
      expect(result.code).toBe(code);
      expect(result.stdout).toBe('');
      const lines = reasonLines(result.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(reason());
    },
    30_000,
  );
});

describe('Command: vllm-pilot twin capacity', () => {
  it("measures one ministral-8b-l40s replica at 50-60 requests/s for the guide's shape", async () => {
    // Act
    const result = await run(['twin', 'capacity', '--profile', 'ministral-8b-l40s', '--json']);

    // Assess
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as { capacityRps: number; shape: unknown; latency: unknown[] };
    expect(json.shape).toEqual({ promptTokens: 35, maxTokens: 100 });
    expect(json.capacityRps).toBeGreaterThanOrEqual(50);
    expect(json.capacityRps).toBeLessThanOrEqual(60);
    expect(json.latency.length).toBeGreaterThan(0);
  }, 60_000);

  it('--at-rps 40 gives a p95 end-to-end latency of 2-3 s, as the guide measured below saturation', async () => {
    // Act
    const result = await run(['twin', 'capacity', '--profile', 'ministral-8b-l40s', '--at-rps', '40', '--json']);

    // Assess
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as { latency: Array<{ rps: number; p95E2eS: number }> };
    expect(json.latency).toHaveLength(1);
    expect(json.latency[0]?.rps).toBe(40);
    expect(json.latency[0]?.p95E2eS).toBeGreaterThanOrEqual(2);
    expect(json.latency[0]?.p95E2eS).toBeLessThanOrEqual(3);
  }, 60_000);
});

describe('Command: vllm-pilot twin capacity with a request mix', () => {
  const prompt = '{distribution: uniform, min: 20, max: 60}';
  const output = '{distribution: histogram, buckets: [{tokens: 16, weight: 1}, {tokens: 48, weight: 1}]}';

  it('measures the mix from flags and from a calibration input file alike, and reports its expected lengths', async () => {
    // Prepare: the same mix as a calibration input's request (with the rest of an input around it).
    const file = join(dir, 'mix-input.yaml');
    await writeFile(
      file,
      `target: {cluster: demo}\nrequest:\n  promptTokens: ${prompt}\n  maxTokens: ${output}\n  seed: 5\n`,
    );

    // Act
    const [fromFlags, fromFile] = await Promise.all([
      run([
        'twin',
        'capacity',
        '--profile',
        'demo',
        '--prompt-tokens',
        prompt,
        '--max-tokens',
        output,
        '--seed',
        '5',
        '--at-rps',
        '10',
        '--json',
      ]),
      run(['twin', 'capacity', '--profile', 'demo', '--request', file, '--at-rps', '10', '--json']),
    ]);

    // Assess
    expect(fromFlags.code).toBe(0);
    const json = JSON.parse(fromFlags.stdout) as { capacityRps: number; shape: unknown; mix: unknown };
    expect(json.shape).toEqual({ promptTokens: 40, maxTokens: 32 });
    expect(json.mix).toMatchObject({ seed: 5, prompt: { distribution: 'uniform', min: 20, max: 60 } });
    expect(json.capacityRps).toBeGreaterThan(20);
    expect(JSON.parse(fromFile.stdout)).toEqual(json);
  }, 60_000);

  it('refuses a distribution whose max is below its min, in one line naming the field', async () => {
    // Act
    const result = await run([
      'twin',
      'capacity',
      '--profile',
      'demo',
      '--prompt-tokens',
      '{distribution: uniform, min: 60, max: 20}',
    ]);

    // Assess
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/request\.promptTokens\.max: 20 is below min \(60\)/);
  }, 60_000);
});

describe('Command: vllm-pilot twin up (with load, metrics read and metrics collect)', () => {
  // One twin for the whole block, from a profile file that extends demo with one replica: the steps a user takes.
  let twinUp: ChildProcess;
  let upStderr = '';
  let exit: Promise<number | null>;
  let stateFile: string;
  let state: TwinState;

  beforeAll(async () => {
    stateFile = join(dir, 'state.json');
    twinUp = start(['twin', 'up', '--profile', oneReplicaProfile, '--state-file', stateFile, '--no-install']);
    twinUp.stderr?.on('data', (chunk: Buffer) => (upStderr += chunk.toString('utf8')));
    twinUp.stdout?.resume();
    exit = new Promise((resolve) => twinUp.once('exit', (code) => resolve(code)));
    let exited = false;
    void exit.then(() => (exited = true));
    // Poll for the state file: it appears once the replica has loaded and Prometheus has scraped every target.
    for (let attempt = 0; attempt < 900 && !exited && !(await exists(stateFile)); attempt++) {
      await new Promise((done) => setTimeout(done, 100));
    }
    if (!(await exists(stateFile))) throw new Error(`twin up wrote no state file; its stderr:\n${upStderr}`);
  }, 120_000);

  afterAll(async () => {
    // Only if a test failed before the SIGTERM test: never leave a twin (and its Prometheus) behind.
    if (twinUp?.exitCode === null && twinUp.signalCode === null) {
      twinUp.kill('SIGTERM');
      await exit;
    }
  }, 60_000);

  it('writes a state file that parses, names its own pid and lists the one replica, whose /health answers 200', async () => {
    // Act
    state = await readTwinState(stateFile);

    // Assess
    expect(state.pid).toBe(twinUp.pid);
    expect(state.profile).toBe('demo');
    expect(state.replicas).toHaveLength(1);
    for (const replica of state.replicas) {
      const health = await fetch(`${replica.url}/health`);
      expect(health.status).toBe(200);
    }
  });

  it('twin load offers 10 req/s for 3 s and every one of the 30 requests completes', async () => {
    // Act
    const result = await run([
      'twin',
      'load',
      '--state-file',
      stateFile,
      '--rps',
      '10',
      '--duration',
      '3',
      '--max-tokens',
      '16',
      '--json',
    ]);

    // Assess
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({ iterations: 30, completed: 30, failed: 0, droppedIterations: 0 });
  }, 60_000);

  it('metrics read reads the catalog from the twin’s Prometheus without failures', async () => {
    // Act
    const result = await run(['metrics', 'read', '--state-file', stateFile, '--json']);

    // Assess
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as {
      target: { name: string };
      readings: Array<{ queryId: string; value: number }>;
      failures: unknown[];
    };
    expect(json.target.name).toBe('twin-demo');
    expect(json.failures).toEqual([]);
    const ids = json.readings.map((r) => r.queryId);
    expect(ids).toEqual(expect.arrayContaining(['e2e_latency_p95', 'queue_depth', 'gpu_utilization']));
    // The load just ran: the p95 end-to-end latency has a value.
    expect(json.readings.find((r) => r.queryId === 'e2e_latency_p95')?.value).toBeGreaterThan(0);
  }, 60_000);

  it('metrics collect runs the collector Lambda once: status ok for the one target, datums published', async () => {
    // Act
    const result = await run(['metrics', 'collect', '--state-file', stateFile, '--json']);

    // Assess
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as { targets: Array<{ target: string; status: string; published: number }> };
    expect(json.targets).toHaveLength(1);
    expect(json.targets[0]).toMatchObject({ target: 'twin-demo', status: 'ok' });
    expect(json.targets[0]?.published).toBeGreaterThan(0);
  }, 60_000);

  it('calibrate stopped with Ctrl-C in a load step: exits 1, says what the cleanup undid, leaves no mark or Job', async () => {
    // Prepare: a hold long enough to be interrupted in.
    const input = join(dir, 'ctrl-c-input.json');
    await writeFile(
      input,
      // `twin load` above left completions in AMP's recent rates: Deploy would take them for users and refuse.
      JSON.stringify({
        deploy: { mode: 'adopt', allowServingTraffic: true },
        warmup: { requests: 5 },
        plan: { rates: [5], holdSeconds: 30, restSeconds: 1 },
      }),
    );
    const calibrate = start(['calibrate', '--state-file', stateFile, '--input', input, '--out', join(dir, 'ctrl-c')]);
    let stderr = '';
    calibrate.stdout?.resume();
    const code = new Promise<number | null>((resolve) => calibrate.once('exit', (c) => resolve(c)));

    // Act: Ctrl-C a few seconds after the readiness gate passed: inside the 30 s hold of the load step (the bar is
    // drawn only on a terminal, so the "ready:" line is the last one before the step).
    await new Promise<void>((resolve) => {
      let sent = false;
      calibrate.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
        if (!sent && /\n {2}ready: /.test(stderr)) {
          sent = true;
          setTimeout(() => {
            calibrate.kill('SIGINT');
            resolve();
          }, 3_000);
        }
      });
      void code.then(() => resolve());
    });
    const exitCode = await code;
    const twin = await readTwinState(stateFile);
    const cache = join(dir, 'kubectl-cache');
    const deployment = await kubectl(['get', 'deployment', twin.deployment, '-n', twin.namespace, '-o', 'json'], {
      kubeconfig: twin.kubeconfigPath,
      cacheDir: cache,
    });
    const jobs = await kubectl(['get', 'jobs', '-n', twin.namespace, '-o', 'name'], {
      kubeconfig: twin.kubeconfigPath,
      cacheDir: cache,
    });

    // Assess
    expect({ exitCode, stderr }).toMatchObject({ exitCode: 1 });
    expect(stderr).toMatch(
      /ExecutionAborted: .*stopped \(Ctrl-C\); cleaned up: .*replicas back to 1, 2 Job\(s\) and 1 ConfigMap/,
    );
    const annotations = (JSON.parse(deployment.stdout) as { metadata: { annotations?: Record<string, string> } })
      .metadata.annotations;
    expect(Object.keys(annotations ?? {}).filter((key) => key.startsWith('vllm-eks-pilot/calibration'))).toEqual([]);
    expect(jobs.stdout.trim()).toBe('');
  }, 120_000);

  it("alerts silence | silences | unsilence: a person's silence on the twin's target, listed, then removed", async () => {
    // Act
    const silenced = await run([
      'alerts',
      'silence',
      '--state-file',
      stateFile,
      '--for',
      '2h',
      '--reason',
      'node pool upgrade',
      '--json',
    ]);
    const silence = JSON.parse(silenced.stdout) as { id: string; target: string; endsAtMs: number; startsAtMs: number };
    const listed = await run(['alerts', 'silences', '--state-file', stateFile]);
    const removed = await run(['alerts', 'unsilence', '--state-file', stateFile, '--id', silence.id]);
    const again = await run(['alerts', 'unsilence', '--state-file', stateFile, '--id', silence.id]);

    // Assess
    expect(silenced.code).toBe(0);
    expect(silence.target).toMatch(/^[^/]+\/default\/vllm-inference-app$/);
    expect(silence.endsAtMs - silence.startsAtMs).toBe(7_200_000);
    expect(listed.stdout).toContain(`${silence.id} (manual, active) ${silence.target} until`);
    expect(listed.stdout).toContain(': node pool upgrade [by ');
    expect(removed).toMatchObject({ code: 0, stdout: `removed silence ${silence.id} of ${silence.target}\n` });
    expect(again.code).toBe(1);
    expect(reasonLines(again.stderr)).toEqual([
      expect.stringContaining(`no silence ${silence.id} on ${silence.target}`),
    ]);
  });

  it('stops on SIGTERM: exits 0, removes the state file, and Prometheus and the replica stop listening', async () => {
    // Act
    twinUp.kill('SIGTERM');
    const code = await exit;

    // Assess
    expect(code).toBe(0);
    expect(await exists(stateFile)).toBe(false);
    expect(await tcpProbe(state.prometheusUrl)).toBe('ECONNREFUSED');
    for (const replica of state.replicas) expect(await tcpProbe(replica.url)).toBe('ECONNREFUSED');
    expect(upStderr).toContain('twin: stopped');
  }, 60_000);
});
