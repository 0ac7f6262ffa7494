import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';
import { createConfiguration } from '@kubernetes/client-node/dist/gen/configuration.js';
import { HttpMethod, type RequestContext, type ResponseContext } from '@kubernetes/client-node/dist/gen/http/http.js';
import type { Middleware } from '@kubernetes/client-node/dist/gen/middleware.js';
import { of } from '@kubernetes/client-node/dist/gen/rxjsStub.js';
import { ServerConfiguration } from '@kubernetes/client-node/dist/gen/servers.js';
import { bearerTokenConnection } from './clientNodeConfiguration.js';
import { CLIENT_NODE_ACCEPT, parseBody, sendClientNodeRequest } from './clientNodeRequest.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Answers: `/status/<code>` with that code and a Status body; `/type/<a>/<b>` with that Content-Type; else JSON. */
function startServer(): Promise<{ server: Server; url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const status = /^\/status\/(\d+)$/.exec(path);
      if (status !== null) {
        const code = Number(status[1]);
        res.writeHead(code, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', code, reason: 'Because', message: `said ${code}` }));
        return;
      }
      const type = /^\/type\/(.+)$/.exec(path);
      if (type !== null) {
        const contentType = decodeURIComponent(type[1] ?? '');
        res.writeHead(200, contentType === 'none' ? {} : { 'content-type': contentType });
        res.end(contentType.includes('json') ? '{ "a": [1, 2] }' : 'some text');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"kind":"Scale","spec":{"replicas":2}}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }),
    ),
  );
}

describe('Function: sendClientNodeRequest', () => {
  let server: Server;
  let url: string;
  let seen: Seen[];

  beforeAll(async () => {
    ({ server, url, seen } = await startServer());
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  beforeEach(() => {
    seen.length = 0;
  });

  it('sends what the generated API sends: Accept, the query in order, a JSON body, the auth header', async () => {
    // Prepare
    const { configuration } = bearerTokenConnection({ server: url, token: () => Promise.resolve('t0k') });

    // Act
    const answer = await sendClientNodeRequest(configuration, {
      method: HttpMethod.PATCH,
      path: '/apis/apps/v1/namespaces/ns/deployments/d/scale',
      query: { fieldManager: 'vllm-eks-pilot', skipped: undefined, tailLines: 0 },
      body: { contentType: 'application/merge-patch+json', value: { spec: { replicas: 2 } } },
    });

    // Assess
    expect(answer).toEqual({ kind: 'Scale', spec: { replicas: 2 } });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      method: 'PATCH',
      url: '/apis/apps/v1/namespaces/ns/deployments/d/scale?fieldManager=vllm-eks-pilot&tailLines=0',
      body: '{"spec":{"replicas":2}}',
    });
    expect(seen[0]?.headers).toMatchObject({
      accept: CLIENT_NODE_ACCEPT,
      'content-type': 'application/merge-patch+json',
      authorization: 'Bearer t0k',
    });
  });

  it('sends no body and no Content-Type for a GET', async () => {
    // Prepare
    const { configuration } = bearerTokenConnection({ server: url, token: () => Promise.resolve('t') });

    // Act
    await sendClientNodeRequest(configuration, { method: HttpMethod.GET, path: '/api/v1/namespaces/ns/pods/p/log' });

    // Assess
    expect(seen[0]?.method).toBe('GET');
    expect(seen[0]?.body).toBe('');
    expect(seen[0]?.headers['content-type']).toBeUndefined();
  });

  it.each([
    { case: 'text', type: 'text/plain; version=0.0.4', expected: 'some text' },
    { case: 'JSON', type: 'application/json; charset=utf-8', expected: { a: [1, 2] } },
    { case: '+json', type: 'application/merge-patch+json', expected: { a: [1, 2] } },
  ])('reads a $case answer as client-node does', async ({ type, expected }) => {
    // Prepare
    const { configuration } = bearerTokenConnection({ server: url, token: () => Promise.resolve('t') });

    // Act
    const answer = await sendClientNodeRequest(configuration, {
      method: HttpMethod.GET,
      path: `/type/${encodeURIComponent(type)}`,
    });

    // Assess
    expect(answer).toEqual(expected);
  });

  it('rejects a non-2xx answer with ApiException carrying the body text; a 401 without it (as generated code)', async () => {
    // Prepare
    const { configuration } = bearerTokenConnection({ server: url, token: () => Promise.resolve('t') });

    // Act
    const notFound = await sendClientNodeRequest(configuration, { method: HttpMethod.GET, path: '/status/404' }).catch(
      (e: unknown) => e,
    );
    const unauthorized = await sendClientNodeRequest(configuration, {
      method: HttpMethod.GET,
      path: '/status/401',
    }).catch((e: unknown) => e);

    // Assess
    expect(notFound).toBeInstanceOf(ApiException);
    expect(notFound).toMatchObject({ code: 404, body: expect.stringContaining('"said 404"') });
    expect((notFound as ApiException<unknown>).headers['content-type']).toBe('application/json');
    expect(unauthorized).toBeInstanceOf(ApiException);
    expect(unauthorized).toMatchObject({ code: 401, body: undefined });
  });

  it("runs the configuration's middleware: pre in order, post in reverse order", async () => {
    // Prepare
    const calls: string[] = [];
    const middleware = ['a', 'b'].map((name): Middleware => ({
      pre: (context: RequestContext) => {
        calls.push(`pre ${name}`);
        context.setHeaderParam(`x-${name}`, name);
        return of(context);
      },
      post: (response: ResponseContext) => {
        calls.push(`post ${name}`);
        return of(response);
      },
    }));
    const configuration = createConfiguration({ baseServer: new ServerConfiguration(url, {}), middleware });

    // Act
    await sendClientNodeRequest(configuration, { method: HttpMethod.GET, path: '/x' });

    // Assess
    expect(calls).toEqual(['pre a', 'pre b', 'post b', 'post a']);
    expect(seen[0]?.headers).toMatchObject({ 'x-a': 'a', 'x-b': 'b' });
  });
});

describe('Function: parseBody', () => {
  it.each([
    { case: 'no Content-Type', header: undefined, message: 'Cannot parse content. No Content-Type defined.' },
    {
      case: 'octet-stream',
      header: 'application/octet-stream',
      message: 'The mediaType application/octet-stream is not supported by ObjectSerializer.parse.',
    },
  ])('refuses $case with the message of client-node', ({ header, message }) => {
    // Act
    const act = () => parseBody('x', header);

    // Assess
    expect(act).toThrow(message);
  });

  it('parses JSON, and throws on a body that is not JSON', () => {
    // Act
    const parsed = parseBody('{"a":1}', 'Application/JSON');
    const act = () => parseBody('not json', 'application/json');

    // Assess
    expect(parsed).toEqual({ a: 1 });
    expect(act).toThrow(SyntaxError);
  });
});
