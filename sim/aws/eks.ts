import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, systemClock } from '../../shared/clock/index.js';
import type { AccessEntry, EksAccessEntries } from '../kube/server/accessEntries.js';
import { EksAccessEntryInvalidError } from '../kube/server/errors.js';

/** A cluster the twin describes: its name, the URL of its API server (the twin's), and its region. */
export interface EksTwinCluster {
  name: string;
  /** The API server URL DescribeCluster returns, e.g. the twin API server's `http://127.0.0.1:<port>`. */
  endpoint: string;
  region: string;
  /** Base64 PEM of the cluster CA; empty for a plain-HTTP endpoint. Default ''. */
  certificateAuthorityData?: string;
  /** Kubernetes version reported. Default '1.30'. */
  version?: string;
  /**
   * The cluster's access entries, which its API server consults (sim/kube/server/accessEntries.ts): CreateAccessEntry,
   * DescribeAccessEntry and ListAccessEntries act on them. Without them those operations answer 404.
   */
  accessEntries?: EksAccessEntries;
}

export interface EksTwinOptions {
  clusters?: EksTwinCluster[];
  /** The account in ARNs. Default 123456789012. */
  accountId?: string;
  /** Source of `createdAt`. */
  clock?: Clock;
  /** One line per request, for the demo and debugging. */
  log?: (line: string) => void;
}

export interface EksTwin {
  /** `http://127.0.0.1:<port>`: give it to `new EKSClient({ endpoint })`. */
  endpoint: string;
  /** Adds or replaces a cluster (the API server may start after the EKS twin). */
  setCluster(cluster: EksTwinCluster): void;
  /** How many DescribeCluster requests were answered (a cache test reads it). */
  describeCount(): number;
  stop(): Promise<void>;
}

/** EKS cluster names (CreateCluster): 1-100 alphanumerics, `-` or `_`, starting with an alphanumeric. */
const CLUSTER_NAME = /^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$/;
/** SigV4 `Credential=<key>/<date>/<region>/<service>/aws4_request` in the Authorization header. */
const CREDENTIAL_SCOPE = /Credential=[^/]+\/\d{8}\/([a-z0-9-]+)\/([a-z0-9-]+)\/aws4_request/;

/** The error shapes the twin sends; @aws-sdk/client-eks reads the name from `x-amzn-errortype`. */
type EksErrorType =
  | 'ResourceNotFoundException'
  | 'ResourceInUseException'
  | 'InvalidParameterException'
  | 'AccessDeniedException'
  | 'MissingAuthenticationTokenException'
  | 'UnknownOperationException';

class EksTwinRequestError extends Error {
  constructor(
    readonly type: EksErrorType,
    readonly status: number,
    message: string,
    readonly extra: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'EksTwinRequestError';
  }
}

/**
 * Starts the twin's EKS endpoint on 127.0.0.1 (a free port). It answers DescribeCluster (`GET /clusters/{name}`) and,
 * for a cluster given its access entries, CreateAccessEntry, DescribeAccessEntry and ListAccessEntries, as
 * @aws-sdk/client-eks expects: an Authorization header is required (the signature is not checked), a cluster is only
 * found in the region the request was signed for, and an unknown name is a 404 ResourceNotFoundException.
 */
export async function startEksTwin(options: EksTwinOptions = {}): Promise<EksTwin> {
  const clock = options.clock ?? systemClock;
  const accountId = options.accountId ?? '123456789012';
  const createdAtSeconds = Math.floor(clock.now() / 1000);
  const clusters = new Map<string, EksTwinCluster>();
  for (const cluster of options.clusters ?? []) clusters.set(cluster.name, cluster);
  let described = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        route(req, res, Buffer.concat(chunks).toString('utf8'));
      } catch (error) {
        if (error instanceof EksTwinRequestError) return sendError(res, error);
        sendJson(res, 500, { message: error instanceof Error ? error.message : String(error) });
      }
    });
  });

  function route(req: IncomingMessage, res: ServerResponse, body: string): void {
    const path = new URL(req.url ?? '/', 'http://twin').pathname;
    const entries = /^\/clusters\/([^/]+)\/access-entries(?:\/([^/]+))?$/.exec(path);
    if (entries !== null) return accessEntries(req, res, body, entries[1] ?? '', entries[2]);
    const match = /^\/clusters\/([^/]+)$/.exec(path);
    if (req.method !== 'GET' || !match)
      throw new EksTwinRequestError(
        'UnknownOperationException',
        404,
        `the EKS twin implements DescribeCluster (GET /clusters/{name}) and Create/Describe/ListAccessEntries ` +
          `(/clusters/{name}/access-entries), got ${req.method ?? ''} ${path}`,
      );
    const region = signedRegion(req);
    const name = decodeURIComponent(match[1] ?? '');
    if (!CLUSTER_NAME.test(name))
      throw new EksTwinRequestError('InvalidParameterException', 400, `The cluster name ${name} is not valid.`, {
        clusterName: name,
      });
    const cluster = clusterIn(region, name, 'DescribeCluster');
    described += 1;
    options.log?.(`eks twin: DescribeCluster ${name} (${region}) -> ${cluster.endpoint}`);
    res.setHeader('x-amzn-requestid', randomUUID());
    sendJson(res, 200, { cluster: describe(cluster) });
  }

  /** The cluster of a request signed for `region`, or 404 as EKS answers. */
  function clusterIn(region: string, name: string, operation: string): EksTwinCluster {
    const cluster = clusters.get(name);
    if (cluster === undefined || cluster.region !== region) {
      options.log?.(`eks twin: ${operation} ${name} (${region}) -> 404`);
      throw new EksTwinRequestError('ResourceNotFoundException', 404, `No cluster found for name: ${name}.`, {
        clusterName: name,
      });
    }
    return cluster;
  }

  /** CreateAccessEntry (POST), DescribeAccessEntry (GET with a principal), ListAccessEntries (GET without). */
  function accessEntries(
    req: IncomingMessage,
    res: ServerResponse,
    body: string,
    clusterName: string,
    principal: string | undefined,
  ): void {
    const region = signedRegion(req);
    const name = decodeURIComponent(clusterName);
    const operation =
      req.method === 'POST' ? 'CreateAccessEntry' : principal ? 'DescribeAccessEntry' : 'ListAccessEntries';
    const cluster = clusterIn(region, name, operation);
    const store = cluster.accessEntries;
    if (store === undefined || (req.method !== 'GET' && !(req.method === 'POST' && principal === undefined)))
      throw new EksTwinRequestError('UnknownOperationException', 404, `${req.method ?? ''} ${req.url ?? ''}`);
    res.setHeader('x-amzn-requestid', randomUUID());
    const shown = (entry: AccessEntry) => accessEntryOf(cluster, entry);
    if (req.method === 'GET' && principal === undefined)
      return sendJson(res, 200, { accessEntries: store.list().map((entry) => entry.principalArn) });
    if (req.method === 'GET') {
      const principalArn = decodeURIComponent(principal ?? '');
      const entry = store.describe(principalArn);
      if (entry === undefined)
        throw new EksTwinRequestError(
          'ResourceNotFoundException',
          404,
          `The specified access entry resource is not found for principal ${principalArn}.`,
        );
      return sendJson(res, 200, { accessEntry: shown(entry) });
    }
    const input = parseAccessEntryBody(body);
    try {
      const entry = store.create(input);
      options.log?.(`eks twin: CreateAccessEntry ${name} ${entry.principalArn} -> ${entry.kubernetesGroups.join(',')}`);
      sendJson(res, 200, { accessEntry: shown(entry) });
    } catch (error) {
      if (!(error instanceof EksAccessEntryInvalidError)) throw error;
      const inUse = /already exists/.test(error.problem);
      throw new EksTwinRequestError(
        inUse ? 'ResourceInUseException' : 'InvalidParameterException',
        inUse ? 409 : 400,
        error.message,
        { clusterName: name },
      );
    }
  }

  function accessEntryOf(cluster: EksTwinCluster, entry: AccessEntry): Record<string, unknown> {
    return {
      clusterName: cluster.name,
      principalArn: entry.principalArn,
      kubernetesGroups: [...entry.kubernetesGroups],
      accessEntryArn: `arn:aws:eks:${cluster.region}:${accountId}:access-entry/${cluster.name}/${entry.principalArn.split(':').at(-1) ?? ''}`,
      createdAt: createdAtSeconds,
      modifiedAt: createdAtSeconds,
      tags: {},
      username: entry.username,
      type: 'STANDARD',
    };
  }

  function describe(cluster: EksTwinCluster): Record<string, unknown> {
    const arn = `arn:aws:eks:${cluster.region}:${accountId}:cluster/${cluster.name}`;
    return {
      name: cluster.name,
      arn,
      createdAt: createdAtSeconds,
      version: cluster.version ?? '1.30',
      endpoint: cluster.endpoint,
      roleArn: `arn:aws:iam::${accountId}:role/${cluster.name}-cluster-role`,
      resourcesVpcConfig: {
        subnetIds: [],
        securityGroupIds: [],
        vpcId: 'vpc-twin',
        endpointPublicAccess: true,
        endpointPrivateAccess: false,
        publicAccessCidrs: ['0.0.0.0/0'],
      },
      kubernetesNetworkConfig: { serviceIpv4Cidr: '10.100.0.0/16', ipFamily: 'ipv4' },
      identity: { oidc: { issuer: `https://oidc.eks.${cluster.region}.amazonaws.com/id/TWIN` } },
      status: 'ACTIVE',
      certificateAuthority: { data: cluster.certificateAuthorityData ?? '' },
      platformVersion: 'eks.1',
      tags: {},
      accessConfig: { authenticationMode: 'API_AND_CONFIG_MAP' },
    };
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    setCluster: (cluster) => {
      clusters.set(cluster.name, cluster);
    },
    describeCount: () => described,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // The SDK's agent keeps sockets alive; they would hold close() open.
        server.closeAllConnections();
      }),
  };
}

/** CreateAccessEntry's JSON body: the fields the twin honours; only the `STANDARD` type (what the product needs). */
function parseAccessEntryBody(body: string): { principalArn: string; kubernetesGroups?: string[]; username?: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body === '' ? '{}' : body);
  } catch {
    throw new EksTwinRequestError('InvalidParameterException', 400, 'the request body is not JSON');
  }
  const input = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  if (typeof input.principalArn !== 'string')
    throw new EksTwinRequestError('InvalidParameterException', 400, 'principalArn is required');
  if (input.type !== undefined && input.type !== 'STANDARD')
    throw new EksTwinRequestError(
      'InvalidParameterException',
      400,
      `type ${JSON.stringify(input.type)}: the EKS twin accepts only STANDARD access entries`,
    );
  const groups = input.kubernetesGroups;
  if (groups !== undefined && !(Array.isArray(groups) && groups.every((g) => typeof g === 'string')))
    throw new EksTwinRequestError('InvalidParameterException', 400, 'kubernetesGroups must be a list of strings');
  return {
    principalArn: input.principalArn,
    ...(groups === undefined ? {} : { kubernetesGroups: groups }),
    ...(typeof input.username === 'string' ? { username: input.username } : {}),
  };
}

/** The region of the SigV4 credential scope; AWS answers 403 without a signature. */
function signedRegion(req: IncomingMessage): string {
  const authorization = req.headers.authorization;
  if (!authorization)
    throw new EksTwinRequestError('MissingAuthenticationTokenException', 403, 'Missing Authentication Token');
  const scope = CREDENTIAL_SCOPE.exec(authorization);
  if (!scope || scope[2] !== 'eks')
    throw new EksTwinRequestError(
      'AccessDeniedException',
      403,
      'The Authorization header is not a SigV4 signature for the service "eks"',
    );
  return scope[1] ?? '';
}

function sendError(res: ServerResponse, error: EksTwinRequestError): void {
  res.setHeader('x-amzn-errortype', error.type);
  res.setHeader('x-amzn-requestid', randomUUID());
  sendJson(res, error.status, { message: error.message, ...error.extra });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
