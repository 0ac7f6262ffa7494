import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { type Clock, systemClock } from '../../../shared/clock/index.js';
import type { MemoryObjectStore } from '../store.js';
import type { Kind, PodLogStore } from '../types.js';
import type { EksAccess, TokenRights } from './auth.js';
import {
  KubeApiRequestEntityTooLargeError,
  KubeApiServerStartError,
  KubeApiServiceUnavailableError,
} from './errors.js';
import { KubeApiHandler, type ApiResponse, type KubeAuditEvent, type PodEndpointLookup } from './KubeApiHandler.js';
import { parseRoute } from './routes.js';
import { selfSignedCertificate } from './selfSignedCertificate.js';

/** The largest request body read, as the real kube-apiserver's limit (3 MiB). */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

export interface KubeApiServerOptions {
  store: MemoryObjectStore;
  logs: PodLogStore;
  /** The EKS cluster the twin stands for (named in the log; kubeconfigs name their cluster after it). */
  clusterName: string;
  /** The cluster's AWS region (named in the log). */
  region: string;
  /** Static bearer tokens; EKS tokens (`k8s-aws-v1.`) are accepted too (admin, unless `eksAccess` says otherwise). */
  tokens: TokenRights;
  /** EKS access entries and RBAC enforcement for EKS tokens (see EksAccess); without it every EKS token is admin. */
  eksAccess?: EksAccess;
  /** Ages in `kubectl get`, EKS token expiry. Default: the system clock. */
  clock?: Clock;
  /** Where each Pod's server listens (the twin's Pod runtime), for the Pod proxy. */
  podEndpoint?: PodEndpointLookup;
  log?: (line: string) => void;
}

/** How long the Pod proxy waits for the Pod's server. */
const PROXY_TIMEOUT_MS = 10_000;

/** A running API server. */
export interface KubeApiServer {
  /** `http://127.0.0.1:PORT`: plain HTTP, for fetch and client-node (with skipTLSVerify). */
  url: string;
  /**
   * `https://127.0.0.1:PORT`, the same port with a self-signed certificate: what kubeconfigs for kubectl must name,
   * because client-go reads a kubeconfig's credentials only for https servers (an http server gets no token: 401).
   */
  httpsUrl: string;
  clusterName: string;
  /** Whether requests for `kind` are served now (custom resources only while their CRD exists). */
  isServed(kind: Kind): boolean;
  /** Every request so far (at least the last AUDIT_LOG_SIZE), with its user and status: the control plane's audit log. */
  audit(): readonly KubeAuditEvent[];
  /** Ends watches, closes every connection and stops listening. */
  stop(): Promise<void>;
}

/** Starts the twin's Kubernetes API server on a free loopback port. */
export async function startKubeApiServer(options: KubeApiServerOptions): Promise<KubeApiServer> {
  const clock = options.clock ?? systemClock;
  let address = '';
  const handler = new KubeApiHandler({
    store: options.store,
    logs: options.logs,
    tokens: options.tokens,
    clock,
    serverAddress: () => address,
    ...(options.podEndpoint ? { podEndpoint: options.podEndpoint } : {}),
    ...(options.eksAccess ? { eksAccess: options.eksAccess } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  const watches = new Set<() => void>();

  const onRequest = (request: IncomingMessage, response: ServerResponse) => {
    serve(request, response, handler, watches, options.log).catch((error: unknown) => {
      options.log?.(`kube-apiserver twin: ${request.method} ${request.url}: ${String(error)}`);
      response.destroy();
    });
  };
  const httpServer = createHttpServer(onRequest);
  const httpsServer = createHttpsServer(selfSignedCertificate(clock.now()), onRequest);
  // One port for both protocols: a TLS connection starts with a handshake record (0x16), plain HTTP with a method.
  const sockets = new Set<Socket>();
  const front = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // A client that resets before its first byte must not crash the twin (the HTTP servers handle later errors).
    socket.on('error', () => socket.destroy());
    socket.once('readable', () => {
      const first = socket.read(1) as Buffer | null;
      if (first === null) return;
      socket.unshift(first);
      (first[0] === 0x16 ? httpsServer : httpServer).emit('connection', socket);
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      front.once('error', reject);
      front.listen(0, '127.0.0.1', () => {
        front.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    throw new KubeApiServerStartError({ cause: error });
  }
  const { port } = front.address() as AddressInfo;
  address = `127.0.0.1:${port}`;
  const url = `http://${address}`;
  const httpsUrl = `https://${address}`;
  options.log?.(`kube-apiserver twin: cluster ${options.clusterName} (${options.region}) at ${url} and ${httpsUrl}`);

  let stopping: Promise<void> | undefined;
  return {
    url,
    httpsUrl,
    clusterName: options.clusterName,
    isServed: (kind) => handler.isServed(kind),
    audit: () => handler.audit(),
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        for (const end of [...watches]) end();
        front.close(() => resolve());
        // Keep-alive and watch connections would hold the port open: close every socket the front accepted.
        for (const socket of sockets) socket.destroy();
      });
      return stopping;
    },
  };
}

async function serve(
  request: IncomingMessage,
  response: ServerResponse,
  handler: KubeApiHandler,
  watches: Set<() => void>,
  log: ((line: string) => void) | undefined,
): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  let body: string;
  try {
    body = await readBody(request);
  } catch (error) {
    if (error instanceof KubeApiRequestEntityTooLargeError) {
      sendJson(response, error.code, error.toStatus());
      // The rest of the body is not read: close the connection instead of draining it.
      response.on('finish', () => request.destroy());
      return;
    }
    request.destroy();
    return;
  }
  const result = handler.handle({
    method: request.method ?? 'GET',
    route: parseRoute(url.pathname),
    path: url.pathname,
    query: url.searchParams,
    ...(request.headers.accept !== undefined ? { accept: request.headers.accept } : {}),
    ...(request.headers['content-type'] !== undefined ? { contentType: request.headers['content-type'] } : {}),
    ...(request.headers.authorization !== undefined ? { authorization: request.headers.authorization } : {}),
    body,
  });
  if (result.status >= 400 && log && !(result.status === 404 && request.method === 'GET')) {
    log(`kube-apiserver twin: ${request.method} ${url.pathname}${url.search} -> ${result.status}`);
  }
  if ('proxy' in result) return forward(response, result.proxy.url);
  send(response, result, watches);
}

/** Relays a GET to the Pod's server: its status, content type and body; a connection failure is a 503 Status. */
async function forward(response: ServerResponse, url: string): Promise<void> {
  try {
    const upstream = await fetch(url, { signal: AbortSignal.timeout(PROXY_TIMEOUT_MS) });
    const body = Buffer.from(await upstream.arrayBuffer());
    response.writeHead(upstream.status, {
      'Content-Type': upstream.headers.get('content-type') ?? 'application/octet-stream',
      'Content-Length': body.length,
    });
    response.end(body);
  } catch (error) {
    const unavailable = new KubeApiServiceUnavailableError(
      `error trying to reach service: ${error instanceof Error ? error.message : String(error)}`,
    );
    sendJson(response, unavailable.code, unavailable.toStatus());
  }
}

function send(response: ServerResponse, result: ApiResponse, watches: Set<() => void>): void {
  if ('json' in result) return sendJson(response, result.status, result.json);
  if ('text' in result) {
    response.writeHead(result.status, {
      'Content-Type': 'text/plain',
      'Content-Length': Buffer.byteLength(result.text),
    });
    response.end(result.text);
    return;
  }
  if (!('watch' in result)) return;
  response.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
  response.flushHeaders();
  const watch: { cancel?: () => void } = {};
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    watches.delete(end);
    watch.cancel?.();
    response.end();
  };
  watches.add(end);
  response.on('close', end);
  watch.cancel = result.watch.start((event) => {
    if (!ended) response.write(`${JSON.stringify(event)}\n`);
  }, end);
  if (ended) watch.cancel();
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    request.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > MAX_REQUEST_BODY_BYTES) {
        failed = true;
        request.pause();
        reject(new KubeApiRequestEntityTooLargeError(MAX_REQUEST_BODY_BYTES));
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks).toString('utf8'));
    });
    request.on('error', (error) => {
      if (!failed) reject(error);
    });
  });
}
