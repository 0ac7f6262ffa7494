/**
 * A small Kubernetes API server for the adapter's unit tests: real HTTP on 127.0.0.1, objects in memory, the REST
 * paths, `Status` error bodies, resourceVersion preconditions, RFC 7386 merge patch, label selectors, Pod logs and
 * the Deployment scale subresource. Tests can queue crafted failures. It is not the twin (sim/kube): it only has
 * what the adapter's tests need to observe the adapter's requests.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedApiRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  contentType: string | undefined;
  authorization: string | undefined;
  body: unknown;
}

export interface FakeApiServer {
  url: string;
  requests: RecordedApiRequest[];
  /** Stored objects by REST path (`/apis/apps/v1/namespaces/default/deployments/x`). */
  objects: Map<string, Record<string, unknown>>;
  logs: Map<string, string>;
  /** The next matching request is answered with `status` and `body` instead of being served. */
  failNext(failure: { status: number; body: unknown; method?: string; headers?: Record<string, string> }): void;
  /** Changes an object behind the client's back (bumps its resourceVersion), e.g. to cause a Conflict. */
  touch(path: string, change: (object: Record<string, unknown>) => void): void;
  stop(): Promise<void>;
}

export interface FakeApiServerOptions {
  /** Decides whether a bearer token is accepted; default: any non-empty token. */
  acceptToken?: (token: string) => boolean;
}

type Json = Record<string, unknown>;

/** Starts the fake API server on a free loopback port. */
export async function startFakeApiServer(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
  const objects = new Map<string, Json>();
  const logs = new Map<string, string>();
  const requests: RecordedApiRequest[] = [];
  const failures: Array<{ status: number; body: unknown; method?: string; headers?: Record<string, string> }> = [];
  let revision = 100;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        handle(req, res, text);
      } catch (error) {
        sendStatus(res, 500, 'InternalError', (error as Error).message);
      }
    });
  });

  function handle(req: IncomingMessage, res: ServerResponse, text: string): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = text;
    }
    requests.push({
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      contentType: req.headers['content-type'],
      authorization: req.headers.authorization,
      body,
    });
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (token === undefined || !(options.acceptToken ?? (() => true))(token))
      return sendStatus(res, 401, 'Unauthorized', 'Unauthorized');
    const failureIndex = failures.findIndex((f) => f.method === undefined || f.method === method);
    if (failureIndex !== -1) {
      const [failure] = failures.splice(failureIndex, 1);
      if (failure !== undefined) {
        for (const [name, value] of Object.entries(failure.headers ?? {})) res.setHeader(name, value);
        return sendJson(res, failure.status, failure.body);
      }
    }
    const route = parsePath(url.pathname);
    if (route === undefined)
      return sendStatus(res, 404, 'NotFound', 'the server could not find the requested resource');
    const { collection, name, subresource, plural } = route;
    const path = `${collection}/${name ?? ''}`;
    const notFound = () =>
      sendStatus(res, 404, 'NotFound', `${plural} "${name ?? ''}" not found`, { name: name ?? '', kind: plural });

    if (name === undefined) {
      if (method === 'GET') {
        const selector = parseSelector(url.searchParams.get('labelSelector'));
        const items = [...objects.entries()]
          .filter(([key]) => key.startsWith(`${collection}/`) || isAllNamespaces(collection, key, plural))
          .map(([, object]) => object)
          .filter((object) => matches(object, selector))
          .map(({ apiVersion: _a, kind: _k, ...item }) => item);
        return sendJson(res, 200, {
          apiVersion: 'v1',
          kind: 'List',
          metadata: { resourceVersion: String(revision) },
          items,
        });
      }
      if (method === 'POST') {
        const object = body as Json;
        const objectName = (object.metadata as Json).name as string;
        const key = `${collection}/${objectName}`;
        if (objects.has(key))
          return sendStatus(res, 409, 'AlreadyExists', `${plural} "${objectName}" already exists`, {
            name: objectName,
          });
        revision += 1;
        const stored = {
          ...object,
          metadata: {
            ...(object.metadata as Json),
            uid: `uid-${revision}`,
            resourceVersion: String(revision),
            creationTimestamp: '2025-06-01T12:00:00Z',
          },
        };
        objects.set(key, stored);
        return sendJson(res, 201, stored);
      }
      return sendStatus(res, 405, 'MethodNotAllowed', `${method} is not allowed on a collection`);
    }

    if (subresource === 'log') {
      const log = logs.get(path);
      if (log === undefined) return notFound();
      const tail = url.searchParams.get('tailLines');
      const lines = log.split('\n');
      const text = tail === null ? log : lines.slice(Math.max(0, lines.length - Number(tail) - 1)).join('\n');
      res.writeHead(200, { 'content-type': 'text/plain' });
      return void res.end(text);
    }

    const live = objects.get(path);
    if (method === 'GET') return live === undefined ? notFound() : sendJson(res, 200, live);
    if (live === undefined) return notFound();
    if (method === 'DELETE') {
      objects.delete(path);
      return sendJson(res, 200, { kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name } });
    }
    if (method === 'PATCH') {
      if (req.headers['content-type'] !== 'application/merge-patch+json')
        return sendStatus(
          res,
          415,
          'UnsupportedMediaType',
          `the fake serves only merge patch, got ${req.headers['content-type'] ?? ''}`,
        );
      const target =
        subresource === 'scale' ? { spec: { replicas: ((body as Json).spec as Json).replicas } } : (body as Json);
      const merged = mergePatch(live, target) as Json;
      if (JSON.stringify(merged) !== JSON.stringify(live)) {
        revision += 1;
        (merged.metadata as Json).resourceVersion = String(revision);
      }
      objects.set(path, merged);
      return sendJson(res, 200, subresource === 'scale' ? { kind: 'Scale', spec: merged.spec as Json } : merged);
    }
    if (method === 'PUT') {
      const object = body as Json;
      const version = (object.metadata as Json).resourceVersion;
      if (version !== undefined && version !== (live.metadata as Json).resourceVersion)
        return sendStatus(
          res,
          409,
          'Conflict',
          `Operation cannot be fulfilled on ${plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
          { name },
        );
      revision += 1;
      const stored = { ...object, metadata: { ...(object.metadata as Json), resourceVersion: String(revision) } };
      objects.set(path, stored);
      return sendJson(res, 200, stored);
    }
    return sendStatus(res, 405, 'MethodNotAllowed', `${method} is not allowed`);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    objects,
    logs,
    failNext: (failure) => {
      failures.push(failure);
    },
    touch: (path, change) => {
      const object = objects.get(path);
      if (object === undefined) throw new Error(`no object at ${path}`);
      change(object);
      revision += 1;
      (object.metadata as Json).resourceVersion = String(revision);
    },
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** `/api/v1[/namespaces/ns]/plural[/name[/sub]]` or `/apis/group/version[/namespaces/ns]/plural[/name[/sub]]`. */
function parsePath(
  path: string,
): { collection: string; plural: string; name?: string; subresource?: string } | undefined {
  const parts = path.split('/').filter((p) => p !== '');
  const rootLength = parts[0] === 'api' ? 2 : parts[0] === 'apis' ? 3 : 0;
  if (rootLength === 0 || parts.length <= rootLength) return undefined;
  let rest = parts.slice(rootLength);
  let prefix = parts.slice(0, rootLength);
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    prefix = [...prefix, 'namespaces', rest[1] ?? ''];
    rest = rest.slice(2);
  }
  const [plural, name, subresource] = rest;
  if (plural === undefined) return undefined;
  return { collection: `/${[...prefix, plural].join('/')}`, plural, name, subresource };
}

function isAllNamespaces(collection: string, key: string, plural: string): boolean {
  // A list without a namespace covers every namespace's objects of the kind.
  if (collection.includes('/namespaces/')) return false;
  const root = collection.slice(0, collection.length - plural.length);
  return key.startsWith(`${root}namespaces/`) && key.includes(`/${plural}/`);
}

function parseSelector(text: string | null): Record<string, string> {
  if (text === null || text === '') return {};
  return Object.fromEntries(text.split(',').map((pair) => pair.split('=') as [string, string]));
}

function matches(object: Json, selector: Record<string, string>): boolean {
  const labels = ((object.metadata as Json).labels ?? {}) as Record<string, string>;
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

/** RFC 7386. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const result: Json =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Json) } : {};
  for (const [key, value] of Object.entries(patch as Json)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

function sendStatus(res: ServerResponse, code: number, reason: string, message: string, details?: Json): void {
  sendJson(res, code, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    details,
    code,
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
