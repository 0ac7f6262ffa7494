import { describe, expect, it } from '@jest/globals';
import { verifyEksToken } from './eksToken.js';
import { EXAMPLE_CREDENTIALS, makeEksToken } from './testSupport.js';

const SIGNED_AT_MS = Date.UTC(2025, 5, 1, 12, 0, 0);
const MINUTE = 60_000;

describe('Function: verifyEksToken', () => {
  it('accepts a presigned GetCallerIdentity token and names the STS identity by its access key', async () => {
    // Prepare
    const token = await makeEksToken({ clusterName: 'vllm-demo', region: 'us-east-2', signedAtMs: SIGNED_AT_MS });

    // Act
    const verdict = verifyEksToken(token, SIGNED_AT_MS + MINUTE);

    // Assess
    expect(verdict).toEqual({
      accepted: true,
      identity: {
        arn: `arn:aws:sts::000000000000:assumed-role/${EXAMPLE_CREDENTIALS.accessKeyId}`,
        accessKeyId: EXAMPLE_CREDENTIALS.accessKeyId,
        expiresAtMs: SIGNED_AT_MS + 15 * MINUTE,
      },
    });
  });

  it.each([
    { case: '14 minutes after signing', afterMs: 14 * MINUTE, accepted: true },
    { case: '15 minutes after signing', afterMs: 15 * MINUTE, accepted: true },
    { case: '16 minutes after signing', afterMs: 16 * MINUTE, accepted: false },
  ])('is valid for 15 minutes after X-Amz-Date whatever X-Amz-Expires says: $case', async ({ afterMs, accepted }) => {
    // Prepare
    const token = await makeEksToken({ clusterName: 'c', region: 'us-east-2', signedAtMs: SIGNED_AT_MS });

    // Act
    const verdict = verifyEksToken(token, SIGNED_AT_MS + afterMs);

    // Assess
    expect(verdict.accepted).toBe(accepted);
    if (!verdict.accepted) expect(verdict.reason).toContain('X-Amz-Date parameter is expired');
  });

  it.each([
    { case: 'no prefix', token: () => 'abc', reason: 'missing the "k8s-aws-v1." prefix' },
    { case: 'not base64url', token: () => 'k8s-aws-v1.a+b/c==', reason: 'base64url' },
    { case: 'a token too long', token: () => `k8s-aws-v1.${'A'.repeat(5000)}`, reason: 'too large' },
  ])('refuses $case', ({ token, reason }) => {
    // Act
    const verdict = verifyEksToken(token(), SIGNED_AT_MS);

    // Assess
    expect(verdict).toEqual({ accepted: false, reason: expect.stringContaining(reason) });
  });

  it.each([
    { case: 'http instead of https', tamper: (u: URL) => (u.protocol = 'http:'), reason: 'unexpected scheme' },
    { case: 'another host', tamper: (u: URL) => (u.hostname = 'sts.evil.example.com'), reason: 'unexpected hostname' },
    { case: 'another path', tamper: (u: URL) => (u.pathname = '/x'), reason: 'unexpected path' },
    {
      case: 'another action',
      tamper: (u: URL) => u.searchParams.set('Action', 'AssumeRole'),
      reason: 'unexpected action',
    },
    {
      case: 'an extra parameter',
      tamper: (u: URL) => u.searchParams.set('Foo', 'bar'),
      reason: 'non-whitelisted query parameter',
    },
    {
      case: 'the cluster header not signed',
      tamper: (u: URL) => u.searchParams.set('X-Amz-SignedHeaders', 'host'),
      reason: 'did not sign the x-k8s-aws-id header',
    },
    {
      case: 'X-Amz-Expires above 900',
      tamper: (u: URL) => u.searchParams.set('X-Amz-Expires', '901'),
      reason: 'invalid X-Amz-Expires',
    },
    {
      case: 'no signature',
      tamper: (u: URL) => u.searchParams.delete('X-Amz-Signature'),
      reason: 'X-Amz-Signature is missing',
    },
    {
      case: 'another algorithm',
      tamper: (u: URL) => u.searchParams.set('X-Amz-Algorithm', 'AWS4-HMAC-SHA1'),
      reason: 'X-Amz-Algorithm',
    },
  ])('refuses a presigned URL with $case', async ({ tamper, reason }) => {
    // Prepare
    const token = await makeEksToken({ clusterName: 'c', region: 'us-east-2', signedAtMs: SIGNED_AT_MS, tamper });

    // Act
    const verdict = verifyEksToken(token, SIGNED_AT_MS);

    // Assess
    expect(verdict).toEqual({ accepted: false, reason: expect.stringContaining(reason) });
  });

  it.each([
    { case: 'the global endpoint', host: 'sts.amazonaws.com' },
    { case: 'another region', host: 'sts.eu-west-1.amazonaws.com' },
  ])('accepts $case, as the real verifier accepts every STS endpoint of the partition', async ({ host }) => {
    // Prepare
    const token = await makeEksToken({
      clusterName: 'c',
      region: 'us-east-2',
      signedAtMs: SIGNED_AT_MS,
      tamper: (u) => (u.hostname = host),
    });

    // Act
    const verdict = verifyEksToken(token, SIGNED_AT_MS);

    // Assess
    expect(verdict.accepted).toBe(true);
  });
});
