import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type SlackWebhookSink, startSlackWebhookSink } from '../../sim/harness/index.js';
import { slackMessageFor } from './blockKit.js';
import {
  SlackError,
  SlackWebhookRejectedError,
  SlackWebhookUnavailableError,
  SlackWebhookUrlInvalidError,
} from './errors.js';
import {
  fixedWebhookUrl,
  SlackWebhookClient,
  type SlackWebhookClientOptions,
  type WebhookUrlSource,
} from './SlackWebhookClient.js';
import { kvCacheFiring } from './testing/alertMessages.js';

const payload = slackMessageFor(kvCacheFiring);

/** Everything an error could show a log: messages, stacks and own properties of it and its causes. */
function everythingShown(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && depth < 10; depth += 1) {
    if (current instanceof Error) {
      parts.push(String(current), current.stack ?? '', JSON.stringify(current));
      current = current.cause;
    } else {
      parts.push(JSON.stringify(current) ?? 'undefined');
      current = undefined;
    }
  }
  return parts.join('\n');
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

/** A crafted Slack on 127.0.0.1: answers each request with the next of `answers` (the last one repeats). */
async function craftedSlack(answers: Array<(res: ServerResponse) => void>) {
  let requests = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const answer = answers[Math.min(requests, answers.length - 1)];
      requests += 1;
      answer?.(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/services/T0000/B0000/craftedsecrettoken`,
    requests: () => requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('Class: SlackWebhookClient', () => {
  let sink: SlackWebhookSink;
  const waits: number[] = [];
  /** A sleep that records the wait and returns at once (or rejects when aborted), so retries take no time. */
  const sleep = (ms: number, signal?: AbortSignal) => {
    waits.push(ms);
    return signal?.aborted ? Promise.reject(new Error('aborted')) : Promise.resolve();
  };

  const clientFor = (url: string | WebhookUrlSource, options: Partial<SlackWebhookClientOptions> = {}) =>
    new SlackWebhookClient({
      webhookUrl: typeof url === 'string' ? fixedWebhookUrl(url) : url,
      sleep,
      random: () => 0.5,
      ...options,
    });

  beforeAll(async () => {
    sink = await startSlackWebhookSink();
  });

  afterAll(async () => {
    await sink.stop();
  });

  beforeEach(() => {
    sink.clear();
    waits.length = 0;
  });

  describe('Method: post', () => {
    it('delivers the message once, at the first attempt', async () => {
      // Act
      const result = await clientFor(sink.url).post(payload);

      // Assess
      expect(result).toEqual({ attempts: 1, refreshedUrl: false, retries: [] });
      expect(sink.deliveries().map((d) => d.body)).toEqual([payload]);
    });

    it('waits as Slack’s Retry-After says after a 429, then delivers once', async () => {
      // Prepare
      sink.failNextRequests(1, 429);

      // Act
      const result = await clientFor(sink.url).post(payload);

      // Assess
      expect(result.attempts).toBe(2);
      expect(result.retries).toEqual(['HTTP 429 rate_limited, waited 1000 ms']);
      expect(waits).toEqual([1000]);
      expect(sink.deliveries()).toHaveLength(1);
    });

    it('caps a long Retry-After', async () => {
      // Prepare
      const slack = await craftedSlack([
        (res) => res.writeHead(429, { 'retry-after': '120' }).end('rate_limited'),
        (res) => res.writeHead(200).end('ok'),
      ]);

      // Act
      const result = await clientFor(slack.url, { maxRetryAfterMs: 3_000 }).post(payload);
      await slack.stop();

      // Assess
      expect(result.attempts).toBe(2);
      expect(waits).toEqual([3_000]);
    });

    it('backs off exponentially with jitter after 5xx answers, then delivers once', async () => {
      // Prepare
      sink.failNextRequests(3, 503);

      // Act
      const result = await clientFor(sink.url, { baseDelayMs: 100, maxDelayMs: 300 }).post(payload);

      // Assess: random() = 0.5 takes half of 100, 200, then 300 (the 400 step capped)
      expect(result.attempts).toBe(4);
      expect(waits).toEqual([50, 100, 150]);
      expect(sink.deliveries()).toHaveLength(1);
    });

    it('gives up after maxAttempts of 5xx with a retryable error that names the last answer', async () => {
      // Prepare
      sink.failNextRequests(10, 500);

      // Act
      const error = await caught(clientFor(sink.url, { maxAttempts: 3 }).post(payload));

      // Assess
      expect(error).toBeInstanceOf(SlackWebhookUnavailableError);
      expect(error).toMatchObject({
        name: 'SlackWebhookUnavailableError',
        attempts: 3,
        lastStatus: 500,
        reason: 'attempts-exhausted',
        retryable: true,
        message: 'Slack webhook unavailable after 3 attempts; last problem: HTTP 500 rollup_error',
      });
      expect(waits).toHaveLength(2);
      expect(sink.deliveries()).toEqual([]);
    });

    it.each([
      { case: 'a wrong webhook path (no_service)', status: 404, body: 'no_service', hint: /webhook was removed/ },
      { case: 'a malformed message (invalid_payload)', status: 400, body: 'invalid_payload', hint: /malformed/ },
      { case: 'an archived channel', status: 410, body: 'channel_is_archived', hint: /archived/ },
      {
        case: 'a forbidden post with an HTML body',
        status: 403,
        body: '<html>nope</html>',
        hint: /retrying will not help/,
      },
    ])('does not retry $case and throws the status and Slack’s code', async ({ status, body, hint }) => {
      // Prepare
      const slack = await craftedSlack([(res) => res.writeHead(status).end(body)]);

      // Act
      const error = await caught(clientFor(slack.url).post(payload));
      await slack.stop();

      // Assess
      expect(error).toBeInstanceOf(SlackWebhookRejectedError);
      expect(error).toMatchObject({
        status,
        slackError: body.startsWith('<') ? undefined : body,
        retryable: false,
      });
      expect((error as Error).message).toMatch(hint);
      expect(slack.requests()).toBe(1);
      expect(waits).toEqual([]);
    });

    it('reads the URL again after a 404 and delivers to the new one (a rotated secret)', async () => {
      // Prepare: the cache still holds the old hook; the secret now holds the sink's.
      let reads = 0;
      const source: WebhookUrlSource = {
        get: () => Promise.resolve(`${sink.url}old`),
        refresh: () => {
          reads += 1;
          return Promise.resolve(sink.url);
        },
      };

      // Act
      const result = await clientFor(source).post(payload);

      // Assess
      expect(reads).toBe(1);
      expect(result).toMatchObject({ attempts: 2, refreshedUrl: true });
      expect(result.retries).toEqual(['HTTP 404 no_service, read the URL again and got a new one']);
      expect(sink.deliveries()).toHaveLength(1);
    });

    it('reads the URL again only once when the new one is gone too', async () => {
      // Prepare
      let reads = 0;
      const source: WebhookUrlSource = {
        get: () => Promise.resolve(`${sink.url}old`),
        refresh: () => {
          reads += 1;
          return Promise.resolve(`${sink.url}new`);
        },
      };

      // Act
      const error = await caught(clientFor(source).post(payload));

      // Assess
      expect(error).toMatchObject({ name: 'SlackWebhookRejectedError', status: 404, slackError: 'no_service' });
      expect(reads).toBe(1);
    });

    it('retries an attempt that gets no answer within the attempt timeout', async () => {
      // Prepare: a Slack that never answers the first request.
      const slack = await craftedSlack([() => undefined, (res) => res.writeHead(200).end('ok')]);

      // Act
      const result = await clientFor(slack.url, { attemptTimeoutMs: 100 }).post(payload);
      await slack.stop();

      // Assess
      expect(result.attempts).toBe(2);
      expect(result.retries).toEqual(['no answer within the attempt timeout, waited 250 ms']);
    });

    it('stops retrying when the caller’s signal aborts, saying so', async () => {
      // Prepare
      sink.failNextRequests(10, 500);
      const controller = new AbortController();
      const abortingSleep = (ms: number) => {
        waits.push(ms);
        controller.abort();
        return Promise.reject(new Error('aborted'));
      };

      // Act
      const error = await caught(
        clientFor(sink.url, { sleep: abortingSleep }).post(payload, { signal: controller.signal }),
      );

      // Assess
      expect(error).toMatchObject({ name: 'SlackWebhookUnavailableError', attempts: 1, reason: 'aborted' });
      expect((error as Error).message).toMatch(/stopped: deadline or abort/);
    });

    it('refuses a URL source that returns no http(s) URL, without quoting it', async () => {
      // Act
      const error = await caught(clientFor('hooks.slack.com/services/T1/B1/secrettoken123').post(payload));

      // Assess
      expect(error).toBeInstanceOf(SlackWebhookUrlInvalidError);
      expect(everythingShown(error)).not.toContain('secrettoken123');
    });
  });

  describe('Method: post > the webhook URL is a secret', () => {
    it.each([
      {
        case: 'retries used up on 5xx',
        run: async (client: SlackWebhookClient) => {
          sink.failNextRequests(10, 500);
          return caught(client.post(payload));
        },
        url: () => sink.url,
      },
      {
        case: 'a rejected message',
        run: (client: SlackWebhookClient) => caught(client.post({ text: '', attachments: [] })),
        url: () => sink.url,
      },
      {
        case: 'a refused connection (the error of fetch and its cause)',
        run: (client: SlackWebhookClient) => caught(client.post(payload)),
        url: () => 'http://127.0.0.1:9/services/T0000/B0000/refusedsecrettoken',
      },
      {
        case: 'credentials in the URL (fetch quotes the URL in its error)',
        run: (client: SlackWebhookClient) => caught(client.post(payload)),
        url: () => 'http://user:pass@127.0.0.1:9/services/T0000/B0000/quotedsecrettoken',
      },
    ])('appears in no message, stack or cause: $case', async ({ run, url }) => {
      // Prepare
      const secretUrl = url();
      const token = secretUrl.split('/').at(-1) ?? '';

      // Act
      const error = await run(clientFor(secretUrl, { maxAttempts: 2 }));

      // Assess
      expect(error).toBeInstanceOf(SlackError);
      const shown = everythingShown(error);
      expect(shown).not.toContain(token);
      expect(shown).not.toContain(new URL(secretUrl).pathname);
    });
  });
});
