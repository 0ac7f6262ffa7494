/**
 * A tiny Prometheus HTTP API on 127.0.0.1 for unit tests: it answers `api/v1/query` and `api/v1/query_range` from a
 * handler with crafted JSON (or an error status), so the product's real HTTP client runs against it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeRequest {
  /** `query` or `query_range`. */
  api: string;
  params: URLSearchParams;
}

export interface FakeAnswer {
  status?: number;
  body: unknown;
}

export interface FakePrometheus {
  url: string;
  requests: FakeRequest[];
  close(): Promise<void>;
}

/** Starts the server; `answer` decides each response. */
export async function startFakePrometheus(answer: (request: FakeRequest) => FakeAnswer): Promise<FakePrometheus> {
  const requests: FakeRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const request = {
        api: url.pathname.replace(/^.*\/api\/v1\//, ''),
        params: new URLSearchParams(Buffer.concat(chunks).toString('utf8')),
      };
      requests.push(request);
      let reply: FakeAnswer;
      try {
        reply = answer(request);
      } catch (error) {
        reply = { status: 500, body: { status: 'error', errorType: 'internal', error: String(error) } };
      }
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** A successful instant-vector answer. */
export function vector(
  samples: ReadonlyArray<{ labels?: Record<string, string>; value: number }>,
  timeS = 0,
): FakeAnswer {
  return {
    body: {
      status: 'success',
      data: {
        resultType: 'vector',
        result: samples.map((s) => ({ metric: s.labels ?? {}, value: [timeS, String(s.value)] })),
      },
    },
  };
}

/** A successful range answer (one series per entry; points as [epoch seconds, value]). */
export function matrix(
  series: ReadonlyArray<{ labels?: Record<string, string>; points: ReadonlyArray<readonly [number, number]> }>,
): FakeAnswer {
  return {
    body: {
      status: 'success',
      data: {
        resultType: 'matrix',
        result: series.map((s) => ({ metric: s.labels ?? {}, values: s.points.map(([t, v]) => [t, String(v)]) })),
      },
    },
  };
}

/** An error answer as Prometheus (or AMP) sends it. */
export function failure(status: number, errorType: string, error: string): FakeAnswer {
  return { status, body: { status: 'error', errorType, error } };
}
