import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ensurePrometheus } from './ensurePrometheus.js';
import { PrometheusConfigError } from './errors.js';
import type { PrometheusInstallation } from './locatePrometheus.js';
import { type PrometheusInstance, startPrometheus } from './startPrometheus.js';

// AMP's three parts from real Prometheus 2.42 binaries: an agent scrapes a tiny /metrics target and remote-writes
// through the relay, which holds each batch LAG ± JITTER seconds, to the query Prometheus that evaluates the rules.

const LAG_S = 4;
const JITTER_S = 1;
/** The earliest a sample may be queryable after its scrape: the shortest hold the relay can draw. */
const MIN_HOLD_MS = (LAG_S - JITTER_S) * 1_000;
/** The latest, generously: the longest hold, the agent's 1 s batch deadline, a scrape interval, polling and a busy CI. */
const MAX_DELAY_MS = (LAG_S + JITTER_S + 4) * 1_000;

const RULES = `groups:
  - name: probe
    rules:
      - alert: ProbeHigh
        expr: twin_probe_value > 1
        labels: { severity: warning }
      - record: twin:probe_value:max
        expr: max(twin_probe_value)
`;

/** A /metrics target whose gauge the test sets; it remembers when each scrape came (wall clock, ms). */
async function startProbe(): Promise<{
  address: string;
  set(value: number): void;
  scrapes: number[];
  close(): Promise<void>;
}> {
  let value = 1;
  const scrapes: number[] = [];
  const server: Server = createServer((_request, response) => {
    scrapes.push(Date.now());
    response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    response.end(`# TYPE twin_probe_value gauge\ntwin_probe_value ${value}\n`);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    set: (next) => (value = next),
    scrapes,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

interface Sample {
  metric: Record<string, string>;
  value?: [number, string];
  values?: Array<[number, string]>;
}

async function api<T>(url: string, path: string): Promise<{ status: number; body: T }> {
  const response = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(5_000) });
  return { status: response.status, body: (await response.json()) as T };
}

async function query(url: string, promql: string): Promise<Sample[]> {
  const { body } = await api<{ status: string; data: { result: Sample[] } }>(
    url,
    `/api/v1/query?query=${encodeURIComponent(promql)}`,
  );
  if (body.status !== 'success') throw new Error(`query ${promql} failed: ${JSON.stringify(body)}`);
  return body.data.result;
}

/** Polls `check` every 100 ms; resolves with the wall-clock ms at which it first held, or undefined at the deadline. */
async function firstTime(check: () => Promise<boolean>, timeoutMs: number): Promise<number | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return Date.now();
    await new Promise((done) => setTimeout(done, 100));
  }
  return undefined;
}

function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    const procStat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return procStat.slice(procStat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

let installation: PrometheusInstallation;

beforeAll(async () => {
  installation = await ensurePrometheus({ allowInstall: false });
});

describe('Function: startPrometheus (with an AMP ingestion lag)', () => {
  let probe: Awaited<ReturnType<typeof startProbe>>;
  let amp: PrometheusInstance;
  const lines: string[] = [];

  beforeAll(async () => {
    probe = await startProbe();
    amp = await startPrometheus({
      bin: installation.bin,
      scrapeIntervalSeconds: 1,
      targetGroups: { vllm: [{ targets: [probe.address], labels: { namespace: 'default', pod: 'probe-0' } }] },
      externalLabels: { cluster: 'twin' },
      ruleFileContents: { 'probe.rules.yaml': RULES },
      remoteWrite: { ingestionLagSeconds: LAG_S, ingestionJitterSeconds: JITTER_S },
      log: (line) => lines.push(line),
    });
    await amp.waitForTargets({ timeoutMs: 30_000 });
  }, 60_000);

  afterAll(async () => {
    await amp?.stop();
    await probe?.close();
  });

  it('scrapes with the agent (it serves the targets API, no queries) and answers queries on the query side', async () => {
    // Act
    const up = await firstTime(async () => (await query(amp.url, 'up{job="vllm"}')).length === 1, 20_000);
    const upSeries = await query(amp.url, 'up{job="vllm"}');
    const agentQuery = await api<{ error?: string }>(amp.ingestion?.agent.url ?? '', '/api/v1/query?query=up');
    const queryTargets = await api<{ data: { activeTargets: unknown[] } }>(amp.url, '/api/v1/targets');

    // Assess
    expect(amp.ingestion).toMatchObject({ lagSeconds: LAG_S, jitterSeconds: JITTER_S });
    expect(up).toBeDefined();
    // Remote-written with the agent's external label, as AMP stores them.
    expect(upSeries[0]?.metric).toMatchObject({ job: 'vllm', cluster: 'twin', pod: 'probe-0' });
    expect(upSeries[0]?.value?.[1]).toBe('1');
    expect(agentQuery.status).toBe(422);
    expect(agentQuery.body.error).toMatch(/unavailable with Prometheus Agent/);
    expect(queryTargets.body.data.activeTargets).toEqual([]);
  }, 30_000);

  it('makes a sample queryable no sooner than lag - jitter after its scrape, and within lag + jitter + a few s', async () => {
    // Prepare
    const flippedAt = Date.now();

    // Act
    probe.set(2);
    const seenAt = await firstTime(
      async () => (await query(amp.url, 'twin_probe_value == 2')).length === 1,
      MAX_DELAY_MS + 5_000,
    );
    const raw = await query(amp.url, 'twin_probe_value[30s]');
    const firstTwo = raw[0]?.values?.find(([, value]) => value === '2');
    const scrapedAt = (firstTwo?.[0] ?? 0) * 1_000;
    const firstScrapeAfterFlip = probe.scrapes.find((at) => at >= flippedAt) ?? 0;

    // Assess
    expect(seenAt).toBeDefined();
    expect(firstTwo).toBeDefined();
    // The sample's timestamp is the agent's scrape of the flipped value.
    expect(Math.abs(scrapedAt - firstScrapeAfterFlip)).toBeLessThan(1_000);
    const lagMs = (seenAt ?? 0) - scrapedAt;
    expect(lagMs).toBeGreaterThanOrEqual(MIN_HOLD_MS);
    expect(lagMs).toBeLessThanOrEqual(MAX_DELAY_MS);
    // The relay holds batches, it does not lose them: every one so far reached the receiver and was accepted.
    expect(amp.ingestion?.relayCounts()).toMatchObject({ rejected: 0, failed: 0, dropped: 0 });
    expect(lines.filter((line) => line.includes('remote-write relay'))).toEqual([]);
  }, 30_000);

  it('evaluates the rules on the query side, over remote-written data: the alert fires, the recording rule records', async () => {
    // Act
    const firing = await firstTime(async () => {
      const { body } = await api<{ data: { alerts: Array<{ labels: Record<string, string>; state: string }> } }>(
        amp.url,
        '/api/v1/alerts',
      );
      return body.data.alerts.some((alert) => alert.labels.alertname === 'ProbeHigh' && alert.state === 'firing');
    }, 15_000);
    const recorded = await query(amp.url, 'twin:probe_value:max');
    const rules = await api<{ data: { groups: Array<{ name: string }> } }>(amp.url, '/api/v1/rules');

    // Assess
    expect(firing).toBeDefined();
    expect(recorded[0]?.value?.[1]).toBe('2');
    expect(rules.body.data.groups.map((group) => group.name)).toEqual(['probe']);
  }, 30_000);

  it('carries staleness: a target removed from the agent leaves queries once its stale marker arrives, lag later', async () => {
    // Act
    const removedAt = Date.now();
    await amp.setTargets({});
    const goneAt = await firstTime(async () => (await query(amp.url, 'up{job="vllm"}')).length === 0, 30_000);

    // Assess: long before the 5 min lookback, but not before the marker could have been held lag - jitter
    expect(goneAt).toBeDefined();
    expect((goneAt ?? 0) - removedAt).toBeGreaterThanOrEqual(MIN_HOLD_MS);
    // Prometheus applies a discovery change up to 5 s late, then the stale marker travels like any sample.
    expect((goneAt ?? 0) - removedAt).toBeLessThanOrEqual(MAX_DELAY_MS + 6_000);
  }, 40_000);

  it('stop() ends the agent and the query Prometheus, closes the relay and removes the data directory', async () => {
    // Prepare
    const agent = amp.ingestion?.agent;
    const relayUrl = amp.ingestion?.relayUrl ?? '';

    // Act
    await amp.stop();

    // Assess
    expect(isGone(amp.pid)).toBe(true);
    expect(isGone(agent?.pid ?? -1)).toBe(true);
    await expect(fetch(relayUrl, { method: 'POST', body: 'x' })).rejects.toThrow();
    await expect(fetch(`${amp.url}/-/ready`)).rejects.toThrow();
    await expect(stat(amp.dataDir)).rejects.toThrow();
    expect(lines.some((line) => /Prometheus as AMP stopped/.test(line))).toBe(true);
  }, 30_000);
});

describe('Function: startPrometheus (remoteWrite option)', () => {
  it('runs one Prometheus, as before, when the lag is 0', async () => {
    // Act
    const single = await startPrometheus({
      bin: installation.bin,
      scrapeIntervalSeconds: 1,
      targetGroups: {},
      remoteWrite: { ingestionLagSeconds: 0, ingestionJitterSeconds: 2 },
    });
    const targets = await api<{ status: string }>(single.url, '/api/v1/targets');
    await single.stop();

    // Assess
    expect(single.ingestion).toBeUndefined();
    expect(targets.body.status).toBe('success');
  }, 30_000);

  it.each([
    { case: 'negative lag', lag: -1, jitter: 0, field: 'remoteWrite.ingestionLagSeconds' },
    { case: 'lag above 300 s', lag: 301, jitter: 0, field: 'remoteWrite.ingestionLagSeconds' },
    { case: 'jitter not a number', lag: 5, jitter: Number.NaN, field: 'remoteWrite.ingestionJitterSeconds' },
  ])('rejects a bad lag before starting anything, naming the field: $case', async ({ lag, jitter, field }) => {
    // Act
    const start = startPrometheus({
      bin: installation.bin,
      scrapeIntervalSeconds: 1,
      targetGroups: {},
      remoteWrite: { ingestionLagSeconds: lag, ingestionJitterSeconds: jitter },
    });

    // Assess
    await expect(start).rejects.toThrow(PrometheusConfigError);
    await expect(start).rejects.toThrow(field);
  });
});
