import { describe, expect, it } from '@jest/globals';
import { createHash, createHmac } from 'node:crypto';
import { VirtualClock } from '../../clock/index.js';
import { createEksTokenProvider, EKS_TOKEN, generateEksToken, parseEksToken } from './eksToken.js';
import { KubeInvalidArgumentError, KubeTokenError, KubeTokenFormatError } from '../errors.js';

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const signedAt = Date.parse('2025-06-01T12:00:00Z');

function decode(token: string): URL {
  return new URL(Buffer.from(token.slice(EKS_TOKEN.prefix.length), 'base64url').toString('utf8'));
}

/**
 * Recomputes the SigV4 query signature by hand (AWS "Create a signed AWS API request"), with the cluster name that
 * EKS would put in the x-k8s-aws-id header when it forwards the URL to STS.
 */
function expectedSignature(url: URL, clusterName: string, secret: string): string {
  const params = [...url.searchParams.entries()].filter(([key]) => key !== 'X-Amz-Signature');
  const encode = (s: string) =>
    encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const canonicalQuery = params
    .map(([k, v]) => [encode(k), encode(v)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
  const canonicalRequest = [
    'GET',
    '/',
    canonicalQuery,
    `host:${url.hostname}\nx-k8s-aws-id:${clusterName}\n`,
    'host;x-k8s-aws-id',
    sha256(''),
  ].join('\n');
  const date = url.searchParams.get('X-Amz-Date') ?? '';
  const [, day, region, service] = (url.searchParams.get('X-Amz-Credential') ?? '').split('/');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', date, scope, sha256(canonicalRequest)].join('\n');
  const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day ?? ''), region ?? ''), service ?? ''), 'aws4_request');
  return createHmac('sha256', key).update(stringToSign).digest('hex');
}

describe('Function: generateEksToken', () => {
  it("is k8s-aws-v1. + unpadded base64url of a presigned STS GetCallerIdentity URL in the cluster's region", async () => {
    // Act
    const { token, expiresAtMs } = await generateEksToken({
      clusterName: 'ai-eks-docs',
      region: 'us-east-2',
      credentials,
      clock: new VirtualClock(signedAt + 400),
    });

    // Assess
    expect(token.startsWith('k8s-aws-v1.')).toBe(true);
    expect(token.slice('k8s-aws-v1.'.length)).toMatch(/^[A-Za-z0-9_-]+$/);
    const url = decode(token);
    expect(`${url.protocol}//${url.host}${url.pathname}`).toBe('https://sts.us-east-2.amazonaws.com/');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      Action: 'GetCallerIdentity',
      Version: '2011-06-15',
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
      'X-Amz-Credential': 'AKIDEXAMPLE/20250601/us-east-2/sts/aws4_request',
      'X-Amz-Date': '20250601T120000Z',
      'X-Amz-Expires': '60',
      'X-Amz-SignedHeaders': 'host;x-k8s-aws-id',
      'X-Amz-Signature': expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(expiresAtMs).toBe(signedAt + 60_000);
  });

  it('signs the x-k8s-aws-id header: the signature holds for its cluster and not for another', async () => {
    // Act
    const { token } = await generateEksToken({
      clusterName: 'prod',
      region: 'eu-west-1',
      credentials,
      clock: new VirtualClock(signedAt),
    });

    // Assess
    const url = decode(token);
    const signature = url.searchParams.get('X-Amz-Signature');
    expect(signature).toBe(expectedSignature(url, 'prod', credentials.secretAccessKey));
    expect(signature).not.toBe(expectedSignature(url, 'staging', credentials.secretAccessKey));
  });

  it('carries the session token of temporary credentials (roles, Pod Identity)', async () => {
    // Act
    const { token } = await generateEksToken({
      clusterName: 'prod',
      region: 'us-east-1',
      credentials: { ...credentials, sessionToken: 'FwoGZXIvYXdzE+/session==' },
      clock: new VirtualClock(signedAt),
    });

    // Assess
    expect(decode(token).searchParams.get('X-Amz-Security-Token')).toBe('FwoGZXIvYXdzE+/session==');
  });

  it('uses the China partition host for cn- regions', async () => {
    // Act
    const { token } = await generateEksToken({
      clusterName: 'c',
      region: 'cn-north-1',
      credentials,
      clock: new VirtualClock(signedAt),
    });

    // Assess
    expect(decode(token).hostname).toBe('sts.cn-north-1.amazonaws.com.cn');
  });

  it('fails with KubeTokenError when no credentials can be resolved', async () => {
    // Act
    const error = await generateEksToken({
      clusterName: 'prod',
      region: 'us-east-1',
      credentials: () => Promise.reject(new Error('Could not load credentials from any providers')),
    }).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(KubeTokenError);
    expect((error as Error).message).toBe(
      'could not create an EKS token for cluster prod: Could not load credentials from any providers',
    );
  });

  it('refuses a region that is not an AWS region name', async () => {
    // Act
    const error = await generateEksToken({ clusterName: 'prod', region: 'Ohio', credentials }).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(KubeInvalidArgumentError);
    expect((error as Error).message).toMatch(/^region: "Ohio"/);
  });
});

describe('Function: createEksTokenProvider', () => {
  it('reuses a token until 10 s before it expires, then signs a new one', async () => {
    // Prepare
    const clock = new VirtualClock(signedAt);
    const token = createEksTokenProvider({ clusterName: 'prod', region: 'us-east-1', credentials, clock });

    // Act
    const first = await token();
    clock.advance(49_999);
    const reused = await token();
    clock.advance(1);
    const renewed = await token();

    // Assess
    expect(reused).toBe(first);
    expect(renewed).not.toBe(first);
    expect(decode(renewed).searchParams.get('X-Amz-Date')).toBe('20250601T120050Z');
  });

  it('signs once for concurrent callers', async () => {
    // Prepare
    let resolutions = 0;
    const token = createEksTokenProvider({
      clusterName: 'prod',
      region: 'us-east-1',
      credentials: () => {
        resolutions += 1;
        return Promise.resolve(credentials);
      },
      clock: new VirtualClock(signedAt),
    });

    // Act
    const tokens = await Promise.all([token(), token(), token()]);

    // Assess
    expect(new Set(tokens).size).toBe(1);
    expect(resolutions).toBe(1);
  });
});

describe('Function: parseEksToken', () => {
  it('reads back what the generator wrote', async () => {
    // Prepare
    const { token } = await generateEksToken({
      clusterName: 'prod',
      region: 'ap-south-1',
      credentials,
      clock: new VirtualClock(signedAt),
    });

    // Act
    const parsed = parseEksToken(token);

    // Assess
    expect(parsed).toMatchObject({
      accessKeyId: 'AKIDEXAMPLE',
      region: 'ap-south-1',
      signedAtMs: signedAt,
      validUntilMs: signedAt + 15 * 60_000,
      expiresSeconds: 60,
      signedHeaders: ['host', 'x-k8s-aws-id'],
      hasSessionToken: false,
    });
  });

  const stsUrl = (query: string, host = 'sts.us-east-1.amazonaws.com', path = '/') =>
    `k8s-aws-v1.${Buffer.from(`https://${host}${path}?${query}`).toString('base64url')}`;
  const good =
    'Action=GetCallerIdentity&Version=2011-06-15&X-Amz-Algorithm=AWS4-HMAC-SHA256' +
    '&X-Amz-Credential=AKID%2F20250601%2Fus-east-1%2Fsts%2Faws4_request&X-Amz-Date=20250601T120000Z' +
    '&X-Amz-Expires=60&X-Amz-SignedHeaders=host%3Bx-k8s-aws-id&X-Amz-Signature=abc';

  it.each([
    { case: 'no prefix', token: 'abc.def', problem: /missing the "k8s-aws-v1\." prefix/ },
    { case: 'padding or other base64', token: 'k8s-aws-v1.aGVsbG8=', problem: /not base64url/ },
    { case: 'a host that is not STS', token: stsUrl(good, 'evil.example.com'), problem: /unexpected host/ },
    { case: 'a path', token: stsUrl(good, undefined, '/x'), problem: /unexpected path/ },
    { case: 'another action', token: stsUrl(good.replace('GetCallerIdentity', 'AssumeRole')), problem: /Action/ },
    { case: 'an extra parameter', token: stsUrl(`${good}&Foo=1`), problem: /unexpected query parameter "Foo"/ },
    {
      case: 'the cluster header not signed',
      token: stsUrl(good.replace('host%3Bx-k8s-aws-id', 'host')),
      problem: /x-k8s-aws-id header is not signed/,
    },
    {
      case: 'X-Amz-Expires over 900',
      token: stsUrl(good.replace('X-Amz-Expires=60', 'X-Amz-Expires=901')),
      problem: /X-Amz-Expires/,
    },
    {
      case: 'no signature',
      token: stsUrl(good.replace('&X-Amz-Signature=abc', '')),
      problem: /X-Amz-Signature is missing/,
    },
  ])('refuses $case', ({ token, problem }) => {
    // Act
    const act = () => parseEksToken(token);

    // Assess
    expect(act).toThrow(KubeTokenFormatError);
    expect(act).toThrow(problem);
  });
});
