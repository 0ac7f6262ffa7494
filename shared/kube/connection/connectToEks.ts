import { DescribeClusterCommand, EKSClient } from '@aws-sdk/client-eks';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import type { Clock } from '../../clock/index.js';
import { bearerTokenConnection } from './clientNodeConfiguration.js';
import { KubeClusterLookupError, KubeClusterNotFoundError, KubeInvalidArgumentError } from '../errors.js';
import { createEksTokenProvider } from './eksToken.js';
import { KubeClusterClient } from './KubeClusterClient.js';
import type { ClusterClient } from '../types.js';

export interface ConnectToEksOptions {
  clusterName: string;
  region: string;
  /**
   * The EKS client for DescribeCluster (give one with `endpoint` to reach the twin). Cluster lookups are cached per
   * client for the life of the process; without one, a client per region is shared.
   */
  eks?: EKSClient;
  /** Signs the EKS tokens (and DescribeCluster when no `eks` is given). Default: the AWS SDK's default chain. */
  credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  /** Signing time of the tokens. Default: the system clock. */
  clock?: Clock;
}

/** Where a cluster's API server is and how to trust it, from eks:DescribeCluster. */
export interface EksClusterEndpoint {
  endpoint: string;
  /** Base64 PEM of the cluster CA (empty for the twin's plain-HTTP endpoint). */
  certificateAuthorityData: string;
}

const lookups = new WeakMap<EKSClient, Map<string, Promise<EksClusterEndpoint>>>();
const sharedClients = new Map<string, EKSClient>();

/**
 * A ClusterClient for an EKS cluster: endpoint and CA from eks:DescribeCluster (cached), and a bearer token signed
 * for the cluster on each request (reused until shortly before it expires). An `http://` endpoint, which only the
 * twin has, is used without TLS.
 */
export async function connectToEks(options: ConnectToEksOptions): Promise<ClusterClient> {
  const { clusterName, region } = options;
  if (typeof clusterName !== 'string' || clusterName === '')
    throw new KubeInvalidArgumentError('clusterName', 'is missing or empty', 'the EKS cluster name');
  const cluster = await describeEksCluster(eksClientFor(options), clusterName, region);
  const token = createEksTokenProvider({ clusterName, region, credentials: options.credentials, clock: options.clock });

  // A client-node Configuration without a KubeConfig: the bearer token on each request, the cluster CA over https.
  return new KubeClusterClient(
    bearerTokenConnection({
      server: cluster.endpoint,
      certificateAuthorityData: cluster.certificateAuthorityData,
      token,
    }),
  );
}

/** eks:DescribeCluster through `eks`, once per cluster name per client; a failed lookup is not cached. */
export function describeEksCluster(eks: EKSClient, clusterName: string, region: string): Promise<EksClusterEndpoint> {
  let byName = lookups.get(eks);
  if (byName === undefined) {
    byName = new Map();
    lookups.set(eks, byName);
  }
  const cached = byName.get(clusterName);
  if (cached !== undefined) return cached;
  const lookup = lookUp(eks, clusterName, region);
  byName.set(clusterName, lookup);
  lookup.catch(() => byName.delete(clusterName));
  return lookup;
}

async function lookUp(eks: EKSClient, clusterName: string, region: string): Promise<EksClusterEndpoint> {
  let cluster;
  try {
    ({ cluster } = await eks.send(new DescribeClusterCommand({ name: clusterName })));
  } catch (error) {
    const e = error as Error & { $fault?: string; $retryable?: unknown; $metadata?: { httpStatusCode?: number } };
    if (e.name === 'ResourceNotFoundException') throw new KubeClusterNotFoundError(clusterName, region, error);
    // Throttling, 5xx and network failures (no HTTP status) may pass; access denied or bad input will not.
    const retryable =
      e.$fault === 'server' ||
      e.$retryable !== undefined ||
      e.name === 'ThrottlingException' ||
      e.$metadata?.httpStatusCode === undefined;
    throw new KubeClusterLookupError(
      clusterName,
      `eks:DescribeCluster failed: ${e.name}: ${e.message}`,
      retryable,
      error,
    );
  }
  const endpoint = cluster?.endpoint;
  if (endpoint === undefined || endpoint === '') {
    const status = cluster?.status ?? 'UNKNOWN';
    throw new KubeClusterLookupError(
      clusterName,
      `has no API server endpoint yet (status ${status})`,
      status === 'CREATING' || status === 'UPDATING',
    );
  }
  return { endpoint, certificateAuthorityData: cluster?.certificateAuthority?.data ?? '' };
}

function eksClientFor(options: ConnectToEksOptions): EKSClient {
  if (options.eks !== undefined) return options.eks;
  // Caller-specific credentials get their own client: a shared one would sign with someone else's identity.
  if (options.credentials !== undefined)
    return new EKSClient({ region: options.region, credentials: options.credentials });
  let client = sharedClients.get(options.region);
  if (client === undefined) {
    client = new EKSClient({ region: options.region });
    sharedClients.set(options.region, client);
  }
  return client;
}
