import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PrometheusConfigError } from './errors.js';
import { type RemoteWriteRelay, startRemoteWriteRelay } from './remoteWriteRelay.js';

/** What the receiver saw of one batch: its number (the body's first byte), when, the body and the headers. */
interface Received {
  index: number;
  at: number;
  body: Buffer;
  headers: Record<string, string | string[] | undefined>;
}

/** A plain HTTP receiver on 127.0.0.1 that records each write and answers `status`. */
async function startReceiver(status = 204, answer = ''): Promise<{ url: string; seen: Received[]; server: Server }> {
  const seen: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ index: body[0] ?? -1, at: performance.now(), body, headers: request.headers });
      response.writeHead(status).end(answer);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/api/v1/write`, seen, server };
}

/** The headers Prometheus 2.42 sends with a remote write. */
const WRITE_HEADERS = {
  'Content-Encoding': 'snappy',
  'Content-Type': 'application/x-protobuf',
  'X-Prometheus-Remote-Write-Version': '0.1.0',
};

/** A batch whose first byte is its index, followed by bytes that are not valid UTF-8 (a decoder would mangle them). */
function batchBody(index: number): Buffer {
  return Buffer.from([index, 0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, index]);
}

async function send(relay: RemoteWriteRelay, index: number): Promise<{ status: number; sentAt: number; ms: number }> {
  const sentAt = performance.now();
  const response = await fetch(relay.url, { method: 'POST', headers: WRITE_HEADERS, body: batchBody(index) });
  await response.arrayBuffer();
  return { status: response.status, sentAt, ms: performance.now() - sentAt };
}

/** Answers the given draws in turn (then 0.5, no jitter): the relay's jitter, pinned. */
function draws(values: number[]): () => number {
  let i = 0;
  return () => values[i++] ?? 0.5;
}

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check() && performance.now() < deadline) await new Promise((done) => setTimeout(done, 10));
}

describe('Function: startRemoteWriteRelay', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let relay: RemoteWriteRelay | undefined;

  beforeEach(async () => {
    receiver = await startReceiver();
  });

  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
    await new Promise((done) => receiver.server.close(done));
  });

  it('answers 204 at once and forwards each batch no earlier than the lag, bytes and remote-write headers untouched', async () => {
    // Prepare
    relay = await startRemoteWriteRelay({ receiverUrl: receiver.url, lagSeconds: 0.5, jitterSeconds: 0 });

    // Act
    const sent = [await send(relay, 1), await send(relay, 2)];
    // The receiver records a batch before the relay has read its answer and counted it: wait for both.
    const started = relay;
    await until(() => receiver.seen.length === 2 && started.counts().forwarded === 2, 5_000);

    // Assess
    expect(sent.map((s) => s.status)).toEqual([204, 204]);
    for (const s of sent) expect(s.ms).toBeLessThan(250);
    expect(receiver.seen.map((r) => r.index)).toEqual([1, 2]);
    receiver.seen.forEach((received, i) => {
      const heldMs = received.at - (sent[i]?.sentAt ?? 0);
      expect(heldMs).toBeGreaterThanOrEqual(500);
      expect(heldMs).toBeLessThan(1_500);
      expect(received.body.equals(batchBody(received.index))).toBe(true);
      expect(received.headers).toMatchObject({
        'content-encoding': 'snappy',
        'content-type': 'application/x-protobuf',
        'x-prometheus-remote-write-version': '0.1.0',
      });
    });
    expect(relay.counts()).toMatchObject({ received: 2, forwarded: 2, pending: 0, rejected: 0, failed: 0 });
  });

  it('never reorders: a batch drawn a shorter hold than the one before it waits for it', async () => {
    // Prepare: lag 0.3 s ± 0.3 s; draws 1, 0, 1, 0, ... give holds of 0.6 s, 0 s, 0.6 s, 0 s, ...
    relay = await startRemoteWriteRelay({
      receiverUrl: receiver.url,
      lagSeconds: 0.3,
      jitterSeconds: 0.3,
      random: draws([1, 0, 1, 0, 1, 0, 0.5, 0]),
    });

    // Act: eight batches, 40 ms apart
    const sent: Array<{ sentAt: number }> = [];
    for (let index = 0; index < 8; index++) {
      sent.push(await send(relay, index));
      await new Promise((done) => setTimeout(done, 40));
    }
    await until(() => receiver.seen.length === 8, 10_000);

    // Assess
    expect(receiver.seen.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // Batch 1 drew no hold, yet left only after batch 0's 0.6 s.
    expect((receiver.seen[1]?.at ?? 0) - (sent[0]?.sentAt ?? 0)).toBeGreaterThanOrEqual(600);
    // Every batch was held at least lag - jitter (0 s here) and at most the longest hold before it plus slack.
    for (let i = 0; i < 8; i++) {
      expect((receiver.seen[i]?.at ?? 0) - (sent[i]?.sentAt ?? 0)).toBeGreaterThanOrEqual(0);
      expect((receiver.seen[i]?.at ?? 0) - (sent[i]?.sentAt ?? 0)).toBeLessThan(600 + 500);
    }
  });

  it('logs a non-2xx answer of the receiver with its status and body, and counts it', async () => {
    // Prepare
    await new Promise((done) => receiver.server.close(done));
    receiver = await startReceiver(400, 'out of order sample');
    const lines: string[] = [];
    relay = await startRemoteWriteRelay({
      receiverUrl: receiver.url,
      lagSeconds: 0.05,
      jitterSeconds: 0,
      log: (line) => lines.push(line),
    });

    // Act
    const sent = await send(relay, 7);
    await until(() => lines.length === 1, 5_000);

    // Assess: the sender got its 204 (AMP had accepted it); the receiver's refusal is in the log
    expect(sent.status).toBe(204);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/HTTP 400 to batch #1 .*out of order sample/);
    expect(relay.counts()).toMatchObject({ received: 1, forwarded: 0, rejected: 1 });
  });

  it('stop() drops the batches still held, forwards nothing afterwards and closes its port', async () => {
    // Prepare
    const stopped = await startRemoteWriteRelay({ receiverUrl: receiver.url, lagSeconds: 1, jitterSeconds: 0 });
    await send(stopped, 1);
    await send(stopped, 2);

    // Act
    const counts = await stopped.stop();
    await new Promise((done) => setTimeout(done, 1_500));

    // Assess
    expect(counts).toMatchObject({ received: 2, forwarded: 0, dropped: 2, pending: 0 });
    expect(receiver.seen).toEqual([]);
    await expect(fetch(stopped.url, { method: 'POST', body: batchBody(3) })).rejects.toThrow();
    expect(await stopped.stop()).toEqual(counts);
  });

  it.each([
    { case: 'another path', path: '/api/v1/query', method: 'POST', status: 404 },
    { case: 'a GET', path: '/api/v1/write', method: 'GET', status: 405 },
  ])('refuses what is not a remote write: $case', async ({ path, method, status }) => {
    // Prepare
    relay = await startRemoteWriteRelay({ receiverUrl: receiver.url, lagSeconds: 0, jitterSeconds: 0 });

    // Act
    const response = await fetch(relay.url.replace('/api/v1/write', path), { method });
    await response.arrayBuffer();

    // Assess
    expect(response.status).toBe(status);
    expect(relay.counts().received).toBe(0);
  });

  it.each([
    { case: 'negative lag', lagSeconds: -1, jitterSeconds: 0, field: 'lagSeconds' },
    { case: 'jitter not a number', lagSeconds: 1, jitterSeconds: NaN, field: 'jitterSeconds' },
  ])('rejects a bad hold, naming the field: $case', async ({ lagSeconds, jitterSeconds, field }) => {
    // Act
    const start = startRemoteWriteRelay({ receiverUrl: receiver.url, lagSeconds, jitterSeconds });

    // Assess
    await expect(start).rejects.toThrow(PrometheusConfigError);
    await expect(start).rejects.toThrow(field);
  });
});
