import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

/** An HTTP answer as the tests read it. */
export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/**
 * One request on a fresh connection (no keep-alive pool), so that a stopped server is seen as stopped and no socket
 * outlives the test.
 */
export function httpRequest(url: string, options: { method?: string; body?: string } = {}): Promise<HttpAnswer> {
  const { method = 'GET', body } = options;
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method,
        agent: false,
        headers:
          body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** POSTs `body` as JSON. */
export function postJson(url: string, body: unknown): Promise<HttpAnswer> {
  return httpRequest(url, { method: 'POST', body: JSON.stringify(body) });
}

/** Resolves with the error code of a TCP connect to the URL's host and port (`undefined` when it connected). */
export function connectError(url: string): Promise<string | undefined> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** The URL of a loopback port that was free a moment ago and has nothing listening on it now. */
export async function closedPortUrl(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
