/**
 * EKS bearer tokens, as `aws eks get-token` and aws-iam-authenticator make them (pkg/token/token.go): a presigned
 * STS GetCallerIdentity URL whose signature covers the header `x-k8s-aws-id: <cluster>`, base64url-encoded without
 * padding, behind the prefix `k8s-aws-v1.`. EKS checks the token by sending that URL to STS with the header set to
 * its own cluster name, so a token only works for the cluster it was made for. Making one is local signing work:
 * no network call.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { type Clock, systemClock } from '../../clock/index.js';
import { KubeInvalidArgumentError, KubeTokenError, KubeTokenFormatError } from '../errors.js';
import { REGION } from '../../config/index.js';

export const EKS_TOKEN = {
  prefix: 'k8s-aws-v1.',
  /** The signed header that binds the token to one cluster. */
  clusterIdHeader: 'x-k8s-aws-id',
  /**
   * X-Amz-Expires of the presigned URL. aws-iam-authenticator signs 60 (old authenticators reject more); STS in fact
   * accepts the URL for 15 minutes after X-Amz-Date. This client treats 60 s as the lifetime, so it never sends a
   * token that a verifier honouring X-Amz-Expires would refuse.
   */
  expiresSeconds: 60,
  /** A cached token is replaced this long before it expires, so it cannot expire on the wire. */
  refreshMarginMs: 10_000,
  /** How long EKS accepts a token after X-Amz-Date, whatever X-Amz-Expires says (token.go presignedURLExpiration). */
  serverValidityMs: 15 * 60_000,
  /** aws-iam-authenticator refuses longer tokens (maxTokenLenBytes). */
  maxLength: 4096,
} as const;

const STS_ACTION = { Action: 'GetCallerIdentity', Version: '2011-06-15' } as const;
/** The query parameters aws-iam-authenticator accepts in the URL (parameterWhitelist), lower-cased. */
const ALLOWED_PARAMETERS: ReadonlySet<string> = new Set([
  'action',
  'version',
  'x-amz-algorithm',
  'x-amz-credential',
  'x-amz-date',
  'x-amz-expires',
  'x-amz-security-token',
  'x-amz-signature',
  'x-amz-signedheaders',
]);
const STS_HOST = /^sts(\.[a-z0-9-]+)?\.amazonaws\.com(\.cn)?$/;

export interface EksTokenOptions {
  clusterName: string;
  /** The region of the STS endpoint that signs (the cluster's region). */
  region: string;
  /** Default: the AWS SDK's default chain (env, SSO, IRSA, EKS Pod Identity, Lambda role, ...). */
  credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  /** The signing time. Default: the system clock. */
  clock?: Clock;
}

export interface EksToken {
  token: string;
  /** Epoch ms after which this client no longer uses it (X-Amz-Date + X-Amz-Expires). */
  expiresAtMs: number;
}

/** The regional STS endpoint host: `sts.<region>.amazonaws.com` (`.com.cn` in the China partition). */
export function stsHost(region: string): string {
  if (!REGION.test(region))
    throw new KubeInvalidArgumentError(
      'region',
      `${JSON.stringify(region)} is not an AWS region name`,
      'a region such as "us-east-2"',
    );
  return `sts.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`;
}

/** Makes a fresh EKS token for `clusterName`; credential failures become `KubeTokenError`. */
export async function generateEksToken(options: EksTokenOptions): Promise<EksToken> {
  const { clusterName, region } = options;
  const clock = options.clock ?? systemClock;
  const hostname = stsHost(region);
  // SigV4 dates have one-second resolution; the token's life is counted from the date it carries.
  const signedAtMs = Math.floor(clock.now() / 1000) * 1000;
  const signer = new SignatureV4({
    credentials: options.credentials ?? defaultProvider(),
    region,
    service: 'sts',
    sha256: Sha256,
  });
  const request = new HttpRequest({
    method: 'GET',
    protocol: 'https:',
    hostname,
    path: '/',
    query: { ...STS_ACTION },
    headers: { host: hostname, [EKS_TOKEN.clusterIdHeader]: clusterName },
  });
  let presigned: HttpRequest;
  try {
    presigned = (await signer.presign(request, {
      expiresIn: EKS_TOKEN.expiresSeconds,
      signingDate: new Date(signedAtMs),
    })) as HttpRequest;
  } catch (error) {
    throw new KubeTokenError(clusterName, error instanceof Error ? error : new Error(String(error)));
  }
  const query = Object.entries(presigned.query)
    .filter((entry): entry is [string, string] => typeof entry[1] === 'string')
    .map(([key, value]) => `${rfc3986(key)}=${rfc3986(value)}`)
    .join('&');
  const url = `https://${hostname}/?${query}`;
  return {
    token: `${EKS_TOKEN.prefix}${Buffer.from(url, 'utf8').toString('base64url')}`,
    expiresAtMs: signedAtMs + EKS_TOKEN.expiresSeconds * 1000,
  };
}

/**
 * Returns a function giving a valid token for the cluster: the cached one until `refreshMarginMs` before it
 * expires, then a new one. Concurrent callers share one signing.
 */
export function createEksTokenProvider(options: EksTokenOptions): () => Promise<string> {
  const clock = options.clock ?? systemClock;
  let current: EksToken | undefined;
  let pending: Promise<EksToken> | undefined;
  return async function eksToken(): Promise<string> {
    if (current !== undefined && clock.now() < current.expiresAtMs - EKS_TOKEN.refreshMarginMs) return current.token;
    pending ??= generateEksToken(options).finally(() => {
      pending = undefined;
    });
    current = await pending;
    return current.token;
  };
}

/** What a token says, once its format has been checked (the signature itself only STS can check). */
export interface ParsedEksToken {
  /** The presigned STS URL. */
  url: URL;
  /** From X-Amz-Credential: `<access key id>/<date>/<region>/sts/aws4_request`. */
  accessKeyId: string;
  region: string;
  /** X-Amz-Date as epoch ms. */
  signedAtMs: number;
  /** Until when EKS accepts it: X-Amz-Date + 15 minutes, whatever X-Amz-Expires says. */
  validUntilMs: number;
  expiresSeconds: number;
  signedHeaders: string[];
  /** Whether an STS session token is included (temporary credentials: roles, IRSA, Pod Identity). */
  hasSessionToken: boolean;
}

/**
 * Checks a bearer token the way aws-iam-authenticator's verifier does before it calls STS (prefix, base64url, an
 * https STS host, path `/`, only the expected query parameters, Action=GetCallerIdentity, `x-k8s-aws-id` signed,
 * 0 <= X-Amz-Expires <= 900, X-Amz-Date present). Throws `KubeTokenFormatError` naming the first problem.
 */
export function parseEksToken(token: string): ParsedEksToken {
  if (token.length > EKS_TOKEN.maxLength)
    throw new KubeTokenFormatError(`longer than ${EKS_TOKEN.maxLength} characters`);
  if (!token.startsWith(EKS_TOKEN.prefix)) throw new KubeTokenFormatError(`missing the "${EKS_TOKEN.prefix}" prefix`);
  const encoded = token.slice(EKS_TOKEN.prefix.length);
  if (!/^[A-Za-z0-9_-]+$/.test(encoded))
    throw new KubeTokenFormatError('the part after the prefix is not base64url without padding');
  let url: URL;
  try {
    url = new URL(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch {
    throw new KubeTokenFormatError('the decoded text is not a URL');
  }
  if (url.protocol !== 'https:') throw new KubeTokenFormatError(`unexpected scheme ${JSON.stringify(url.protocol)}`);
  if (!STS_HOST.test(url.hostname)) throw new KubeTokenFormatError(`unexpected host ${JSON.stringify(url.hostname)}`);
  if (url.pathname !== '/') throw new KubeTokenFormatError(`unexpected path ${JSON.stringify(url.pathname)}`);
  const params = new Map<string, string>();
  for (const key of new Set(url.searchParams.keys())) {
    const lower = key.toLowerCase();
    if (!ALLOWED_PARAMETERS.has(lower))
      throw new KubeTokenFormatError(`unexpected query parameter ${JSON.stringify(key)}`);
    const values = url.searchParams.getAll(key);
    if (values.length !== 1) throw new KubeTokenFormatError(`query parameter ${key} appears more than once`);
    params.set(lower, values[0] ?? '');
  }
  if (params.get('action') !== STS_ACTION.Action) throw new KubeTokenFormatError('Action is not GetCallerIdentity');
  const signedHeaders = (params.get('x-amz-signedheaders') ?? '').split(';').filter((h) => h !== '');
  if (!signedHeaders.some((h) => h.toLowerCase() === EKS_TOKEN.clusterIdHeader))
    throw new KubeTokenFormatError(`the ${EKS_TOKEN.clusterIdHeader} header is not signed`);
  const expiresText = params.get('x-amz-expires') ?? '';
  const expiresSeconds = Number(expiresText);
  if (!/^\d+$/.test(expiresText) || expiresSeconds > 900)
    throw new KubeTokenFormatError(`X-Amz-Expires ${JSON.stringify(expiresText)} is not an integer from 0 to 900`);
  const date = params.get('x-amz-date') ?? '';
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(date);
  if (!match) throw new KubeTokenFormatError(`X-Amz-Date ${JSON.stringify(date)} is not of the form YYYYMMDDTHHMMSSZ`);
  const [, y, mo, d, h, mi, s] = match.map(Number) as [number, number, number, number, number, number, number];
  const signedAtMs = Date.UTC(y, mo - 1, d, h, mi, s);
  const credential = (params.get('x-amz-credential') ?? '').split('/');
  if (credential.length !== 5 || credential[3] !== 'sts' || credential[4] !== 'aws4_request')
    throw new KubeTokenFormatError('X-Amz-Credential is not <key>/<date>/<region>/sts/aws4_request');
  if (!params.get('x-amz-signature')) throw new KubeTokenFormatError('X-Amz-Signature is missing');
  return {
    url,
    accessKeyId: credential[0] ?? '',
    region: credential[2] ?? '',
    signedAtMs,
    validUntilMs: signedAtMs + EKS_TOKEN.serverValidityMs,
    expiresSeconds,
    signedHeaders,
    hasSessionToken: params.has('x-amz-security-token'),
  };
}

/** RFC 3986 percent-encoding (SigV4's), so the URL reads exactly as the canonical query that was signed. */
function rfc3986(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
