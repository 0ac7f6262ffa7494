import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';

/** A PEM certificate and its private key, for `https.createServer({ cert, key })`. */
export interface SelfSignedCertificate {
  cert: string;
  key: string;
}

/** Object identifiers (RFC 5280, RFC 5480, RFC 5758). */
const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
} as const;

/**
 * Makes a fresh self-signed X.509 v3 certificate (ECDSA P-256, SHA-256) for 127.0.0.1 and localhost, valid from an
 * hour before `nowMs` for ten years. The twin needs TLS only because client-go (kubectl) sends credentials to https
 * servers only; clients skip verification (`insecure-skip-tls-verify`), so nothing has to trust it. A new key per
 * server start means no private key is ever stored in the repository.
 */
export function selfSignedCertificate(nowMs: number, commonName = 'kube-apiserver-twin'): SelfSignedCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const algorithm = seq(oid(OID.ecdsaWithSha256));
  const name = seq(set(seq(oid(OID.commonName), tlv(0x0c, Buffer.from(commonName, 'utf8')))));
  const serial = randomBytes(16);
  // DER INTEGERs are minimal and signed: a first byte in 0x40-0x7f is neither padding nor negative.
  serial[0] = ((serial[0] as number) & 0x3f) | 0x40;
  const subjectAltName = seq(tlv(0x87, Buffer.from([127, 0, 0, 1])), tlv(0x82, Buffer.from('localhost', 'ascii')));
  const extensions = seq(
    seq(oid(OID.basicConstraints), tlv(0x01, Buffer.from([0xff])), tlv(0x04, seq())),
    seq(oid(OID.subjectAltName), tlv(0x04, subjectAltName)),
  );
  const tbs = seq(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))), // version: v3
    tlv(0x02, serial),
    algorithm,
    name,
    seq(time(nowMs - 3_600_000), time(nowMs + 10 * 365 * 24 * 3_600_000)),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    tlv(0xa3, extensions),
  );
  const signature = sign('sha256', tbs, { key: privateKey, dsaEncoding: 'der' });
  const certificate = seq(tbs, algorithm, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  return {
    cert: pem('CERTIFICATE', certificate),
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** DER: tag, definite length, value (ITU-T X.690 section 8.1). */
function tlv(tag: number, value: Buffer): Buffer {
  const length = value.length;
  let header: Buffer;
  if (length < 0x80) header = Buffer.from([tag, length]);
  else {
    const bytes: number[] = [];
    for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256);
    header = Buffer.from([tag, 0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([header, value]);
}

function seq(...items: Buffer[]): Buffer {
  return tlv(0x30, Buffer.concat(items));
}

function set(...items: Buffer[]): Buffer {
  return tlv(0x31, Buffer.concat(items));
}

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const chunk: number[] = [arc & 0x7f];
    for (let n = Math.floor(arc / 128); n > 0; n = Math.floor(n / 128)) chunk.unshift(0x80 | (n & 0x7f));
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime before 2050, GeneralizedTime from then on (RFC 5280 section 4.1.2.5). */
function time(ms: number): Buffer {
  const iso = new Date(ms).toISOString(); // 2025-01-02T03:04:05.678Z
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  const year = Number(iso.slice(0, 4));
  return year < 2050 ? tlv(0x17, Buffer.from(digits.slice(2), 'ascii')) : tlv(0x18, Buffer.from(digits, 'ascii'));
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
