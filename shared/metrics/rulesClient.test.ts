import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { VirtualClock } from '../clock/index.js';
import { MetricsHttpError, MetricsMalformedResponseError } from './errors.js';
import { HttpAlertRulesSource } from './rulesClient.js';

interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A rules API stand-in on 127.0.0.1 answering each request from the script (the last answer repeats). */
async function startServer(
  script: Array<(res: ServerResponse) => void>,
): Promise<{ url: string; requests: Recorded[] }> {
  const requests: Recorded[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const answer = script[Math.min(requests.length, script.length - 1)];
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      answer?.(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${port}/workspaces/ws-1234/`, requests };
}

function json(status: number, body: unknown) {
  return (res: ServerResponse) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(text);
  };
}

const RULES_BODY = {
  status: 'success',
  data: {
    groups: [
      {
        name: 'vllm-eks-pilot',
        file: 'rules.yaml',
        rules: [
          { type: 'alerting', name: 'VLLMHighQueueDepth', state: 'inactive', query: 'x > 50' },
          { type: 'alerting', name: 'VLLMKVCacheFull', state: 'firing', query: 'y > 0.95' },
          { type: 'recording', name: 'job:up:sum', query: 'sum(up)' },
        ],
      },
      { name: 'other', rules: [{ type: 'alerting', name: 'NodeDown', state: 'pending' }] },
    ],
  },
};

function client(url: string, overrides: Record<string, unknown> = {}) {
  return new HttpAlertRulesSource({
    endpoint: url,
    region: 'us-east-2',
    credentials,
    clock: new VirtualClock(Date.UTC(2025, 0, 6, 8, 0, 0)),
    sleep: () => Promise.resolve(),
    random: () => 0,
    ...overrides,
  });
}

/** Verifies a SigV4 GET signature from what arrived (AWS General Reference, "Create a signed AWS API request"). */
function verifySigV4Get(req: Recorded): { service: string; valid: boolean } {
  const match =
    /^AWS4-HMAC-SHA256 Credential=[^/]+\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
      req.headers.authorization ?? '',
    );
  if (match === null) return { service: '', valid: false };
  const [, date = '', region = '', service = '', signedHeaders = '', signature] = match;
  const url = new URL(req.url, 'http://x');
  const query = [...url.searchParams.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
  const headers = signedHeaders
    .split(';')
    .map((name) => `${name}:${String(req.headers[name] ?? '').trim()}\n`)
    .join('');
  const payloadHash = createHash('sha256').update('').digest('hex');
  const canonical = ['GET', url.pathname, query, headers, signedHeaders, payloadHash].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = [
    'AWS4-HMAC-SHA256',
    String(req.headers['x-amz-date']),
    scope,
    createHash('sha256').update(canonical).digest('hex'),
  ].join('\n');
  let key: Buffer = createHmac('sha256', `AWS4${credentials.secretAccessKey}`).update(date).digest();
  for (const part of [region, service, 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
  return { service, valid: createHmac('sha256', key).update(toSign).digest('hex') === signature };
}

describe('Class: HttpAlertRulesSource', () => {
  describe('Method: alertingRules', () => {
    it('lists the alerting rules of every group with their state, skipping recording rules', async () => {
      // Prepare
      const server = await startServer([json(200, RULES_BODY)]);

      // Act
      const rules = await client(server.url).alertingRules();

      // Assess
      expect(rules).toEqual([
        { group: 'vllm-eks-pilot', name: 'VLLMHighQueueDepth', state: 'inactive' },
        { group: 'vllm-eks-pilot', name: 'VLLMKVCacheFull', state: 'firing' },
        { group: 'other', name: 'NodeDown', state: 'pending' },
      ]);
    });

    it('sends GET <workspace>/api/v1/rules?type=alert signed with SigV4 for the aps service', async () => {
      // Prepare
      const server = await startServer([json(200, RULES_BODY)]);

      // Act
      await client(server.url).alertingRules();

      // Assess
      const [req] = server.requests;
      expect(req?.method).toBe('GET');
      expect(req?.url).toBe('/workspaces/ws-1234/api/v1/rules?type=alert');
      expect(req === undefined ? undefined : verifySigV4Get(req)).toEqual({ service: 'aps', valid: true });
    });

    it('retries a 503 and then answers', async () => {
      // Prepare
      const server = await startServer([json(503, { status: 'error', error: 'busy' }), json(200, RULES_BODY)]);

      // Act
      const rules = await client(server.url).alertingRules();

      // Assess
      expect(rules).toHaveLength(3);
      expect(server.requests).toHaveLength(2);
    });

    it.each([
      {
        case: 'access denied (403, not retried)',
        answer: json(403, { message: 'User is not authorized to perform: aps:ListRules' }),
        error: MetricsHttpError,
        message: /aps:ListRules/,
        requests: 1,
      },
      {
        case: 'groups missing from data',
        answer: json(200, { status: 'success', data: {} }),
        error: MetricsMalformedResponseError,
        message: /data\.groups is not an array/,
        requests: 1,
      },
      {
        case: 'a rule without a name',
        answer: json(200, { status: 'success', data: { groups: [{ name: 'g', rules: [{ type: 'alerting' }] }] } }),
        error: MetricsMalformedResponseError,
        message: /rules\[0\] has no name/,
        requests: 1,
      },
    ])('fails with a named error on $case', async ({ answer, error, message, requests }) => {
      // Prepare
      const server = await startServer([answer]);

      // Act
      const outcome = client(server.url).alertingRules();

      // Assess
      await expect(outcome).rejects.toBeInstanceOf(error);
      await expect(outcome).rejects.toThrow(message);
      expect(server.requests).toHaveLength(requests);
    });
  });
});
