import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Hop-by-hop headers a proxy must not forward (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'host',
]);

/**
 * A Service's virtual IP, as kube-proxy gives it: a loopback HTTP listener that sends each request to the next ready
 * endpoint, round-robin. Bodies stream through in both directions (server-sent events arrive as they are written).
 * With no ready endpoint it answers 503 with a body saying so.
 */
export class ServiceProxy {
  readonly #server: http.Server;
  // One upstream connection per request, as kube-proxy forwards each client connection: a kept-alive socket that the
  // replica closes after its 5 s idle timeout (uvicorn's, and Node's) can be reused in the same instant, and the
  // request then fails with ECONNRESET, a 502 no real Service would give (seen as one failed request in a test load).
  readonly #agent = new http.Agent({ keepAlive: false });
  #endpoints: string[] = [];
  #next = 0;
  #url = '';

  private constructor(readonly service: string) {
    this.#server = http.createServer((req, res) => this.#handle(req, res));
  }

  /** Listens on 127.0.0.1 (a free port) for `service` (`namespace/name`, for messages). */
  static async start(service: string): Promise<ServiceProxy> {
    const proxy = new ServiceProxy(service);
    const server = proxy.#server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    proxy.#url = `http://127.0.0.1:${port}`;
    return proxy;
  }

  /** `http://127.0.0.1:PORT` */
  get url(): string {
    return this.#url;
  }

  /** The ready endpoints' base URLs (`http://127.0.0.1:PORT`), in a stable order. */
  get endpoints(): readonly string[] {
    return this.#endpoints;
  }

  setEndpoints(endpoints: readonly string[]): void {
    this.#endpoints = [...endpoints];
  }

  /** Stops listening and closes every connection, idle or not. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    this.#agent.destroy();
    await closed;
  }

  #handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const endpoints = this.#endpoints;
    if (endpoints.length === 0) {
      const body = JSON.stringify({
        error: `service ${this.service} has no ready endpoints: no Ready Pod matches its selector`,
      });
      res.writeHead(503, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      req.resume();
      return;
    }
    const target = endpoints[this.#next++ % endpoints.length] as string;
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name)) headers[name] = value;
    const upstream = http.request(
      `${target}${req.url ?? '/'}`,
      { method: req.method ?? 'GET', headers, agent: this.#agent },
      (upstreamRes) => {
        const out: http.OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(upstreamRes.headers))
          if (!HOP_BY_HOP.has(name) && value !== undefined) out[name] = value;
        res.writeHead(upstreamRes.statusCode ?? 502, out);
        res.flushHeaders();
        upstreamRes.pipe(res);
        upstreamRes.on('error', () => res.destroy());
      },
    );
    upstream.on('error', (error) => {
      if (!res.headersSent) {
        const body = JSON.stringify({ error: `service ${this.service}: endpoint ${target} failed: ${error.message}` });
        res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      } else res.destroy();
    });
    // The client went away: so does the upstream request (vLLM then aborts the generation).
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }
}
