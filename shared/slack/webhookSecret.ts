import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { type Clock, systemClock } from '../clock/index.js';
import { SlackWebhookSecretReadError, SlackWebhookUrlInvalidError } from './errors.js';
import type { WebhookUrlSource } from './SlackWebhookClient.js';
import { describeWebhookUrl } from './redact.js';

export interface WebhookUrlProviderOptions {
  /** A Secrets Manager client (the Lambda's, or one pointed at the twin). */
  client: Pick<SecretsManagerClient, 'send'>;
  /** The secret's name or ARN. */
  secretId: string;
  /** How long a read URL is reused. Default 5 min: a warm Lambda then reads the secret a few times an hour. */
  ttlMs?: number;
  /**
   * Accept any http(s) URL, not only https://hooks.slack.com/: for the twin's webhook sink on 127.0.0.1.
   * Never set it in a deployed stack.
   */
  allowInsecureLocal?: boolean;
  clock?: Clock;
}

export const WEBHOOK_SECRET_DEFAULTS = {
  ttlMs: 300_000,
  /** Slack's webhook host (Slack "Sending messages using incoming webhooks"). */
  slackHost: 'hooks.slack.com',
} as const;

/** Secrets Manager errors that the same request will hit again (the rest may pass later). */
const PERMANENT_SECRET_ERRORS = new Set([
  'ResourceNotFoundException',
  'AccessDeniedException',
  'InvalidParameterException',
  'InvalidRequestException',
  'DecryptionFailure',
  'UnrecognizedClientException',
]);

/**
 * The Slack webhook URL from Secrets Manager (`GetSecretValue`), kept in memory for `ttlMs` so that a warm Lambda
 * does not read the secret per message. The SecretString is the URL itself or JSON `{"webhookUrl": "..."}`.
 */
export class WebhookUrlProvider implements WebhookUrlSource {
  readonly #client: Pick<SecretsManagerClient, 'send'>;
  readonly #secretId: string;
  readonly #ttlMs: number;
  readonly #allowInsecureLocal: boolean;
  readonly #clock: Clock;
  #cached: { url: string; readAtMs: number } | undefined;
  #reading: Promise<string> | undefined;

  constructor(options: WebhookUrlProviderOptions) {
    if (options.secretId.trim() === '')
      throw new RangeError('WebhookUrlProvider: secretId must not be empty (a secret name or ARN)');
    const ttlMs = options.ttlMs ?? WEBHOOK_SECRET_DEFAULTS.ttlMs;
    if (!(ttlMs >= 0)) throw new RangeError(`WebhookUrlProvider: ttlMs must be >= 0, got ${ttlMs}`);
    this.#client = options.client;
    this.#secretId = options.secretId;
    this.#ttlMs = ttlMs;
    this.#allowInsecureLocal = options.allowInsecureLocal ?? false;
    this.#clock = options.clock ?? systemClock;
  }

  /** The URL: from memory while younger than the TTL, else read from Secrets Manager. */
  get(): Promise<string> {
    const cached = this.#cached;
    if (cached !== undefined && this.#clock.now() - cached.readAtMs < this.#ttlMs) return Promise.resolve(cached.url);
    return this.#read();
  }

  /** Reads the secret again whatever the cache holds (after Slack said the hook is gone). */
  refresh(): Promise<string> {
    return this.#read();
  }

  /** One read at a time: callers that arrive while a read runs share it. A failed read caches nothing. */
  #read(): Promise<string> {
    this.#reading ??= this.#fetch().finally(() => {
      this.#reading = undefined;
    });
    return this.#reading;
  }

  async #fetch(): Promise<string> {
    let secretString: string | undefined;
    try {
      const answer = await this.#client.send(new GetSecretValueCommand({ SecretId: this.#secretId }));
      secretString = answer.SecretString;
    } catch (error) {
      const name = error instanceof Error ? error.name : '';
      throw new SlackWebhookSecretReadError(this.#secretId, !PERMANENT_SECRET_ERRORS.has(name), { cause: error });
    }
    if (secretString === undefined)
      throw new SlackWebhookUrlInvalidError(`secret ${this.#secretId}`, 'it has no SecretString (binary secret?)');
    const url = webhookUrlFromSecret(secretString, {
      source: `secret ${this.#secretId}`,
      allowInsecureLocal: this.#allowInsecureLocal,
    });
    this.#cached = { url, readAtMs: this.#clock.now() };
    return url;
  }
}

/**
 * The webhook URL in a SecretString (the URL, or JSON `{"webhookUrl": "..."}`), checked to be an
 * https://hooks.slack.com/ URL (any http(s) URL with `allowInsecureLocal`). Errors describe the problem, never the value.
 */
export function webhookUrlFromSecret(
  secretString: string,
  options: { source: string; allowInsecureLocal?: boolean },
): string {
  const text = secretString.trim();
  let candidate = text;
  if (text.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new SlackWebhookUrlInvalidError(options.source, 'it starts with "{" but is not valid JSON');
    }
    const value = (parsed as { webhookUrl?: unknown }).webhookUrl;
    if (typeof value !== 'string')
      throw new SlackWebhookUrlInvalidError(
        options.source,
        `its JSON has no string "webhookUrl" (keys: ${Object.keys(parsed as object).join(', ') || 'none'})`,
      );
    candidate = value.trim();
  }
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    throw new SlackWebhookUrlInvalidError(options.source, `it is not a URL (${candidate.length} characters)`);
  }
  if (options.allowInsecureLocal === true) {
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new SlackWebhookUrlInvalidError(options.source, `protocol ${url.protocol} is not http(s)`);
    return candidate;
  }
  if (
    url.protocol !== 'https:' ||
    url.host !== WEBHOOK_SECRET_DEFAULTS.slackHost ||
    !url.pathname.startsWith('/services/')
  )
    throw new SlackWebhookUrlInvalidError(
      options.source,
      `${describeWebhookUrl(candidate)} is not https://${WEBHOOK_SECRET_DEFAULTS.slackHost}/services/...`,
    );
  return candidate;
}
