import { EKSClient } from '@aws-sdk/client-eks';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { type Clock, systemClock } from '../../clock/index.js';
import { nameEndpointOnNoAnswer } from '../../network/index.js';
import { connectToEks } from './connectToEks.js';
import type { ClusterClient } from '../types.js';

/**
 * One connection per EKS cluster for the life of the process (a Lambda container, a CLI run): DescribeCluster once
 * per cluster, one EKS client per region, tokens reused until near expiry. A connection that failed is forgotten, so
 * the next use tries again.
 */
export class ClusterConnections {
  readonly #connections = new Map<string, Promise<ClusterClient>>();
  readonly #eks = new Map<string, EKSClient>();
  readonly #options: EksConnectionOptions;

  constructor(options: EksConnectionOptions = {}) {
    this.#options = options;
  }

  /** The client of cluster `name` in `region`, connecting on first use. */
  get(region: string, name: string): Promise<ClusterClient> {
    const key = `${region}/${name}`;
    let connection = this.#connections.get(key);
    if (connection === undefined) {
      connection = connectToEks({
        clusterName: name,
        region,
        eks: this.#eksClient(region),
        ...(this.#options.credentials === undefined ? {} : { credentials: this.#options.credentials }),
        ...(this.#options.clock === undefined ? {} : { clock: this.#options.clock }),
      });
      this.#connections.set(key, connection);
      connection.catch(() => this.#connections.delete(key));
    }
    return connection;
  }

  /** Closes the EKS clients' sockets (a CLI run that ends). */
  destroy(): void {
    for (const client of this.#eks.values()) client.destroy();
    this.#eks.clear();
  }

  #eksClient(region: string): EKSClient {
    let client = this.#eks.get(region);
    if (client === undefined) {
      // A DescribeCluster that gets no answer names the EKS host and the wait (a VPC without the eks endpoint).
      client = nameEndpointOnNoAnswer(
        new EKSClient({
          region,
          ...(this.#options.eksEndpoint === undefined ? {} : { endpoint: this.#options.eksEndpoint }),
          ...(this.#options.credentials === undefined ? {} : { credentials: this.#options.credentials }),
          ...(this.#options.requestHandler === undefined ? {} : { requestHandler: this.#options.requestHandler }),
        }),
        this.#options.clock ?? systemClock,
      );
      this.#eks.set(region, client);
    }
    return client;
  }
}

export interface EksConnectionOptions {
  /** The EKS endpoint (the twin's, or a VPC endpoint); default: the region's public one. */
  eksEndpoint?: string;
  /** Signs DescribeCluster and the tokens; default: the AWS SDK's default chain. */
  credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  /** Signing time of the tokens; default: the system clock. */
  clock?: Clock;
  /** Connection and request timeouts of the EKS client (`throwOnRequestTimeout`: a late answer is an error). */
  requestHandler?: { connectionTimeout?: number; requestTimeout?: number; throwOnRequestTimeout?: boolean };
}

/**
 * A ClusterClient that connects on first use. A cluster that cannot be reached (DescribeCluster refused, no such
 * cluster) then fails only the calls that need it, each naming the error, while the caller's other work goes on.
 */
export function lazyClusterClient(connect: () => Promise<ClusterClient>): ClusterClient {
  // A Proxy, not a hand-written delegate, so every ClusterClient method (present and future) is forwarded.
  return new Proxy({} as ClusterClient, {
    get: (_target, method: string | symbol) => {
      if (method === 'then') return undefined; // not a thenable: `await lazyClusterClient(...)` must not call it
      return async (...args: unknown[]) => {
        const client = (await connect()) as unknown as Record<string | symbol, (...a: unknown[]) => unknown>;
        const fn = client[method];
        if (typeof fn !== 'function') throw new TypeError(`ClusterClient has no method ${String(method)}`);
        return fn.apply(client, args);
      };
    },
  });
}
