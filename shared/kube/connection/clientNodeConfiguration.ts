/**
 * The @kubernetes/client-node `Configuration` the adapter sends its requests through: the API server's URL, and an
 * auth method that sets the credentials and the TLS trust on each request. Built from deep paths under
 * `dist/gen/` so a Lambda bundle carries neither `KubeConfig` (its kubeconfig parsing, exec, OIDC, Azure and GCP
 * auth providers, proxy agents) nor the generated API classes.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import type { SecurityAuthentication } from '@kubernetes/client-node/dist/gen/auth/auth.js';
import { createConfiguration, type Configuration } from '@kubernetes/client-node/dist/gen/configuration.js';
import type { RequestContext } from '@kubernetes/client-node/dist/gen/http/http.js';
import { ServerConfiguration } from '@kubernetes/client-node/dist/gen/servers.js';

/** What KubeClusterClient needs to reach a cluster. */
export interface ClientNodeConnection {
  /** Base URL, auth method, HTTP library and middleware of every request. */
  configuration: Configuration;
  /** The namespace of namespaced objects that name none (as kubectl does). */
  defaultNamespace: string;
}

/** The namespace a connection uses when neither the object nor the kubeconfig context names one. */
export const DEFAULT_NAMESPACE = 'default';

export interface BearerTokenClusterOptions {
  /** The API server's URL: `https://...`, or `http://...` (only the twin has one; no TLS then). */
  server: string;
  /** Base64 PEM of the cluster CA (EKS DescribeCluster's `certificateAuthority.data`); empty = the system's CAs. */
  certificateAuthorityData?: string;
  /** The bearer token of each request (called once per request: it may cache and refresh). */
  token: () => Promise<string>;
  /** Default `default`. */
  defaultNamespace?: string;
  /** How long a connection (TCP and, over https, the TLS handshake) may take. Default CONNECT_TIMEOUT_MS. */
  connectTimeoutMs?: number;
}

/**
 * Node waits for a TCP connection as long as the kernel retries its SYN (about two minutes on Linux), longer than the
 * functions' timeouts: an API endpoint whose security group drops the packets would fail only at Lambda's deadline,
 * naming nothing. A connection to an EKS endpoint takes well under a second; five leave room for a slow day.
 */
export const CONNECT_TIMEOUT_MS = 5_000;

/**
 * A connection that sends `Authorization: Bearer <token()>` on every request and trusts the cluster CA over https
 * (plain http for an `http://` server): the requests a `KubeConfig` with that cluster and a bearer-token
 * authenticator makes, header for header. One agent serves every request of the connection, without keep-alive
 * like client-node's own per-request agents (each request still gets its own socket, `Connection: close`), so TLS
 * sessions can be resumed.
 */
export function bearerTokenConnection(options: BearerTokenClusterOptions): ClientNodeConnection {
  const { server, token } = options;
  const caData = options.certificateAuthorityData ?? '';
  const agent = withConnectTimeout(
    server.startsWith('http:')
      ? new HttpAgent()
      : new HttpsAgent(caData === '' ? {} : { ca: Buffer.from(caData, 'base64') }),
    options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
  );
  const auth: SecurityAuthentication = {
    getName: () => 'BearerToken',
    async applySecurityAuthentication(context: RequestContext): Promise<void> {
      context.setHeaderParam('Authorization', `Bearer ${await token()}`);
      context.setAgent(agent);
    },
  };
  return {
    configuration: createConfiguration({
      baseServer: new ServerConfiguration(server, {}),
      authMethods: { default: auth },
    }),
    defaultNamespace: options.defaultNamespace ?? DEFAULT_NAMESPACE,
  };
}

/**
 * Destroys a socket that is not connected (over https: handshaken) within `timeoutMs`, with an ETIMEDOUT error that
 * names the host and the wait; node-fetch then rejects with it (FetchError, code ETIMEDOUT) and toKubeError makes it a
 * KubeUnavailableError. Only the connection is bounded: an answer may take as long as the request needs.
 */
function withConnectTimeout<A extends HttpAgent>(agent: A, timeoutMs: number): A {
  const create = (
    agent as unknown as { createConnection: (options: ConnectOptions, callback?: unknown) => Socket }
  ).createConnection.bind(agent);
  Object.assign(agent, {
    createConnection(options: ConnectOptions, callback?: unknown): Socket {
      const socket = create(options, callback);
      const host = `${options.host ?? 'localhost'}:${options.port ?? ''}`;
      const timer = setTimeout(() => {
        socket.destroy(
          Object.assign(new Error(`connect ETIMEDOUT ${host}: no connection within ${timeoutMs} ms`), {
            code: 'ETIMEDOUT',
          }),
        );
      }, timeoutMs);
      socket.once(socket instanceof TLSSocket ? 'secureConnect' : 'connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
      return socket;
    },
  });
  return agent;
}

interface ConnectOptions {
  host?: string;
  port?: number | string;
}

/**
 * The connection `kubeConfig.makeApiClient` would build for its current context: the cluster's server, the
 * KubeConfig itself as the auth method (it applies the context's user: token, client certificate, exec plugin, ...
 * and the cluster's TLS settings), and the context's namespace as the default.
 */
export function kubeConfigConnection(kubeConfig: KubeConfig): ClientNodeConnection {
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster === null) throw new Error('No active cluster!');
  const context = kubeConfig.currentContext ? kubeConfig.getContextObject(kubeConfig.currentContext) : null;
  return {
    configuration: createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: kubeConfig },
    }),
    defaultNamespace: context?.namespace || DEFAULT_NAMESPACE,
  };
}
