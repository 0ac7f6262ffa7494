import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  aggregate,
  DCGM,
  eq,
  histogramQuantile,
  HttpMetricsSource,
  rate,
  selector,
  VLLM,
  VLLM_RENAMED,
} from '../../shared/metrics/index.js';
import type { KubeObject } from '../../shared/kube/index.js';
import { isPodReady } from '../kube/controllers/podStatus.js';
import type { ActiveFault } from './faults.js';
import { TWIN_CREDENTIALS, TWIN_REGION, TWIN_RESOURCES } from './constants.js';
import type { Twin } from './twin.js';
import { httpRequest, postJson } from '../../test/helpers/http.js';
import { runCli } from '../../test/helpers/cli.js';
import { pollFor } from '../../test/helpers/poll.js';
import { DEMO_SHAPE, sleep, startDemoTwin, warmUp } from '../../test/helpers/twin.js';

// Faults injected into the twin's vLLM Pods, observed as a user (and the alert evaluator) sees them: through the
// twin's real Prometheus, with the product's own AMP client. One demo twin (two replicas, vLLM 0.11 naming, 1 s
// scrapes) for the whole file; every test clears what it injected. Timeouts guard against hanging; the bounds on
// values are generous.

jest.setTimeout(180_000);

let twin: Twin;
let scratch: string;
let stateFile: string;
let source: HttpMetricsSource;
/** The replicas by name order: `first` is where a fault lands when no Pod is named. */
let first: { pod: string; gpuUuid: string; url: string };
let second: { pod: string; gpuUuid: string; url: string };

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'twin-faults-'));
  stateFile = join(scratch, 'twin-state.json');
  twin = await startDemoTwin({}, stateFile);
  source = new HttpMetricsSource({
    endpoint: twin.state.prometheusUrl,
    region: TWIN_REGION,
    credentials: () => Promise.resolve(TWIN_CREDENTIALS),
  });
  const replicas = [...twin.state.replicas].sort((a, b) => a.name.localeCompare(b.name));
  const [a, b] = replicas.map((r) => ({ pod: r.name, gpuUuid: r.gpuUuid, url: r.url }));
  if (a === undefined || b === undefined) throw new Error('the demo twin should run two replicas');
  [first, second] = [a, b];
  await warmUp(twin);
}, 120_000);

afterEach(() => {
  // A failed test must not leave its fault to the next one.
  twin?.faults.clear();
});

afterAll(async () => {
  await twin?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** The value of a query that returns one sample (undefined while it returns none). */
async function valueOf(query: string): Promise<number | undefined> {
  const samples = await source.instant(query);
  return samples[0]?.value;
}

/** Polls `query` until `accept(value)`; resolves with the value. */
function waitFor(what: string, query: string, accept: (value: number) => boolean, timeoutMs = 60_000) {
  return pollFor(
    what,
    async () => {
      const value = await valueOf(query);
      return value !== undefined && accept(value) ? value : undefined;
    },
    { timeoutMs, intervalMs: 500 },
  );
}

/** A Pod's series of a vLLM metric. */
const podSeries = (metric: string, pod: string) => selector(metric, [eq('pod', pod)]);

/** FB_USED / (FB_USED + FB_FREE) of one GPU, as the guide's VLLMGPUMemoryCritical computes it. */
function framebufferQuery(uuid: string): string {
  const used = aggregate('sum', ['UUID'], selector(DCGM.fbUsed, [eq('UUID', uuid)]));
  const free = aggregate('sum', ['UUID'], selector(DCGM.fbFree, [eq('UUID', uuid)]));
  return `${used} / (${used} + ${free})`;
}

/** p95 end-to-end latency of one Pod over `window`. */
function p95Query(pod: string, window: string): string {
  return histogramQuantile(
    0.95,
    aggregate('sum', ['le'], rate(podSeries(`${VLLM.e2eRequestLatency}_bucket`, pod), window)),
  );
}

/** The Pod as the API server shows it (the product's own client). */
async function podNow(name: string): Promise<KubeObject> {
  const pod = await twin.cluster.get({ apiVersion: 'v1', kind: 'Pod', namespace: twin.profile.namespace, name });
  if (pod === undefined) throw new Error(`pod ${name} is gone`);
  return pod;
}

interface ContainerStatusJson {
  restartCount: number;
  state: { running?: { startedAt: string } };
  lastState: { terminated?: { exitCode: number; reason: string } };
}

function containerStatuses(pod: KubeObject): ContainerStatusJson[] {
  return (pod.status as { containerStatuses?: ContainerStatusJson[] } | undefined)?.containerStatuses ?? [];
}

/** The sample times (epoch ms, sorted) of a Pod's series of `metric` from `startMs` to now, as AMP holds them. */
async function sampleTimes(metric: string, pod: string, startMs: number): Promise<number[]> {
  const series = await source.range(`timestamp(${podSeries(metric, pod)})`, {
    startMs,
    endMs: Date.now(),
    stepSeconds: 1,
  });
  const times = series.flatMap((one) => one.points.map((point) => Math.round(point.value * 1000)));
  return [...new Set(times)].sort((a, b) => a - b);
}

/** The longest time between two samples in a row (ms) and where it starts. */
function longestGap(times: readonly number[]): { gapMs: number; fromMs: number } {
  let worst = { gapMs: 0, fromMs: 0 };
  for (let i = 1; i < times.length; i++) {
    const gapMs = (times[i] as number) - (times[i - 1] as number);
    if (gapMs > worst.gapMs) worst = { gapMs, fromMs: times[i - 1] as number };
  }
  return worst;
}

/** A light load on one replica: one short completion every `intervalMs`, until stopped. */
function lightLoad(url: string, intervalMs: number): { stop(): Promise<void> } {
  let stopped = false;
  const inFlight = new Set<Promise<unknown>>();
  const loop = (async () => {
    while (!stopped) {
      const request = postJson(`${url}/v1/completions`, {
        model: twin.state.model,
        prompt: 'Summarise the incident in one line.',
        max_tokens: DEMO_SHAPE.maxTokens,
      }).catch(() => undefined);
      inFlight.add(request);
      void request.finally(() => inFlight.delete(request));
      await sleep(intervalMs);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      await Promise.all([...inFlight]);
    },
  };
}

describe('Function: startTwin (alerting resources)', () => {
  it('creates the alerts topic and the alert state table, and names them and the control endpoint in the state', async () => {
    // Prepare
    const dynamodb = new DynamoDBClient({
      region: TWIN_REGION,
      endpoint: twin.state.aws.dynamodbEndpoint,
      credentials: TWIN_CREDENTIALS,
    });

    // Act
    const table = await dynamodb.send(new DescribeTableCommand({ TableName: twin.state.aws.alertStateTable }));
    dynamodb.destroy();
    const faults = await httpRequest(`${twin.state.controlUrl}/faults`);

    // Assess
    expect(twin.state.aws.alertTopicArn).toBe(`arn:aws:sns:${TWIN_REGION}:000000000000:${TWIN_RESOURCES.alertTopic}`);
    expect(twin.sns.topics()).toContain(twin.state.aws.alertTopicArn);
    expect(twin.state.aws.alertStateTable).toBe(TWIN_RESOURCES.alertStateTable);
    expect(table.Table?.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    expect(faults.status).toBe(200);
    expect(JSON.parse(faults.text)).toMatchObject({ faults: [] });
  });
});

describe('Class: FaultController (through the twin’s Prometheus)', () => {
  it('kv-cache-pressure: the Pod’s KV-cache usage reads >= 0.95 under both metric names, < 0.5 again after clear', async () => {
    // Prepare
    const names = [VLLM_RENAMED.kvCacheUsage.current, VLLM_RENAMED.kvCacheUsage.legacy];

    // Act
    const fault = twin.faults.inject({ kind: 'kv-cache-pressure', pod: second.pod });
    const during = await Promise.all(
      names.map((name) => waitFor(`${name} >= 0.95`, podSeries(name, second.pod), (v) => v >= 0.95)),
    );
    const otherPod = await valueOf(podSeries(names[0] ?? '', first.pod));
    twin.faults.clear(second.pod);
    const after = await Promise.all(
      names.map((name) => waitFor(`${name} < 0.5`, podSeries(name, second.pod), (v) => v < 0.5)),
    );

    // Assess
    expect(fault).toMatchObject({ kind: 'kv-cache-pressure', pod: second.pod, params: { fraction: 0.97 } });
    for (const value of during) expect(value).toBeGreaterThanOrEqual(0.95);
    expect(otherPod).toBeLessThan(0.5);
    for (const value of after) expect(value).toBeLessThan(0.5);
  });

  it('framebuffer-pressure: FB used / (used + free) >= 0.95 on that Pod’s GPU only, back below after clear', async () => {
    // Act
    twin.faults.inject({ kind: 'framebuffer-pressure' });
    const during = await waitFor('FB ratio >= 0.95', framebufferQuery(first.gpuUuid), (v) => v >= 0.95);
    const otherGpu = await valueOf(framebufferQuery(second.gpuUuid));
    twin.faults.clear();
    const after = await waitFor('FB ratio < 0.95', framebufferQuery(first.gpuUuid), (v) => v < 0.95);

    // Assess
    expect(during).toBeGreaterThanOrEqual(0.95);
    expect(otherGpu).toBeLessThan(0.95);
    expect(after).toBeLessThan(0.95);
  });

  it('slow-decoding: the p95 end-to-end latency under a light load rises at least 3x, and falls back after clear', async () => {
    // Prepare: 4 requests/s on the Pod, long enough for a 15 s window of healthy latency.
    const load = lightLoad(first.url, 250);
    try {
      await sleep(16_000);
      const healthy = await waitFor('healthy p95', p95Query(first.pod, '15s'), (v) => v > 0);

      // Act
      twin.faults.inject({ kind: 'slow-decoding', pod: first.pod, factor: 6 });
      await sleep(16_000);
      const slowed = await waitFor('slowed p95', p95Query(first.pod, '10s'), (v) => v >= 3 * healthy);
      twin.faults.clear();
      const recovered = await waitFor('recovered p95', p95Query(first.pod, '5s'), (v) => v < 1.5 * healthy);

      // Assess
      expect(slowed / healthy).toBeGreaterThanOrEqual(3);
      expect(recovered).toBeLessThan(1.5 * healthy);
    } finally {
      await load.stop();
    }
  });

  it('preemption-storm: the Pod preempts more than 5 sequences/s over 20 s, and none once cleared', async () => {
    // Prepare
    const preemptions = podSeries(VLLM.numPreemptions, second.pod);

    // Act
    const fault = twin.faults.inject({ kind: 'preemption-storm', pod: second.pod });
    await sleep(22_000);
    const during = await valueOf(rate(preemptions, '20s'));
    const otherPod = await valueOf(rate(podSeries(VLLM.numPreemptions, first.pod), '20s'));
    twin.faults.clear();
    const after = await waitFor('no more preemptions', rate(preemptions, '5s'), (v) => v === 0, 30_000);
    const running = await waitFor(
      'storm load gone',
      podSeries(VLLM.numRequestsRunning, second.pod),
      (v) => v === 0,
      30_000,
    );

    // Assess
    expect(fault.params).toEqual({ rate: 12 });
    expect(during).toBeGreaterThan(5);
    expect(otherPod ?? 0).toBe(0);
    expect(after).toBe(0);
    expect(running).toBe(0);
  });

  it('queue-flood: the Pod’s waiting requests reach >= 50, and 0 within 30 s of clear', async () => {
    // Prepare
    const waiting = podSeries(VLLM.numRequestsWaiting, first.pod);

    // Act
    twin.faults.inject({ kind: 'queue-flood', pod: first.pod, waiting: 80 });
    const during = await waitFor('queue >= 50', waiting, (v) => v >= 50);
    // Read until the batch is full: one scrape can land while the flood's requests are still being admitted.
    const running = await waitFor(
      'batch full',
      podSeries(VLLM.numRequestsRunning, first.pod),
      (v) => v === twin.profile.engine.maxNumSeqs,
      30_000,
    );
    twin.faults.clear();
    const after = await waitFor('queue drained', waiting, (v) => v === 0, 30_000);

    // Assess
    expect(during).toBeGreaterThanOrEqual(50);
    expect(running).toBe(twin.profile.engine.maxNumSeqs);
    expect(after).toBe(0);
  });

  it('scrape-gap: the Pod’s up reads 0 and its series has no samples for the gap, then resumes; requests still succeed', async () => {
    // Prepare
    const up = (pod: string) => selector('up', [eq('pod', pod)]);
    await waitFor('up 1 before the gap', up(second.pod), (v) => v === 1);
    const startMs = Date.now();

    // Act: 6 s of 503s from /metrics (6 scrapes at the demo's 1 s), requests sent to the Pod meanwhile.
    const fault = twin.faults.inject({ kind: 'scrape-gap', pod: second.pod, seconds: 6 });
    const injectedMs = Date.now();
    const down = await waitFor('up 0', up(second.pod), (v) => v === 0, 10_000);
    const otherUp = await valueOf(up(first.pod));
    const answers = await Promise.all(
      Array.from({ length: 3 }, () =>
        postJson(`${second.url}/v1/completions`, {
          model: twin.state.model,
          prompt: 'Summarise the incident in one line.',
          max_tokens: DEMO_SHAPE.maxTokens,
        }),
      ),
    );
    const listed = twin.faults.active().map((f) => [f.kind, f.pod]);
    const back = await waitFor('up 1 after the gap', up(second.pod), (v) => v === 1, 20_000);
    await sleep(3_000);
    const times = await sampleTimes(VLLM.numRequestsRunning, second.pod, startMs - 5_000);
    const gap = longestGap(times);

    // Assess
    expect(fault).toMatchObject({ kind: 'scrape-gap', pod: second.pod, params: { seconds: 6 } });
    expect(down).toBe(0);
    expect(otherUp).toBe(1);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(listed).toEqual([['scrape-gap', second.pod]]);
    expect(back).toBe(1);
    expect(twin.faults.active()).toEqual([]);
    // The gap: about 6 s without a sample (1 s scrapes otherwise), starting within a scrape of the injection.
    expect(gap.gapMs).toBeGreaterThanOrEqual(5_000);
    expect(gap.gapMs).toBeLessThanOrEqual(9_000);
    expect(Math.abs(gap.fromMs - injectedMs)).toBeLessThanOrEqual(2_000);
    // Samples resume: at least two after the gap.
    expect(times.filter((t) => t > gap.fromMs + gap.gapMs - 1).length).toBeGreaterThanOrEqual(2);
  });

  // Last of the kinds: the Pod's replica listens on a new port afterwards (`first.url` is updated).
  it('pod-crash: the container restarts in the same Pod: restartCount 1, not Ready, then Ready again; in-flight requests fail', async () => {
    // Prepare
    const before = await podNow(first.pod);
    const [statusBefore] = containerStatuses(before);
    // A request that would take ~30 s (2000 tokens), in flight when the container crashes.
    const inFlight = postJson(`${first.url}/v1/completions`, {
      model: twin.state.model,
      prompt: 'Write a long incident report.',
      max_tokens: 2000,
    }).then(
      (answer) => `answered ${answer.status}`,
      (error: Error) => `failed: ${error.message}`,
    );
    await sleep(500);

    // Act
    const fault = twin.faults.inject({ kind: 'pod-crash', pod: first.pod });
    const notReady = await pollFor(
      'the Pod not Ready',
      async () => {
        const pod = await podNow(first.pod);
        return isPodReady(pod) ? undefined : pod;
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    const interrupted = await inFlight;
    const readyAgain = await pollFor(
      'the Pod Ready again',
      async () => {
        const pod = await podNow(first.pod);
        return isPodReady(pod) ? pod : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    const replica = twin.replicas().find((r) => r.pod === first.pod);
    if (replica === undefined) throw new Error(`no replica for ${first.pod}`);
    first = { ...first, url: replica.url };
    const answer = await postJson(`${replica.url}/v1/completions`, {
      model: twin.state.model,
      prompt: 'Summarise the incident in one line.',
      max_tokens: DEMO_SHAPE.maxTokens,
    });

    // Assess
    expect(fault).toMatchObject({ kind: 'pod-crash', pod: first.pod, params: {} });
    expect(twin.faults.active()).toEqual([]);
    expect(interrupted).toMatch(/^failed: /);
    expect(notReady.metadata.uid).toBe(before.metadata.uid);
    expect(readyAgain.metadata).toMatchObject({ name: first.pod, uid: before.metadata.uid });
    expect(statusBefore?.restartCount).toBe(0);
    const [statusAfter] = containerStatuses(readyAgain);
    expect(statusAfter?.restartCount).toBe(1);
    expect(statusAfter?.lastState.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    const startedBefore = Date.parse(statusBefore?.state.running?.startedAt ?? '');
    const startedAfter = Date.parse(statusAfter?.state.running?.startedAt ?? '');
    expect(startedAfter).toBeGreaterThan(startedBefore);
    expect(answer.status).toBe(200);
  });
});

/** `vllm-pilot ...` as a user runs it (`node bin/vllm-pilot.js`), without jest's NODE_OPTIONS. */
async function cli(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const result = await runCli(args);
  return { ...result, code: result.code ?? 1 };
}

describe('Command: vllm-pilot twin fault', () => {
  it('injects a fault through the control endpoint named in the state file, lists it, and clears it', async () => {
    // Act
    const injected = await cli([
      'twin',
      'fault',
      'kv-cache-pressure',
      '--state-file',
      stateFile,
      '--pod',
      second.pod,
      '--fraction',
      '0.98',
      '--json',
    ]);
    const activeAfterInject = twin.faults.active();
    const listed = await cli(['twin', 'fault', 'list', '--state-file', stateFile, '--json']);
    const cleared = await cli(['twin', 'fault', 'clear', '--state-file', stateFile]);

    // Assess
    expect(injected).toMatchObject({ code: 0, stderr: '' });
    const { fault } = JSON.parse(injected.stdout) as { fault: ActiveFault };
    expect(fault).toMatchObject({ kind: 'kv-cache-pressure', pod: second.pod, params: { fraction: 0.98 } });
    expect(activeAfterInject).toEqual([fault]);
    expect((JSON.parse(listed.stdout) as { faults: ActiveFault[] }).faults).toEqual([fault]);
    expect(cleared).toMatchObject({ code: 0, stdout: `Cleared 1 fault(s): kv-cache-pressure on ${second.pod}.\n` });
    expect(twin.faults.active()).toEqual([]);
  }, 60_000);

  it.each([
    {
      case: 'a fraction above 1',
      args: ['framebuffer-pressure', '--fraction', '1.5'],
      code: 1,
      reason: /^vllm-pilot: TwinFaultInvalidError: fault: fraction: must be > 0 and <= 1/,
    },
    {
      case: 'a parameter of another kind',
      args: ['slow-decoding', '--rate', '3'],
      code: 1,
      reason: /fault: rate: is not a parameter of slow-decoding \(accepted: kind, pod, factor\)/,
    },
    {
      case: 'a Pod that does not run',
      args: ['queue-flood', '--pod', 'vllm-inference-app-nope'],
      code: 1,
      reason: /TwinFaultPodNotFoundError: .*"vllm-inference-app-nope" is not a running vLLM Pod \(the Pods are /,
    },
    {
      // --seconds reaches the twin (it once was dropped, and amp-outage ran its default 30 s).
      case: 'a scrape gap of 0 seconds',
      args: ['scrape-gap', '--seconds', '0'],
      code: 1,
      reason: /fault: seconds: must be > 0 and <= 600 seconds/,
    },
    { case: 'an unknown kind', args: ['ecc-errors'], code: 2, reason: /Allowed choices are kv-cache-pressure/ },
  ])(
    'refuses $case with a one-line reason and a non-zero exit, injecting nothing',
    async ({ args, code, reason }) => {
      // Act
      const result = await cli(['twin', 'fault', ...args, '--state-file', stateFile]);

      // Assess
      expect(result.code).toBe(code);
      const lines = result.stderr.split('\n').filter((line) => line.trim() !== '' && !line.includes('--help'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(reason);
      expect(twin.faults.active()).toEqual([]);
    },
    60_000,
  );

  it('answers 400 naming the field when the control endpoint gets an unknown key', async () => {
    // Act
    const answer = await postJson(`${twin.state.controlUrl}/faults`, { kind: 'queue-flood', wating: 80 });

    // Assess
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({
      error: {
        name: 'TwinFaultInvalidError',
        field: 'wating',
        message: expect.stringContaining('accepted: kind, pod, waiting'),
      },
    });
  });
});
