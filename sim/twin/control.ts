import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FAULT_KINDS, FAULT_PARAMETERS, type FaultController, type FaultRequest } from './faults.js';
import { TwinFaultInvalidError, TwinFaultPodNotFoundError } from './errors.js';

/**
 * The twin's control endpoint, for `vllm-pilot twin fault` (another process than the twin): a small JSON API on
 * 127.0.0.1 over the twin's FaultController.
 *
 * - `GET /faults` → 200 `{ faults: ActiveFault[], kinds: { kind: [parameters] } }`
 * - `POST /faults` with a fault request (`{ "kind": "kv-cache-pressure", "pod"?: ..., "fraction"?: ... }`) →
 *   201 `{ fault }`; 400 `{ error: { name, field, message } }` for a bad request; 404 for a Pod that is not running.
 * - `DELETE /faults[?pod=NAME]` → 200 `{ cleared: ActiveFault[] }`.
 */

export interface ControlServer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** Closes the listener and every open connection. */
  stop(): Promise<void>;
}

export interface ControlServerOptions {
  faults: FaultController;
  log?: (line: string) => void;
}

/** Fault requests are a few fields; anything larger is a mistake. */
const MAX_BODY_BYTES = 64 * 1024;

/** Starts the control endpoint on a free loopback port. */
export async function startControlServer(options: ControlServerOptions): Promise<ControlServer> {
  const { faults } = options;
  const log = options.log ?? (() => undefined);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      try {
        if (size > MAX_BODY_BYTES)
          return sendError(res, 413, 'TwinControlRequestTooLarge', '(body)', `at most ${MAX_BODY_BYTES} bytes`);
        route(req, res, Buffer.concat(chunks).toString('utf8'));
      } catch (error) {
        respondToError(res, error);
      }
    });
  });

  function route(req: IncomingMessage, res: ServerResponse, body: string): void {
    const url = new URL(req.url ?? '/', 'http://twin-control');
    if (url.pathname !== '/faults')
      return sendError(res, 404, 'TwinControlNotFound', '(path)', `no route ${url.pathname} (try /faults)`);
    switch (req.method) {
      case 'GET':
        return sendJson(res, 200, { faults: faults.active(), kinds: FAULT_PARAMETERS });
      case 'POST': {
        let request: unknown;
        try {
          request = JSON.parse(body);
        } catch {
          return sendError(res, 400, 'TwinFaultInvalidError', '(body)', 'is not JSON');
        }
        const fault = faults.inject(request as FaultRequest);
        log(`control: injected ${fault.kind} on ${fault.pod}`);
        return sendJson(res, 201, { fault });
      }
      case 'DELETE': {
        const pod = url.searchParams.get('pod') ?? undefined;
        const cleared = faults.clear(pod === '' ? undefined : pod);
        log(`control: cleared ${cleared.length} fault(s)${pod ? ` on ${pod}` : ''}`);
        return sendJson(res, 200, { cleared });
      }
      default:
        res.setHeader('allow', 'GET, POST, DELETE');
        return sendError(res, 405, 'TwinControlMethodNotAllowed', '(method)', `use GET, POST or DELETE on /faults`);
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let stopping: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      (stopping ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

function respondToError(res: ServerResponse, error: unknown): void {
  if (error instanceof TwinFaultInvalidError) return sendError(res, 400, error.name, error.field, error.message);
  if (error instanceof TwinFaultPodNotFoundError)
    return sendError(res, 404, error.name, 'pod', error.message, { pods: error.pods });
  const e = error instanceof Error ? error : new Error(String(error));
  sendError(res, 500, e.name, '(twin)', e.message);
}

function sendError(
  res: ServerResponse,
  status: number,
  name: string,
  field: string,
  message: string,
  extra: Record<string, unknown> = {},
): void {
  sendJson(res, status, { error: { name, field, message, kinds: FAULT_KINDS, ...extra } });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
