/** The prefix of an EKS bearer token (aws-iam-authenticator "v1" tokens, what `aws eks get-token` prints). */
export const EKS_TOKEN_PREFIX = 'k8s-aws-v1.';

/** aws-iam-authenticator's limits (pkg/token/token.go). */
const EKS_TOKEN = {
  maxLengthBytes: 4096,
  /** A presigned GetCallerIdentity URL is valid for 15 minutes after X-Amz-Date, whatever X-Amz-Expires says. */
  validityMs: 15 * 60 * 1000,
  /** The verifier accepts X-Amz-Expires between 0 and 900 s (clients send 60, which STS ignores). */
  maxExpiresSeconds: 900,
  /** The account the twin reports for every EKS identity (it cannot ask STS whose key signed the URL). */
  account: '000000000000',
} as const;

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

/** The identity an accepted EKS token maps to. */
export interface EksIdentity {
  /** `arn:aws:sts::000000000000:assumed-role/<access key id>`: the user name RBAC messages show. */
  arn: string;
  accessKeyId: string;
  /** When the token stops being accepted (X-Amz-Date + 15 min), epoch ms. */
  expiresAtMs: number;
}

/** Why a token was refused: `reason` is for the server's log (the client only sees 401 Unauthorized). */
export type EksTokenVerdict = { accepted: true; identity: EksIdentity } | { accepted: false; reason: string };

/**
 * Checks an EKS token as aws-iam-authenticator's verifier does before it calls STS: `k8s-aws-v1.` + base64url (no
 * padding) of a presigned `https://sts[.<region>].amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15&...`
 * URL, SigV4 query parameters only, `x-k8s-aws-id` among the signed headers, X-Amz-Expires in 0..900, and not older
 * than 15 minutes after X-Amz-Date at `nowMs`.
 *
 * What the twin cannot check: the signature itself and the cluster name. The cluster name travels only inside the
 * signature (the `x-k8s-aws-id` header is signed, not put in the URL); real EKS replays the URL to STS with
 * `x-k8s-aws-id: <its cluster name>`, so STS rejects a token signed for another cluster or with a wrong key, and
 * answers with the caller's ARN, which EKS maps to a Kubernetes user through access entries / aws-auth.
 */
export function verifyEksToken(token: string, nowMs: number): EksTokenVerdict {
  const refuse = (reason: string): EksTokenVerdict => ({ accepted: false, reason });
  if (token.length > EKS_TOKEN.maxLengthBytes) return refuse('token is too large');
  if (!token.startsWith(EKS_TOKEN_PREFIX)) return refuse(`token is missing the "${EKS_TOKEN_PREFIX}" prefix`);
  const encoded = token.slice(EKS_TOKEN_PREFIX.length);
  if (!/^[A-Za-z0-9_-]*$/.test(encoded)) return refuse('token is not base64url without padding');
  let url: URL;
  try {
    url = new URL(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch {
    return refuse('token does not decode to a URL');
  }
  if (url.protocol !== 'https:') return refuse(`unexpected scheme "${url.protocol}" in pre-signed URL`);
  if (!/^sts(\.[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-\d+)?\.amazonaws\.com(\.cn)?$/.test(url.hostname) || url.port !== '') {
    return refuse(`unexpected hostname "${url.host}" in pre-signed URL`);
  }
  if (url.pathname !== '/') return refuse('unexpected path in pre-signed URL');

  const params = new Map<string, string>();
  for (const key of new Set(url.searchParams.keys())) {
    if (!ALLOWED_PARAMETERS.has(key.toLowerCase())) return refuse(`non-whitelisted query parameter "${key}"`);
    const values = url.searchParams.getAll(key);
    if (values.length !== 1) return refuse('query parameter with multiple values not supported');
    params.set(key.toLowerCase(), values[0] as string);
  }
  if (params.get('action') !== 'GetCallerIdentity') return refuse('unexpected action parameter in pre-signed URL');
  if (params.get('version') !== '2011-06-15') return refuse('unexpected version parameter in pre-signed URL');
  if (params.get('x-amz-algorithm') !== 'AWS4-HMAC-SHA256') return refuse('X-Amz-Algorithm must be AWS4-HMAC-SHA256');
  const signedHeaders = (params.get('x-amz-signedheaders') ?? '').toLowerCase().split(';');
  if (!signedHeaders.includes('x-k8s-aws-id')) {
    return refuse('client did not sign the x-k8s-aws-id header in the pre-signed URL');
  }
  const expiresText = params.get('x-amz-expires') ?? '';
  const expires = /^\d+$/.test(expiresText) ? Number(expiresText) : NaN;
  if (!(expires >= 0 && expires <= EKS_TOKEN.maxExpiresSeconds)) {
    return refuse(`invalid X-Amz-Expires parameter in pre-signed URL: ${expiresText}`);
  }
  const date = params.get('x-amz-date') ?? '';
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(date);
  if (!m) return refuse(`X-Amz-Date parameter ${JSON.stringify(date)} is not in the format 20060102T150405Z`);
  const signedAtMs = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  const expiresAtMs = signedAtMs + EKS_TOKEN.validityMs;
  if (nowMs > expiresAtMs) return refuse(`X-Amz-Date parameter is expired (15 minute expiration) ${date}`);
  const accessKeyId = (params.get('x-amz-credential') ?? '').split('/')[0] ?? '';
  if (!/^[A-Z0-9]{16,128}$/.test(accessKeyId)) return refuse('X-Amz-Credential has no access key id');
  if (!/^[0-9a-f]{64}$/.test(params.get('x-amz-signature') ?? '')) {
    return refuse('X-Amz-Signature is missing or not a SigV4 signature (64 hex digits)');
  }
  return {
    accepted: true,
    identity: { arn: `arn:aws:sts::${EKS_TOKEN.account}:assumed-role/${accessKeyId}`, accessKeyId, expiresAtMs },
  };
}
