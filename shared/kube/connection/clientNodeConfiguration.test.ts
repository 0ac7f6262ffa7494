import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { HttpMethod } from '@kubernetes/client-node/dist/gen/http/http.js';
import { bearerTokenConnection, DEFAULT_NAMESPACE, kubeConfigConnection } from './clientNodeConfiguration.js';
import { sendClientNodeRequest } from './clientNodeRequest.js';

// Throwaway self-signed certificates for 127.0.0.1 (P-256, valid 2000-2099), for these tests only.
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBUDCB9qADAgECAhRt94t2bAkGccBJLtRCXg1c31sTgjAKBggqhkjOPQQDAjAU
MRIwEAYDVQQDDAkxMjcuMC4wLjEwIBcNMDAwMTAxMDAwMDAwWhgPMjA5OTEyMzEw
MDAwMDBaMBQxEjAQBgNVBAMMCTEyNy4wLjAuMTBZMBMGByqGSM49AgEGCCqGSM49
AwEHA0IABBTmhDuLI180p5UmnRwVQZ6r+LjBcbaMFIyanytpUttN7HmLmBwzqbbO
b8G8PRzE+IiM+CUXHeiuMDoGFX9UrkKjJDAiMA8GA1UdEQQIMAaHBH8AAAEwDwYD
VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNJADBGAiEAipsmSChqsYdSHUR4p2AF
EpErft3/q6qzBKH/ZASTnuMCIQDuflcp3c24vSTdaUDHHijHvxQ+K49MY7GHIJyW
MydB1A==
-----END CERTIFICATE-----
`;
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgxaZk/lPa7ODRB9jn
dh/iBOnvYjZBuHN7NJ4+bGBC1NihRANCAAQU5oQ7iyNfNKeVJp0cFUGeq/i4wXG2
jBSMmp8raVLbTex5i5gcM6m2zm/BvD0cxPiIjPglFx3orjA6BhV/VK5C
-----END PRIVATE KEY-----
`;
const OTHER_CERT = `-----BEGIN CERTIFICATE-----
MIIBUDCB9qADAgECAhRVfwmrHqH0dLnavCt9QG0Y2+ZFRTAKBggqhkjOPQQDAjAU
MRIwEAYDVQQDDAkxMjcuMC4wLjEwIBcNMDAwMTAxMDAwMDAwWhgPMjA5OTEyMzEw
MDAwMDBaMBQxEjAQBgNVBAMMCTEyNy4wLjAuMTBZMBMGByqGSM49AgEGCCqGSM49
AwEHA0IABNiYxiUgj/xEbd77hoHBam3OSW9reiI8QrQAlWpbnM6q4yR9lF9ID4dx
+wYDJIKSJa+v815iAGtorUYED2RhSYajJDAiMA8GA1UdEQQIMAaHBH8AAAEwDwYD
VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNJADBGAiEAkVTo3RduHTNQl2DFmSl0
M0uTyliIHcQmKJgqixal6GoCIQDofybPI9L+FhrqvFS5IKz8ohMZOreFa4W4afW3
0PyE8A==
-----END CERTIFICATE-----
`;

const base64 = (pem: string) => Buffer.from(pem).toString('base64');

/** Answers every request with the Authorization header it got and the connection header. */
function echoAuth(req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ authorization: req.headers.authorization ?? null, connection: req.headers.connection }));
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('Function: bearerTokenConnection', () => {
  const https = createHttpsServer({ cert: TEST_CERT, key: TEST_KEY }, echoAuth);
  const http = createHttpServer(echoAuth);
  let httpsUrl: string;
  let httpUrl: string;

  beforeAll(async () => {
    httpsUrl = `https://127.0.0.1:${await listen(https)}`;
    httpUrl = `http://127.0.0.1:${await listen(http)}`;
  });

  afterAll(() => Promise.all([close(https), close(http)]));

  const get = (connection: ReturnType<typeof bearerTokenConnection>) =>
    sendClientNodeRequest(connection.configuration, { method: HttpMethod.GET, path: '/api/v1' });

  it('trusts the cluster CA over https and sends a fresh token on each request, without keep-alive', async () => {
    // Prepare
    let issued = 0;
    const connection = bearerTokenConnection({
      server: httpsUrl,
      certificateAuthorityData: base64(TEST_CERT),
      token: () => Promise.resolve(`token-${(issued += 1)}`),
    });

    // Act
    const first = await get(connection);
    const second = await get(connection);

    // Assess
    expect(first).toEqual({ authorization: 'Bearer token-1', connection: 'close' });
    expect(second).toEqual({ authorization: 'Bearer token-2', connection: 'close' });
    expect(connection.defaultNamespace).toBe(DEFAULT_NAMESPACE);
  });

  it.each([
    { case: 'another CA', certificateAuthorityData: base64(OTHER_CERT) },
    { case: 'no CA (the system CAs)', certificateAuthorityData: '' },
  ])('refuses a server certificate that $case did not sign', async ({ certificateAuthorityData }) => {
    // Prepare
    const connection = bearerTokenConnection({
      server: httpsUrl,
      certificateAuthorityData,
      token: () => Promise.resolve('t'),
    });

    // Act
    const error = await get(connection).catch((e: unknown) => e);

    // Assess
    expect(error).toMatchObject({ name: 'FetchError', message: expect.stringContaining('self-signed certificate') });
  });

  it("uses plain http for an http:// server (the twin's), with the token", async () => {
    // Prepare
    const connection = bearerTokenConnection({
      server: httpUrl,
      token: () => Promise.resolve('twin'),
      defaultNamespace: 'vllm',
    });

    // Act
    const answer = await get(connection);

    // Assess
    expect(answer).toEqual({ authorization: 'Bearer twin', connection: 'close' });
    expect(connection.defaultNamespace).toBe('vllm');
  });

  it('fails the request, not the connection, when the token cannot be made', async () => {
    // Prepare
    const connection = bearerTokenConnection({ server: httpUrl, token: () => Promise.reject(new Error('no creds')) });

    // Act
    const error = await get(connection).catch((e: unknown) => e);

    // Assess
    expect(error).toMatchObject({ message: 'no creds' });
  });
});

describe('Function: kubeConfigConnection', () => {
  const http = createHttpServer(echoAuth);
  let httpUrl: string;

  beforeAll(async () => {
    httpUrl = `http://127.0.0.1:${await listen(http)}`;
  });

  afterAll(() => close(http));

  function kubeConfig(namespace?: string): KubeConfig {
    const config = new KubeConfig();
    config.loadFromOptions({
      clusters: [{ name: 'c', server: httpUrl, skipTLSVerify: true }],
      users: [{ name: 'u', token: 'from-kubeconfig' }],
      contexts: [{ name: 'ctx', cluster: 'c', user: 'u', ...(namespace === undefined ? {} : { namespace }) }],
      currentContext: 'ctx',
    });
    return config;
  }

  it("sends to the current context's cluster with its user's credentials, as makeApiClient does", async () => {
    // Act
    const connection = kubeConfigConnection(kubeConfig('team-a'));
    const answer = await sendClientNodeRequest(connection.configuration, { method: HttpMethod.GET, path: '/api' });

    // Assess
    expect(answer).toMatchObject({ authorization: 'Bearer from-kubeconfig' });
    expect(connection.defaultNamespace).toBe('team-a');
  });

  it("defaults the namespace to 'default' when the context names none", () => {
    // Act
    const connection = kubeConfigConnection(kubeConfig());

    // Assess
    expect(connection.defaultNamespace).toBe('default');
  });

  it('refuses a kubeconfig without a current cluster', () => {
    // Act
    const act = () => kubeConfigConnection(new KubeConfig());

    // Assess
    expect(act).toThrow('No active cluster!');
  });
});
