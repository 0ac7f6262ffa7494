import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PrometheusConfigError, RemoteWriteRelayStartError } from './errors.js';

/**
 * AMP's ingestion path in the twin: accepts Prometheus remote write (`POST /api/v1/write`), answers 204 at once as
 * AMP does, and hands each batch on to the Prometheus that answers queries only after the ingestion lag, so samples
 * become queryable late, as on AWS. The relay never decodes a batch: body bytes and the remote-write headers pass
 * through untouched.
 */

export interface RemoteWriteRelayOptions {
  /** The receiver's write endpoint: `http://127.0.0.1:PORT/api/v1/write` of a `--web.enable-remote-write-receiver`. */
  receiverUrl: string;
  /** How long each batch is held (seconds, >= 0). */
  lagSeconds: number;
  /** Each batch's hold is lag + a uniform draw from [-jitter, +jitter] (never below 0). */
  jitterSeconds: number;
  /** Uniform in [0, 1), drawn once per batch; default Math.random. A test passes its own to pin the jitter. */
  random?: () => number;
  /** Non-2xx answers and failures of the receiver, one line each. */
  log?: (message: string) => void;
}

export interface RelayCounts {
  /** Batches accepted (answered 204). */
  received: number;
  /** Batches the receiver answered with 2xx. */
  forwarded: number;
  /** Batches the receiver answered with a non-2xx status (logged). */
  rejected: number;
  /** Batches that could not be delivered at all: connection refused, timeout (logged). */
  failed: number;
  /** Batches held right now. */
  pending: number;
  /** Batches dropped by stop() before their release time. */
  dropped: number;
}

export interface RemoteWriteRelay {
  /** Where a Prometheus remote-writes: `http://127.0.0.1:PORT/api/v1/write`. */
  url: string;
  lagSeconds: number;
  jitterSeconds: number;
  counts(): RelayCounts;
  /**
   * Stops accepting, waits for a batch already being forwarded, and DROPS every batch still held (counted in
   * `dropped`): samples AMP has not ingested yet are lost when the workspace goes, and stop() never waits out the lag.
   * Deterministic: a batch is forwarded if and only if its release time came before stop(). Safe to call twice.
   */
  stop(): Promise<RelayCounts>;
}

/** The headers of a remote-write request that the receiver needs, passed on as they came. */
const FORWARDED_HEADERS = ['content-encoding', 'content-type', 'x-prometheus-remote-write-version'] as const;
const WRITE_PATH = '/api/v1/write';
/** Far above a batch of AGENT_REMOTE_WRITE_QUEUE (500 samples, snappy): a bigger body is not a remote write. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;
const FORWARD_TIMEOUT_MS = 10_000;
const LOGGED_BODY_CHARS = 300;

interface HeldBatch {
  seq: number;
  arrivedAt: number;
  releaseAt: number;
  body: Buffer;
  headers: Record<string, string>;
}

/** Starts the relay on a free port of 127.0.0.1. */
export async function startRemoteWriteRelay(options: RemoteWriteRelayOptions): Promise<RemoteWriteRelay> {
  const { lagSeconds, jitterSeconds } = options;
  if (typeof lagSeconds !== 'number' || !Number.isFinite(lagSeconds) || lagSeconds < 0)
    throw new PrometheusConfigError('lagSeconds', lagSeconds, 'must be a number of seconds >= 0');
  if (typeof jitterSeconds !== 'number' || !Number.isFinite(jitterSeconds) || jitterSeconds < 0)
    throw new PrometheusConfigError('jitterSeconds', jitterSeconds, 'must be a number of seconds >= 0');
  const receiverUrl = options.receiverUrl;
  if (!/^https?:\/\//.test(receiverUrl))
    throw new PrometheusConfigError('receiverUrl', receiverUrl, 'must be an http(s) URL ending in /api/v1/write');
  const random = options.random ?? Math.random;
  const log = options.log ?? (() => undefined);
  // Monotonic: a wall-clock step must not reorder or release batches.
  const now = () => performance.now();

  const counts: Omit<RelayCounts, 'pending'> = { received: 0, forwarded: 0, rejected: 0, failed: 0, dropped: 0 };
  const held: HeldBatch[] = [];
  let seq = 0;
  let lastReleaseAt = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;
  let stopping: Promise<RelayCounts> | undefined;

  function hold(body: Buffer, headers: Record<string, string>): void {
    const arrivedAt = now();
    const holdMs = Math.max(0, (lagSeconds + (random() * 2 - 1) * jitterSeconds) * 1_000);
    // Never out of order: a batch whose draw is shorter than its predecessor's waits for it. The receiver would reject
    // a series' samples older than the ones it already has (out_of_order_time_window is 0), AMP keeps order too.
    const releaseAt = Math.max(arrivedAt + holdMs, lastReleaseAt);
    lastReleaseAt = releaseAt;
    held.push({ seq: ++seq, arrivedAt, releaseAt, body, headers });
    counts.received++;
    pump();
  }

  /** Forwards the head of the queue once its time has come, one batch at a time, so the receiver sees them in order. */
  function pump(): void {
    if (stopping || inFlight || timer) return;
    const head = held[0];
    if (!head) return;
    const waitMs = head.releaseAt - now();
    if (waitMs > 0) {
      timer = setTimeout(() => {
        timer = undefined;
        pump();
      }, Math.ceil(waitMs));
      return;
    }
    held.shift();
    inFlight = forward(head).finally(() => {
      inFlight = undefined;
      pump();
    });
  }

  async function forward(batch: HeldBatch): Promise<void> {
    const heldMs = Math.round(now() - batch.arrivedAt);
    try {
      const response = await fetch(receiverUrl, {
        method: 'POST',
        headers: batch.headers,
        body: batch.body,
        signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
      });
      const text = await response.text();
      if (response.ok) {
        counts.forwarded++;
        return;
      }
      counts.rejected++;
      log(
        `remote-write relay: the receiver answered HTTP ${response.status} to batch #${batch.seq} (held ${heldMs} ms): ${text.trim().slice(0, LOGGED_BODY_CHARS)}`,
      );
    } catch (error) {
      counts.failed++;
      log(
        `remote-write relay: batch #${batch.seq} (held ${heldMs} ms) not delivered to ${receiverUrl}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  const server = createServer((request, response) => {
    void accept(request, response);
  });

  async function accept(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '').split('?')[0];
    if (path !== WRITE_PATH) return answer(response, 404, `not found; the relay serves POST ${WRITE_PATH}`);
    if (request.method !== 'POST') {
      response.setHeader('Allow', 'POST');
      return answer(response, 405, `method ${request.method ?? ''} not allowed; use POST`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of request) {
        size += (chunk as Buffer).length;
        if (size > MAX_BODY_BYTES) return answer(response, 413, `body over ${MAX_BODY_BYTES} bytes`);
        chunks.push(chunk as Buffer);
      }
    } catch {
      return undefined; // The client went away mid-body: nothing was accepted.
    }
    if (stopping) return answer(response, 503, 'the relay is stopping');
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    hold(Buffer.concat(chunks), headers);
    response.writeHead(204).end();
    return undefined;
  }

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', (error) => reject(new RemoteWriteRelayStartError(error.message, { cause: error })));
    server.listen(0, '127.0.0.1', () => resolveListen());
  });
  const { port } = server.address() as AddressInfo;
  const snapshot = (): RelayCounts => ({ ...counts, pending: held.length });

  return {
    url: `http://127.0.0.1:${port}${WRITE_PATH}`,
    lagSeconds,
    jitterSeconds,
    counts: snapshot,
    stop() {
      stopping ??= (async () => {
        clearTimeout(timer);
        timer = undefined;
        counts.dropped += held.splice(0).length;
        await inFlight;
        server.closeAllConnections();
        await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
        return snapshot();
      })();
      return stopping;
    },
  };
}

function answer(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`${message}\n`);
}
