import http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * How long a kept-alive connection may sit idle on the client before the client closes it: one second under the 5 s
 * after which the server closes it (uvicorn's `timeout_keep_alive` in vLLM, VLLM_HTTP_TIMEOUT_KEEP_ALIVE, and Node's
 * `server.keepAliveTimeout`, which the twin's replicas and Service proxies keep).
 */
export const CLIENT_IDLE_MS = 4_000;

/**
 * An HTTP agent for a load generator that reuses connections without racing the server's idle timeout. Node 20's
 * agent keeps an idle socket forever (it ignores the server's `Keep-Alive: timeout=5` hint), so a request can be
 * written to a socket in the same instant the server closes it: the request fails with ECONNRESET, a failure the
 * server never caused (the likely cause of one failed request in the KEDA latency test's 35 s load, once in three CI
 * runs). Closing idle sockets first leaves the race no window.
 */
export class LoadAgent extends http.Agent {
  constructor(
    maxSockets: number,
    readonly idleMs: number = CLIENT_IDLE_MS,
  ) {
    super({ keepAlive: true, maxSockets });
  }

  /** A socket going idle: the agent destroys a free socket on its timeout. */
  // @types/node declares void; Node's agent destroys the socket unless this returns true.
  override keepSocketAlive(socket: Duplex): boolean {
    const keep = super.keepSocketAlive(socket) as unknown as boolean;
    if (keep) (socket as Socket).setTimeout(this.idleMs);
    return keep;
  }

  /** A socket taken for a request: no idle limit while it serves one (a stream may pause longer). */
  override reuseSocket(socket: Duplex, request: http.ClientRequest): void {
    (socket as Socket).setTimeout(0);
    super.reuseSocket(socket, request);
  }
}
