/**
 * The @kubernetes/client-node `Configuration` the adapter sends its requests through: the API server's URL, and an
 * auth method that sets the credentials and the TLS trust on each request. Built from deep paths under
 * `dist/gen/` so a Lambda bundle carries neither `KubeConfig` (its kubeconfig parsing, exec, OIDC, Azure and GCP
 * auth providers, proxy agents) nor the generated API classes.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
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
}

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
  const agent = server.startsWith('http:')
    ? new HttpAgent()
    : new HttpsAgent(caData === '' ? {} : { ca: Buffer.from(caData, 'base64') });
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
