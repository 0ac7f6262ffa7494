import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { VirtualClock } from '../clock/index.js';
import {
  HttpMetricsSource,
  parsePrometheusValue,
  querySingleValue,
  type HttpMetricsSourceOptions,
} from './ampClient.js';
import {
  MetricsAbortedError,
  MetricsEmptyResultError,
  MetricsHttpError,
  MetricsInvalidOptionError,
  MetricsMalformedResponseError,
  MetricsMultipleSeriesError,
  MetricsNetworkError,
  MetricsNonFiniteValueError,
  MetricsRedirectRefusedError,
  MetricsResponseTooLargeError,
  MetricsTimeoutError,
  MetricsValueOutOfDomainError,
} from './errors.js';
import { VALUE_DOMAIN } from './names.js';

// ---------------------------------------------------------------------------------------------------------------
// A tiny Prometheus stand-in on 127.0.0.1 that records requests and answers from a script.

interface Recorded {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

type Responder = (res: ServerResponse, req: Recorded) => void;

interface TestServer {
  url: string;
  requests: Recorded[];
  close(): Promise<void>;
}

const servers: TestServer[] = [];

async function startServer(script: Responder[], fallback: Responder = json(200, vector([]))): Promise<TestServer> {
  const requests: Recorded[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const responder = script[requests.length] ?? fallback;
      requests.push(recorded);
      responder(res, recorded);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const handle: TestServer = {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(handle);
  return handle;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function json(status: number, body: unknown, headers: Record<string, string> = {}): Responder {
  return (res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
}

function text(status: number, body: string): Responder {
  return (res) => {
    res.writeHead(status, { 'content-type': 'text/html' });
    res.end(body);
  };
}

/** Drops the connection without an HTTP answer. */
const hangUp: Responder = (res) => {
  res.socket?.destroy();
};

/** Never answers (the client's timeout must fire). */
const silence: Responder = () => undefined;

function vector(result: Array<{ metric: Record<string, string>; value: [number, string] }>) {
  return { status: 'success', data: { resultType: 'vector', result } };
}

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const SIGNING_TIME = Date.UTC(2026, 0, 15, 12, 30, 0);

function source(url: string, overrides: Partial<HttpMetricsSourceOptions> = {}) {
  const sleeps: number[] = [];
  const client = new HttpMetricsSource({
    endpoint: url,
    region: 'us-east-2',
    credentials,
    clock: new VirtualClock(SIGNING_TIME),
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
    random: () => 0.5,
    ...overrides,
  });
  return { client, sleeps };
}

/**
 * Checks a SigV4 signature the way AWS does, from what actually arrived (AWS General Reference, "Create a signed
 * AWS API request"): canonical request, string to sign, derived key, HMAC.
 */
function verifySigV4(req: Recorded, secretAccessKey: string): boolean {
  const auth = req.headers.authorization ?? '';
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (match === null) return false;
  const [, , date, region, service, signedHeaders, signature] = match as unknown as string[];
  const names = (signedHeaders ?? '').split(';');
  const canonicalHeaders = names.map((name) => `${name}:${String(req.headers[name] ?? '').trim()}\n`).join('');
  const payloadHash = createHash('sha256').update(req.body).digest('hex');
  const canonicalRequest = ['POST', req.path, '', canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const amzDate = String(req.headers['x-amz-date']);
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    amzDate,
    scope,
    createHash('sha256').update(canonicalRequest).digest('hex'),
  ].join('\n');
  let key: Buffer = createHmac('sha256', `AWS4${secretAccessKey}`)
    .update(date ?? '')
    .digest();
  for (const part of [region, service, 'aws4_request'])
    key = createHmac('sha256', key)
      .update(part ?? '')
      .digest();
  return createHmac('sha256', key).update(stringToSign).digest('hex') === signature;
}

// ---------------------------------------------------------------------------------------------------------------

describe('Class: HttpMetricsSource', () => {
  describe('Method: instant', () => {
    it('signs each request with SigV4 for the aps service, verifiable from what the server received', async () => {
      // Prepare
      const server = await startServer([]);
      const { client } = source(server.url);

      // Act
      await client.instant('up', { timeMs: 1_700_000_000_000 });

      // Assess
      const [req] = server.requests;
      expect(req?.headers.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20260115\/us-east-2\/aps\/aws4_request, SignedHeaders=[^,]*\bhost\b[^,]*, Signature=[0-9a-f]{64}$/,
      );
      expect(req?.headers.authorization).toMatch(/SignedHeaders=[^,]*x-amz-date/);
      expect(req?.headers['x-amz-date']).toBe('20260115T123000Z');
      expect(req?.headers['x-amz-security-token']).toBeUndefined();
      expect(req !== undefined && verifySigV4(req, credentials.secretAccessKey)).toBe(true);
    });

    it('sends and signs the session token of temporary credentials', async () => {
      // Prepare
      const server = await startServer([]);
      const { client } = source(server.url, { credentials: { ...credentials, sessionToken: 'FwoGZXIvYXdzEXAMPLE' } });

      // Act
      await client.instant('up');

      // Assess
      const [req] = server.requests;
      expect(req?.headers['x-amz-security-token']).toBe('FwoGZXIvYXdzEXAMPLE');
      expect(req?.headers.authorization).toMatch(/SignedHeaders=[^,]*x-amz-security-token/);
      expect(req !== undefined && verifySigV4(req, credentials.secretAccessKey)).toBe(true);
    });

    it('gives a different query a different signature', async () => {
      // Prepare
      const server = await startServer([]);
      const { client } = source(server.url);

      // Act
      await client.instant('sum(vllm:num_requests_waiting)', { timeMs: 1_700_000_000_000 });
      await client.instant('sum(vllm:num_requests_running)', { timeMs: 1_700_000_000_000 });

      // Assess
      const signatures = server.requests.map((req) => /Signature=(\w+)/.exec(req.headers.authorization ?? '')?.[1]);
      expect(signatures[0]).toBeDefined();
      expect(signatures[0]).not.toBe(signatures[1]);
    });

    it.each([
      { case: 'an AMP-style workspace path with a trailing slash', base: '/workspaces/ws-b226cc2a/' },
      { case: 'a workspace path without the trailing slash', base: '/workspaces/ws-b226cc2a' },
    ])('POSTs a form body under $case', async ({ base }) => {
      // Prepare
      const server = await startServer([]);
      const { client } = source(`${server.url}${base}`);

      // Act
      await client.instant('rate(x[2m]) > 0 & "q"', { timeMs: 1_700_000_000_123 });

      // Assess
      const [req] = server.requests;
      expect(req?.method).toBe('POST');
      expect(req?.path).toBe('/workspaces/ws-b226cc2a/api/v1/query');
      expect(req?.headers['content-type']).toBe('application/x-www-form-urlencoded');
      const form = new URLSearchParams(req?.body);
      expect(form.get('query')).toBe('rate(x[2m]) > 0 & "q"');
      expect(form.get('time')).toBe('1700000000.123');
    });

    it('parses samples, including NaN and infinities sent as strings, and scalar results', async () => {
      // Prepare
      const server = await startServer([
        json(
          200,
          vector([
            { metric: { pod: 'a' }, value: [1700000000.5, '1.25'] },
            { metric: { pod: 'b' }, value: [1700000000.5, 'NaN'] },
            { metric: { pod: 'c' }, value: [1700000000.5, '+Inf'] },
            { metric: { pod: 'd' }, value: [1700000000.5, '-Inf'] },
            { metric: { pod: 'e' }, value: [1700000000.5, '1e3'] },
          ]),
        ),
        json(200, { status: 'success', data: { resultType: 'scalar', result: [1700000000, '7'] } }),
      ]);
      const { client } = source(server.url);

      // Act
      const samples = await client.instant('x');
      const scalar = await client.instant('scalar(x)');

      // Assess
      expect(samples.map((s) => s.value)).toEqual([1.25, Number.NaN, Infinity, -Infinity, 1000]);
      expect(samples[0]).toEqual({ labels: { pod: 'a' }, value: 1.25, timestampMs: 1700000000500 });
      expect(scalar).toEqual([{ labels: {}, value: 7, timestampMs: 1700000000000 }]);
    });

    it('reports a 500 with its Prometheus error, after retrying with full-jitter backoff', async () => {
      // Prepare
      const failure = json(500, { status: 'error', errorType: 'internal', error: 'storage unavailable' });
      const server = await startServer([failure, failure, failure]);
      const { client, sleeps } = source(server.url, { baseDelayMs: 100, maxDelayMs: 1_000 });

      // Act
      const error = await client.instant('up').catch((e: unknown) => e);

      // Assess
      expect(error).toBeInstanceOf(MetricsHttpError);
      expect(error).toMatchObject({
        name: 'MetricsHttpError',
        status: 500,
        errorType: 'internal',
        errorText: 'storage unavailable',
        retryable: true,
        query: 'up',
      });
      expect(server.requests).toHaveLength(3);
      // random() = 0.5 of min(max, base * 2^(n-1)): 50 then 100 ms.
      expect(sleeps).toEqual([50, 100]);
    });

    it.each([
      { case: '400 bad_data (a bad query)', status: 400, errorType: 'bad_data' },
      {
        case: '422 (an AMP query timeout: retrying would time out and bill again)',
        status: 422,
        errorType: 'execution',
      },
      { case: '403 (not authorized)', status: 403, errorType: undefined },
    ])('does not retry $case', async ({ status, errorType }) => {
      // Prepare
      const server = await startServer([json(status, { status: 'error', errorType, error: 'nope' })]);
      const { client } = source(server.url);

      // Act
      const error = await client.instant('sum(').catch((e: unknown) => e);

      // Assess
      expect(error).toMatchObject({ name: 'MetricsHttpError', status, retryable: false, errorText: 'nope' });
      expect(server.requests).toHaveLength(1);
    });

    it('reads the message of a non-Prometheus error body', async () => {
      // Prepare
      const server = await startServer([json(403, { message: 'User is not authorized to perform aps:QueryMetrics' })]);
      const { client } = source(server.url);

      // Act
      const error = await client.instant('up').catch((e: unknown) => e);

      // Assess
      expect(error).toMatchObject({ status: 403, errorText: 'User is not authorized to perform aps:QueryMetrics' });
    });

    it('retries a 429 after the Retry-After the server asked for', async () => {
      // Prepare
      const server = await startServer([
        json(429, { message: 'Rate exceeded' }, { 'retry-after': '2' }),
        json(200, vector([{ metric: {}, value: [1, '3'] }])),
      ]);
      const { client, sleeps } = source(server.url);

      // Act
      const samples = await client.instant('up');

      // Assess
      expect(samples.map((s) => s.value)).toEqual([3]);
      expect(server.requests).toHaveLength(2);
      expect(sleeps).toEqual([2_000]);
    });

    it('stops at once when Retry-After asks for longer than maxDelayMs', async () => {
      // Prepare
      const server = await startServer([json(429, { message: 'Rate exceeded' }, { 'retry-after': '60' })]);
      const { client, sleeps } = source(server.url, { maxDelayMs: 5_000 });

      // Act
      const error = await client.instant('up').catch((e: unknown) => e);

      // Assess
      expect(error).toMatchObject({ name: 'MetricsHttpError', status: 429, retryable: true, retryAfterMs: 60_000 });
      expect(server.requests).toHaveLength(1);
      expect(sleeps).toEqual([]);
    });

    it('retries a dropped connection, then fails with MetricsNetworkError', async () => {
      // Prepare
      const server = await startServer([hangUp, hangUp, hangUp]);
      const { client } = source(server.url);

      // Act
      const error = await client.instant('up').catch((e: unknown) => e);

      // Assess
      expect(error).toBeInstanceOf(MetricsNetworkError);
      expect(error).toMatchObject({ retryable: true, url: `${server.url}/api/v1/query` });
      expect(server.requests).toHaveLength(3);
    });

    it('recovers when a retry after a dropped connection succeeds', async () => {
      // Prepare
      const server = await startServer([hangUp, json(200, vector([{ metric: {}, value: [1, '4'] }]))]);
      const { client } = source(server.url);

      // Act
      const samples = await client.instant('up');

      // Assess
      expect(samples.map((s) => s.value)).toEqual([4]);
    });

    it('times out an attempt that gets no answer', async () => {
      // Prepare
      const server = await startServer([silence]);
      const { client } = source(server.url, { timeoutMs: 50, maxAttempts: 1 });

      // Act
      const error = await client.instant('up').catch((e: unknown) => e);

      // Assess
      expect(error).toBeInstanceOf(MetricsTimeoutError);
      expect(error).toMatchObject({ timeoutMs: 50, retryable: true });
    });

    it('stops without retrying when the caller aborts', async () => {
      // Prepare
      const server = await startServer([silence]);
      const { client } = source(server.url);
      const controller = new AbortController();

      // Act
      const pending = client.instant('up', { signal: controller.signal }).catch((e: unknown) => e);
      while (server.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
      controller.abort();
      const error = await pending;

      // Assess
      expect(error).toBeInstanceOf(MetricsAbortedError);
      expect(server.requests).toHaveLength(1);
    });

    it.each([
      { case: 'a body that is not JSON', responder: text(200, '<html>Bad gateway</html>'), reason: /not JSON/ },
      {
        case: 'status "error" with HTTP 200',
        responder: json(200, { status: 'error', errorType: 'execution', error: 'boom' }),
        reason: /status is "error".*boom/,
      },
      {
        case: 'a matrix where a vector was expected',
        responder: json(200, { status: 'success', data: { resultType: 'matrix', result: [] } }),
        reason: /resultType "matrix"/,
      },
      {
        case: 'an unparsable value',
        responder: json(200, vector([{ metric: {}, value: [1, 'twelve'] }])),
        reason: /value is not a number/,
      },
      {
        case: 'a missing data field',
        responder: json(200, { status: 'success' }),
        reason: /missing/,
      },
    ])('rejects $case as MetricsMalformedResponseError, without retrying', async ({ responder, reason }) => {
      // Prepare
      const server = await startServer([responder]);
      const { client } = source(server.url);

      // Act
      const error = await client.instant('up').catch((e: unknown) => e);

      // Assess
      expect(error).toBeInstanceOf(MetricsMalformedResponseError);
      expect((error as MetricsMalformedResponseError).reason).toMatch(reason);
      expect(error).toMatchObject({ retryable: false, query: 'up' });
      expect(server.requests).toHaveLength(1);
    });

    it('never puts credentials in an error', async () => {
      // Prepare
      const server = await startServer([json(500, { status: 'error', errorType: 'internal', error: 'x' })]);
      const { client } = source(server.url, {
        maxAttempts: 1,
        credentials: { ...credentials, sessionToken: 'SESSIONTOKENEXAMPLE' },
      });

      // Act
      const error = await client.instant('up').catch((e: unknown) => e);

      // Assess
      const dump = JSON.stringify(error, Object.getOwnPropertyNames(error)) + String(error);
      expect(dump).not.toContain(credentials.secretAccessKey);
      expect(dump).not.toContain('SESSIONTOKENEXAMPLE');
    });
  });

  describe('Method: range', () => {
    it('POSTs start, end and step in seconds and parses the matrix', async () => {
      // Prepare
      const server = await startServer([
        json(200, {
          status: 'success',
          data: {
            resultType: 'matrix',
            result: [
              {
                metric: { pod: 'a' },
                values: [
                  [1700000000, '1'],
                  [1700000015, 'NaN'],
                ],
              },
            ],
          },
        }),
      ]);
      const { client } = source(server.url);

      // Act
      const series = await client.range('x', { startMs: 1_700_000_000_000, endMs: 1_700_000_060_000, stepSeconds: 15 });

      // Assess
      const [req] = server.requests;
      expect(req?.path).toBe('/api/v1/query_range');
      const form = new URLSearchParams(req?.body);
      expect([form.get('start'), form.get('end'), form.get('step')]).toEqual(['1700000000', '1700000060', '15']);
      expect(series).toEqual([
        {
          labels: { pod: 'a' },
          points: [
            { timestampMs: 1700000000000, value: 1 },
            { timestampMs: 1700000015000, value: Number.NaN },
          ],
        },
      ]);
    });

    it.each([
      { case: 'an end before the start', options: { startMs: 2_000, endMs: 1_000, stepSeconds: 15 }, field: 'endMs' },
      { case: 'a zero step', options: { startMs: 1_000, endMs: 2_000, stepSeconds: 0 }, field: 'stepSeconds' },
    ])('rejects $case before sending anything', async ({ options, field }) => {
      // Prepare
      const server = await startServer([]);
      const { client } = source(server.url);

      // Act
      const error = await client.range('x', options).catch((e: unknown) => e);

      // Assess
      expect(error).toBeInstanceOf(MetricsInvalidOptionError);
      expect(error).toMatchObject({ field });
      expect(server.requests).toHaveLength(0);
    });
  });

  describe('Method: constructor', () => {
    it.each([
      { case: 'an endpoint that is not a URL', options: { endpoint: 'aps-workspaces' }, field: 'endpoint' },
      { case: 'a non-HTTP endpoint', options: { endpoint: 'ftp://127.0.0.1/' }, field: 'endpoint' },
      { case: 'credentials in the endpoint', options: { endpoint: 'http://u:p@127.0.0.1/' }, field: 'endpoint' },
      { case: 'an empty region', options: { region: '' }, field: 'region' },
      { case: 'zero attempts', options: { maxAttempts: 0 }, field: 'maxAttempts' },
      { case: 'a negative timeout', options: { timeoutMs: -1 }, field: 'timeoutMs' },
      { case: 'maxDelayMs below baseDelayMs', options: { baseDelayMs: 500, maxDelayMs: 100 }, field: 'maxDelayMs' },
      { case: 'an unknown option (a typo)', options: { timeoutMS: 5 }, field: 'timeoutMS' },
    ])('rejects $case, naming the field', ({ options, field }) => {
      // Act
      let thrown: unknown;
      try {
        new HttpMetricsSource({
          endpoint: 'http://127.0.0.1:9090',
          region: 'us-east-2',
          credentials,
          ...options,
        });
      } catch (error) {
        thrown = error;
      }

      // Assess
      expect(thrown).toBeInstanceOf(MetricsInvalidOptionError);
      expect(thrown).toMatchObject({ field });
    });
  });
});

describe('Class: HttpMetricsSource (answers that are refused)', () => {
  it.each([
    { case: 'a temporary redirect', status: 302 },
    { case: 'a permanent redirect', status: 301 },
    { case: 'a redirect keeping the method (307)', status: 307 },
    { case: 'a permanent redirect keeping the method (308)', status: 308 },
  ])('refuses $case to another origin, naming that origin; the signed headers never leave', async ({ status }) => {
    // Prepare
    const elsewhere = await startServer([]);
    const server = await startServer([
      (res) => res.writeHead(status, { location: `${elsewhere.url}/collect?token=abc` }).end(),
    ]);
    const { client } = source(server.url, {
      credentials: { ...credentials, sessionToken: 'FwoGZXIvYXdzEXAMPLE' },
    });

    // Act
    const thrown = await client.instant('up').catch((e: unknown) => e);

    // Assess
    expect(thrown).toBeInstanceOf(MetricsRedirectRefusedError);
    expect(thrown).toMatchObject({ status, locationOrigin: elsewhere.url, query: 'up', retryable: false });
    expect((thrown as Error).message).not.toContain('token=abc');
    expect(server.requests).toHaveLength(1);
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('stops reading a streamed answer past maxResponseBytes and names the cap and the query', async () => {
    // Prepare: a chunked answer (no Content-Length) that keeps coming.
    let written = 0;
    const server = await startServer([
      (res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.on('error', () => undefined);
        const chunk = Buffer.alloc(16 * 1024, 'x');
        const more = (): void => {
          while (written < 50 * chunk.length && !res.destroyed) {
            written += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          res.end();
        };
        more();
      },
    ]);
    const { client } = source(server.url, { maxResponseBytes: 64 * 1024 });

    // Act
    const thrown = await client.instant('count by (pod) (up)').catch((e: unknown) => e);

    // Assess
    expect(thrown).toBeInstanceOf(MetricsResponseTooLargeError);
    expect((thrown as Error).message).toBe(
      'the answer exceeds the cap of 65536 bytes; reading stopped (query: count by (pod) (up))',
    );
    expect(server.requests).toHaveLength(1);
  });

  it('reads an answer of exactly maxResponseBytes', async () => {
    // Prepare
    const body = JSON.stringify(vector([{ metric: {}, value: [1, '1'] }]));
    const server = await startServer([json(200, vector([{ metric: {}, value: [1, '1'] }]))]);
    const { client } = source(server.url, { maxResponseBytes: Buffer.byteLength(body) });

    // Act & Assess
    await expect(client.instant('up')).resolves.toEqual([{ labels: {}, value: 1, timestampMs: 1000 }]);
  });

  it.each([
    { case: 'zero', value: 0 },
    { case: 'a fraction', value: 1.5 },
  ])('refuses maxResponseBytes of $case', ({ value }) => {
    // Act & Assess
    expect(() => source('http://127.0.0.1:9', { maxResponseBytes: value })).toThrow(MetricsInvalidOptionError);
  });
});

describe('Function: querySingleValue', () => {
  it('returns the one finite value', async () => {
    // Prepare
    const server = await startServer([json(200, vector([{ metric: {}, value: [1, '25'] }]))]);

    // Act
    const value = await querySingleValue(source(server.url).client, 'sum(vllm:num_requests_waiting)');

    // Assess
    expect(value).toBe(25);
  });

  it.each([
    { case: 'an empty result', result: [], error: MetricsEmptyResultError },
    {
      case: 'several series',
      result: [
        { metric: { pod: 'a' }, value: [1, '1'] as [number, string] },
        { metric: { pod: 'b' }, value: [1, '2'] as [number, string] },
      ],
      error: MetricsMultipleSeriesError,
    },
    { case: 'NaN', result: [{ metric: {}, value: [1, 'NaN'] as [number, string] }], error: MetricsNonFiniteValueError },
    {
      case: '+Inf',
      result: [{ metric: {}, value: [1, '+Inf'] as [number, string] }],
      error: MetricsNonFiniteValueError,
    },
    {
      case: '-Inf',
      result: [{ metric: {}, value: [1, '-Inf'] as [number, string] }],
      error: MetricsNonFiniteValueError,
    },
  ])('rejects $case with its own error, carrying the query', async ({ result, error }) => {
    // Prepare
    const server = await startServer([json(200, vector(result))]);

    // Act
    const thrown = await querySingleValue(source(server.url).client, 'sum(x)').catch((e: unknown) => e);

    // Assess
    expect(thrown).toBeInstanceOf(error);
    expect(thrown).toMatchObject({ query: 'sum(x)', retryable: false });
  });

  it('lists the label sets of several series', async () => {
    // Prepare
    const server = await startServer([
      json(
        200,
        vector([
          { metric: { pod: 'a' }, value: [1, '1'] },
          { metric: { pod: 'b' }, value: [1, '2'] },
        ]),
      ),
    ]);

    // Act
    const thrown = await querySingleValue(source(server.url).client, 'x').catch((e: unknown) => e);

    // Assess
    expect((thrown as MetricsMultipleSeriesError).series).toEqual([{ pod: 'a' }, { pod: 'b' }]);
  });

  it('refuses a value outside the domain it is asked for (a KV-cache fraction of 1.7)', async () => {
    // Prepare
    const server = await startServer([json(200, vector([{ metric: {}, value: [1, '1.7'] }]))]);

    // Act
    const thrown = await querySingleValue(source(server.url).client, 'max(vllm:kv_cache_usage_perc)', {
      domain: VALUE_DOMAIN.fraction,
    }).catch((e: unknown) => e);

    // Assess
    expect(thrown).toBeInstanceOf(MetricsValueOutOfDomainError);
  });

  it('refuses a negative count by default', async () => {
    // Prepare
    const server = await startServer([json(200, vector([{ metric: {}, value: [1, '-5'] }]))]);

    // Act & Assess
    await expect(querySingleValue(source(server.url).client, 'count(up)')).rejects.toThrow(
      MetricsValueOutOfDomainError,
    );
  });
});

describe('Function: parsePrometheusValue', () => {
  it.each([
    { case: 'an integer', text: '12', expected: 12 },
    { case: 'a decimal', text: '0.875', expected: 0.875 },
    { case: 'scientific notation', text: '1.5e-3', expected: 0.0015 },
    { case: 'NaN', text: 'NaN', expected: Number.NaN },
    { case: '+Inf', text: '+Inf', expected: Infinity },
    { case: '-Inf', text: '-Inf', expected: -Infinity },
    { case: 'an empty string', text: '', expected: undefined },
    { case: 'a word', text: 'twelve', expected: undefined },
    { case: 'hex, which Number() would accept', text: '0x10', expected: undefined },
  ])('parses $case', ({ text: input, expected }) => {
    // Act & Assess
    expect(parsePrometheusValue(input)).toBe(expected);
  });
});
