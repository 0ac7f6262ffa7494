import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import {
  HttpMetricsSource,
  VALUE_DOMAIN,
  catalogEntry,
  guardSinglePoints,
  querySingleValue,
  readCatalog,
} from '../shared/metrics/index.js';
import { ALERT_NAMES, type AlertName } from '../shared/alerts/index.js';
import { evaluateTarget, parseAlertSettings } from '../shared/alerts/rules/index.js';
import type { Target } from '../shared/config/index.js';

// The AMP-answer corpus of issue 15 ("Every AMP answer is checked"): test/bad-inputs/amp-answers.yaml. Each body is
// served on 127.0.0.1 and read by the real HttpMetricsSource, then by the consumer named in `use`; every case ends
// in a named error whose one-line message names `field`, and no number comes out.

interface AmpCase {
  case: string;
  use: 'single' | 'range' | 'catalog' | 'alert';
  answer: unknown;
  expect: string;
  field: string;
  domain?: keyof typeof VALUE_DOMAIN;
  entry?: string;
  rule?: AlertName;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { cases } = parseYaml(await readFile(join(ROOT, 'test', 'bad-inputs', 'amp-answers.yaml'), 'utf8')) as {
  cases: AmpCase[];
};

const TARGET: Target = {
  name: 'prod-ministral',
  cluster: 'prod',
  namespace: 'llm',
  deployment: 'ministral',
  model: 'ministral',
};
const TIME_MS = 1_764_763_200_000;
const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret', sessionToken: 'FwoGZXIvYXdzEXAMPLE' };

/** Where a redirect points: a second local server that records whatever reaches it. */
let other: { server: Server; origin: string; requests: IncomingHttpHeaders[] };
/** The AMP stand-in: answers every request with the current case's crafted answer. */
let amp: { server: Server; url: string };
let current: unknown;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  const requests: IncomingHttpHeaders[] = [];
  const otherServer = createServer((req, res) => {
    requests.push(req.headers);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end('{"status":"success","data":{"resultType":"vector","result":[]}}');
  });
  other = { server: otherServer, origin: await listen(otherServer), requests };
  const ampServer = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(res, current));
  });
  amp = { server: ampServer, url: `${await listen(ampServer)}/workspaces/ws-corpus/` };
});

afterAll(async () => {
  for (const server of [amp.server, other.server]) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

function answer(res: ServerResponse, crafted: unknown): void {
  const spec = crafted as {
    bytes?: number;
    contentLength?: boolean;
    redirect?: number;
    series?: number;
    value?: string;
  };
  if (spec.redirect !== undefined) {
    res.writeHead(spec.redirect, { location: `${other.origin}/steal?token=1` }).end();
    return;
  }
  if (spec.bytes !== undefined) {
    // A huge but valid-looking answer: one long label value, written in 64 KiB chunks.
    const chunk = 'x'.repeat(64 * 1024);
    res.writeHead(200, {
      'content-type': 'application/json',
      ...(spec.contentLength === true ? { 'content-length': String(spec.bytes) } : {}),
    });
    let written = 0;
    const writeMore = (): void => {
      while (written < spec.bytes!) {
        const part = chunk.slice(0, Math.min(chunk.length, spec.bytes! - written));
        written += part.length;
        if (!res.write(part)) {
          res.once('drain', writeMore);
          return;
        }
      }
      res.end();
    };
    res.on('error', () => undefined);
    writeMore();
    return;
  }
  const body =
    spec.series !== undefined
      ? {
          status: 'success',
          data: {
            resultType: 'vector',
            result: Array.from({ length: spec.series }, (_, i) => ({
              metric: { pod: `vllm-7d9c8b6f5d-${i}` },
              value: [TIME_MS / 1000, spec.value ?? '1'],
            })),
          },
        }
      : crafted;
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** Runs the case's consumer; resolves with the error it ended in (or fails the test if a number came out). */
async function consume(c: AmpCase): Promise<Error> {
  const source = new HttpMetricsSource({ endpoint: amp.url, region: 'us-east-2', credentials, maxAttempts: 1 });
  const query = 'sum(vllm:num_requests_waiting{namespace="llm"})';
  switch (c.use) {
    case 'single': {
      const domain = VALUE_DOMAIN[c.domain ?? 'nonNegative'];
      const value = await querySingleValue(source, query, { domain }).catch((error: unknown) => error as Error);
      if (!(value instanceof Error)) throw new Error(`${c.case}: a number came out: ${value}`);
      return value;
    }
    case 'range': {
      try {
        const series = await source.range(query, { startMs: TIME_MS, endMs: TIME_MS + 60_000, stepSeconds: 15 });
        const points = guardSinglePoints(series, VALUE_DOMAIN.nonNegative, query);
        throw new Error(`${c.case}: points came out: ${JSON.stringify(points)}`);
      } catch (error) {
        return error as Error;
      }
    }
    case 'catalog': {
      const result = await readCatalog(source, TARGET, { timeMs: TIME_MS, catalog: [catalogEntry(c.entry ?? '')] });
      expect(result.readings).toEqual([]);
      const [failure] = result.failures;
      if (failure === undefined) throw new Error(`${c.case}: no failure, skipped: ${JSON.stringify(result.skipped)}`);
      return failure.error;
    }
    case 'alert': {
      const rules = Object.fromEntries(ALERT_NAMES.map((name) => [name, { enabled: name === c.rule }]));
      const evaluation = await evaluateTarget(TARGET, parseAlertSettings({ rules }), { source }, TIME_MS);
      expect(evaluation.firing).toEqual([]);
      expect(evaluation.evaluatedRules).toEqual([]);
      const [failure] = evaluation.failures;
      if (failure === undefined) throw new Error(`${c.case}: the rule did not fail`);
      expect(failure.error.name).toBe('AlertQueryFailedError');
      return failure.error;
    }
  }
}

/** The error's name and the names of its causes. */
function names(error: unknown): string[] {
  const found: string[] = [];
  for (let e = error; e instanceof Error; e = e.cause) found.push(e.name);
  return found;
}

describe('Corpus: test/bad-inputs/amp-answers.yaml', () => {
  it('holds at least 10 cases, each with a distinct name', () => {
    expect(cases.length).toBeGreaterThanOrEqual(10);
    expect(new Set(cases.map((c) => c.case)).size).toBe(cases.length);
  });

  it.each(cases.map((c) => [c.case, c] as const))('%s: a named one-line error', async (_name, c) => {
    // Prepare
    current = c.answer;
    const before = other.requests.length;

    // Act
    const error = await consume(c);

    // Assess
    expect(names(error)).toContain(c.expect);
    expect(error.message).not.toContain('\n');
    const field = c.field === 'OTHER_ORIGIN' ? other.origin : c.field;
    expect(error.message).toContain(field);
    // A redirect is never followed: the other origin got nothing, so never the signed headers.
    expect(other.requests.length).toBe(before);
  });
});
