import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';

/** AWS's documentation example key pair: never valid anywhere, fine for signing test tokens. */
export const EXAMPLE_CREDENTIALS = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
} as const;

/**
 * An EKS token made as `aws eks get-token` makes it: a SigV4-presigned STS GetCallerIdentity URL with the cluster name
 * in the signed `x-k8s-aws-id` header, base64url without padding, behind `k8s-aws-v1.`. For tests only.
 */
export async function makeEksToken(options: {
  clusterName: string;
  region: string;
  signedAtMs: number;
  expiresSeconds?: number;
  /** Rewrites the presigned URL before encoding (to build malformed tokens). */
  tamper?: (url: URL) => void;
}): Promise<string> {
  const hostname = `sts.${options.region}.amazonaws.com`;
  const signer = new SignatureV4({
    credentials: EXAMPLE_CREDENTIALS,
    region: options.region,
    service: 'sts',
    sha256: Sha256,
  });
  const request = new HttpRequest({
    method: 'GET',
    protocol: 'https:',
    hostname,
    path: '/',
    query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
    headers: { host: hostname, 'x-k8s-aws-id': options.clusterName },
  });
  const signed = await signer.presign(request, {
    expiresIn: options.expiresSeconds ?? 60,
    signingDate: new Date(options.signedAtMs),
  });
  const url = new URL(`https://${hostname}/`);
  for (const [key, value] of Object.entries(signed.query ?? {})) url.searchParams.set(key, String(value));
  options.tamper?.(url);
  return `k8s-aws-v1.${Buffer.from(url.toString(), 'utf8').toString('base64url')}`;
}
