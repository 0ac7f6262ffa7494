import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { LoadAgent } from './agent.js';

interface Served {
  url: string;
  server: http.Server;
  /** Per connection the server accepted: whether the client ended it (a FIN from the client side). */
  connections: Array<{ endedByClient: boolean }>;
}

const servers: http.Server[] = [];

/** A server that answers after `delayMs` and closes idle connections after `keepAliveMs`, as uvicorn and Node do. */
async function serve(keepAliveMs: number, delayMs = 0): Promise<Served> {
  const connections: Served['connections'] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    setTimeout(() => res.end('ok'), delayMs);
  });
  server.keepAliveTimeout = keepAliveMs;
  server.on('connection', (socket: Socket) => {
    const entry = { endedByClient: false };
    connections.push(entry);
    socket.on('end', () => (entry.endedByClient = true));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server, connections };
}

function get(url: string, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe('Class: LoadAgent', () => {
  it("closes an idle connection itself, before the server's idle timeout can close it under a new request", async () => {
    // Prepare: the server would close idle connections after 2 s; the client's limit is 100 ms.
    const served = await serve(2_000);
    const agent = new LoadAgent(10, 100);

    // Act: two requests back to back share a connection; a third after 400 ms idle needs a new one.
    expect(await get(served.url, agent)).toBe(200);
    expect(await get(served.url, agent)).toBe(200);
    await sleep(400);
    expect(await get(served.url, agent)).toBe(200);
    agent.destroy();

    // Assess: the first connection was ended by the client (a FIN, not the server's timeout), long before 2 s.
    expect(served.connections).toHaveLength(2);
    expect(served.connections[0]?.endedByClient).toBe(true);
  });

  it('does not cut a reused connection while its request waits longer than the idle limit', async () => {
    // Prepare: answers take 400 ms, four times the client's idle limit.
    const served = await serve(2_000, 400);
    const agent = new LoadAgent(1, 100);

    // Act
    const statuses = [await get(served.url, agent), await get(served.url, agent)];
    agent.destroy();

    // Assess: both answered on the one connection.
    expect(statuses).toEqual([200, 200]);
    expect(served.connections).toHaveLength(1);
  });
});
