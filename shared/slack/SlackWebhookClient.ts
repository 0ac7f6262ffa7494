import { type Clock, systemClock } from '../clock/index.js';
import type { SlackPayload } from './blockKit.js';
import { SlackWebhookRejectedError, SlackWebhookUnavailableError, SlackWebhookUrlInvalidError } from './errors.js';
import { describeWebhookUrl, redactedCause } from './redact.js';

/** Where the client gets the webhook URL; `WebhookUrlProvider` reads it from Secrets Manager. */
export interface WebhookUrlSource {
  /** The URL to post to (may come from a cache). */
  get(): Promise<string>;
  /** Reads the URL again, bypassing any cache: called once after Slack answers 404/410 (a rotated secret). */
  refresh(): Promise<string>;
}

/** A fixed URL (tests, the CLI); `refresh()` returns the same URL. */
export function fixedWebhookUrl(url: string): WebhookUrlSource {
  return { get: () => Promise.resolve(url), refresh: () => Promise.resolve(url) };
}

export interface SlackWebhookClientOptions {
  webhookUrl: WebhookUrlSource;
  /** Attempts per message, the first included. Default 4. */
  maxAttempts?: number;
  /** Time allowed for one attempt (connect, send, answer). Default 5 s. */
  attemptTimeoutMs?: number;
  /** First backoff step after a 5xx or a network error; doubles each attempt. Default 500 ms. */
  baseDelayMs?: number;
  /** Largest backoff step. Default 8 s. */
  maxDelayMs?: number;
  /** Longest wait a 429's Retry-After may impose; longer asks are cut to this. Default 10 s. */
  maxRetryAfterMs?: number;
  /** Waits `ms` (or rejects when `signal` aborts); tests pass one that does not wait. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** A number in [0, 1) for the jitter; tests pass a fixed one. */
  random?: () => number;
  /** Reads a Retry-After given as an HTTP date. */
  clock?: Clock;
}

/** The outcome of a delivered message. */
export interface SlackPostResult {
  /** HTTP attempts it took (1 = first try). */
  attempts: number;
  /** Whether the URL was read again after a 404/410 (a rotated secret). */
  refreshedUrl: boolean;
  /** Each retry's cause, for the logs (`429 rate_limited, waited 1000 ms`). */
  retries: string[];
}

export const SLACK_CLIENT_DEFAULTS = {
  maxAttempts: 4,
  attemptTimeoutMs: 5_000,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 10_000,
  /** Slack's answers are a word (`ok`, `invalid_payload`); more is not read. */
  maxBodyChars: 200,
} as const;

/** One attempt's outcome. */
type Attempt =
  | { kind: 'ok' }
  | { kind: 'status'; status: number; slackError: string | undefined; retryAfterMs: number | undefined }
  | { kind: 'network'; error: Error; timedOut: boolean };

/**
 * Posts messages to a Slack incoming webhook: retries 429 (waiting as long as Retry-After says, capped) and 5xx,
 * timeouts and network errors (exponential backoff with full jitter), never other 4xx. Errors never contain the URL.
 */
export class SlackWebhookClient {
  readonly #source: WebhookUrlSource;
  readonly #maxAttempts: number;
  readonly #attemptTimeoutMs: number;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #maxRetryAfterMs: number;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #random: () => number;
  readonly #clock: Clock;

  constructor(options: SlackWebhookClientOptions) {
    this.#source = options.webhookUrl;
    this.#maxAttempts = positiveInteger('maxAttempts', options.maxAttempts ?? SLACK_CLIENT_DEFAULTS.maxAttempts);
    this.#attemptTimeoutMs = positiveInteger(
      'attemptTimeoutMs',
      options.attemptTimeoutMs ?? SLACK_CLIENT_DEFAULTS.attemptTimeoutMs,
    );
    this.#baseDelayMs = options.baseDelayMs ?? SLACK_CLIENT_DEFAULTS.baseDelayMs;
    this.#maxDelayMs = options.maxDelayMs ?? SLACK_CLIENT_DEFAULTS.maxDelayMs;
    this.#maxRetryAfterMs = options.maxRetryAfterMs ?? SLACK_CLIENT_DEFAULTS.maxRetryAfterMs;
    this.#sleep = options.sleep ?? sleep;
    this.#random = options.random ?? Math.random;
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * Posts `payload`; resolves once Slack answered 200. Throws `SlackWebhookRejectedError` (4xx, not retried) or
   * `SlackWebhookUnavailableError` (attempts used up, or `signal` aborted).
   */
  async post(payload: SlackPayload, options: { signal?: AbortSignal } = {}): Promise<SlackPostResult> {
    const body = JSON.stringify(payload);
    let url = checkedUrl(await this.#source.get());
    let refreshedUrl = false;
    const retries: string[] = [];
    let last: Attempt | undefined;
    // `attempts` is the budget of the current URL; `requests` counts every POST, for the result and the error.
    let attempts = 0;
    let requests = 0;

    while (attempts < this.#maxAttempts) {
      if (options.signal?.aborted) break;
      attempts += 1;
      requests += 1;
      last = await this.#attempt(url, body, options.signal);
      if (last.kind === 'ok') return { attempts: requests, refreshedUrl, retries };

      if (last.kind === 'status') {
        const { status, slackError } = last;
        // A 404/410 after a secret rotation: the cached URL is the old hook. Read the secret again, once.
        if ((status === 404 || status === 410) && !refreshedUrl) {
          refreshedUrl = true;
          const fresh = checkedUrl(await this.#source.refresh());
          if (fresh !== url) {
            url = fresh;
            retries.push(`${describe(last)}, read the URL again and got a new one`);
            attempts = 0; // the new URL gets the full budget
            continue;
          }
        }
        if (status !== 429 && status < 500) throw new SlackWebhookRejectedError(status, slackError);
      }
      if (attempts >= this.#maxAttempts) break;

      const waitMs = this.#delayAfter(last, attempts);
      retries.push(`${describe(last)}, waited ${waitMs} ms`);
      try {
        await this.#sleep(waitMs, options.signal);
      } catch {
        break; // aborted while waiting
      }
    }

    throw new SlackWebhookUnavailableError(
      {
        attempts: requests,
        lastStatus: last?.kind === 'status' ? last.status : undefined,
        lastProblem: last === undefined ? 'no attempt made' : describe(last),
        reason: options.signal?.aborted ? 'aborted' : 'attempts-exhausted',
      },
      last?.kind === 'network' ? { cause: last.error } : undefined,
    );
  }

  /**
   * The wait before the next attempt: Retry-After for a 429 (capped), else "full jitter", a random wait up to an
   * exponentially growing ceiling (AWS Architecture Blog, "Exponential Backoff And Jitter", 2015).
   */
  #delayAfter(attempt: Attempt, attempts: number): number {
    if (attempt.kind === 'status' && attempt.status === 429 && attempt.retryAfterMs !== undefined)
      return Math.min(attempt.retryAfterMs, this.#maxRetryAfterMs);
    const ceiling = Math.min(this.#maxDelayMs, this.#baseDelayMs * 2 ** (attempts - 1));
    return Math.floor(this.#random() * ceiling);
  }

  async #attempt(url: string, body: string, signal: AbortSignal | undefined): Promise<Attempt> {
    const timeout = AbortSignal.timeout(this.#attemptTimeoutMs);
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body,
        signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout]),
      });
      const text = (await response.text()).slice(0, SLACK_CLIENT_DEFAULTS.maxBodyChars).trim();
      if (response.status === 200) return { kind: 'ok' };
      return {
        kind: 'status',
        status: response.status,
        // Slack answers errors with a bare code (`invalid_payload`); anything else (an HTML page) is not one.
        slackError: /^[a-z][a-z0-9_]*$/.test(text) ? text : undefined,
        retryAfterMs: retryAfterMs(response.headers.get('retry-after'), this.#clock.now()),
      };
    } catch (error) {
      // fetch's errors may quote the URL ("Failed to parse URL from ..."): keep only a redacted copy.
      return { kind: 'network', error: redactedCause(error, url), timedOut: timeout.aborted };
    }
  }
}

function describe(attempt: Attempt): string {
  switch (attempt.kind) {
    case 'ok':
      return 'ok';
    case 'status':
      return `HTTP ${attempt.status}${attempt.slackError === undefined ? '' : ` ${attempt.slackError}`}`;
    case 'network':
      return attempt.timedOut ? 'no answer within the attempt timeout' : networkProblem(attempt.error);
  }
}

function networkProblem(error: Error): string {
  const cause = error.cause instanceof Error ? error.cause : undefined;
  const code = (cause as { code?: unknown } | undefined)?.code ?? (error as { code?: unknown }).code;
  return `${error.name}: ${error.message}${cause === undefined ? '' : ` (${typeof code === 'string' ? code : cause.message})`}`;
}

/** Retry-After in seconds or as an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
function retryAfterMs(header: string | null, nowMs: number): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : undefined;
}

/** A URL fetch can post to; anything else would fail on every attempt (and fetch would quote it in its error). */
function checkedUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new SlackWebhookUrlInvalidError('the webhook URL source', `not a URL (${url.length} characters)`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new SlackWebhookUrlInvalidError(
      'the webhook URL source',
      `protocol ${parsed.protocol} in ${describeWebhookUrl(url)} is not http(s)`,
    );
  return url;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`SlackWebhookClient: ${name} must be an integer >= 1, got ${value}`);
  return value;
}

/** setTimeout as a promise that rejects when `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
