import { afterAll, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { Logger } from '@aws-lambda-powertools/logger';
import {
  lambdaContext,
  type RecordedDatum,
  runConstantArrivalLoad,
  type Twin,
  TWIN_CREDENTIALS,
  twinMetricsSource,
  twinTarget,
  useTwinCredentials,
} from '../sim/harness/index.js';
import {
  createHandler,
  depsFromEnvironment,
  type MetricsCollectorDeps,
} from '../functions/metrics-collector/handler.js';
import type { CollectResult } from '../shared/collector/index.js';
import { HttpMetricsSource, readCatalog } from '../shared/metrics/index.js';
import type { Target } from '../shared/config/index.js';
import { closedPortUrl } from './helpers/http.js';
import { DEMO_SHAPE, startDemoTwin, warmUp } from './helpers/twin.js';

// The scheduled metrics collector Lambda, run for real (middy handler, AMP client, CloudWatch SDK client) against
// the twin: what reaches CloudWatch, and how a broken target or a CloudWatch failure shows without sinking the run.

jest.setTimeout(120_000);

/** The namespace the collector publishes to when CLOUDWATCH_NAMESPACE is not set. */
const NAMESPACE = 'vLLM/EKSPilot';
const RATE_WINDOW = '1m';
/** CloudWatch units of a few metrics, as the monitoring guide states them (seconds, counts, percent, MiB, bytes). */
const EXPECTED_UNITS: Record<string, string> = {
  E2ELatencyP95: 'Seconds',
  TimeToFirstTokenP95: 'Seconds',
  QueueDepth: 'Count',
  CompletedRequestsPerSecond: 'Count/Second',
  GenerationTokensPerSecond: 'Count/Second',
  KVCacheUsage: 'Percent',
  GPUUtilization: 'Percent',
  GPUFramebufferUsed: 'Megabytes',
  GPUFramebufferUsedPercent: 'Percent',
  ContainerMemoryWorkingSet: 'Bytes',
};
const SCHEDULED_EVENT = JSON.parse(
  readFileSync(new URL('./fixtures/eventbridge-scheduled-event.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;
const CREDENTIAL_VARIABLES = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_PROFILE',
] as const;

let twin: Twin;
let healthy: Target;
const savedEnvironment = new Map<string, string | undefined>();

beforeAll(async () => {
  for (const name of CREDENTIAL_VARIABLES) savedEnvironment.set(name, process.env[name]);
  twin = await startDemoTwin();
  // The handler builds its SDK clients from the default credential chain, as in Lambda: point it at the twin's.
  useTwinCredentials();
  healthy = twinTarget(twin.state);
  // Traffic, so that latency quantiles and ratios have values in the rate window.
  await warmUp(twin);
  await runConstantArrivalLoad({
    urls: twin.state.replicas.map((replica) => replica.url),
    model: twin.state.model,
    rps: 5,
    durationS: 6,
    ...DEMO_SHAPE,
  });
});

afterAll(async () => {
  await twin?.stop();
  for (const [name, value] of savedEnvironment) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

beforeEach(() => {
  twin.cloudwatch.clear();
});

/** The Lambda environment, built as `vllm-pilot metrics collect` builds it for the twin. */
function environmentFor(targets: readonly Target[], extra: Record<string, string> = {}): Record<string, string> {
  return {
    TARGETS: JSON.stringify(targets),
    AMP_WORKSPACE_URL: twin.state.prometheusUrl,
    AWS_REGION: twin.state.aws.region,
    CLOUDWATCH_ENDPOINT: twin.state.aws.cloudwatchEndpoint,
    RATE_WINDOW,
    ...extra,
  };
}

function silentLogger(): Logger {
  return new Logger({ serviceName: 'metrics-collector', logLevel: 'SILENT' });
}

/** An EventBridge scheduled event two seconds in the past, on a whole second as EventBridge sends it. */
function scheduledEvent(): { event: Record<string, unknown>; timeMs: number } {
  const timeMs = Math.floor((Date.now() - 2_000) / 1_000) * 1_000;
  return { event: { ...SCHEDULED_EVENT, time: new Date(timeMs).toISOString().replace('.000Z', 'Z') }, timeMs };
}

async function invoke(deps: MetricsCollectorDeps): Promise<{ result: CollectResult; timeMs: number }> {
  const { event, timeMs } = scheduledEvent();
  const result = await createHandler(deps)(event, lambdaContext('metrics-collector'));
  return { result, timeMs };
}

function resultOf(result: CollectResult, name: string) {
  const target = result.targets.find((candidate) => candidate.target === name);
  expect({ name, found: target !== undefined }).toEqual({ name, found: true });
  return target as NonNullable<typeof target>;
}

function datumsNamed(datums: readonly RecordedDatum[], metricName: string): RecordedDatum[] {
  return datums.filter((datum) => datum.metricName === metricName);
}

/** How many attempts the SDK's CloudWatch client makes for one request (its standard retry policy). */
async function sdkAttempts(): Promise<number> {
  const client = new CloudWatchClient({ region: twin.state.aws.region, endpoint: twin.state.aws.cloudwatchEndpoint });
  try {
    return await client.config.maxAttempts();
  } finally {
    client.destroy();
  }
}

describe('Function: handler (metrics collector against the twin)', () => {
  it("publishes every reading of the twin's deployment to CloudWatch with the target's dimensions and units", async () => {
    // Prepare
    const deps = depsFromEnvironment(environmentFor([healthy]), silentLogger());

    // Act
    const { result, timeMs } = await invoke(deps);

    // Assess: the run.
    expect(result.namespace).toBe(NAMESPACE);
    expect(result.timeMs).toBe(timeMs);
    const target = resultOf(result, healthy.name);
    expect({ status: target.status, failures: target.failures }).toEqual({ status: 'ok', failures: [] });

    // Assess: what CloudWatch received, through the real SDK client.
    const datums = twin.cloudwatch.datums();
    expect(datums).toHaveLength(target.published);
    expect(datums.length).toBeGreaterThan(0);
    for (const datum of datums) {
      expect(datum.namespace).toBe(NAMESPACE);
      expect(datum.timestampMs).toBe(timeMs);
      expect(datum.dimensions).toMatchObject({
        Cluster: twin.state.clusterName,
        Namespace: twin.state.namespace,
        Deployment: twin.state.deployment,
        Model: twin.state.model,
      });
    }
    for (const [metricName, unit] of Object.entries(EXPECTED_UNITS)) {
      const named = datumsNamed(datums, metricName);
      expect({ metricName, present: named.length > 0 }).toEqual({ metricName, present: true });
      for (const datum of named) expect({ metricName, unit: datum.unit }).toEqual({ metricName, unit });
    }

    // Assess: target-level, per-Pod and per-GPU datums carry exactly the dimensions that say where they come from.
    expect(Object.keys(datumsNamed(datums, 'QueueDepth')[0]?.dimensions ?? {}).sort()).toEqual(
      ['Cluster', 'Deployment', 'Model', 'Namespace'].sort(),
    );
    expect(
      datumsNamed(datums, 'KVCacheUsage')
        .map((datum) => datum.dimensions.Pod)
        .sort(),
    ).toEqual(twin.state.replicas.map((replica) => replica.name).sort());
    const gpuDatums = datumsNamed(datums, 'GPUUtilization');
    expect(gpuDatums.map((datum) => `${datum.dimensions.GPU} ${datum.dimensions.Pod}`).sort()).toEqual(
      twin.state.replicas.map((replica) => `${replica.gpuUuid} ${replica.name}`).sort(),
    );
  });

  it('publishes the values the catalog reads at the same evaluation time', async () => {
    // Prepare
    const deps = depsFromEnvironment(environmentFor([healthy]), silentLogger());

    // Act
    const { timeMs } = await invoke(deps);
    const catalog = await readCatalog(twinMetricsSource(twin.state), healthy, { timeMs, rateWindow: RATE_WINDOW });

    // Assess
    const key = (metricName: string, dimensions: Record<string, string | undefined>) =>
      `${metricName} ${dimensions.pod ?? dimensions.Pod ?? ''} ${dimensions.gpu ?? dimensions.GPU ?? ''}`;
    const published = new Map(
      twin.cloudwatch.datums().map((datum) => [key(datum.metricName, datum.dimensions), datum.value]),
    );
    const read = new Map(
      catalog.readings.map((reading) => [key(reading.metricName, reading.dimensions), reading.value]),
    );
    expect(published.size).toBeGreaterThan(0);
    expect(published).toEqual(read);
  });

  it('reports a target without series as failed, with the reason, and still publishes the healthy one', async () => {
    // Prepare: a namespace and model nobody serves.
    const ghost: Target = { ...healthy, name: 'ghost', namespace: 'no-such-namespace', model: 'no-such-model' };
    const deps = depsFromEnvironment(environmentFor([healthy, ghost]), silentLogger());

    // Act
    const { result } = await invoke(deps);

    // Assess
    const good = resultOf(result, healthy.name);
    const bad = resultOf(result, ghost.name);
    expect(good.status).toBe('ok');
    expect(good.published).toBeGreaterThan(0);
    expect(bad).toMatchObject({
      status: 'failed',
      published: 0,
      reason: expect.stringMatching(/no query returned a value/),
    });
    expect(bad.failures.length).toBeGreaterThan(0);
    const datums = twin.cloudwatch.datums();
    expect(datums).toHaveLength(good.published);
    expect(datums.filter((datum) => datum.dimensions.Namespace !== healthy.namespace)).toEqual([]);
  });

  it('reports a target whose metrics source cannot be reached as failed, and still publishes the healthy one', async () => {
    // Prepare: the second target's series live in a "workspace" nothing listens on.
    const unreachable: Target = { ...healthy, name: 'unreachable', cluster: 'other-cluster' };
    const deps = depsFromEnvironment(environmentFor([healthy, unreachable]), silentLogger());
    const closedSource = new HttpMetricsSource({
      endpoint: await closedPortUrl(),
      region: twin.state.region,
      credentials: TWIN_CREDENTIALS,
    });

    // Act
    const { result } = await invoke({
      ...deps,
      sourceFor: (target) => (target.name === unreachable.name ? closedSource : deps.sourceFor(target)),
    });

    // Assess
    const good = resultOf(result, healthy.name);
    const bad = resultOf(result, unreachable.name);
    expect(good).toMatchObject({ status: 'ok', failures: [] });
    expect(bad).toMatchObject({ status: 'failed', published: 0, reason: expect.stringMatching(/MetricsNetworkError/) });
    expect(bad.failures.every((failure) => failure.name === 'MetricsNetworkError')).toBe(true);
    const datums = twin.cloudwatch.datums();
    expect(datums).toHaveLength(good.published);
    expect(datums.filter((datum) => datum.dimensions.Cluster === unreachable.cluster)).toEqual([]);
  });

  it('rides out one failed PutMetricData: the SDK retries it and every datum arrives', async () => {
    // Prepare
    const deps = depsFromEnvironment(environmentFor([healthy]), silentLogger());
    twin.cloudwatch.failNextRequests(1);

    // Act
    const { result } = await invoke(deps);

    // Assess
    const target = resultOf(result, healthy.name);
    expect(target).toMatchObject({ status: 'ok', failures: [] });
    expect(twin.cloudwatch.requests().map((request) => request.status)).toEqual([500, 200]);
    expect(twin.cloudwatch.datums()).toHaveLength(target.published);
  });

  it('reports a target whose PutMetricData keeps failing as failed, publishes the other, and returns normally', async () => {
    // Prepare: one target at a time, so that the injected failures hit every attempt of the first target's request.
    const second: Target = { ...healthy, name: 'second', cluster: 'second-cluster' };
    const deps = depsFromEnvironment(environmentFor([healthy, second], { COLLECTOR_CONCURRENCY: '1' }), silentLogger());
    const attempts = await sdkAttempts();
    twin.cloudwatch.failNextRequests(attempts);

    // Act
    const { result } = await invoke(deps);

    // Assess: a partial run, not a crash.
    const first = resultOf(result, healthy.name);
    expect(first).toMatchObject({
      status: 'failed',
      published: 0,
      reason: expect.stringMatching(/publishing to CloudWatch failed/),
    });
    expect(first.failures.every((failure) => failure.name === 'CloudWatchBatchFailedError')).toBe(true);
    const other = resultOf(result, second.name);
    expect(other).toMatchObject({ status: 'ok', failures: [] });
    expect(other.published).toBeGreaterThan(0);
    expect(twin.cloudwatch.requests().map((request) => request.status)).toEqual([
      ...Array<number>(attempts).fill(500),
      200,
    ]);
    const datums = twin.cloudwatch.datums();
    expect(datums).toHaveLength(other.published);
    expect(datums.every((datum) => datum.dimensions.Cluster === second.cluster)).toBe(true);
  });

  it('fails the invocation with CollectorAllTargetsFailedError, naming the reason, when no target could publish', async () => {
    // Prepare
    const deps = depsFromEnvironment(environmentFor([healthy]), silentLogger());
    twin.cloudwatch.failNextRequests(await sdkAttempts());

    // Act
    const outcome = invoke(deps);

    // Assess: the Lambda's Errors metric and EventBridge's retries see it.
    await expect(outcome).rejects.toMatchObject({
      name: 'CollectorAllTargetsFailedError',
      message: expect.stringMatching(new RegExp(`${healthy.name}: publishing to CloudWatch failed`)),
    });
    expect(twin.cloudwatch.datums()).toEqual([]);
  });
});
