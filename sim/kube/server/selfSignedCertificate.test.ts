import { describe, expect, it } from '@jest/globals';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { selfSignedCertificate } from './selfSignedCertificate.js';

const NOW = Date.UTC(2025, 5, 1, 12, 0, 0);

describe('Function: selfSignedCertificate', () => {
  it('makes a certificate for 127.0.0.1 and localhost that matches its key and loads into TLS', () => {
    // Act
    const { cert, key } = selfSignedCertificate(NOW);

    // Assess
    const x509 = new X509Certificate(cert);
    expect(x509.subject).toBe('CN=kube-apiserver-twin');
    expect(x509.subjectAltName).toBe('IP Address:127.0.0.1, DNS:localhost');
    expect(x509.checkPrivateKey(createPrivateKey(key))).toBe(true);
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(Date.parse(x509.validFrom)).toBe(NOW - 3_600_000);
    expect(() => createSecureContext({ cert, key })).not.toThrow();
  });

  it('encodes every random serial number validly (200 certificates)', () => {
    // Act
    const serials = Array.from(
      { length: 200 },
      () => new X509Certificate(selfSignedCertificate(NOW).cert).serialNumber,
    );

    // Assess
    expect(new Set(serials).size).toBe(200);
    for (const serial of serials) expect(serial).toMatch(/^[4-7][0-9A-F]{31}$/);
  });
});
